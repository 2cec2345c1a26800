"""bakert's weighted Swiss (docs/systems/bakert.md): one maximum-weight matching over the
whole field.

Every pair of players gets the weight of the seed's `weight` function, exactly as the
reference implementation (github.com/bakert/swiss) computes it, and the round is a
maximum-weight perfect matching (`weighted.dense_matching`) of those weights.  An odd
field adds the BYE as a pseudo-player who has met everyone that had a BYE.  Points per win,
draw and loss are the system's `points` option (the reference's 3/1/0 by default).  Ties
between optimal matchings are broken by the options' `seed` and the round number.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated

import msgspec

from orchestrator.core.event.model import StateError, Tournament
from orchestrator.core.pairing.ranked import History, Seed, games_of, seeded
from orchestrator.core.pairing.registry import Draft, System
from orchestrator.core.pairing.weighted import dense_matching

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

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


WHOLE_MOST = 200  # fields up to this size are matched whole, larger ones through their classes
NOISE_BITS = 4
NOISE = 1 << NOISE_BITS  # the random tie-breaks of `whole_matching` are below this


def best_matching(field: Sequence[Entry], rng: random.Random) -> list[tuple[int, int]]:
    """A maximum-weight perfect matching of `field` under `weights`; among optimal ones,
    the seeded random tie-break chooses.  Fields of up to `WHOLE_MOST` entries are matched
    whole (`whole_matching`), larger ones through their classes (`class_matching`) unless
    more than `WHOLE_MOST / 2` entries are not plain (`bonus_ends`), which happens once most
    players have met someone twice.

    >>> field = [Entry("A", 3, ("B",)), Entry("B", 0, ("A",)), Entry("C", 1, ()), Entry("D", 1, ())]
    >>> chosen = best_matching(field, random.Random(1))  # A-C B-D or A-D B-C: 14 either way
    >>> sum(w for i, j, w in weights(field) if (j, i) in chosen)
    14
    """
    if len(field) <= WHOLE_MOST or 2 * len(bonus_ends(field)) > WHOLE_MOST:
        return whole_matching(field, rng)
    return class_matching(field, rng)


def whole_matching(field: Sequence[Entry], rng: random.Random) -> list[tuple[int, int]]:
    """The maximum-weight perfect matching of the whole field.  Among optimal matchings the
    BYE goes to the lowest-ranked player it can (points, then seed: the field's order), then
    seeded random tie-breaks choose (a number below `NOISE` on every pair): every weight is
    scaled so that neither can outweigh a real difference, and the random ones not the BYE's.

    >>> field = [Entry("A", 2, ()), Entry("B", 2, ()), Entry("C", 0, ()), Entry("D", 0, ())]
    >>> whole_matching(field, random.Random(1))
    [(0, 1), (2, 3)]
    >>> field = [Entry(n, 0, ()) for n in "ABCDE"] + [Entry(BYE, 0, ())]
    >>> [pair for pair in whole_matching(field, random.Random(1)) if 5 in pair]  # E: seed 5
    [(4, 5)]
    """
    import numpy as np  # scipy's dependency: imported by the weighted systems only

    size = len(field)
    base = weight_matrix(field)
    values = np.unique(base)
    scale = max(Fraction(float(v)).denominator for v in values)  # every weight a whole number
    random_part = size // 2 * NOISE + 1  # the random tie-breaks of a matching add up to less
    bye_part = random_part * (size + 1)  # above every BYE preference
    total = np.rint(base * scale).astype(np.int64) * bye_part
    bye = next((i for i, e in enumerate(field) if e.id == BYE), None)
    if bye is not None:
        lowest = sorted(range(size), key=lambda i: (-field[i].points, i))
        place = np.empty(size, dtype=np.int64)
        place[lowest] = np.arange(size)
        total[bye, :] += place * random_part
        total[:, bye] += place * random_part
    pairs = size * (size - 1) // 2  # one tie-break each, drawn in the order of `weights`
    drawn = rng.getrandbits(NOISE_BITS * pairs).to_bytes((NOISE_BITS * pairs + 7) // 8, "little")
    nibbles = np.frombuffer(drawn, dtype=np.uint8)
    noise = np.stack([nibbles & 15, nibbles >> 4], axis=1).ravel()[:pairs].astype(np.int64)
    lower = np.tril_indices(size, -1)  # (i, j), i > j, row by row: the order of `weights`
    total[lower] += noise
    upper = np.triu_indices(size, 1)
    total[upper] = total.T[upper]
    matching = dense_matching(total)
    if 2 * len(matching) != size:  # pragma: no cover - a complete graph has one
        raise StateError("no perfect matching of the field exists")
    return matching


def weight_matrix(field: Sequence[Entry]) -> npt.NDArray[np.float64]:
    """`weights` as a symmetric matrix (the diagonal 0), computed for the whole field at once.

    >>> field = [Entry("A", 3, ("B",)), Entry("B", 0, ("A",)), Entry("C", 1, ())]
    >>> weight_matrix(field).tolist()
    [[0.0, 4.0, 8.0], [4.0, 0.0, 6.0], [8.0, 6.0, 0.0]]
    """
    import numpy as np

    points = np.array([e.points for e in field], dtype=np.float64)
    highest = points.max()
    best = np.maximum(points[:, None], points[None, :])
    closeness = highest - np.abs(points[:, None] - points[None, :])
    matrix: npt.NDArray[np.float64] = (best + 1) * (closeness + 1)
    bonus = quality(highest, highest) + 1
    for i, j in bonus_pairs(field):  # the repeat bonus: a pair met fewer times than the most
        matrix[i, j] += bonus
        matrix[j, i] += bonus
    np.fill_diagonal(matrix, 0)
    return matrix


def bonus_ends(field: Sequence[Entry]) -> set[int]:
    """The entries in a pair that gets the repeat bonus of `weight` (the later one has met
    the earlier fewer times than its most frequent opponent).  Every other entry is *plain*:
    its weight to anyone depends on the two players' points alone.

    >>> field = [Entry("A", 3, ("B", "B", "C")), Entry("B", 0, ("A", "A")), Entry("C", 1, ("A",))]
    >>> sorted(bonus_ends(field))  # C is later than A, and C met A as often as anyone
    []
    >>> sorted(bonus_ends([field[2], field[1], field[0]]))  # A later than C: A met C once, B twice
    [0, 2]
    """
    return {end for pair in bonus_pairs(field) for end in pair}


def bonus_pairs(field: Sequence[Entry]) -> Iterator[tuple[int, int]]:
    """The pairs (i, j), j < i, that get the repeat bonus: entry i has met the earlier
    entry j fewer times than its most frequent opponent.

    >>> field = [Entry("A", 3, ("B", "B", "C")), Entry("B", 0, ("A", "A")), Entry("C", 1, ("A",))]
    >>> list(bonus_pairs([field[2], field[1], field[0]]))
    [(2, 0)]
    """
    index = {e.id: i for i, e in enumerate(field)}
    for i, e in enumerate(field):
        counter = Counter(e.opponents)
        most = max(counter.values(), default=0)
        for opponent, times in counter.items():
            j = index.get(opponent)
            if j is not None and j < i and times < most:
                yield i, j


def class_matching(field: Sequence[Entry], rng: random.Random) -> list[tuple[int, int]]:
    """A maximum-weight perfect matching of a large field, improved until a small matching
    proves it optimal.

    Plain entries (`bonus_ends`) with equal points form a *class* of twins: their weights to
    everyone are equal.  A pair's *type* is its two classes (an entry that is not plain is a
    class of its own).  Start from the field paired in order of points, each class in a
    seeded random order.  Then, repeatedly, take a *sample* of the matching N: one pair of
    every class paired with itself, two of every pair of classes (fewer where N has fewer),
    and match the sample's entries optimally (`whole_matching`):

    * if that is worth no more than the sample's pairs, N is optimal, and so is N with the
      sample's pairs replaced by its optimal matching (whose tie-breaks are `whole_matching`'s),
      which is the result, the BYE then given to the lowest-ranked twin of its partner;
    * otherwise the two matchings of the sample differ by alternating cycles, and each cycle
      that gains is applied to N, then again on other pairs of N of the same types, as often
      as N has them (twins gain alike), and the loop starts again with a heavier N.

    Why an optimal sample proves N optimal: were N not optimal, an alternating cycle of
    positive gain would exist.  Where such a cycle passes two pairs of the same type in the
    same direction, exchanging twins splits it into two cycles whose gains add up to its
    own; so one of positive gain passes at most one pair of a class with itself and at most
    two of two classes.  The pairs it passes outside the sample can then be exchanged for
    the sample's pairs of the same types that it does not pass (the sample has one, or two,
    of every type that N has more of), which leaves a cycle of positive gain inside the
    sample: impossible when the sample is optimal.

    >>> field = [Entry(f"P{i}", i % 3, ()) for i in range(300)]
    >>> pairs = class_matching(field, random.Random(1))
    >>> len(pairs), sorted({(field[a].points, field[b].points) for a, b in pairs})
    (150, [(0, 0), (1, 1), (2, 2)])
    """
    special = bonus_ends(field) | {i for i, e in enumerate(field) if e.id == BYE}
    kind: dict[int, tuple[int, float]] = {
        i: (1, i) if i in special else (0, e.points) for i, e in enumerate(field)
    }
    order = list(range(len(field)))
    rng.shuffle(order)
    order.sort(key=lambda i: -field[i].points)  # stable: the shuffle orders each class
    mate = [0] * len(field)
    for a, b in zip(order[0::2], order[1::2], strict=True):
        mate[a], mate[b] = b, a
    highest = max(e.points for e in field)

    def worth(pairs: Iterable[tuple[int, int]]) -> float:
        return sum(weight(highest, field[max(a, b)], field[min(a, b)]) for a, b in pairs)

    seed = rng.random()
    while True:
        by_type: dict[tuple[tuple[int, float], ...], list[tuple[int, int]]] = {}
        for a in range(len(field)):
            b = mate[a]
            if a < b:
                by_type.setdefault(tuple(sorted((kind[a], kind[b]))), []).append((a, b))
        sample = [
            pair
            for pairs in by_type.values()
            for pair in pairs[: 1 if kind[pairs[0][0]] == kind[pairs[0][1]] else 2]
        ]
        chosen = sorted(i for pair in sample for i in pair)
        best = [
            (chosen[a], chosen[b])
            for a, b in whole_matching([field[i] for i in chosen], random.Random(seed))
        ]
        if worth(best) <= worth(sample):  # N is optimal, and so is N with the sample's best
            for a, b in best:
                mate[a], mate[b] = b, a
            _bye_to_lowest(field, kind, mate)
            return sorted((a, mate[a]) for a in range(len(field)) if a < mate[a])
        used = set(sample)
        spare = {t: [p for p in pairs if p not in used] for t, pairs in by_type.items()}
        partner = {a: b for pair in best for a, b in (pair, pair[::-1])}
        for cycle in _cycles(chosen, mate, partner):
            gain = worth(zip(cycle[1::2], cycle[2::2] + cycle[:1], strict=True))
            if gain <= worth(zip(cycle[0::2], cycle[1::2], strict=True)):
                continue
            for copy in _copies(cycle, kind, spare):
                for a, b in zip(copy[1::2], copy[2::2] + copy[:1], strict=True):
                    mate[a], mate[b] = b, a


def _bye_to_lowest(
    field: Sequence[Entry], kind: dict[int, tuple[int, float]], mate: list[int]
) -> None:
    """Give the BYE to the lowest-ranked twin of the plain player who has it (the last of its
    class in the field's order): twins exchanged, the weight is the same."""
    bye = next((i for i, e in enumerate(field) if e.id == BYE), None)
    if bye is None or kind[mate[bye]][0]:
        return
    has = mate[bye]
    lowest = max(i for i in range(len(field)) if kind[i] == kind[has])
    if lowest != has:
        other = mate[lowest]
        mate[bye], mate[lowest], mate[has], mate[other] = lowest, bye, other, has


def _cycles(chosen: list[int], mate: list[int], partner: dict[int, int]) -> Iterator[list[int]]:
    """The alternating cycles between two perfect matchings of the `chosen` entries, each
    as v0, v1, ... with (v0, v1) in `mate`, (v1, v2) in `partner`, and so on."""
    seen: set[int] = set()
    for start in chosen:
        if start in seen or partner[start] == mate[start]:
            continue
        cycle = [start]
        while True:
            cycle.append(mate[cycle[-1]])
            nxt = partner[cycle[-1]]
            if nxt == start:
                break
            cycle.append(nxt)
        seen.update(cycle)
        yield cycle


def _copies(
    cycle: list[int],
    kind: dict[int, tuple[int, float]],
    spare: dict[tuple[tuple[int, float], ...], list[tuple[int, int]]],
) -> Iterator[list[int]]:
    """The cycle itself, then the same cycle on twins, from the `spare` pairs of the types
    it passes, for as long as there are spares (none when it passes an entry that is not
    plain)."""
    yield cycle
    if any(kind[v][0] for v in cycle):
        return
    while True:
        copy: list[int] = []
        taken: list[tuple[tuple[tuple[int, float], ...], tuple[int, int]]] = []
        for a, b in zip(cycle[0::2], cycle[1::2], strict=True):
            t = tuple(sorted((kind[a], kind[b])))
            if not spare.get(t):
                for back_type, pair in taken:  # not enough spares: put back what was taken
                    spare[back_type].append(pair)
                return
            x, y = spare[t].pop()
            taken.append((t, (x, y)))
            copy += [x, y] if kind[x] == kind[a] else [y, x]
        yield copy


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
