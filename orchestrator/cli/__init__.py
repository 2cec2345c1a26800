"""The `orchestrator` command line; each group of commands lives in its own module.

A command imports only what it uses: `main` loads the one module that defines the command it
is asked for, and typer builds that command alone (building all of them takes longer than
pairing a round).  `app`, every command together, is built for `--help`, for a command it
does not know, and for whoever imports it (the tests).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any

__all__ = ["COMMANDS", "app", "main"]

#: every command, and the module of `orchestrator.cli` that defines it
COMMANDS: dict[str, str] = {
    "pair": "offline",
    "simulate": "offline",
    "schema": "offline",
    "play": "play",
    "run": "daemon",
    "match": "daemon",
    "check": "daemon",
    "status": "reading",
    "standings": "reading",
    "pairings": "reading",
    "export": "reading",
    "serve": "web",
    "kibitz": "kibitz",
    "pause": "controls",
    "resume": "controls",
    "adjudicate": "controls",
    "replay": "controls",
    "withdraw": "controls",
    "engine-update": "controls",
    "pair-manual": "controls",
    "state": "controls",
    "log": "controls",
    "season": "season",
}


def _load(*modules: str) -> Any:
    for module in modules:
        importlib.import_module(f"orchestrator.cli.{module}")
    from orchestrator.cli.base import app as every

    return every


def __getattr__(name: str) -> Any:
    if name == "app":  # every command, for --help and the tests
        return _load(*dict.fromkeys(COMMANDS.values()))
    raise AttributeError(name)


def main() -> None:
    """The `orchestrator` command (a stop signal before a command starts exits 0)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            # at once, not by raising SystemExit: that could land inside a C extension's
            # import, and the half-made module then crashed the interpreter's shutdown
            # (SIGSEGV, seen once under load); a command that has work to finish installs
            # its own handlers first (`run`)
            signal.signal(sig, lambda *_: os._exit(0))
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    if wanted in ("run", "match", "season"):
        # the daemon is the subreaper of everything it starts, from before its first engine
        # (only in a daemon's own process: it must reap what it adopts)
        from orchestrator.daemon.system import become_subreaper

        become_subreaper()
    try:
        if wanted in COMMANDS:
            from orchestrator.cli.base import one_command

            _load(COMMANDS[wanted])
            one_command(wanted)(args=sys.argv[2:], prog_name=f"orchestrator {wanted}")
        else:
            _load(*dict.fromkeys(COMMANDS.values()))()
    except KeyboardInterrupt:
        sys.exit(130)
