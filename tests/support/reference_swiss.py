"""A literal, slow reading of the TCEC Swiss rule text, used as the tests' oracle.

Every viability question is a fresh networkx blossom run ("full blossom per candidate"),
and the encounter-history removals are recomputed from scratch for every stored round,
with no shortcut.  Only for small events.
"""

from __future__ import annotations

import itertools

import networkx as nx

from orchestrator.core.event.model import Game, Pairing, Tournament


def _has_perfect_matching(players: list[str], allowed: set[frozenset[str]]) -> bool:
    graph = nx.Graph()
    graph.add_nodes_from(players)
    graph.add_edges_from(tuple(p) for p in allowed if p <= set(players))
    return 2 * len(nx.max_weight_matching(graph, maxcardinality=True)) == len(players)


class _Figures:
    def __init__(self, t: Tournament) -> None:
        self.seed = {p.name: p.seed for p in t.players}
        self.score = dict.fromkeys(self.seed, 0.0)
        self.wgd = dict.fromkeys(self.seed, 0)
        self.byes = dict.fromkeys(self.seed, 0)
        self.history: list[set[frozenset[str]]] = []

    def order(self, names: list[str] | None = None) -> list[str]:
        names = list(self.seed) if names is None else names
        return sorted(names, key=lambda n: (-self.score[n], self.seed[n]))

    def allowed(self, players: list[str], removed: int) -> set[frozenset[str]]:
        met = set().union(*self.history[removed:]) if self.history[removed:] else set()
        return {
            frozenset((a, b))
            for a, b in itertools.combinations(players, 2)
            if frozenset((a, b)) not in met and abs(self.wgd[a] + self.wgd[b]) <= 2
        }

    def removals(self, players: list[str], removed: int) -> int:
        while not _has_perfect_matching(players, self.allowed(players, removed)):
            removed += 1
            assert removed <= len(self.history), "no viable pairing at all"
        return removed


def reference_pair(t: Tournament) -> Pairing:
    f = _Figures(t)
    removed = 0
    for rnd in t.rounds:
        playing = [n for g in rnd.games for n in (g.white, g.black)]
        removed = f.removals(sorted(set(playing)), removed)
        for g in rnd.games:
            f.wgd[g.white] += 1
            f.wgd[g.black] -= 1
            f.score[g.white] += g.points(g.white)
            f.score[g.black] += g.points(g.black)
        if rnd.bye:
            f.byes[rnd.bye] += 1
            f.score[rnd.bye] += t.rules.games_per_pair
        f.history.append({frozenset((g.white, g.black)) for g in rnd.games})
    number = len(t.rounds) + 1
    order = f.order()
    bye = None
    if len(order) % 2:
        bye = sorted(order, key=lambda n: (-f.byes[n], order.index(n)))[-1]
        order.remove(bye)
    removed = f.removals(order, removed)
    allowed = f.allowed(order, removed)
    unpaired = list(order)
    pairs = []
    while unpaired:
        first = unpaired.pop(0)
        for second in unpaired:
            rest = [n for n in unpaired if n != second]
            if frozenset((first, second)) in allowed and _has_perfect_matching(rest, allowed):
                unpaired.remove(second)
                pairs.append((first, second))
                break
        else:
            raise AssertionError("greedy pairing failed")
    games = []
    for first, second in reversed(pairs):
        if t.rules.format == "double":
            games.append(Game(second, first))
            continue
        if f.wgd[first] != f.wgd[second]:
            black = first if f.wgd[first] > f.wgd[second] else second
        elif f.score[first] != f.score[second]:
            black = first if f.score[first] > f.score[second] else second
        else:
            black = second if number % 4 in (2, 3) else first
        white = second if black == first else first
        games.append(Game(white, black))
    if t.rules.format == "double":
        back = [Game(g.black, g.white) for g in games]
        games = (
            games + back
            if t.rules.schedule == "legs"
            else [x for p in zip(games, back, strict=True) for x in p]
        )
    return Pairing(number, tuple(games), bye=bye, dropped_rounds=removed)
