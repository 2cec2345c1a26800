"""The processes of this host as Linux's `/proc` lists them: what the daemon needs to find an
engine's process group (`affinity.pin`) and the orphans it adopted (`daemon/system.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["Process", "processes"]


class Process(NamedTuple):
    pid: int
    state: str  # R, S, Z, ...
    parent: int
    group: int  # its process group
    name: str = ""  # its command, as the kernel names it (15 characters at most)


def processes(proc: Path = Path("/proc")) -> Iterator[Process]:
    """Every process of the host (one that exits meanwhile is left out), from the fields of
    `/proc/PID/stat` after its command (which may hold spaces and parentheses).

    >>> import os
    >>> me = next(p for p in processes() if p.pid == os.getpid())
    >>> (me.parent, me.group) == (os.getppid(), os.getpgid(0))
    True
    """
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 2:
            yield Process(int(entry.name), fields[0], int(fields[1]), int(fields[2]), name)
