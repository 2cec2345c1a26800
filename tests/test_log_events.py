"""Every event name the package logs is in docs/log-events.md: operators' alerts match on them."""

from __future__ import annotations

import ast
import re

from tests.support.paths import ROOT

LEVELS = {"debug", "info", "warning", "error", "critical", "exception"}
#: an event name as the project writes them: snake case, with at least one underscore
NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)+")


def logged_names() -> dict[str, str]:
    """Each event name the package logs (`log.info("game_finished", ...)`), and where."""
    found = {}
    for path in sorted((ROOT / "orchestrator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in LEVELS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and NAME.fullmatch(node.args[0].value)
            ):
                found[node.args[0].value] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return found


def test_every_logged_event_is_documented() -> None:
    names = logged_names()
    assert {"game_finished", "engine_fault", "host_moves_unreadable"} <= set(names)
    documented = (ROOT / "docs" / "log-events.md").read_text(encoding="utf-8")
    missing = [f"{name} ({where})" for name, where in sorted(names.items())
               if f"`{name}`" not in documented]  # fmt: skip
    assert not missing, "not in docs/log-events.md: " + ", ".join(missing)
