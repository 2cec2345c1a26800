"""The engines' logs of the event's games, in a folder beside its database.

Each attempt at a game has one log (`orchestrator/engines/journal.py` says what a line
holds): ``game-12.attempt-31.log`` while it is played, appended as its moves come (a batch
at most every `WRITE_EVERY_S`), then
compressed to ``game-12.attempt-31.log.gz`` once it has ended (or was aborted).  A daemon
killed mid-game leaves the uncompressed file; the next one compresses it (`sweep`).  The
files are written by a worker thread, one operation at a time, in order, so that no disk
write ever holds up the event loop that stamps the engines' clocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import structlog

__all__ = ["EngineLogs", "find_log", "log_tail", "logs_folder"]

_NAME = re.compile(r"game-(\d+)\.attempt-(\d+)\.log(\.gz)?")


def logs_folder(database: Path) -> Path:
    """Where the logs of `database`'s event go.

    >>> logs_folder(Path("events/tcec.sqlite"))
    PosixPath('events/tcec.sqlite.logs')
    """
    return database.with_name(database.name + ".logs")


def _running(folder: Path, game: int, attempt: int) -> Path:
    return folder / f"game-{game}.attempt-{attempt}.log"


def _attempts(folder: Path, game: int) -> Iterator[tuple[int, Path]]:
    for path in folder.glob(f"game-{game}.attempt-*.log*"):
        found = _NAME.fullmatch(path.name)
        if found and int(found[1]) == game:
            yield int(found[2]), path


def find_log(folder: Path, game: int) -> Path | None:
    """The log of `game`'s latest attempt: compressed once it has ended, plain while it is
    played (and while it is compressed: the plain file goes once the other is whole); None
    when there is none.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ("game-3.attempt-7.log.gz", "game-3.attempt-9.log", "game-30.attempt-10.log"):
    ...     _ = (folder / name).write_text("")
    >>> find_log(folder, 3).name, find_log(folder, 4)
    ('game-3.attempt-9.log', None)
    >>> _ = (folder / "game-3.attempt-9.log.gz").write_text("")  # being compressed
    >>> find_log(folder, 3).name
    'game-3.attempt-9.log'
    """
    if not folder.is_dir():
        return None
    found = sorted(_attempts(folder, game), key=lambda item: (item[0], item[1].suffix != ".gz"))
    return found[-1][1] if found else None


def log_tail(path: Path, size: int) -> str:
    """The last `size` bytes or so of a log (plain or compressed), from a line's start.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "game-1.attempt-1.log"
    >>> _ = path.write_text("one\\ntwo\\nthree\\n")
    >>> log_tail(path, 8)
    'three\\n'
    """
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as packed:
            data = packed.read()[-size - 1 :]
    else:
        with path.open("rb") as plain:
            plain.seek(max(0, plain.seek(0, os.SEEK_END) - size - 1))
            data = plain.read()
    if len(data) > size:
        data = data[data.find(b"\n", 1) + 1 :]
    return data.decode("utf-8", "replace")


def _compress(path: Path) -> Path:
    """`path` as ``path.gz``, the plain file removed once that is whole: until then the
    plain file is the log (`find_log`), and a daemon killed meanwhile leaves it to the next
    one (`EngineLogs.sweep`).  (No temporary file: a new file costs more than its writing on
    some file systems, docs/measurements.md.)"""
    packed = path.with_name(path.name + ".gz")
    with path.open("rb") as source, gzip.open(packed, "wb", compresslevel=1) as target:
        shutil.copyfileobj(source, target, 1 << 20)
    path.unlink()
    return packed


#: the logs are written at most this often (the chunks of every game in one batch)
WRITE_EVERY_S = 0.25


class EngineLogs:
    """The daemon's writer of the logs in `folder`: one worker thread, given what came since
    its last batch at most every `WRITE_EVERY_S`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: dict[int, tuple[Path, IO[str]]] = {}  # attempt: its plain file, open
        self.ops: list[Callable[[], None]] = []
        self.chunks: dict[int, list[str]] = {}  # attempt: its chunks for the next batch
        self.writer: asyncio.Task[None] | None = None
        self.urgent = asyncio.Event()  # an attempt ended: its log is compressed at once
        self.failed: str | None = None  # the last write's error, until one succeeds
        self.cut: set[int] = set()  # attempts whose log could not be written: it ends there

    def path(self, game: int, attempt: int) -> Path:
        """The plain log of an attempt being played."""
        return _running(self.folder, game, attempt)

    def start(self, game: int, attempt: int) -> None:
        """An attempt starts: its log is created."""
        path = self.path(game, attempt)

        def create() -> None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.files[attempt] = (path, path.open("a", encoding="utf-8"))

        self._queue(create)

    def append(self, attempt: int, text: str) -> None:
        """A chunk of an attempt's log: the chunks of an attempt that come before its next
        batch is written are written together, at their place among its operations."""
        if not text:
            return
        chunks = self.chunks.get(attempt)
        if chunks is None:  # the batch's first: its write takes this list, and what joins it
            chunks = self.chunks[attempt] = []
            self._queue(functools.partial(self._write_chunks, attempt, chunks))
        chunks.append(text)

    def _write_chunks(self, attempt: int, chunks: list[str]) -> None:
        entry = self.files.get(attempt)
        if entry is None or attempt in self.cut:
            return
        try:
            entry[1].write("".join(chunks))  # flushed at the batch's end (`_run`)
        except OSError:  # a full disk: the log is cut here, the game goes on
            self.cut.add(attempt)
            raise

    def finish(self, attempt: int) -> asyncio.Future[Path | None]:
        """The attempt has ended (or was aborted): its log is compressed.  The future is the
        compressed log's path (None when the log could not be written); nothing needs to
        wait for it."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Path | None] = loop.create_future()

        def close() -> None:
            entry = self.files.pop(attempt, None)
            packed = None
            try:
                if entry is not None:
                    self.cut.discard(attempt)
                    with contextlib.suppress(OSError):  # a cut log's last buffer is lost
                        entry[1].close()
                    packed = _compress(entry[0])
            finally:
                loop.call_soon_threadsafe(_settle, done, packed)

        self.chunks.pop(attempt, None)  # a chunk that comes after this is not written
        self._queue(close)
        self.urgent.set()  # its end is awaited: written in the next batch, at once
        return done

    async def sweep(self) -> int:
        """Compress the plain logs an earlier daemon left (it was killed mid-game); how many."""
        if not self.folder.is_dir():
            return 0
        plain = [p for p in self.folder.glob("game-*.attempt-*.log") if p.is_file()]
        for path in plain:
            await asyncio.to_thread(_compress, path)
        return len(plain)

    def _queue(self, op: Callable[[], None]) -> None:
        self.ops.append(op)
        if self.writer is None or self.writer.done():
            self.writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        """Write what has come, in batches: what comes within `WRITE_EVERY_S` of a batch's
        first operation joins it (unless an attempt has ended, `urgent`), so that the worker
        thread is woken a few times a second, not for every line an engine prints."""
        while self.ops:
            if not self.urgent.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.urgent.wait(), WRITE_EVERY_S)
            batch, self.ops = self.ops, []
            self.chunks = {}  # the batch's lists are the writer's now: no chunk joins them
            self.urgent.clear()
            await asyncio.to_thread(self._run, batch)

    def _run(self, batch: list[Callable[[], None]]) -> None:
        for op in [*batch, self._flush]:
            try:
                op()
            except OSError as exc:  # a full disk: the log has a gap, the games go on
                if self.failed is None:
                    structlog.get_logger().error("engine_logs_failed", error=str(exc))
                self.failed = str(exc)
            else:
                self.failed = None

    def _flush(self) -> None:
        """Every open log's buffer to its file: one write each per batch."""
        failed: OSError | None = None
        for attempt, (_, handle) in self.files.items():
            if attempt in self.cut:
                continue
            try:
                handle.flush()
            except OSError as exc:  # a full disk: this log is cut here
                self.cut.add(attempt)
                failed = exc
        if failed is not None:
            raise failed

    async def close(self) -> None:
        """Wait for the last writes (made at once); the files of attempts still open are
        closed (plain: the next daemon compresses them)."""
        while self.writer is not None and not self.writer.done():
            self.urgent.set()
            await self.writer
        for _, handle in self.files.values():
            handle.close()
        self.files.clear()


def _settle(done: asyncio.Future[Path | None], value: Path | None) -> None:
    if not done.done():
        done.set_result(value)
