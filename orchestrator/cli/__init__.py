"""The `orchestrator` command line; each group of commands lives in its own module."""

from __future__ import annotations

import signal
import sys

from orchestrator.cli import controls, daemon, offline, play, reading, web
from orchestrator.cli.app import app
from orchestrator.daemon.system import become_subreaper

__all__ = ["app", "controls", "daemon", "main", "offline", "play", "reading", "web"]


def main() -> None:
    """The `orchestrator` command (a stop signal before a command starts exits 0)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, lambda *_: sys.exit(0))
    if sys.argv[1:2] == ["run"]:
        # the daemon is the subreaper of everything it starts, from before its first engine
        # (only in a daemon's own process: it must reap what it adopts)
        become_subreaper()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
