from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from orchestrator.config.model import EngineConfig

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
#: the conformance files as the project's shared folder holds them (beside the clone in CI);
#: tests/data/tcec/ keeps a copy so that a clone alone can run the suite
SHARED_TCEC = ROOT.parent / "shared" / "conformance" / "tcec"


def conformance(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "tcec" / name).read_text())
    return data


SCRIPTED = Path(__file__).resolve().parent / "engines" / "scripted.py"


def scripted(name: str, *args: str, protocol: str = "uci", **config: Any) -> EngineConfig:
    """An engine config running the scripted test engine with the given behaviour."""
    command = (sys.executable, str(SCRIPTED), "--protocol", protocol, "--name", name, *args)
    return EngineConfig(name=name, command=command, protocol=protocol, **config)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def descendants(root: int | None = None) -> list[tuple[int, str, str]]:
    """(pid, state, command) of every live or zombie process below `root` (this process)."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        pid, state, ppid = int(entry.name), fields[0], int(fields[1])
        children.setdefault(ppid, []).append(pid)
        info[pid] = (state, name)
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out.append((pid, *info[pid]))
        todo.extend(children.get(pid, []))
    return out


def process_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


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
