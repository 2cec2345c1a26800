"""orchestrator: a daemon that runs computer-chess engine championships unattended.

The pure core (`core/`: the pairing systems, the rules of one game, the event as data), one
typed model of the event between the store and everything that reads or changes it
(`event/`), and the shell: engines, games, executors, the store, the daemon, the command line
and the web view.  docs/ is the interface reference.
"""

import os

# numpy's and scipy's OpenBLAS each start a pool of threads when loaded or first used (Dask
# loads numpy; scipy's pool starts at a late fit): the ratings' matrices are the size of a
# field, and a daemon's thread count stays the same for a month only without them.  Set
# before anything loads them; an operator's own setting stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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
