"""Pinning engines to CPUs (Linux): the host's cores read from `/sys`, and a running engine's
every thread moved to its set.  Which CPUs go to which game is the pure `core/cpus.py`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from orchestrator.config.model import Config, ConfigError
from orchestrator.core.cpus import Core, CpuPlan, TooFewCores, cpu_list, plan_slots
from orchestrator.engines.procfs import processes

__all__ = [
    "GAME_CPUS_ENV",
    "SYS_CPU",
    "cpu_plan",
    "host_cores",
    "pin",
    "pin_threads",
    "pinned",
    "read_cores",
]

SYS_CPU = Path("/sys/devices/system/cpu")
#: a game host's pool of CPUs for its pinned games, set where its worker starts ("8-15");
#: without it, every CPU of the worker's own CPU mask (`taskset`, systemd's `CPUAffinity=`)
GAME_CPUS_ENV = "ORCHESTRATOR_GAME_CPUS"


def read_cores(root: Path = SYS_CPU, allowed: Sequence[int] | None = None) -> list[Core]:
    """The cores of this host: each core's online CPUs (its SMT siblings, from
    `cpuN/topology/thread_siblings_list`) and its NUMA node (`cpuN/nodeM`), limited to the
    CPUs this process may use (`allowed`; its affinity mask by default).  A host without
    that information (not Linux, or a container hiding it) counts each CPU as a core of
    node 0.
    """
    if allowed is None:
        allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    mine = set(allowed)
    try:
        online = set(cpu_list((root / "online").read_text()))
    except (OSError, ValueError):
        online = set(mine)
    cores: dict[tuple[int, ...], int] = {}
    for cpu in sorted(online & mine):
        folder = root / f"cpu{cpu}"
        try:
            siblings = cpu_list((folder / "topology" / "thread_siblings_list").read_text())
        except (OSError, ValueError):
            siblings = (cpu,)
        nodes = sorted(
            int(p.name.removeprefix("node"))
            for p in (folder.iterdir() if folder.is_dir() else ())
            if p.name.startswith("node") and p.name.removeprefix("node").isdigit()
        )
        group = tuple(c for c in siblings if c in online and c in mine) or (cpu,)
        cores.setdefault(group, nodes[0] if nodes else 0)
    return sorted(Core(node, group) for group, node in cores.items())


def host_cores(root: Path = SYS_CPU, allowed: Sequence[int] | None = None) -> list[Core]:
    """The cores a game host announces for its pinned games: those of its own `/sys` and
    CPU mask (`read_cores`), narrowed to `ORCHESTRATOR_GAME_CPUS` when that is set.  A
    ValueError naming the variable when its value is not a CPU list."""
    cores = read_cores(root, allowed)
    pool = os.environ.get(GAME_CPUS_ENV, "").strip()
    if not pool:
        return cores
    try:
        wanted = set(cpu_list(pool))
    except ValueError as exc:
        raise ValueError(f"{GAME_CPUS_ENV}: {exc}") from None
    kept = (Core(c.node, tuple(cpu for cpu in c.cpus if cpu in wanted)) for c in cores)
    return [c for c in kept if c.cpus]


def pin(pid: int, cpus: Sequence[int]) -> None:
    """Move every thread of process `pid`, and of every process of the process group it
    leads (an engine's: a wrapper script's children started before the pin), to `cpus`
    (threads and processes started later inherit the set of the one that starts them).  A
    process that has exited is left alone."""
    for member in {pid, *(p.pid for p in processes() if p.group == pid)}:
        try:
            tids = [int(t.name) for t in Path(f"/proc/{member}/task").iterdir()]
        except OSError:
            tids = [member]
        for tid in tids:
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(tid, cpus)


def pinned(pid: int) -> tuple[int, ...]:
    """The CPUs process `pid` may run on, as `/proc/PID/status` lists them."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return cpu_list(line.split(":", 1)[1])
    return ()


def _threads(value: object) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


def pin_threads(config: Config) -> int | None:
    """The CPUs each engine of a pinned game needs (the field's largest `Threads` option),
    or None without `affinity`."""
    if not config.tournament.affinity:
        return None
    return max(_threads(e.options.get("Threads", 1)) for e in config.engines)


def cpu_plan(config: Config, root: Path = SYS_CPU) -> CpuPlan | None:
    """The pinned cores of `config`'s games on this machine (None without `affinity`, or
    when its games run on game hosts, which plan their own: `executor/worker.py`): a slot
    per game at once (`concurrency`), each engine enough whole cores for the largest
    `Threads` option of the field.  A `ConfigError` when the machine has too few cores."""
    section = config.tournament
    threads = pin_threads(config)
    if threads is None or config.remote:
        return None
    pool = cpu_list(section.cpus) if section.cpus else None
    try:
        return plan_slots(read_cores(root), section.concurrency, threads, pool)
    except TooFewCores as exc:
        raise ConfigError(
            f"{config.path}: [tournament] affinity: {exc} (lower concurrency, or widen cpus)"
        ) from None
