"""The incremental perfect matching against networkx's blossom algorithm."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.pairing.matching import PerfectMatching, bits


def random_graph(n: int, density: float, seed: int) -> list[int]:
    rng = random.Random(seed)
    rows = [0] * n
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < density:
                rows[a] |= 1 << b
                rows[b] |= 1 << a
    return rows


def nx_perfect(rows: list[int], vertices: list[int]) -> bool:
    g = nx.Graph()
    g.add_nodes_from(vertices)
    keep = set(vertices)
    g.add_edges_from((a, b) for a in vertices for b in bits(rows[a]) if b in keep and a < b)
    return 2 * len(nx.max_weight_matching(g, maxcardinality=True)) == len(vertices)


def is_perfect(m: PerfectMatching) -> bool:
    alive = list(bits(m.alive))
    return all(m.mate[v] in alive and m.adj[v] >> m.mate[v] & 1 for v in alive)


graphs = st.builds(
    random_graph,
    st.integers(0, 13).map(lambda k: 2 * k),
    st.sampled_from([0.1, 0.25, 0.4, 0.7, 0.95]),
    st.integers(0, 10**9),
)


@settings(max_examples=300, deadline=None)
@given(graphs)
def test_find_agrees_with_networkx(rows: list[int]) -> None:
    n = len(rows)
    m = PerfectMatching.find(rows, (1 << n) - 1)
    assert (m is not None) == nx_perfect(rows, list(range(n)))
    if m is not None:
        assert is_perfect(m)


@settings(max_examples=200, deadline=None)
@given(graphs, st.randoms(use_true_random=False))
def test_take_agrees_with_networkx(rows: list[int], rng: random.Random) -> None:
    """Every accepted or refused pair is what a full blossom run on the rest would say."""
    n = len(rows)
    m = PerfectMatching.find(rows, (1 << n) - 1)
    while m is not None and m.alive:
        first = (m.alive & -m.alive).bit_length() - 1
        candidates = list(bits(rows[first] & m.alive))
        rng.shuffle(candidates)
        taken = False
        for second in candidates:
            rest = [v for v in bits(m.alive) if v not in (first, second)]
            expected = nx_perfect(rows, rest)
            assert m.take(first, second) == expected
            assert is_perfect(m)
            if expected:
                taken = True
                break
        assert taken
