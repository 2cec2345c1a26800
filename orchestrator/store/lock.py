"""One daemon per database: an exclusive `flock` on the database file itself.

The lock is on the file (its inode), not its name, so a daemon started through a symlink or a
hard link to the same database finds it taken.  The kernel drops it when the process dies,
so a killed daemon never leaves it behind, and readers can ask whether a daemon runs the
database now (`held`, from the kernel's table of locks).  Only local file systems are meant:
over NFS, flock is emulated with the POSIX locks SQLite itself uses.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from orchestrator.core.errors import OrchestratorError
from orchestrator.store.database import StoreError


class AlreadyRunning(OrchestratorError):
    """Another daemon holds the database's lock."""


class DatabaseLock:
    """The daemon's lock on its database, taken before the database is opened."""

    def __init__(self, database: Path) -> None:
        self.path = database
        self.fd: int | None = None
        self.created = False

    def acquire(self) -> None:
        """Take the lock, creating the database file if there is none; `AlreadyRunning`
        naming the other daemon, or `StoreError` when the path cannot be a database."""
        path = self.path
        if path.is_dir():
            raise StoreError(f"{path}: is a folder, not a database file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
                self.created = True
            except FileExistsError:
                fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the database: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(
                f"{path}: another daemon (pid {holder(path)}) runs this database"
            ) from None
        if not self.created and os.fstat(fd).st_size == 0:
            os.close(fd)
            raise StoreError(
                f"{path}: the file is empty, not an orchestrator database "
                "(remove it to start a new event there)"
            )
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _flock_holder(database: Path) -> int | None:
    """The pid holding an exclusive flock on `database`, from the kernel's /proc/locks.

    The database file itself is never opened here: closing any descriptor of a file drops
    the POSIX locks SQLite holds on it in this process (SQLite's "how to corrupt" 2.2), and
    the web view and the CLI read the database while they ask.
    """
    try:
        stat = database.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1:4:2] == ["FLOCK", "WRITE"] and fields[5] == device:
            return int(fields[4])
    return None


def held(database: Path) -> bool:
    """Whether a daemon holds `database`'s lock now."""
    return _flock_holder(database) is not None


def holder(database: Path) -> str:
    """The pid of the daemon that runs `database`."""
    pid = _flock_holder(database)
    return str(pid) if pid is not None else "unknown"
