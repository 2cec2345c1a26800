"""orchestrator: a daemon that runs computer-chess engine championships unattended.

The pure core (`core/`: the pairing systems, the rules of one game, the event as data), one
typed model of the event between the store and everything that reads or changes it
(`event/`), and the shell: engines, games, executors, the store, the daemon, the command line
and the web view.  docs/ is the interface reference.
"""

import importlib.machinery
import os
import sys

# numpy's and scipy's OpenBLAS each start a pool of threads when loaded or first used (Dask
# loads numpy; scipy's pool starts at a late fit): the ratings' matrices are the size of a
# field, and a daemon's thread count stays the same for a month only without them.  Set
# before anything loads them; an operator's own setting stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# structlog's dev module loads rich, and rich pygments, for its pretty tracebacks wherever rich
# is installed (typer's optional dependency): a seventh of a second of CPU at every start of
# every command, for tracebacks the daemon's lines never carry (a library's exception is
# put into its line as text before rendering, `logs.py`).  So rich is hidden from structlog
# while structlog loads (whenever that is), and from nothing else: typer still finds it.


class _StructlogWithoutRich:
    """A finder of structlog alone, once: python's own, with rich hidden while it runs."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        if name != "structlog":
            return None
        sys.meta_path.remove(_StructlogWithoutRich)  # type: ignore[arg-type]
        spec = importlib.machinery.PathFinder.find_spec(name)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: object) -> None:
            hide = "rich" not in sys.modules
            if hide:
                sys.modules["rich"] = None  # type: ignore[assignment]  # (`import rich` fails)
            try:
                run(module)
            finally:
                if hide and sys.modules.get("rich", 0) is None:
                    del sys.modules["rich"]

        loader.exec_module = exec_module  # type: ignore[union-attr]
        return spec


if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.meta_path.insert(0, _StructlogWithoutRich)  # type: ignore[arg-type]

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
