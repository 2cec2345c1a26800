"""Maximum-weight matching, compiled, for the weighted systems (Ólafsson, bakert), which match
hundreds to a thousand players at once: networkx's pure-Python blossom takes minutes there.

Three exact methods:

1. **The assignment relaxation** (scipy's `linear_sum_assignment`, for a maximum-cardinality
   matching of at least `ASSIGNMENT_MIN` vertices).  Every perfect matching M is an assignment
   made of 2-cycles worth ``2·w(M)``, so the best assignment A (no vertex assigned to itself;
   an odd graph gets one dummy vertex, joined to all at weight 0) bounds the best matching:
   ``w(A) >= 2·OPT``.  When A is made of even cycles only, taking every other edge of each
   cycle (the heavier alternation) gives a perfect matching M' with ``2·w(M') >= w(A)``, hence
   ``w(M') = OPT``.  That is checked in integers on every call; an odd cycle, an unusable
   edge or any failed check falls through to
2. **rustworkx's blossom** (`max_weight_matching`, Galil's O(n³) variant of Edmonds'
   primal-dual algorithm, the one networkx implements, in Rust and in integers).
3. For a complete graph given as a matrix (`dense_matching`, bakert's whole field), the
   blossom on **the edges that can still be in an optimal matching**: the best assignment's
   dual potentials give every edge a reduced cost r >= 0, and a perfect matching is worth
   the assignment's bound less the reduced costs of its edges; so once some perfect matching
   falls short of the bound by g, no edge with r > g is in a better one.  The blossom then
   runs on a few percent of the edges.

Weights are integers, so both methods are exact; `exact` turns binary fractions into integers
without changing any comparison.  Among optimal matchings the callers break ties themselves
(bakert perturbs its weights with a seeded stream; Ólafsson takes what the method gives,
which is deterministic).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

ASSIGNMENT_MIN = 64  # below this the blossom is as fast as building the assignment matrix
FLOAT_EXACT = 1 << 50  # every sum the assignment solver forms stays an exact float64 below this
NEAREST = 8  # the edges of least reduced cost per vertex that seed `dense_matching`'s bound


def exact(weights: Sequence[float]) -> list[int]:
    """The same weights as integers with one common factor, so that no comparison between
    two sums of weights changes (every float is a binary fraction: the factor is the largest
    of their denominators).

    >>> exact([1.5, 0.25, 3.0])
    [6, 1, 12]
    """
    ratios = [Fraction(w) for w in weights]
    scale = max((r.denominator for r in ratios), default=1)
    return [int(r * scale) for r in ratios]


def max_weight_matching(
    size: int, edges: Iterable[tuple[int, int, int]], *, max_cardinality: bool = False
) -> list[tuple[int, int]]:
    """A maximum-weight matching of the graph on vertices ``0..size-1`` with weighted
    `edges` (i, j, weight): among the matchings of the most pairs if `max_cardinality`.
    Pairs come out as (lower, higher), sorted.

    >>> max_weight_matching(4, [(0, 1, 5), (1, 2, 11), (2, 3, 5)])
    [(1, 2)]
    >>> max_weight_matching(4, [(0, 1, 5), (1, 2, 11), (2, 3, 5)], max_cardinality=True)
    [(0, 1), (2, 3)]
    """
    listed = list(edges)
    if max_cardinality and size >= ASSIGNMENT_MIN:
        found = by_assignment(size, listed)
        if found is not None:
            return found
    return by_blossom(size, listed, max_cardinality=max_cardinality)


def by_blossom(
    size: int, edges: list[tuple[int, int, int]], *, max_cardinality: bool
) -> list[tuple[int, int]]:
    """rustworkx's blossom algorithm (any graph, exact in integers).

    >>> by_blossom(3, [(0, 1, 2), (1, 2, 3)], max_cardinality=False)
    [(1, 2)]
    """
    import rustworkx as rx  # compiled; imported only by the systems that need it

    graph: rx.PyGraph[None, int] = rx.PyGraph()
    graph.add_nodes_from([None] * size)
    graph.add_edges_from(edges)
    matching = rx.max_weight_matching(graph, max_cardinality=max_cardinality, weight_fn=lambda w: w)
    return sorted((min(a, b), max(a, b)) for a, b in matching)


def by_assignment(size: int, edges: list[tuple[int, int, int]]) -> list[tuple[int, int]] | None:
    """A maximum-weight maximum-cardinality matching read from the best assignment, or None
    when the assignment does not prove one (an odd cycle, no perfect assignment, weights too
    large for exact floats).  One vertex is left unmatched when `size` is odd.

    >>> by_assignment(4, [(0, 1, 5), (1, 2, 11), (2, 3, 5), (0, 3, 1)])  # 5 + 5 < 11 + 1
    [(0, 3), (1, 2)]
    >>> by_assignment(3, [(0, 1, 1), (1, 2, 1), (0, 2, 1)])  # a triangle of equal weights
    [(1, 2)]
    >>> by_assignment(6, [(0, 1, 9), (1, 2, 9), (0, 2, 9), (3, 4, 9), (4, 5, 9), (3, 5, 9),
    ...                   (2, 3, 1)]) is None  # two triangles: the relaxation is fractional
    True
    """
    top = max((abs(w) for _, _, w in edges), default=0)
    if (top + 1) * (size + 2) * 4 >= FLOAT_EXACT:
        return None
    import numpy as np  # scipy's dependency; both imported only here

    n = size + size % 2  # an odd graph gets a dummy vertex: its partner is left unmatched
    matrix = np.full((n, n), -np.inf)
    for i, j, w in edges:
        if i != j:
            matrix[i, j] = matrix[j, i] = w
    if n > size:
        matrix[size, :size] = matrix[:size, size] = 0
    target = _assignment(matrix)
    if target is None:
        return None
    chosen = _proved(matrix, _cycles(target))
    return None if chosen is None else [pair for pair in chosen if pair[1] < size]


def _assignment(matrix: npt.NDArray[np.float64]) -> list[int] | None:
    """The best assignment of `matrix` (-inf: not allowed) as each vertex's target, or None
    when there is none."""
    from scipy.optimize import linear_sum_assignment

    try:
        _, partner = linear_sum_assignment(matrix, maximize=True)
    except ValueError:  # no assignment avoids the missing edges
        return None
    return [int(p) for p in partner]


def _cycles(target: list[int]) -> list[list[int]]:
    """The cycles of an assignment (a permutation), each from its least vertex."""
    seen = [False] * len(target)
    cycles = []
    for start in range(len(target)):
        if seen[start]:
            continue
        cycle = [start]
        seen[start] = True
        while target[cycle[-1]] != start:
            cycle.append(target[cycle[-1]])
            seen[cycle[-1]] = True
        cycles.append(cycle)
    return cycles


def _proved(
    matrix: npt.NDArray[np.float64], cycles: list[list[int]]
) -> list[tuple[int, int]] | None:
    """The matching the assignment's cycles prove optimal (every other edge of each cycle,
    the heavier half), or None when a cycle is odd or uses a missing edge."""
    bound = 0
    chosen: list[tuple[int, int]] = []
    for cycle in cycles:
        if len(cycle) % 2:
            return None
        steps = [(min(a, b), max(a, b)) for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)]
        worth = [matrix[step] for step in steps]
        if any(w == -float("inf") for w in worth):
            return None
        bound += int(sum(worth))
        even, odd = int(sum(worth[0::2])), int(sum(worth[1::2]))
        chosen += steps[0::2] if len(cycle) == 2 or even >= odd else steps[1::2]
    if 2 * sum(int(matrix[pair]) for pair in chosen) < bound:  # pragma: no cover - exact
        return None
    return sorted(chosen)


def dense_matching(weights: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """A maximum-weight perfect matching of the complete graph whose integer edge weights
    are the symmetric matrix `weights` (of an even size; the diagonal is not read).  Pairs
    come out as (lower, higher), sorted.

    The best assignment proves its own cycles optimal when they are all even.  Otherwise
    its dual potentials (a_i + b_j >= w_ij, with equality on the assignment) give each
    vertex y_i = (a_i + b_i) / 2, so that every edge's reduced cost r_ij = y_i + y_j - w_ij
    is >= 0 and a perfect matching M is worth sum(y) - r(M).  A perfect matching M0 (the
    blossom on each vertex's `NEAREST` edges of least reduced cost, the assignment's cycle
    edges and every edge between the odd cycles' first vertices, which hold a perfect
    matching) falls short of sum(y) by g = r(M0); a better matching has r(M) <= g, so none
    of its edges has r_ij > g, and the blossom on the others is exact.

    >>> import numpy as np
    >>> two_triangles = np.array([[0, 9, 9, 1, 0, 0], [9, 0, 9, 0, 0, 0], [9, 9, 0, 0, 0, 0],
    ...                           [1, 0, 0, 0, 9, 9], [0, 0, 0, 9, 0, 9], [0, 0, 0, 9, 9, 0]])
    >>> dense_matching(two_triangles)
    [(0, 3), (1, 2), (4, 5)]
    """
    import numpy as np

    size = len(weights)
    top = int(np.abs(weights).max(initial=0))
    if size < ASSIGNMENT_MIN or (top + 1) * (size + 2) * 4 >= FLOAT_EXACT:
        everything = np.triu_indices(size, 1)
        return _blossom_of(weights, everything)
    matrix = weights.astype(np.float64)
    np.fill_diagonal(matrix, -np.inf)
    target = _assignment(matrix)
    if target is None:  # pragma: no cover - a complete graph has an assignment
        return _blossom_of(weights, np.triu_indices(size, 1))
    cycles = _cycles(target)
    proved = _proved(matrix, cycles)
    if proved is not None:
        return proved
    reduced = _reduced_costs(matrix, np.array(target))
    near = min(NEAREST, size - 1)
    nearest = np.argpartition(reduced, near - 1, axis=1)[:, :near]
    seed = np.zeros((size, size), dtype=bool)
    seed[np.repeat(np.arange(size), near), nearest.ravel()] = True
    for cycle in cycles:
        seed[cycle, cycle[1:] + cycle[:1]] = True
    firsts = [cycle[0] for cycle in cycles if len(cycle) % 2]
    seed[np.ix_(firsts, firsts)] = True
    seed |= seed.T
    np.fill_diagonal(seed, False)
    first = _blossom_of(weights, np.nonzero(np.triu(seed)))
    gap = sum(reduced[pair] for pair in first)
    keep = np.triu(reduced <= gap)
    np.fill_diagonal(keep, False)
    return _blossom_of(weights, np.nonzero(keep))


def _reduced_costs(
    matrix: npt.NDArray[np.float64], target: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Each edge's reduced cost y_i + y_j - w_ij >= 0 under the best assignment `target`'s
    dual potentials (the diagonal +inf).  The column potentials b are the least solution of
    b_j >= b_t(i) + w_ij - w_i,t(i) (longest paths: no cycle gains, the assignment being
    optimal), and a_i = w_i,t(i) - b_t(i).  Every value is an exact float (integers and
    halves below `FLOAT_EXACT`)."""
    import numpy as np

    size = len(matrix)
    finite = np.where(np.isfinite(matrix), matrix, -float(FLOAT_EXACT))
    own = finite[np.arange(size), target]
    step = finite - own[:, None]
    b = np.zeros(size)
    for _ in range(size):
        longer = np.maximum(b, (b[target][:, None] + step).max(axis=0))
        if np.array_equal(longer, b):
            break
        b = longer
    a = own - b[target]
    y = (a + b) / 2
    reduced = y[:, None] + y[None, :] - finite
    np.fill_diagonal(reduced, np.inf)
    return reduced


def _blossom_of(
    weights: npt.NDArray[np.int64], where: tuple[npt.NDArray[np.intp], ...]
) -> list[tuple[int, int]]:
    """The blossom's maximum-cardinality matching over the edges (where[0][k], where[1][k])."""
    rows, cols = where
    edges = [
        (int(i), int(j), int(w))
        for i, j, w in zip(rows.tolist(), cols.tolist(), weights[rows, cols].tolist(), strict=True)
    ]
    return by_blossom(len(weights), edges, max_cardinality=True)
