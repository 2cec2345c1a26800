"""The `orchestrator` command line; each group of commands lives in its own module."""

from __future__ import annotations

import sys

from orchestrator.cli import controls, daemon, offline, play, reading, web
from orchestrator.cli.app import app

__all__ = ["app", "controls", "daemon", "main", "offline", "play", "reading", "web"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
