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


def bits(mask: int) -> list[int]:
    """The indices of the set bits of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class PerfectMatching:
    """A perfect matching of the `alive` vertices of a graph given as bitmask rows."""

    def __init__(self, adjacency: list[int], alive: int) -> None:
        self.adj = adjacency
        self.alive = alive
        self.mate = [-1] * len(adjacency)

    @classmethod
    def find(cls, adjacency: list[int], alive: int) -> PerfectMatching | None:
        """A perfect matching of `alive`, or None when there is none."""
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
        """Pair `first` with `second` if the others keep a perfect matching; say whether."""
        a, b = self.mate[first], self.mate[second]
        keep_alive = self.alive
        self.alive &= ~((1 << first) | (1 << second))
        if a == second:
            return True
        self.mate[a] = self.mate[b] = -1
        if self.adj[a] >> b & 1:
            self.mate[a], self.mate[b] = b, a
            return True
        if self._augment_from(a):
            return True
        self.alive = keep_alive
        self.mate[a], self.mate[b] = first, second
        return False

    def _augment_from(self, root: int) -> bool:
        """Search an augmenting path from exposed `root`; apply it and return True if found."""
        adj, mate, alive = self.adj, self.mate, self.alive
        parent: dict[int, int] = {}
        base = {v: v for v in bits(alive)}
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

        while queue:
            v = queue.popleft()
            candidates = adj[v] & alive & (even | ~labelled) & ~(1 << v)
            while candidates:
                low = candidates & -candidates
                candidates ^= low
                u = low.bit_length() - 1
                if base[v] == base[u] or mate[v] == u:
                    continue
                if u == root or (mate[u] != -1 and mate[u] in parent):
                    b = lca(v, u)
                    blossom: set[int] = set()
                    labelled |= mark(v, b, u, blossom) | mark(u, b, v, blossom)
                    for w, bw in base.items():
                        if bw in blossom:
                            base[w] = b
                            if not even >> w & 1:
                                even |= 1 << w
                                queue.append(w)
                elif u not in parent:
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
