"""Pairings from the ranking (docs/systems/koth.md, factored.md, quartile.md, random.md):
King of the Hill, factored pairings FP(n), quartile pairings and random pairings, as tsh
(docs/systems/koth.md: "Pairing Theory and tsh") plays them.

All of them rank the players who play the round by score (then seed), give an odd field's
BYE to the lowest-ranked player with the fewest BYEs, and allow a pair to meet again only
`repeats` times (`system_options`).  When no pairing of the whole field keeps to that
allowance, the allowance grows by one until one does: the event goes on, with as few extra
repeats as it can.  Random choices come from a seed derived from the options' `seed` (the
event's `random_seed`) and the round number, so a round is always paired the same way.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

import msgspec

from orchestrator.core.event.model import Game, StateError, Tournament
from orchestrator.core.event.standings import tally
from orchestrator.core.pairing.matching import PerfectMatching, bits
from orchestrator.core.pairing.registry import Draft, System

#: meetings a pair may have had before it is paired again
Repeats = Annotated[int, msgspec.Meta(ge=0, description="an integer >= 0")]
#: the seed of a system's random choices (the event's `random_seed` by default)
Seed = Annotated[int, msgspec.Meta(ge=0, description="an integer >= 0")]


class KothOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    repeats: Repeats = 0
    gibson: bool = False  # a leader no one can catch meets the lowest-ranked player


class FactoredOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    factor: Annotated[int, msgspec.Meta(ge=1, description="an integer >= 1")] = 2
    repeats: Repeats = 0
    gibson: bool = False


class QuartileOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    quartile: Annotated[int, msgspec.Meta(ge=2, le=4, description="2, 3 or 4")] = 4
    repeats: Repeats = 0
    seed: Seed = 1


class RandomOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    repeats: Repeats = 0
    seed: Seed = 1


@dataclass(frozen=True)
class History:
    """What tsh's systems look at: the ranking and who met whom how often."""

    round: int  # the round to pair
    ranked: tuple[str, ...]  # the players of the round, best first
    score: dict[str, float]
    byes: dict[str, int]
    met: Counter[frozenset[str]]  # games between each pair (forfeits are no encounter)
    last: dict[str, str]  # each player's opponent in the last round they played
    balance: dict[str, int]  # whites minus blacks

    @classmethod
    def of(cls, t: Tournament) -> History:
        """The history of `t` before its next round.

        >>> from orchestrator.core.event.model import Player, Round
        >>> players = (Player("A", 1), Player("B", 2), Player("C", 3))
        >>> t = Tournament(players, (Round(1, (Game("C", "B", "1-0"),), bye="A"),))
        >>> h = History.of(t)
        >>> h.ranked, h.met[frozenset("BC")], h.last["B"]
        (('A', 'C', 'B'), 1, 'C')
        """
        number = len(t.rounds) + 1
        lines = tally(t)
        met: Counter[frozenset[str]] = Counter()
        last: dict[str, str] = {}
        balance: dict[str, int] = {p.name: 0 for p in t.players}
        for rnd in t.rounds:
            for g in rnd.games:
                if g.forfeit:
                    continue
                met[frozenset((g.white, g.black))] += 1
                last[g.white], last[g.black] = g.black, g.white
                balance[g.white] += 1
                balance[g.black] -= 1
        playing = [p for p in t.players if p.plays_in(number)]
        ranked = sorted(playing, key=lambda p: (-lines[p.name].score, p.seed))
        return cls(
            round=number,
            ranked=tuple(p.name for p in ranked),
            score={n: line.score for n, line in lines.items()},
            byes={n: line.byes for n, line in lines.items()},
            met=met,
            last=last,
            balance=balance,
        )

    def meetings(self, a: str, b: str) -> int:
        return self.met[frozenset((a, b))]

    def bye(self) -> str | None:
        """An odd field's BYE: the lowest-ranked player with the fewest BYEs."""
        if len(self.ranked) % 2 == 0:
            return None
        fewest = min(self.byes[p] for p in self.ranked)
        return next(p for p in reversed(self.ranked) if self.byes[p] == fewest)


def allowance(
    history: History, players: list[str], repeats: int, allowed: list[int] | None = None
) -> tuple[int, PerfectMatching]:
    """The smallest allowance, from `repeats` up, under which `players` can all be paired
    (each within `allowed`, bitmasks over `players`, where given), and one such pairing."""
    most = max(history.met.values(), default=0)
    while (found := _within(history, players, repeats, allowed)) is None:
        if repeats > most:
            raise StateError(f"round {history.round}: the players cannot all be paired")
        repeats += 1
    return repeats, found


def _within(
    history: History, players: list[str], repeats: int, allowed: list[int] | None = None
) -> PerfectMatching | None:
    """A pairing of all `players` within the allowance (and `allowed`), or None."""
    return PerfectMatching.find(_rows(history, players, repeats, allowed), (1 << len(players)) - 1)


def _rows(
    history: History, players: list[str], repeats: int, allowed: list[int] | None = None
) -> list[int]:
    """Bitmask rows over `players`: the pairs within the allowance (and within `allowed`,
    each player's possible partners, where given).  Built from the meetings, which are few
    beside the n² pairs of a large field."""
    place = {p: i for i, p in enumerate(players)}
    everyone = (1 << len(players)) - 1
    rows = [(everyone if allowed is None else allowed[i]) & ~(1 << i) for i in range(len(players))]
    for pair, times in history.met.items():
        if times > repeats:
            a, b = tuple(pair)
            if a in place and b in place:
                rows[place[a]] &= ~(1 << place[b])
                rows[place[b]] &= ~(1 << place[a])
    return rows


def nearest_pairs(
    history: History, players: list[str], factor: int, repeats: int, gibson: str | None = None
) -> list[tuple[str, str]]:
    """KOTH (`factor` 1) and FP(`factor`): from the top, each unpaired player meets the
    unpaired player nearest to `factor` places below it in the ranking, among those it has
    met at most `repeats` times and that leave the rest pairable; ties go to the one it did
    not meet last round, then to the fewest meetings, then to the higher ranked.

    >>> from orchestrator.core.event.model import Player
    >>> h = History.of(Tournament(tuple(Player(n, s) for s, n in enumerate("ABCDEFGH", 1))))
    >>> nearest_pairs(h, list(h.ranked), 1, 0)
    [('A', 'B'), ('C', 'D'), ('E', 'F'), ('G', 'H')]
    >>> nearest_pairs(h, list(h.ranked), 2, 0)
    [('A', 'C'), ('B', 'D'), ('E', 'G'), ('F', 'H')]
    """
    repeats, matching = allowance(history, players, repeats)
    place = {p: i for i, p in enumerate(players)}
    pairs = []
    if gibson is not None:  # the lowest-ranked player available, within the allowance
        for other in reversed(players):
            allowed = other != gibson and history.meetings(gibson, other) <= repeats
            if allowed and matching.take(place[gibson], place[other]):
                pairs.append((gibson, other))
                break
    for top in players:
        if not matching.alive >> place[top] & 1:
            continue
        for other in _outward(history, players, matching.alive, place[top], factor):
            if history.meetings(top, other) <= repeats and matching.take(place[top], place[other]):
                pairs.append((top, other))
                break
        else:  # pragma: no cover - the matching always holds a partner for `top`
            raise AssertionError(f"round {history.round}: no partner for {top}")
    return pairs


def _outward(
    history: History, players: list[str], alive: int, at: int, factor: int
) -> Iterator[str]:
    """The unpaired players other than the one `at`, nearest to `factor` places below it
    first; at equal distance, not its last opponent, then fewer meetings, then higher."""
    top, ideal = players[at], at + factor
    for distance in range(ideal + len(players)):  # the ideal place may lie past the field
        near = [
            players[i]
            for i in {ideal - distance, ideal + distance}
            if 0 <= i < len(players) and i != at and alive >> i & 1
        ]
        near.sort(
            key=lambda p: (history.last.get(top) == p, history.meetings(top, p), players.index(p))
        )
        yield from near


def random_pairs(
    history: History, players: list[str], repeats: int, rng: random.Random
) -> list[tuple[str, str]]:
    """A random pairing of `players` within the smallest allowance from `repeats` up: in a
    random order, each unpaired player takes a random partner within the allowance that
    leaves the rest pairable."""
    order = list(players)
    rng.shuffle(order)
    return _random_within(history, order, None, repeats, rng)


def _random_within(
    history: History,
    order: list[str],
    allowed: list[int] | None,
    repeats: int,
    rng: random.Random,
) -> list[tuple[str, str]]:
    """Random pairs of `order` (each player's possible partners given as bitmasks over
    `order`, or anyone), within the smallest allowance from `repeats` up."""
    _, matching = allowance(history, order, repeats, allowed)
    rows = matching.adj
    rank = {p: i for i, p in enumerate(history.ranked)}
    pairs = []
    for i, a in enumerate(order):
        if not matching.alive >> i & 1:
            continue
        candidates = list(bits(rows[i] & matching.alive))
        rng.shuffle(candidates)
        for j in candidates:
            if matching.take(i, j):
                b = order[j]
                pairs.append((a, b) if rank[a] < rank[b] else (b, a))
                break
        else:  # pragma: no cover - the matching always holds a partner
            raise AssertionError(f"round {history.round}: no partner for {a}")
    return sorted(pairs, key=lambda pair: rank[pair[0]])


def quartile_pairs(
    history: History, players: list[str], quartile: int, repeats: int, rng: random.Random
) -> list[tuple[str, str]]:
    """The top quartile against quartile `quartile` (2, 3 or 4), at random, and the other
    two quartiles against each other, at random; meetings beyond `repeats` are avoided
    where the quartiles allow, and the whole field is paired at random when they cannot.

    >>> from orchestrator.core.event.model import Player
    >>> h = History.of(Tournament(tuple(Player(n, s) for s, n in enumerate("ABCDEFGH", 1))))
    >>> pairs = quartile_pairs(h, list(h.ranked), 4, 0, random.Random(1))
    >>> sorted(pairs)
    [('A', 'H'), ('B', 'G'), ('C', 'E'), ('D', 'F')]
    >>> {(a, b) for a, b in pairs} <= {(a, b) for a in "AB" for b in "GH"} | {
    ...     (a, b) for a in "CD" for b in "EF"}
    True
    """
    n = len(players)
    size, extra = divmod(n, 4)  # `extra` is 0 or 2: the top quartile and its partner get one
    sizes = [size + (extra and q in (0, quartile - 1)) for q in range(4)]
    bounds = [sum(sizes[:q]) for q in range(5)]
    groups = [players[bounds[q] : bounds[q + 1]] for q in range(4)]
    others = [q for q in (1, 2, 3) if q != quartile - 1]
    partner_group = {0: quartile - 1, quartile - 1: 0, others[0]: others[1], others[1]: others[0]}
    order = [p for group in groups for p in group]
    rng.shuffle(order)
    group_of = {p: q for q, group in enumerate(groups) for p in group}
    place = {p: i for i, p in enumerate(order)}
    masks = {q: sum(1 << place[p] for p in group) for q, group in enumerate(groups)}
    allowed = [masks[partner_group[group_of[p]]] for p in order]
    if _within(history, order, repeats, allowed) is None:
        return random_pairs(history, players, repeats, rng)  # the quartiles cannot keep it
    return _random_within(history, order, allowed, repeats, rng)


def seeded(seed: int, round_number: int) -> random.Random:
    """The random source of a round: from the system's `seed` and the round number, so
    that the round is paired the same way every time.

    >>> seeded(7, 3).random() == seeded(7, 3).random()
    True
    """
    return random.Random(f"{seed}:{round_number}")


def games_of(history: History, pairs: list[tuple[str, str]], bye: str | None) -> Draft:
    """The round's first leg from its pairs (higher-ranked player first): the player with
    fewer whites so far has White (the higher-ranked when equal); the last pair plays first
    (worst first)."""
    games: list[Game] = []
    for first, second in reversed(pairs):
        if history.balance[first] > history.balance[second]:
            white, black = second, first
        else:
            white, black = first, second
        games.append(Game(white, black))
    return Draft.of_games(games, bye)


def _field(t: Tournament) -> tuple[History, list[str], str | None]:
    history = History.of(t)
    if len(history.ranked) < 2:
        raise StateError(f"round {history.round}: fewer than two players are left to pair")
    bye = history.bye()
    return history, [p for p in history.ranked if p != bye], bye


def clinched(t: Tournament, history: History) -> str | None:
    """The player who has clinched first place, if one has: no one can catch them (reach
    their score) in the rounds left, this one included, at one point a game.  None while
    the event's number of rounds is not known.

    >>> from orchestrator.core.event.model import Player, Round, Rules
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    >>> won = Round(1, (Game("A", "B", "1-0"), Game("C", "D", "1/2-1/2")))
    >>> def event(played, planned):
    ...     return Tournament(players, played, Rules(format="single", rounds=planned))
    >>> t = event((won, won), 3)  # A: 2, C and D: 1, B: 0
    >>> clinched(t, History.of(t)), clinched(event((won, won), 4), History.of(t))
    (None, None)
    >>> t = event((won, won, won), 4)  # A: 3, C: 1.5
    >>> clinched(t, History.of(t))
    'A'
    """
    planned = t.rules.rounds
    if planned is None or len(history.ranked) < 2:
        return None
    left = (planned - len(t.rounds)) * t.rules.games_per_pair
    first, second = history.ranked[0], history.ranked[1]
    return first if history.score[second] + left < history.score[first] else None


def _gibson(t: Tournament, gibson: bool, history: History, players: list[str]) -> str | None:
    leader = clinched(t, history) if gibson else None
    return leader if leader in players else None


def pair_koth(t: Tournament, options: KothOptions) -> Draft:
    """King of the Hill: first against second, third against fourth, ... (`repeats`).
    With `gibson`, a player who has clinched first place meets the lowest-ranked player
    available instead (`clinched`).

    >>> from orchestrator.core.event.model import Player, Round, Rules
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    >>> one = Round(1, (Game("A", "B", "1/2-1/2"), Game("C", "D", "1/2-1/2")))
    >>> t = Tournament(players, (one,))
    >>> [(g.white, g.black) for g in pair_koth(t, KothOptions()).games()]
    [('B', 'D'), ('A', 'C')]
    >>> [(g.white, g.black) for g in pair_koth(t, KothOptions(repeats=1)).games()]
    [('D', 'C'), ('B', 'A')]
    """
    history, players, bye = _field(t)
    gibson = _gibson(t, options.gibson, history, players)
    pairs = nearest_pairs(history, players, 1, options.repeats, gibson)
    return games_of(history, pairs, bye)


def pair_factored(t: Tournament, options: FactoredOptions) -> Draft:
    """Factored pairings FP(`factor`): as KOTH, but the ideal opponent is `factor` places
    below (FP(2): 1-3, 2-4, 5-7, 6-8)."""
    history, players, bye = _field(t)
    gibson = _gibson(t, options.gibson, history, players)
    pairs = nearest_pairs(history, players, options.factor, options.repeats, gibson)
    return games_of(history, pairs, bye)


def pair_quartile(t: Tournament, options: QuartileOptions) -> Draft:
    """Quartile pairings: the top quartile against quartile `quartile` (default 4, the
    bottom one), the two others against each other, at random (seeded)."""
    history, players, bye = _field(t)
    rng = seeded(options.seed, history.round)
    pairs = quartile_pairs(history, players, options.quartile, options.repeats, rng)
    return games_of(history, pairs, bye)


def pair_random(t: Tournament, options: RandomOptions) -> Draft:
    """Random pairings (seeded by the options' `seed` and the round), with as few repeats
    beyond `repeats` as can be."""
    history, players, bye = _field(t)
    rng = seeded(options.seed, history.round)
    pairs = random_pairs(history, players, options.repeats, rng)
    return games_of(history, pairs, bye)


def _factor_fits(options: FactoredOptions, entrants: int) -> str | None:
    if options.factor < entrants:
        return None
    return (
        f"factor {options.factor} needs more than {options.factor} players, and the field has "
        f"{entrants}"
    )


def _quartiles_fit(options: QuartileOptions, entrants: int) -> str | None:
    return None if entrants >= 4 else f"quartiles need at least 4 players, not {entrants}"


KOTH = System(
    "koth",
    "King of the Hill: first against second, third against fourth, ...",
    pair_koth,
    KothOptions,
    noun="a King of the Hill",
)
FACTORED = System(
    "factored",
    "factored pairings FP(factor): 1-3, 2-4, 5-7, 6-8 for FP(2)",
    pair_factored,
    FactoredOptions,
    noun="a factored pairing",
    misfit=_factor_fits,
)
QUARTILE = System(
    "quartile",
    "the top quartile at random against quartile `quartile`, the other two at random",
    pair_quartile,
    QuartileOptions,
    noun="a quartile pairing",
    misfit=_quartiles_fit,
)
RANDOM = System(
    "random",
    "random pairings, with as few repeats as can be",
    pair_random,
    RandomOptions,
    noun="a random pairing",
)
