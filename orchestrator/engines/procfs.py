"""The processes of this host as Linux's `/proc` lists them: what the daemon needs to find an
engine's process group (`affinity.pin`) and the orphans it adopted (`daemon/system.py`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["Process", "children", "processes"]


class Process(NamedTuple):
    pid: int
    state: str  # R, S, Z, ...
    parent: int
    group: int  # its process group
    name: str = ""  # its command, as the kernel names it (15 characters at most)


def processes(proc: Path = Path("/proc")) -> Iterator[Process]:
    """Every process of the host (one that exits meanwhile is left out), from its
    `/proc/PID/stat`.

    >>> import os
    >>> me = next(p for p in processes() if p.pid == os.getpid())
    >>> (me.parent, me.group) == (os.getppid(), os.getpgid(0))
    True
    """
    for entry in proc.iterdir():
        if entry.name.isdigit() and (process := _read(entry)) is not None:
            yield process


def children(proc: Path = Path("/proc")) -> Iterator[Process]:
    """This process's children, the orphans it adopted as a subreaper among them (one that
    exits meanwhile is left out).  Read from the `children` list the kernel keeps for each
    of its threads, so the cost does not grow with what else the host runs; where the
    kernel keeps none (built without `CONFIG_PROC_CHILDREN`), from every process.

    >>> import subprocess, sys
    >>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    >>> [p.pid for p in children() if p.pid == child.pid] == [child.pid]
    True
    >>> child.kill(); _ = child.wait()
    """
    me = os.getpid()
    tasks = proc / str(me) / "task"
    if not (tasks / str(me) / "children").exists():
        yield from (p for p in processes(proc) if p.parent == me)
        return
    pids: set[int] = set()
    for task in tasks.iterdir():
        try:
            pids.update(int(pid) for pid in (task / "children").read_text().split())
        except OSError:  # the thread ended
            continue
    for pid in sorted(pids):
        if (process := _read(proc / str(pid))) is not None and process.parent == me:
            yield process


def _read(entry: Path) -> Process | None:
    """A process from the fields of its `stat` after its command (which may hold spaces and
    parentheses); None if it is gone."""
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    name = stat[stat.find("(") + 1 : stat.rfind(")")]
    fields = stat.rpartition(")")[2].split()
    if len(fields) <= 2:
        return None
    return Process(int(entry.name), fields[0], int(fields[1]), int(fields[2]), name)
