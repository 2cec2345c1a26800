"""structlog set-up: stable event names (docs/log-events.md), JSON lines when not on a TTY."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TextIO

import structlog

#: the file the log goes to (`--log-file`), which the daemon's own processes (its web view,
#: its kibitzers) are given too; None: standard output
_FILE: list[Path | None] = [None]
#: `--log-level`: the least level logged (the daemon's children are given it too)
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_LEVEL = ["info"]


def log_level() -> str:
    """The level `configure` was given, by name (the daemon's children log at it too)."""
    return _LEVEL[0]


def log_file() -> Path | None:
    """The file `configure` sent the log to, if any (the daemon's children log there too)."""
    return _FILE[0]


class LogFile:
    """A log file, appended to a line at a time, and opened at its first line: a command
    refused before it logs anything leaves no file behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: TextIO | None = None

    def write(self, text: str) -> int:
        if self.handle is None:
            self.handle = self.path.open("a", encoding="utf-8", buffering=1)
        return self.handle.write(text)

    def flush(self) -> None:
        if self.handle is not None:
            self.handle.flush()

    def isatty(self) -> bool:
        return False


def configure(
    *,
    json: bool | None = None,
    level: str = "info",
    stream: TextIO | None = None,
    file: Path | None = None,
) -> None:
    """Pretty lines on a terminal, one JSON object per line otherwise (journald, files), on
    standard output, or `stream`, or appended to `file` (`--log-file`; `run --output` keeps
    standard output for its games); the daemon's lines at `level` and above (`LEVELS`), the
    libraries' from warnings up, or all of them at "debug" (asyncio's, Dask's, and
    python-chess's engine lines outside the moves: handshakes, new games)."""
    out: TextIO = stream or sys.stdout
    _FILE[0] = file
    _LEVEL[0] = level
    if file is not None:
        out = LogFile(file)  # type: ignore[assignment]
    if json is None:
        json = not out.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    _libraries_through(renderer, out if out is not sys.stdout else None, LEVELS[level])


class _Libraries(logging.Handler):
    """The root logger's handler: what the libraries log (aiohttp, asyncio, distributed)
    as `library_log` lines, rendered like the daemon's own, on the stdout of the moment (or
    the stream the daemon's own lines go to).  A line is written by structlog's
    `PrintLogger`, as the daemon's own are: under its lock of the stream, so that a line
    from another thread (aiosqlite logs from its own) never cuts one of the daemon's."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__()
        self.stream: TextIO | None = stream

    def emit(self, record: logging.LogRecord) -> None:
        try:
            structlog.PrintLogger(self.stream or sys.stdout).msg(self.format(record))
        except Exception:  # a log line must never take the process down
            self.handleError(record)


def _library_log(
    logger: object, name: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    record = event.get("_record")
    event["message"] = event.pop("event")
    event["event"] = "library_log"
    event["logger"] = record.name if isinstance(record, logging.LogRecord) else "?"
    return event


def _libraries_through(
    renderer: structlog.typing.Processor, stream: TextIO | None, level: int = logging.INFO
) -> None:
    """Send the standard library's log records (warnings and worse; everything at `level`
    DEBUG) through structlog: one line each, JSON when the daemon's lines are, a traceback
    inside its line."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _Libraries)]:
        root.removeHandler(handler)
    handler = _Libraries(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                _library_log,
                structlog.processors.format_exc_info,
            ],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    least = logging.DEBUG if level <= logging.DEBUG else max(logging.WARNING, level)
    handler.setLevel(least)
    root.addHandler(handler)
    if level <= logging.DEBUG or root.level > least:
        root.setLevel(least)
    if level <= logging.DEBUG:  # python-chess's, quiet otherwise (`cli/base.py`)
        logging.getLogger("chess.engine").setLevel(logging.DEBUG)


class RateLimit(logging.Filter):
    """At most `burst` records of one kind (logger and message) every `period` seconds; the
    rest are dropped, and the next record that passes says how many were.  A server out of
    descriptors may fail thousands of times a second: its log must stay readable.

    >>> limit = RateLimit(burst=2, period=60.0)
    >>> record = logging.LogRecord("asyncio", logging.ERROR, "", 0, "accept failed", (), None)
    >>> [limit.filter(record) for _ in range(4)]
    [True, True, False, False]
    """

    def __init__(self, burst: int = 10, period: float = 60.0) -> None:
        super().__init__()
        self.burst, self.period = burst, period
        self.seen: dict[tuple[str, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        start, passed, dropped = self.seen.get(key, (now, 0, 0))
        if now - start >= self.period:
            start, passed = now, 0
        if passed >= self.burst:
            self.seen[key] = (start, passed, dropped + 1)
            return False
        if dropped:
            record.msg = f"{record.msg} (and {dropped} more like it, not logged)"
        self.seen[key] = (start, passed + 1, 0)
        return True


class ClientFaultsInOneLine(logging.Filter):
    """A request the client got wrong (malformed, too long: aiohttp answers 400) is one line
    in the log, not a traceback: it is the client's fault, and a crowd of them must not
    bury the server's own errors.

    >>> from aiohttp.http_exceptions import BadStatusLine
    >>> record = logging.LogRecord("aiohttp.server", logging.ERROR, "", 0,
    ...                            "Error handling request from %s", ("10.0.0.1",),
    ...                            (BadStatusLine, BadStatusLine("GARBAGE"), None))
    >>> ClientFaultsInOneLine().filter(record), record.exc_info, record.getMessage()
    (True, None, "Error handling request from 10.0.0.1: 400, message: Bad status line 'GARBAGE'")
    """

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            record.msg, record.args = f"{record.getMessage()}: {' '.join(str(error).split())}", ()
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"  # the client's fault
        return True


def limit_server_errors() -> None:
    """Rate-limit the error lines of the web server's libraries (asyncio, aiohttp), and
    write a client's bad request in one line."""
    for name in ("asyncio", "aiohttp.server", "aiohttp.web", "aiohttp.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimit) for f in logger.filters):
            logger.addFilter(RateLimit())
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, ClientFaultsInOneLine) for f in server.filters):
        server.addFilter(ClientFaultsInOneLine())
