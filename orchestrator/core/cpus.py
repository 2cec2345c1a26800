"""Pinned cores (`affinity = true`): which CPUs each game slot, and each engine of it, runs on.

A host's CPUs come as `Core`s: the SMT siblings of one physical core, on one NUMA node.  Cores
are only ever handed out whole, so that no engine shares a core's execution units with
another.  Every game slot gets the same hardware: each of its two engines gets enough whole
cores for `threads` CPUs (the largest `Threads` option among the engines), and a slot stays on
one NUMA node whenever one has room for it.  What no slot uses is left over, for the daemon
and the kibitzers.

Pure functions: the topology is read from `/sys` by the shell (`engines/affinity.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Core", "CpuPlan", "Slot", "TooFewCores", "cpu_list", "cpu_text", "plan_slots"]


class TooFewCores(ValueError):
    """The host's cores cannot give every slot its own."""


def cpu_list(text: str) -> tuple[int, ...]:
    """The CPUs of a Linux CPU list ("0-3,8"), sorted, each once; ValueError when malformed.

    >>> cpu_list("0-3,8,10-11")
    (0, 1, 2, 3, 8, 10, 11)
    >>> cpu_list(" 5 ")
    (5,)
    >>> cpu_list("3-1")
    Traceback (most recent call last):
    ...
    ValueError: '3-1' is not a CPU list such as "0-15" or "0-7,16-23"
    """
    cpus: set[int] = set()
    try:
        for part in text.strip().split(","):
            first, dash, last = part.strip().partition("-")
            low, high = int(first), int(last if dash else first)
            if not 0 <= low <= high:
                raise ValueError
            cpus.update(range(low, high + 1))
    except ValueError:
        raise ValueError(f'{text!r} is not a CPU list such as "0-15" or "0-7,16-23"') from None
    return tuple(sorted(cpus))


def cpu_text(cpus: Iterable[int]) -> str:
    """A CPU list as Linux writes it (`/proc/PID/status`, `Cpus_allowed_list`).

    >>> cpu_text([0, 1, 2, 3, 8, 10, 11])
    '0-3,8,10-11'
    >>> cpu_text([])
    ''
    """
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


@dataclass(frozen=True, order=True)
class Core:
    """One physical core: its CPUs (SMT siblings, lowest first) and its NUMA node."""

    node: int
    cpus: tuple[int, ...]


@dataclass(frozen=True)
class Slot:
    """The CPUs of one game at a time: one set per engine (first and second), disjoint."""

    first: tuple[int, ...]
    second: tuple[int, ...]

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(sorted(self.first + self.second))


@dataclass(frozen=True)
class CpuPlan:
    """Every slot's CPUs, and the CPUs left over (for the daemon and the kibitzers)."""

    slots: tuple[Slot, ...]
    spare: tuple[int, ...]


def _cores_for(cores: Sequence[Core], threads: int) -> int:
    """How many of these cores one engine takes: enough whole cores for `threads` CPUs."""
    width = min(len(c.cpus) for c in cores)
    return -(-threads // width)


def plan_slots(
    cores: Sequence[Core], slots: int, threads: int = 1, pool: Iterable[int] | None = None
) -> CpuPlan:
    """Whole cores for `slots` games at once, each engine `threads` CPUs' worth of them.

    `pool` (the `cpus` setting) limits the CPUs used; a core keeps only its CPUs in it.

    Two cores with two SMT siblings each, on one node, and one 1-thread game: each engine gets
    a whole core, siblings together.

    >>> smt = [Core(0, (0, 2)), Core(0, (1, 3))]
    >>> plan_slots(smt, 1).slots
    (Slot(first=(0, 2), second=(1, 3)),)

    Two NUMA nodes of four cores: a slot never straddles them while one has room, and what no
    slot takes is spare.

    >>> numa = [Core(n, (c,)) for n, first in ((0, 0), (1, 4)) for c in range(first, first + 4)]
    >>> plan = plan_slots(numa, 3)
    >>> [s.cpus for s in plan.slots], plan.spare
    ([(0, 1), (4, 5), (2, 3)], (6, 7))
    >>> [s.cpus for s in plan_slots(numa, 1, threads=3).slots]
    [(0, 1, 2, 4, 5, 6)]
    >>> plan_slots(numa, 1, pool=[0, 1, 2]).spare
    (2,)
    >>> try:
    ...     plan_slots(numa, 5)
    ... except TooFewCores as exc:
    ...     print(exc)
    5 games at once of 1-thread engines need 10 cores; 8 are available
    """
    wanted = None if pool is None else set(pool)
    usable = sorted(
        Core(c.node, tuple(cpu for cpu in c.cpus if wanted is None or cpu in wanted)) for c in cores
    )
    usable = [c for c in usable if c.cpus]
    if not usable:
        raise TooFewCores("no CPU is available to pin games to")
    per_engine = _cores_for(usable, threads)
    need = 2 * per_engine * slots
    if need > len(usable):
        raise TooFewCores(
            f"{slots} games at once of {threads}-thread engines need {need} cores; "
            f"{len(usable)} are available"
        )
    free: dict[int, list[Core]] = {}
    for core in usable:
        free.setdefault(core.node, []).append(core)

    def take(count: int) -> list[Core]:
        """`count` cores from the node with most room for them (the lowest node among
        equals), or across nodes in order when none has room."""
        fits = [n for n, left in free.items() if len(left) >= count]
        if fits:
            node = max(fits, key=lambda n: (len(free[n]), -n))
            chosen, free[node] = free[node][:count], free[node][count:]
            return chosen
        chosen = []
        for node in sorted(free):
            while free[node] and len(chosen) < count:
                chosen.append(free[node].pop(0))
        return chosen

    def cpus_of(chosen: list[Core]) -> tuple[int, ...]:
        return tuple(sorted(cpu for c in chosen for cpu in c.cpus))

    taken: list[Slot] = []
    for _ in range(slots):
        if any(len(left) >= 2 * per_engine for left in free.values()):
            both = take(2 * per_engine)  # the whole slot on one node
            taken.append(Slot(cpus_of(both[:per_engine]), cpus_of(both[per_engine:])))
        else:  # each engine on one node at least, where one has room for it
            first = take(per_engine)
            taken.append(Slot(cpus_of(first), cpus_of(take(per_engine))))
    spare = tuple(sorted(cpu for left in free.values() for c in left for cpu in c.cpus))
    return CpuPlan(tuple(taken), spare)
