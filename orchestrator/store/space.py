"""A full disk, told apart from every other failure to write.

The daemon pauses its event while the disk is full (`daemon/loop.py`) and goes on once a
probe shows space again: these are the tests it uses.  A full disk is `ENOSPC` (or a full
quota, `EDQUOT`), a file that may grow no more (`EFBIG`, a file-size limit), or SQLite's
own "database or disk is full" (`SQLITE_FULL`, also its `max_page_count`) and its failed
writes (`SQLITE_IOERR_WRITE`, `SQLITE_IOERR_FSYNC`: how SQLite reports `EFBIG`).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

__all__ = ["PROBE_BYTES", "disk_full", "free_bytes", "probe_file"]

_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_SQLITE = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_IOERR_FSYNC}

#: what the probe writes: space for a few games' moves, PGN and logs
PROBE_BYTES = 1 << 20


def disk_full(error: BaseException) -> bool:
    """Whether `error` says that a write found no space.

    >>> disk_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> disk_full(OSError(errno.EACCES, "Permission denied")), disk_full(ValueError())
    (False, False)
    >>> full = sqlite3.OperationalError("database or disk is full")
    >>> full.sqlite_errorcode = sqlite3.SQLITE_FULL
    >>> disk_full(full)
    True
    """
    if isinstance(error, OSError):
        return error.errno in _ERRNOS
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        return code in _SQLITE or (code is None and "disk is full" in str(error))
    return False


def free_bytes(folder: Path) -> int | None:
    """The space free for an unprivileged writer where `folder` is (None if unknown).

    >>> free_bytes(Path("/")) > 0, free_bytes(Path("/no/such/folder"))
    (True, None)
    """
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def probe_file(folder: Path, size: int = PROBE_BYTES) -> None:
    """Write `size` bytes to a file in `folder`, sync them and remove the file: an `OSError`
    (see `disk_full`) when the space is not there.

    >>> import shutil, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> probe_file(folder)
    >>> list(folder.iterdir())
    []
    >>> shutil.rmtree(folder)
    """
    path = folder / f".space-probe-{os.getpid()}.tmp"
    try:
        with path.open("wb") as out:
            block = bytes(64 << 10)
            for _ in range(0, size, len(block)):
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
    finally:
        path.unlink(missing_ok=True)
