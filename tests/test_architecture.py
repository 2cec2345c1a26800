"""The layering the folder layout promises, checked by walking every import of the package.

- `core/` imports nothing from the rest of the package (a pure core over plain data);
- `store/` imports only `core/` (rows in, rows out);
- `web/` and `event/` never import `daemon/`;
- nothing imports `cli/` (but `__main__`, the entry point).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "orchestrator"


def layer(module: str) -> str:
    """'orchestrator.core.pairing.swiss' -> 'core'; top-level modules are layers of their own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports() -> list[tuple[Path, str, str]]:
    """(file, its layer, imported orchestrator module) for every import in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("orchestrator."):
                    found.append((path, layer(module), name))
    return found


ALL = imports()


def test_the_walk_sees_the_package() -> None:
    layers = {own for _, own, _ in ALL}
    assert {
        "core",
        "store",
        "event",
        "daemon",
        "web",
        "cli",
        "game",
        "engines",
        "executor",
    } <= layers
    assert len(ALL) > 100


@pytest.mark.parametrize(
    ("importer", "allowed"),
    [
        ("core", {"core"}),
        ("store", {"core", "store"}),
    ],
)
def test_lower_layers_import_only_below(importer: str, allowed: set[str]) -> None:
    wrong = [
        (path.name, name)
        for path, own, name in ALL
        if own == importer and layer(name) not in allowed
    ]
    assert not wrong


def test_only_the_daemon_and_the_cli_know_where_games_run() -> None:
    """`executor/` (local, Dask) sits under the daemon (and the kibitz process, which places
    a kibitzer on a game host through the same scheduler): the event model and the web view
    never depend on it, and it depends on nothing above the game and the engines."""
    users = {own for _, own, name in ALL if layer(name) == "executor"}
    assert users <= {"executor", "daemon", "kibitz", "cli"}, users
    below = {layer(name) for _, own, name in ALL if own == "executor"}
    # (`timeouts`: a leaf of its own, asyncio's timeout on every Python 3.11)
    assert below <= {"executor", "core", "config", "engines", "game", "timeouts"}, below


def test_the_timeouts_module_is_a_leaf() -> None:
    """`orchestrator/timeouts.py` is below every layer that uses it: it imports nothing of
    the package."""
    assert not [name for path, own, name in ALL if own == "timeouts"]
    assert any(layer(name) == "timeouts" for _, _, name in ALL)


@pytest.mark.parametrize("importer", ["web", "event"])
def test_web_and_event_never_import_the_daemon(importer: str) -> None:
    wrong = [
        (path.name, name) for path, own, name in ALL if own == importer and layer(name) == "daemon"
    ]
    assert not wrong


def test_nothing_imports_the_cli() -> None:
    """Only the entry point (`python -m orchestrator`) does."""
    outside = {"cli", "__main__"}
    wrong = [(path, name) for path, own, name in ALL if own not in outside and layer(name) == "cli"]
    assert not wrong


def test_pairing_a_round_loads_only_what_it_uses() -> None:
    """`orchestrator pair` is a pure computation: it never loads python-chess, networkx
    (a Swiss that pairs), the database or Dask (bench/cli.py times it)."""
    import subprocess
    import sys

    heavy = ("chess", "networkx", "aiosqlite", "distributed", "aiohttp")
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print([m for m in {heavy!r} if m in sys.modules], "
        "file=sys.stderr))\n"
        "sys.argv = ['orchestrator', 'pair', 'tests/data/tcec/s20_swiss_test_2.json']\n"
        "from orchestrator.cli import main\nmain()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "[]"


def import_graph(read: Callable[[Path], str] | None = None) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in it: a function's imports, and
    those under `if TYPE_CHECKING:`, for a module that needs another's types stands on it as
    much as one that runs its code).  Importing `a.b.c` runs the packages `a.b` first: an
    edge to each such package that is not one of the importer's own (its own packages are
    being imported already when it runs)."""
    modules = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in PACKAGE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        own = {".".join(module.split(".")[:n]) for n in range(1, module.count(".") + 1)}
        edges = graph.setdefault(module, set())
        text = read(path) if read is not None else path.read_text(encoding="utf-8")
        pending: list[ast.AST] = [ast.parse(text)]
        while pending:
            for node in ast.iter_child_nodes(pending.pop()):
                pending.append(node)
                targets: list[str] = []
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    targets = [
                        f"{node.module}.{a.name}"
                        if f"{node.module}.{a.name}" in modules
                        else node.module
                        for a in node.names
                    ]
                for target in targets:
                    if target not in modules:
                        continue
                    parts = target.split(".")
                    packages = {".".join(parts[:n]) for n in range(1, len(parts))} - own
                    edges.update({target} | (packages & modules.keys()))
        edges.discard(module)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph` (networkx's simple cycles).

    >>> cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    """
    import networkx as nx

    return sorted(sorted(c) for c in nx.simple_cycles(nx.DiGraph(graph)))


def test_no_module_imports_its_own_importer() -> None:
    """The package is a tree of imports: no cycle, however long, at import time, in a
    function's own imports or for types alone."""
    graph = import_graph()
    assert sum(len(edges) for edges in graph.values()) > 300
    assert cycles(graph) == []


def test_the_cycle_check_sees_an_import_for_types() -> None:
    """The check itself: the registry importing the model back for its types alone (as it
    once did) is a cycle."""
    registry = PACKAGE / "core/pairing/registry.py"

    def read(path: Path) -> str:
        text = path.read_text(encoding="utf-8")
        if path == registry:
            text += "\nif TYPE_CHECKING:\n    from orchestrator.core.event.model import Rules\n"
        return text

    assert cycles(import_graph(read)) == [
        ["orchestrator.core.event.model", "orchestrator.core.pairing.registry"]
    ]


def test_the_cycle_check_sees_a_cycle_through_a_package() -> None:
    """The check itself: a module importing a package whose `__init__` imports it back."""
    graph = import_graph()
    graph["orchestrator.core.event.model"].add("orchestrator.core.pairing")
    graph["orchestrator.core.pairing"].add("orchestrator.core.pairing.round")
    assert cycles(graph)


def test_the_daemon_loads_structlog_without_rich() -> None:
    """structlog would load rich (and pygments) for tracebacks the daemon's lines never
    carry, a seventh of a second at every start (`orchestrator/__init__.py`): the daemon's
    modules load structlog without it, and typer still finds rich for its help."""
    import os
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import orchestrator.daemon.run, orchestrator.cli\n"
        "import structlog.dev\n"
        "print('structlog' in sys.modules, 'rich' in sys.modules, structlog.dev.rich)\n"
        "import rich.console\n"
        "print(rich.console.__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.split("\n")[:2] == ["True False None", "rich.console"]
    shown = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={**os.environ, "COLUMNS": "80", "TERM": "dumb"},
    )
    assert "╭─ Commands" in shown.stdout  # rich's panels: typer found rich
