"""structlog set-up: stable event names (docs/log-events.md), JSON lines when not on a TTY."""

from __future__ import annotations

import logging
import sys
import time

import structlog


def configure(*, json: bool | None = None, level: int = logging.INFO) -> None:
    """Pretty lines on a terminal, one JSON object per line otherwise (journald, files)."""
    if json is None:
        json = not sys.stdout.isatty()
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
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=False,
    )


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


def limit_server_errors() -> None:
    """Rate-limit the error lines of the web server's libraries (asyncio, aiohttp)."""
    for name in ("asyncio", "aiohttp.server", "aiohttp.web", "aiohttp.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimit) for f in logger.filters):
            logger.addFilter(RateLimit())
