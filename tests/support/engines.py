"""Engine configs of the scripted engine (`scripted_engine.py`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from orchestrator.config.model import EngineConfig
from tests.support.paths import SCRIPTED


def scripted(name: str, *args: str, protocol: str = "uci", **config: Any) -> EngineConfig:
    """An engine config running the scripted test engine with the given behaviour."""
    command = (sys.executable, str(SCRIPTED), "--protocol", protocol, "--name", name, *args)
    return EngineConfig(name=name, command=command, protocol=protocol, **config)


def scripted_table(name: str, *args: str) -> str:
    """An [[engine]] table of the scripted engine named `name`, with `args`."""
    command = [sys.executable, str(SCRIPTED), "--name", name, *args]
    return f"[[engine]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n\n"


#: a season event's rules: a quick single round robin of scripted engines, adjudicated
QUICK_LEAGUE = """[event.tournament]
system = "round-robin"
format = "single"
tc = "10+0.1"
concurrency = 2
[event.adjudication]
win = { plies = 4, score = 10.0 }
draw = { from_move = 1, plies = 4, score = 0.15 }
max_moves = 12
"""


def scripted_engines_toml(names: list[str], tag: Path, delay_ms: int = 0) -> str:
    """[[engine]] tables of scripted engines whose results the pair of names decides."""
    return "".join(
        f"""
[[engine]]
name = "{name}"
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "--name", "{name}",
           "--by-opponent", "--seed", "{i}", "--delay", "{delay_ms}",
           "--tag", {json.dumps(str(tag))}]
rating = {3000 - 10 * i}
reuse = true
"""
        for i, name in enumerate(names)
    )


def kibitzers_toml(names: list[str], *extra: str) -> str:
    """[[kibitzer]] tables of scripted engines (`extra` arguments for the last one)."""
    out = ""
    for i, name in enumerate(names):
        args = [sys.executable, str(SCRIPTED), "--name", name, "--depth", "9"]
        if i == len(names) - 1:
            args += list(extra)
        out += f'\n[[kibitzer]]\nname = "{name}"\ndesc = "scripted"\ncommand = {json.dumps(args)}\n'
    return out
