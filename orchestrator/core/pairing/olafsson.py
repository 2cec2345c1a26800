"""Ólafsson's weighted-matching Swiss (docs/systems/olafsson.md, the FIDE 1985 Swiss rules).

Scores count 2 for a win and 1 for a draw, so after R rounds the score groups are 0..2R
and the median group is R.  Groups are paired top-down to just above the median, then
bottom-up, the median group last.  Each group is a maximum-weight matching (networkx) over
the pairs that have not met, weighing `BIG - T` with the paper's penalty points
`T = O + N + C + H` (c1 = 25, c2 = 500, c3 = 10, c4 = 25, c5 = 8); whoever is left unpaired
floats to the next group.  When more than one player would float out of a group that
already holds a floater, the group is paired again together with the one before it (all of
that group's players as floaters).  The median group must pair everyone; when it cannot,
the groups next to it are paired with it.

The paper's working rule for equal colour numbers is part of `C`: a player whose colour
number is 0 seeks the colour he did not have last time, so two such players with the same
last colour pay the colour penalty with P = 0.  Colours follow the FIDE 1985 article 3.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.core.event.model import Game, StateError, Tournament
from orchestrator.core.pairing.registry import NO_OPTIONS, Draft, NoOptions, System
from orchestrator.core.pairing.roundrobin import rounds_in_cycle
from orchestrator.core.pairing.weighted import max_weight_matching

C1, C2, C3, C4, C5 = 25, 500, 10, 25, 8
BIG = 1_000_000_000


@dataclass
class _Player:
    name: str
    rank: int  # the initial ranking: seed
    score: int  # 2 a win, 1 a draw
    colours: list[int]  # +1 white, -1 black, per game played (forfeits: none)
    met: set[str]
    byes: int

    @property
    def colour_number(self) -> int:
        return sum(self.colours)

    @property
    def need(self) -> int:
        """How strongly the player seeks his colour: |colour number|, and 1 for a colour
        number of 0 with a last colour to alternate from (the working rule)."""
        return abs(self.colour_number) or (1 if self.colours else 0)

    @property
    def seeks(self) -> int:
        """+1 when the player should get black (more whites, or white last time), -1 for
        white, 0 for no preference."""
        c = self.colour_number
        if c:
            return 1 if c > 0 else -1
        return self.colours[-1] if self.colours else 0


def _field(t: Tournament, number: int) -> list[_Player]:
    players = {
        p.name: _Player(p.name, p.seed, 0, [], set(), 0) for p in t.players if p.plays_in(number)
    }
    for _, g in t.finished_games():
        for name, colour in ((g.white, 1), (g.black, -1)):
            player = players.get(name)
            if player is None:
                continue
            player.score += round(g.points(name) * 2)
            if not g.forfeit:  # a forfeit gives no colour and no encounter
                player.colours.append(colour)
                player.met.add(g.opponent(name))
    for rnd in t.rounds:
        if rnd.bye in players:
            players[rnd.bye].score += 2 * t.rules.games_per_pair
            players[rnd.bye].byes += 1
    return sorted(players.values(), key=lambda p: p.rank)


def penalty(a: _Player, i: int, b: _Player, j: int, group: int, m: int, size: int) -> int:
    """T(i, j) of the paper for players numbered i and j of a group of `size` players whose
    first `m` are floaters, the group's score being `group`."""
    same = a.score == b.score == group
    old = 0 if same else C1 * abs(a.score - b.score) * abs(i - j) - C2
    new = C3 * (i + j)
    colour = 0
    if a.seeks * b.seeks > 0:
        colour = C4 * C5 ** min(a.need, b.need)
    half = (size - 2 * m) / 2
    halves = round((half - abs(i - j)) ** 2) if same else 0
    return old + new + colour + halves


def _match(
    floaters: list[_Player], members: list[_Player], group: int
) -> tuple[list[tuple[_Player, _Player]], list[_Player]]:
    """Pair one group: (pairs, the players left unpaired)."""
    everyone = floaters + members
    m, size = len(floaters), len(everyone)
    edges = [
        (x, y, BIG - penalty(everyone[x], x + 1, everyone[y], y + 1, group, m, size))
        for x in range(size)
        for y in range(x + 1, size)
        if everyone[y].name not in everyone[x].met
    ]
    matching = max_weight_matching(size, edges, max_cardinality=True)
    pairs = [(everyone[min(x, y)], everyone[max(x, y)]) for x, y in matching]
    paired = {p.name for pair in pairs for p in pair}
    return pairs, [p for p in everyone if p.name not in paired]


def _colours(a: _Player, b: _Player) -> tuple[_Player, _Player]:
    """(white, black) by the FIDE 1985 article 3 (a ranked above b)."""
    if a.colour_number != b.colour_number:  # the one with more blacks gets white
        return (a, b) if a.colour_number < b.colour_number else (b, a)
    for ca, cb in zip(reversed(a.colours), reversed(b.colours), strict=False):
        if ca != cb:  # 3.2: the latest round in which they differed decides
            return (a, b) if ca < cb else (b, a)
    # 3.3: identical histories: the higher ranked alternates (or equalizes)
    if a.colours:
        return (b, a) if a.colours[-1] > 0 else (a, b)
    return a, b


def _order_down(players: list[_Player]) -> list[_Player]:
    return sorted(players, key=lambda p: (-p.score, p.rank))


def _order_up(players: list[_Player]) -> list[_Player]:
    return sorted(players, key=lambda p: (p.score, -p.rank))


def _pair_groups(field: list[_Player], rounds: int) -> list[tuple[_Player, _Player]]:
    groups: dict[int, list[_Player]] = {}
    for p in field:
        groups.setdefault(p.score, []).append(p)
    top = max(groups)
    median = rounds
    pairs: list[tuple[_Player, _Player]] = []

    def sweep(order: list[int], down: bool) -> list[_Player]:
        floaters: list[_Player] = []
        before: tuple[list[_Player], list[tuple[_Player, _Player]]] | None = None
        for k in order:
            members = groups.get(k, [])
            if not members and not floaters:
                continue
            made, left = _match(floaters, members, k)
            if len(left) > 1 and floaters and before is not None:
                previous, previous_pairs = before
                for pair in previous_pairs:
                    pairs.remove(pair)
                merged = _order_down(previous) if down else _order_up(previous)
                made, left = _match(merged, members, k)
            pairs.extend(made)
            before = (floaters + members, made)
            floaters = _order_down(left) if down else _order_up(left)
        return floaters

    from_above = sweep(list(range(top, median, -1)), down=True)
    from_below = sweep(list(range(0, median)), down=False)
    floaters = _order_down(from_above) + _order_up(from_below)
    members = groups.get(median, [])
    made, left = _match(floaters, members, median)
    if left:  # the median group cannot pair everyone: widen it until it can
        everyone = {p.name for p in field}
        paired = {p.name for pair in pairs for p in pair}
        rest = [p for p in field if p.name not in paired]
        made, left = _match([], rest, median)
        width = 1
        while left and width <= max(top - median, median):
            near = {k for k in groups if abs(k - median) <= width}
            pairs[:] = [pr for pr in pairs if pr[0].score not in near and pr[1].score not in near]
            paired = {p.name for pair in pairs for p in pair}
            rest = [p for p in field if p.name not in paired]
            made, left = _match([], rest, median)
            width += 1
        if left:
            raise StateError(
                f"no pairing of the remaining players exists ({len(left)} of "
                f"{len(everyone)} cannot be paired without meeting again)"
            )
    pairs.extend(made)
    return pairs


def pair_olafsson(t: Tournament, options: NoOptions = NO_OPTIONS) -> Draft:
    """The first leg of the next round by Ólafsson's weighted-matching Swiss.

    >>> from orchestrator.core.event.model import Player
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCDEF", 1))
    >>> [(g.white, g.black) for g in pair_olafsson(Tournament(players)).games()]
    [('C', 'F'), ('E', 'B'), ('A', 'D')]
    """
    number = len(t.rounds) + 1
    field = _field(t, number)
    if len(field) < 2:
        raise StateError(f"round {number}: fewer than two players are left to pair")
    bye = None
    if len(field) % 2:  # 1.3: no BYE before, the lowest score, the lowest ranked
        fewest = min(p.byes for p in field)
        bye = min((p for p in field if p.byes == fewest), key=lambda p: (p.score, -p.rank))
        field = [p for p in field if p is not bye]
    if not t.rounds:  # 2.2: the top half against the bottom half, colours alternating
        half = len(field) // 2
        ordered = [
            (field[i], field[i + half]) if i % 2 == 0 else (field[i + half], field[i])
            for i in range(half)
        ]
    else:
        ordered = [_colours(*pair) for pair in _pair_groups(field, len(t.rounds))]
        ordered.sort(
            key=lambda pair: min((-pair[0].score, pair[0].rank), (-pair[1].score, pair[1].rank))
        )
    games = [Game(w.name, b.name) for w, b in reversed(ordered)]  # worst first
    return Draft.of_games(games, bye.name if bye else None)


OLAFSSON = System(
    "olafsson",
    "Ólafsson's weighted-matching Swiss (FIDE 1985)",
    pair_olafsson,
    noun="an Ólafsson Swiss",
    max_rounds=lambda players, cycles, options: rounds_in_cycle(players),  # no pair meets twice
)
