"""The compiled weighted matching of the weighted systems gives networkx's total weight, by
either of its methods, and bakert's matching of a large field through its classes gives the
whole field's optimum."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.pairing import bakert, weighted

Edge = tuple[int, int, int]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    size = draw(st.integers(2, 24))
    density = draw(st.sampled_from([0.3, 0.7, 1.0]))
    levels = draw(st.sampled_from([3, 50, 10**6]))  # few weights (many ties) or many
    rng = random.Random(draw(st.integers(0, 2**32)))
    edges = [
        (i, j, rng.randrange(levels) - levels // 4)
        for i in range(size)
        for j in range(i + 1, size)
        if rng.random() < density
    ]
    return size, edges


def networkx_best(size: int, edges: list[Edge], max_cardinality: bool) -> tuple[int, int]:
    """(pairs, total weight) of networkx's maximum-weight matching."""
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_weighted_edges_from(edges)
    matching = nx.max_weight_matching(graph, maxcardinality=max_cardinality)
    weight = {(min(i, j), max(i, j)): w for i, j, w in edges}
    return len(matching), sum(weight[min(a, b), max(a, b)] for a, b in matching)


def total(edges: list[Edge], pairs: list[tuple[int, int]]) -> tuple[int, int]:
    weight = {(min(i, j), max(i, j)): w for i, j, w in edges}
    assert len({v for pair in pairs for v in pair}) == 2 * len(pairs)  # a matching
    return len(pairs), sum(weight[pair] for pair in pairs)


@settings(max_examples=150, deadline=None)
@given(graphs(), st.booleans())
def test_the_blossom_gives_networkx_total_weight(graph: tuple[int, list[Edge]], most: bool) -> None:
    size, edges = graph
    pairs = weighted.by_blossom(size, edges, max_cardinality=most)
    assert total(edges, pairs) == networkx_best(size, edges, most)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_the_assignment_proves_only_optimal_matchings(graph: tuple[int, list[Edge]]) -> None:
    size, edges = graph
    pairs = weighted.by_assignment(size, edges)
    if pairs is not None:
        assert total(edges, pairs) == networkx_best(size, edges, True)


def test_the_assignment_proves_most_dense_fields_and_declines_odd_cycles() -> None:
    """On the dense graphs of a score group it nearly always proves the optimum (so the
    blossom is rarely needed); on two heavy triangles joined by a light edge it declines."""
    proved = 0
    for seed in range(40):
        rng = random.Random(seed)
        size = 60 + seed % 2
        edges = [
            (i, j, 1000 - (abs(i - j) - size // 2) ** 2 + rng.randrange(30))
            for i in range(size)
            for j in range(i + 1, size)
        ]
        pairs = weighted.by_assignment(size, edges)
        if pairs is not None:
            proved += 1
            assert total(edges, pairs) == networkx_best(size, edges, True)
    assert proved >= 30
    triangles = [(0, 1, 9), (1, 2, 9), (0, 2, 9), (3, 4, 9), (4, 5, 9), (3, 5, 9), (2, 3, 1)]
    assert weighted.by_assignment(6, triangles) is None
    assert total(triangles, weighted.max_weight_matching(6, triangles, max_cardinality=True)) == (
        3,
        19,
    )


def test_exact_keeps_every_comparison() -> None:
    rng = random.Random(7)
    floats = [rng.random() * 1000 + rng.choice([0, 0.5, 0.25]) for _ in range(200)]
    ints = weighted.exact(floats)
    for _ in range(2000):
        a, b, c, d = (rng.randrange(200) for _ in range(4))
        assert (floats[a] + floats[b] < floats[c] + floats[d]) == (
            ints[a] + ints[b] < ints[c] + ints[d]
        )


@st.composite
def fields(draw: st.DrawFn) -> list[bakert.Entry]:
    """A bakert field: points from a few values (large classes of twins), opponents with
    repeats (entries that are not plain), the BYE when odd."""
    size = draw(st.integers(4, 70))
    values = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4.5, 6, 7]), min_size=1, max_size=4))
    rng = random.Random(draw(st.integers(0, 2**32)))
    repeats = draw(st.sampled_from([0, 0, 0.1, 0.5]))
    names = [f"P{i}" for i in range(size)]
    entries = []
    for name in names:
        met = [rng.choice(names) for _ in range(rng.randrange(4))]
        if met and rng.random() < repeats:
            met.append(met[0])
        entries.append(bakert.Entry(name, rng.choice(values), tuple(m for m in met if m != name)))
    if size % 2:
        entries.append(bakert.Entry(bakert.BYE, 0.0, ()))
    return entries


@settings(max_examples=120, deadline=None)
@given(fields(), st.integers(0, 2**16))
def test_bakert_by_classes_is_as_heavy_as_the_whole_matching(
    field: list[bakert.Entry], seed: int
) -> None:
    listed = bakert.weights(field)
    weight = {(j, i): w for i, j, w in listed}
    whole = bakert.whole_matching(field, random.Random(seed))
    classes = bakert.class_matching(field, random.Random(seed))
    assert sorted(v for pair in classes for v in pair) == list(range(len(field)))
    assert sum(weight[p] for p in classes) == sum(weight[p] for p in whole)
    assert classes == bakert.class_matching(field, random.Random(seed))  # deterministic


@st.composite
def dense_graphs(draw: st.DrawFn) -> list[list[int]]:
    """A complete graph of even size as a symmetric matrix, with few weight levels (many
    ties, odd cycles in the best assignment) or many."""
    size = 2 * draw(st.integers(2, 14))
    levels = draw(st.sampled_from([2, 5, 1000]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    matrix = [[0] * size for _ in range(size)]
    for i in range(size):
        for j in range(i):
            matrix[i][j] = matrix[j][i] = rng.randrange(levels)
    return matrix


@settings(max_examples=200, deadline=None)
@given(dense_graphs())
def test_the_pruned_dense_matching_gives_networkx_total_weight(matrix: list[list[int]]) -> None:
    """`dense_matching` on every size (its assignment, bound and pruning forced on small
    graphs): a perfect matching of networkx's total weight."""
    import numpy as np

    size = len(matrix)
    edges = [(i, j, matrix[i][j]) for i in range(size) for j in range(i + 1, size)]
    original = weighted.ASSIGNMENT_MIN
    weighted.ASSIGNMENT_MIN = 2
    try:
        pairs = weighted.dense_matching(np.array(matrix, dtype=np.int64))
    finally:
        weighted.ASSIGNMENT_MIN = original
    assert total(edges, pairs) == networkx_best(size, edges, True)


@settings(max_examples=60, deadline=None)
@given(fields())
def test_bakert_s_weight_matrix_equals_the_reference_weights(field: list[bakert.Entry]) -> None:
    matrix = bakert.weight_matrix(field)
    for i, j, w in bakert.weights(field):
        assert matrix[i, j] == matrix[j, i] == w
