"""Processes and ports: what a test looks at to know that nothing was left behind."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orchestrator.engines.procfs import processes


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(db: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`orchestrator serve` of `db` on a free port, as a process of its own (its stdout and
    stderr piped, as text), and the port; killed at the end if it is still running."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield server, port
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def descendants(root: int | None = None) -> list[tuple[int, str, str]]:
    """(pid, state, command) of every live or zombie process below `root` (this process)."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, str]] = {}
    for process in processes():
        children.setdefault(process.parent, []).append(process.pid)
        info[process.pid] = (process.state, process.name)
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


def engines_alive(marker: str) -> list[str]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and "scripted_engine.py" in cmdline and state != "Z":
            alive.append(cmdline)
    return alive


def wait_for(predicate: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def engine_pids(tag: Path, *, unique: bool = False) -> dict[str, int]:
    """The scripted engines of the event tagged `tag`, by their --name (`unique`: only the
    names of one process now, not one whose previous game's process is still ending)."""
    found: dict[str, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if str(tag) in words and "--name" in words:
            found.setdefault(words[words.index("--name") + 1], []).append(int(entry.name))
    return {name: pids[-1] for name, pids in found.items() if not unique or len(pids) == 1}
