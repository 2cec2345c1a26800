"""An incremental perfect matching for the greedy Swiss pairing.

The TCEC rules pair greedily and, for every candidate pair, ask whether the players left
over still have a perfect matching.  Running a whole blossom algorithm per candidate costs
seconds at a few hundred players, and networkx exposes no incremental augmentation.  So this
module keeps *one* perfect matching of the remaining players and answers each candidate with
at most one augmenting-path search (Edmonds' search with blossom contraction):

* if the candidate is the first player's current mate, the answer is yes at no cost;
* otherwise removing both players leaves their two mates exposed, and the rest has a perfect
  matching exactly when an augmenting path joins those two mates.

Vertices are integers ``0..n-1`` (the pairing order) and adjacency rows are int bitmasks,
which makes "the highest-ranked allowed partner" the lowest set bit.  A failed search proves
that no perfect matching exists (Berge); ``swiss.py`` has networkx confirm that verdict before
it permanently removes an encounter-history round.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator


def bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of `mask`, lowest first (lazily: callers often stop).

    >>> list(bits(0b10110))
    [1, 2, 4]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class PerfectMatching:
    """A perfect matching of the `alive` vertices of a graph given as bitmask rows."""

    def __init__(self, adjacency: list[int], alive: int) -> None:
        self.adj = adjacency
        self.alive = alive
        self.mate = [-1] * len(adjacency)

    @classmethod
    def find(cls, adjacency: list[int], alive: int) -> PerfectMatching | None:
        """A perfect matching of `alive`, or None when there is none.

        >>> square = [0b1010, 0b0101, 0b1010, 0b0101]  # the cycle 0-1-2-3-0
        >>> PerfectMatching.find(square, 0b1111).mate
        [1, 0, 3, 2]
        >>> PerfectMatching.find([0b110, 0b001, 0b001], 0b111) is None  # three vertices
        True
        """
        m = cls(adjacency, alive)
        free = alive
        for v in bits(alive):  # greedy start in pairing order: usually almost perfect
            if free >> v & 1:
                options = adjacency[v] & free & ~(1 << v)
                if options:
                    u = (options & -options).bit_length() - 1
                    m.mate[v], m.mate[u] = u, v
                    free &= ~((1 << v) | (1 << u))
        for v in bits(free):
            if m.mate[v] == -1 and not m._augment_from(v):
                return None
        return m

    def take(self, first: int, second: int) -> bool:
        """Pair `first` with `second` if the others keep a perfect matching; say whether.

        >>> path = [0b0010, 0b0101, 0b1010, 0b0100]  # the path 0-1-2-3
        >>> m = PerfectMatching.find(path, 0b1111)
        >>> m.take(1, 2)  # 0 and 3 would be left without partners
        False
        >>> m.take(0, 1)
        True
        """
        a, b = self.mate[first], self.mate[second]
        keep_alive = self.alive
        self.alive &= ~((1 << first) | (1 << second))
        if a == second:
            return True
        self.mate[a] = self.mate[b] = -1
        if self._short_path(a, b) or self._augment_from(a):
            return True
        self.alive = keep_alive
        self.mate[a], self.mate[b] = first, second
        return False

    def _short_path(self, a: int, b: int) -> bool:
        """Join exposed `a` and `b` directly or through one matched edge (most cases)."""
        adj, mate = self.adj, self.mate
        if adj[a] >> b & 1:
            mate[a], mate[b] = b, a
            return True
        target = adj[b]
        for u in bits(adj[a] & self.alive):
            w = mate[u]
            if target >> w & 1:
                mate[a], mate[u], mate[w], mate[b] = u, a, b, w
                return True
        return False

    def _augment_from(self, root: int) -> bool:
        """Search an augmenting path from exposed `root`; apply it and return True if found."""
        adj, mate, alive = self.adj, self.mate, self.alive
        parent: dict[int, int] = {}
        base = _Bases()  # blossom base of each vertex; itself unless contracted
        even = 1 << root
        labelled = 0  # vertices with a parent in the alternating tree
        queue = deque([root])

        def lca(x: int, y: int) -> int:
            seen = set()
            while True:
                x = base[x]
                seen.add(x)
                if mate[x] == -1:
                    break
                x = parent[mate[x]]
            while True:
                y = base[y]
                if y in seen:
                    return y
                y = parent[mate[y]]

        def mark(v: int, b: int, child: int, blossom: set[int]) -> int:
            marked = 0
            while base[v] != b:
                blossom.add(base[v])
                blossom.add(base[mate[v]])
                parent[v] = child
                marked |= 1 << v
                child = mate[v]
                v = parent[mate[v]]
            return marked

        # Grow the tree first and contract blossoms only when growth stalls: any order of
        # examining edges is correct, and in dense graphs this reaches the target long
        # before the even-even edges would have been contracted one by one.
        deferred: list[tuple[int, int]] = []  # (even vertex, its even neighbours then)
        while queue or deferred:
            if not queue:
                v, others = deferred.pop()
                for u in bits(others):
                    if base[v] != base[u]:
                        b = lca(v, u)
                        blossom: set[int] = set()
                        labelled |= mark(v, b, u, blossom) | mark(u, b, v, blossom)
                        for w in base.members(blossom):
                            base[w] = b
                            if not even >> w & 1:
                                even |= 1 << w
                                queue.append(w)
                if not queue:
                    continue
            v = queue.popleft()
            near = adj[v] & alive & ~(1 << v)
            if near & even:
                deferred.append((v, near & even))
            candidates = near & ~labelled & ~even
            while candidates:
                low = candidates & -candidates
                candidates ^= low
                u = low.bit_length() - 1
                if even & low:  # became even while this row was walked: a blossom edge
                    deferred.append((v, low))
                    continue
                if labelled & low:
                    continue
                parent[u] = v
                labelled |= low
                if mate[u] == -1:
                    while u != -1:
                        pu = parent[u]
                        next_u = mate[pu]
                        mate[u], mate[pu] = pu, u
                        u = next_u
                    return True
                even |= 1 << mate[u]
                queue.append(mate[u])
        return False


class _Bases(dict[int, int]):
    """Blossom bases, storing only the vertices that were contracted."""

    def __missing__(self, v: int) -> int:
        return v

    def members(self, bases: set[int]) -> list[int]:
        """Every vertex whose base is in `bases`."""
        moved = [w for w, b in self.items() if b in bases]
        return moved + [b for b in bases if b not in self]
