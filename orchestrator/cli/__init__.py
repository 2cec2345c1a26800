"""The `orchestrator` command line; each group of commands lives in its own module."""

from __future__ import annotations

import signal
import sys

from orchestrator.cli import controls, daemon, offline, play, reading, web
from orchestrator.cli.app import app

__all__ = ["app", "controls", "daemon", "main", "offline", "play", "reading", "web"]


def main() -> None:
    """The `orchestrator` command (a stop signal before a command starts exits 0)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, lambda *_: sys.exit(0))
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
