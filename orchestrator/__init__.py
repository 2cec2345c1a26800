"""orchestrator: a daemon that runs computer-chess engine championships unattended.

The pure core (`core/`: the pairing systems, the rules of one game, the event as data), one
typed model of the event between the store and everything that reads or changes it
(`event/`), and the shell: engines, games, executors, the store, the daemon, the command line
and the web view.  docs/ is the interface reference.
"""

__all__ = [
    "cli",
    "config",
    "core",
    "daemon",
    "engines",
    "event",
    "executor",
    "game",
    "store",
    "web",
]
