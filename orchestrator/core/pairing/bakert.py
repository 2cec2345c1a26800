"""bakert's weighted Swiss (docs/systems/bakert.md): one maximum-weight matching over the
whole field.

Every pair of players gets the weight of the seed's `weight` function, exactly as the
reference implementation (github.com/bakert/swiss) computes it, and the round is a
maximum-weight perfect matching (networkx's blossom algorithm) of those weights.  An odd
field adds the BYE as a pseudo-player who has met everyone that had a BYE.  Points per win,
draw and loss are the system's `points` option (the reference's 3/1/0 by default).  Ties
between optimal matchings are broken by the options' `seed` and the round number.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

import msgspec

from orchestrator.core.event.model import StateError, Tournament
from orchestrator.core.pairing.ranked import History, Seed, games_of, seeded
from orchestrator.core.pairing.registry import Draft, System

BYE = "BYE"  # the pseudo-player of an odd field (never a player's name: names are checked)


@dataclass(frozen=True)
class Entry:
    """A player as the reference sees one: an id, points, and one opponent per game."""

    id: str
    points: float
    opponents: tuple[str, ...]


def quality(importance: float, closeness: float) -> float:
    """How good a pairing is, from its importance and closeness (0..highest points).

    >>> quality(1, 2), quality(2, 1), quality(3, 2), quality(3, 0), quality(12, 1)
    (6, 6, 12, 4, 26)
    """
    return (importance + 1) * (closeness + 1)


def weight(highest: float, p1: Entry, p2: Entry) -> float:
    """The reference's weight of pairing `p1` with `p2` (p1 the later of the two in the
    field's order).  A pair that has met fewer times than `p1` met its most frequent
    opponent outweighs every pair that met the most; then the higher scorer's points
    (importance) and how close the two are (closeness).

    >>> a = Entry("Abimbola", 3, ("Boipelo",))
    >>> b = Entry("Boipelo", 0, ("Abimbola",))
    >>> c = Entry("Chiamaka", 1, ("Delo",))
    >>> weight(3, a, b), weight(3, b, c)
    (4, 6)
    """
    counter = Counter(p1.opponents)
    w: float = 0
    if counter and counter.get(p2.id, 1 << 62) < max(counter.values()):
        w += quality(highest, highest) + 1
    best, worst = max(p1.points, p2.points), min(p1.points, p2.points)
    w += quality(best, highest - (best - worst))
    return w


def weights(entries: Sequence[Entry]) -> list[tuple[int, int, float]]:
    """(i, j, weight) for every pair, i > j, in the reference's order.

    >>> field = [Entry("A", 3, ("B",)), Entry("B", 0, ("A",)), Entry("C", 1, ())]
    >>> weights(field)
    [(1, 0, 4), (2, 0, 8), (2, 1, 6)]
    """
    highest = max(e.points for e in entries)
    return [
        (i, j, weight(highest, entries[i], entries[j]))
        for i in range(len(entries))
        for j in range(i)
    ]


def entries(t: Tournament, points: tuple[float, float, float]) -> list[Entry]:
    """The field of the next round, in seed order, with `points` per win, draw and loss (a
    BYE is worth a win per game); the BYE pseudo-player last when the field is odd."""
    win, draw, loss = points
    value = {1.0: win, 0.5: draw, 0.0: loss}
    number = len(t.rounds) + 1
    score: dict[str, float] = {p.name: 0.0 for p in t.players}
    met: dict[str, list[str]] = {p.name: [] for p in t.players}
    had_bye: list[str] = []
    for _, g in t.finished_games():
        score[g.white] += value[g.points(g.white)]
        score[g.black] += value[g.points(g.black)]
        if not g.forfeit:
            met[g.white].append(g.black)
            met[g.black].append(g.white)
    for rnd in t.rounds:
        if rnd.bye is not None:
            score[rnd.bye] += win * t.rules.games_per_pair
            met[rnd.bye].append(BYE)
            had_bye.append(rnd.bye)
    field = [
        Entry(p.name, score[p.name], tuple(met[p.name])) for p in t.by_seed() if p.plays_in(number)
    ]
    if len(field) % 2:
        field.append(Entry(BYE, 0.0, tuple(had_bye)))
    return field


class BakertOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Points per win, draw and loss (win >= draw >= loss >= 0, win > loss), and the seed of
    the tie-break between optimal matchings.

    >>> BakertOptions(points=(1, 0.5, 0)).points
    (1, 0.5, 0)
    >>> BakertOptions(points=(1, 2, 0))
    Traceback (most recent call last):
    ...
    ValueError: points must be [win, draw, loss] with win >= draw >= loss >= 0, not [1, 2, 0]
    """

    points: Annotated[
        tuple[float, float, float], msgspec.Meta(description="[win, draw, loss] points")
    ] = (3.0, 1.0, 0.0)
    seed: Seed = 1

    def __post_init__(self) -> None:
        win, draw, loss = self.points
        if not (win >= draw >= loss >= 0 and win > loss):
            raise ValueError(
                "points must be [win, draw, loss] with win >= draw >= loss >= 0, "
                f"not {list(self.points)}"
            )


def best_matching(field: Sequence[Entry], rng: random.Random) -> list[tuple[int, int]]:
    """A maximum-weight perfect matching of `field` under `weights`; among optimal ones,
    the seeded random tie-break chooses (every weight is scaled so that no tie-break can
    outweigh a real difference).

    >>> field = [Entry("A", 3, ("B",)), Entry("B", 0, ("A",)), Entry("C", 1, ()), Entry("D", 1, ())]
    >>> chosen = best_matching(field, random.Random(1))  # A-C B-D or A-D B-C: 14 either way
    >>> sum(w for i, j, w in weights(field) if (j, i) in chosen)
    14
    """
    listed = weights(field)
    scale = len(field) + 1  # the tie-breaks of a matching add up to less than this
    import networkx as nx  # slow to import: only for the systems that need it

    graph = nx.Graph()
    graph.add_nodes_from(range(len(field)))
    for i, j, w in listed:
        graph.add_edge(i, j, weight=w * scale + rng.random())
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != len(field):  # pragma: no cover - a complete graph has one
        raise StateError("no perfect matching of the field exists")
    return [(min(a, b), max(a, b)) for a, b in matching]


def pair_bakert(t: Tournament, options: BakertOptions) -> Draft:
    """The first leg of the next round by bakert's weighted Swiss.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    >>> one = Round(1, (Game("A", "B", "1-0"), Game("C", "D", "1-0")))
    >>> draft = pair_bakert(Tournament(players, (one,)), BakertOptions())
    >>> sorted(tuple(sorted((g.white, g.black))) for g in draft.games())
    [('A', 'C'), ('B', 'D')]
    """
    field = entries(t, options.points)
    if len(field) < 2 or (len(field) == 2 and field[1].id == BYE):
        raise StateError(f"round {len(t.rounds) + 1}: fewer than two players are left to pair")
    history = History.of(t)
    rng = seeded(options.seed, history.round)
    pairs = best_matching(field, rng)
    bye = None
    named: list[tuple[str, str]] = []
    rank = {p: i for i, p in enumerate(history.ranked)}
    for i, j in pairs:
        a, b = field[i].id, field[j].id
        if BYE in (a, b):
            bye = b if a == BYE else a
            continue
        named.append((a, b) if rank[a] < rank[b] else (b, a))
    named.sort(key=lambda pair: rank[pair[0]])
    return games_of(history, named, bye)


BAKERT = System(
    "bakert",
    "bakert's weighted Swiss: one maximum-weight matching of the whole field",
    pair_bakert,
    BakertOptions,
    noun="a bakert Swiss",
)
