"""Pinned cores: the core choice as a pure function over topologies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.cpus import Core, TooFewCores, cpu_list, cpu_text, plan_slots


@settings(max_examples=200, deadline=None)
@given(
    nodes=st.integers(1, 4),
    per_node=st.integers(1, 16),
    smt=st.integers(1, 2),
    slots=st.integers(1, 40),
    threads=st.integers(1, 8),
)
def test_slots_are_disjoint_whole_cores_on_one_node_where_one_fits(
    nodes: int, per_node: int, smt: int, slots: int, threads: int
) -> None:
    cores = [
        Core(n, tuple(t * nodes * per_node + n * per_node + c for t in range(smt)))
        for n in range(nodes)
        for c in range(per_node)
    ]
    per_engine = -(-threads // smt)
    try:
        plan = plan_slots(cores, slots, threads)
    except TooFewCores:
        assert 2 * per_engine * slots > len(cores)
        return
    assert len(plan.slots) == slots
    used = [cpu for s in plan.slots for cpu in s.cpus] + list(plan.spare)
    assert sorted(used) == sorted(cpu for c in cores for cpu in c.cpus)  # each CPU once
    node_of = {cpu: c.node for c in cores for cpu in c.cpus}
    core_of = {cpu: c for c in cores for cpu in c.cpus}
    for slot in plan.slots:
        for engine in (slot.first, slot.second):
            assert len(engine) >= threads  # enough CPUs for its threads
            assert all(set(core_of[cpu].cpus) <= set(engine) for cpu in engine)  # whole cores
        assert not set(slot.first) & set(slot.second)
    if nodes * (per_node // (2 * per_engine)) >= slots:
        # the nodes have room for every slot whole: none straddles two
        assert all(len({node_of[c] for c in s.cpus}) == 1 for s in plan.slots)


def test_cpu_lists_read_back() -> None:
    assert cpu_list(cpu_text([0, 2, 3, 4, 9])) == (0, 2, 3, 4, 9)
    with pytest.raises(ValueError, match="CPU list"):
        cpu_list("0-")
