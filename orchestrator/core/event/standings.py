"""Final standings: score, BYEs, and the tiebreaks a director chooses, with shared places.

Ordering is by score (descending), then BYEs received (fewer first), then each tiebreak of
`order` in turn.  Direct encounter depends on who is tied, so ties are refined group by group
rather than by one sort key.  Players still equal after every criterion share their place
("2-3") and are listed by seed.

Opponent-based tiebreaks (Sonneborn-Berger, Buchholz, median Buchholz) count each game
separately (a double-round pair counts twice) and leave BYEs out; "wins" counts won games,
not BYEs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import msgspec

from orchestrator.core.event.model import Game, Tournament
from orchestrator.core.game.rmobility import parse, points
from orchestrator.core.pairing.registry import lookup

Tiebreak = Literal["sb", "wins", "black", "direct", "buchholz", "median-buchholz", "rmobility"]
TIEBREAKS: dict[Tiebreak, str] = {
    "sb": "Sonneborn-Berger",
    "wins": "number of wins",
    "black": "games with black",
    "direct": "direct encounter",
    "buchholz": "Buchholz",
    "median-buchholz": "median Buchholz",
    "rmobility": "r-mobility points",
}
TCEC_ORDER: tuple[Tiebreak, ...] = ("sb", "wins", "direct")


@dataclass
class Entry:
    """Who a line of standings is about (a player, or a team): its seed, BYEs and place."""

    name: str
    seed: int
    byes: int = field(default=0, kw_only=True)
    place: str = field(default="", kw_only=True)


@dataclass
class Line(Entry):
    """One player's line of the standings."""

    score: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    black: int = 0  # games played with black (forfeits give no colour)
    #: finished games by colour, forfeits included: (as White, as Black), and their wins and
    #: losses, as TCEC's crosstable counts them
    by_colour: list[int] = field(default_factory=lambda: [0, 0])
    wins_by_colour: list[int] = field(default_factory=lambda: [0, 0])
    losses_by_colour: list[int] = field(default_factory=lambda: [0, 0])
    tiebreaks: dict[str, float] = field(default_factory=dict)
    # (opponent, points scored) for every game; the source of the opponent tiebreaks
    results: list[tuple[str, float]] = field(default_factory=list)
    #: r-mobility points (½ ± ½^(1+2G) a game; ½ for a game whose G-score is not known)
    rmobility: float = 0.0


def tally(tournament: Tournament) -> dict[str, Line]:
    """Score, results and BYEs of every player over the finished games of `tournament`.  A
    BYE scores a win of each game of a pair where the round's system says so (a Swiss's),
    nothing where it is a rest day (a round robin's).

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> players = (Player("A", 1), Player("B", 2), Player("C", 3))
    >>> t = Tournament(players, (Round(1, (Game("A", "B", "1/2-1/2"),), bye="C"),))
    >>> {name: (line.score, line.byes) for name, line in tally(t).items()}
    {'A': (0.5, 0), 'B': (0.5, 0), 'C': (1.0, 1)}
    >>> league = msgspec.structs.replace(t, rules=Rules(system="round-robin", format="single"))
    >>> {name: (line.score, line.byes) for name, line in tally(league).items()}
    {'A': (0.5, 0), 'B': (0.5, 0), 'C': (0.0, 1)}
    """
    t = tournament
    lines = {p.name: Line(p.name, p.seed) for p in t.players}
    for _, g in t.finished_games():
        for colour, name in enumerate((g.white, g.black)):
            pts = g.points(name)
            line = lines[name]
            line.score += pts
            line.games += 1
            line.wins += pts == 1.0
            line.draws += pts == 0.5
            line.losses += pts == 0.0
            line.by_colour[colour] += 1
            line.wins_by_colour[colour] += pts == 1.0
            line.losses_by_colour[colour] += pts == 0.0
            line.results.append((g.opponent(name), pts))
        white, black = rmobility_points(g)
        lines[g.white].rmobility += white
        lines[g.black].rmobility += black
        lines[g.black].black += not g.forfeit  # a forfeit gives no colour
    for rnd in t.rounds:
        if rnd.bye is None:
            continue
        scores = lookup(t.rules.system_of(rnd.number)[0]).bye_scores
        for name in t.bye_players(rnd.bye):
            lines[name].byes += 1  # a team's BYE: each of its players wins its board
            lines[name].score += t.rules.games_per_pair if scores else 0
    return lines


def rmobility_points(game: Game) -> tuple[float, float]:
    """The r-mobility points of a game's White and Black: from its G-score, or ½ each where
    it is not known (a forfeit, a game stored before r-mobility).

    >>> rmobility_points(Game("A", "B", "1-0", rmobility="-G0.5"))
    (0.25, 0.75)
    >>> rmobility_points(Game("A", "B"))
    (0.5, 0.5)
    """
    if game.rmobility is None:
        return 0.5, 0.5
    return points(parse(game.rmobility))


def mark(points: float) -> str:
    """A game's result for one player, as crosstables write it.

    >>> mark(1.0), mark(0.5), mark(0.0)
    ('1', '=', '0')
    """
    return "1" if points == 1.0 else "0" if points == 0.0 else "="


def scores_by_round(tournament: Tournament) -> dict[str, list[float]]:
    """Each player's score after each round, as `tally` counts it.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> rounds = (Round(1, (Game("A", "B", "1-0"),)), Round(2, (Game("B", "A", "1-0"),)))
    >>> scores_by_round(Tournament((Player("A", 1), Player("B", 2)), rounds))
    {'A': [1.0, 1.0], 'B': [0.0, 1.0]}
    """
    series: dict[str, list[float]] = {p.name: [] for p in tournament.players}
    for done in range(1, len(tournament.rounds) + 1):
        lines = tally(msgspec.structs.replace(tournament, rounds=tournament.rounds[:done]))
        for name, line in lines.items():
            series[name].append(line.score)
    return series


def _sb(line: Line, lines: dict[str, Line]) -> float:
    return sum(pts * lines[opp].score for opp, pts in line.results)


def _buchholz(line: Line, lines: dict[str, Line]) -> float:
    return sum(lines[opp].score for opp, _ in line.results)


def _median_buchholz(line: Line, lines: dict[str, Line]) -> float:
    scores = sorted(lines[opp].score for opp, _ in line.results)
    return sum(scores[1:-1]) if len(scores) > 2 else 0.0


_SIMPLE: dict[str, Callable[[Line, dict[str, Line]], float]] = {
    "rmobility": lambda line, _: line.rmobility,
    "sb": _sb,
    "wins": lambda line, _: float(line.wins),
    "black": lambda line, _: float(line.black),
    "buchholz": _buchholz,
    "median-buchholz": _median_buchholz,
}


def _direct(group: list[Line]) -> dict[str, float]:
    """Points scored against the others of a tied group, if all of them have met."""
    names = {line.name for line in group}
    met = {(line.name, opp) for line in group for opp, _ in line.results if opp in names}
    everyone_met = all((a, b) in met for a in names for b in names if a != b)
    return {
        line.name: sum(p for opp, p in line.results if opp in names) if everyone_met else 0.0
        for line in group
    }


def _stored(tb: Tiebreak) -> Callable[[list[Line]], dict[str, float]]:
    return lambda group: {x.name: x.tiebreaks[tb] for x in group}


def standings(t: Tournament, order: Sequence[Tiebreak] = TCEC_ORDER) -> list[Line]:
    """The standings of `t`, best first, with `place` and the chosen tiebreak values set.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABC", 1))
    >>> games = (Game("C", "A", "1-0"), Game("B", "C", "1/2-1/2"), Game("A", "B", "1/2-1/2"))
    >>> t = Tournament(players, (Round(1, games),))
    >>> [(line.place, line.name, line.score, line.tiebreaks["sb"]) for line in standings(t)]
    [('1', 'C', 1.5, 1.0), ('2', 'B', 1.0, 1.0), ('3', 'A', 0.5, 0.5)]
    """
    lines = tally(t)
    for line in lines.values():
        for tb in order:
            # direct encounter is only meaningful inside a tied group: 0 until refined
            line.tiebreaks[tb] = _SIMPLE[tb](line, lines) if tb in _SIMPLE else 0.0
    criteria: list[Callable[[list[Line]], dict[str, float]]] = [
        lambda g: {x.name: x.score for x in g},
        lambda g: {x.name: -float(x.byes) for x in g},
    ]
    for tb in order:
        criteria.append(_direct if tb == "direct" else _stored(tb))
    return place(_refine([sorted(lines.values(), key=lambda x: x.seed)], criteria, order))


E = TypeVar("E", bound=Entry)


def place(groups: Iterable[list[E]]) -> list[E]:
    """The entries of `groups` (best first, each group tied) in order, with their places:
    tied entries share theirs ("2-3").

    >>> lines = place([[Line("A", 1)], [Line("B", 2), Line("C", 3)]])
    >>> [(x.name, x.place) for x in lines]
    [('A', '1'), ('B', '2-3'), ('C', '2-3')]
    """
    ranked: list[E] = []
    for group in groups:
        first, last = len(ranked) + 1, len(ranked) + len(group)
        for entry in group:
            entry.place = str(first) if first == last else f"{first}-{last}"
            ranked.append(entry)
    return ranked


def _refine(
    groups: list[list[Line]],
    criteria: list[Callable[[list[Line]], dict[str, float]]],
    order: Sequence[Tiebreak],
) -> list[list[Line]]:
    for i, criterion in enumerate(criteria):
        refined: list[list[Line]] = []
        for group in groups:
            if len(group) == 1:
                refined.append(group)
                continue
            values = criterion(group)
            if i >= 2 and order[i - 2] == "direct":
                for line in group:
                    line.tiebreaks["direct"] = values[line.name]
            for value in sorted(set(values.values()), reverse=True):
                refined.append([x for x in group if values[x.name] == value])
        groups = refined
    return groups
