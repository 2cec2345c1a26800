"""structlog set-up: stable event names (SPEC.md section 5), JSON lines when not on a TTY."""

from __future__ import annotations

import logging
import sys

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
