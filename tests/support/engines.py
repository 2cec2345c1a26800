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
