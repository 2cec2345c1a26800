"""TOML text from plain values, for the configs this program writes itself (`orchestrator
match`, a season's events, `season next`).  Python's `tomllib` reads TOML but does not write
it; the values here are few: strings (as JSON writes them: TOML's basic strings have the same
escapes), numbers, booleans, lists and inline tables."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

__all__ = ["toml_key", "toml_table", "toml_value"]


def toml_key(key: str) -> str:
    """A key as TOML writes it: bare where it can be, quoted otherwise.

    >>> toml_key("system_options"), toml_key("Skill Level")
    ('system_options', '"Skill Level"')
    """
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_value(value: object) -> str:
    """A value as TOML writes it.

    >>> toml_value({"games": 4, "tc": "10+0.1", "on": True, "list": ["a", 1.5]})
    '{ games = 4, tc = "10+0.1", on = true, list = ["a", 1.5] }'
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    return json.dumps(str(value))


def toml_table(header: str, table: Mapping[str, object]) -> list[str]:
    """A table's lines: its header (`[name]`, `[[name]]`), then `key = value` for each key
    whose value is not None.

    >>> toml_table("[[engine]]", {"name": "A", "rating": None, "command": ["a"]})
    ['[[engine]]', 'name = "A"', 'command = ["a"]']
    """
    lines = [header]
    lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items() if v is not None]
    return lines
