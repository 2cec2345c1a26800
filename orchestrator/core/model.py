"""Plain data for a tournament: players, games, rounds and the pairing of a round.

Everything here is immutable and free of I/O; the pairing, standings and simulation
modules are functions over these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from orchestrator.core.errors import OrchestratorError

Result = Literal["1-0", "0-1", "1/2-1/2"]
RESULTS: tuple[Result, ...] = ("1-0", "0-1", "1/2-1/2")
Format = Literal["single", "double"]
Schedule = Literal["legs", "pairs"]
System = Literal[
    "swiss",
    "round-robin",
    "olafsson",
    "bakert",
    "koth",
    "factored",
    "quartile",
    "random",
    "team-swiss",
]
#: the pairing systems, by the names engines.toml and the state JSON use
SYSTEMS: tuple[System, ...] = get_args(System)

WHITE_POINTS: dict[Result, float] = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


class StateError(OrchestratorError, ValueError):
    """The tournament state is not a legal one; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Player:
    """A player; one withdrawn after round N is left out of pairing from round N + 1 on."""

    name: str
    seed: int
    withdrawn_after: int | None = None

    def plays_in(self, round_number: int) -> bool:
        """Whether the player is paired (or may get the BYE) in round `round_number`.

        >>> Player("A", 1, withdrawn_after=3).plays_in(3), Player("A", 1, 3).plays_in(4)
        (True, False)
        """
        return self.withdrawn_after is None or round_number <= self.withdrawn_after


@dataclass(frozen=True, slots=True)
class Game:
    """A game; a forfeit (an opponent withdrew) counts for the score, but gives neither
    player a colour nor an encounter."""

    white: str
    black: str
    result: Result | None = None
    forfeit: bool = False

    def points(self, name: str) -> float:
        """Points `name` scored in this game (which must be finished).

        >>> Game("A", "B", "1/2-1/2").points("B"), Game("A", "B", "0-1").points("A")
        (0.5, 0.0)
        """
        if self.result is None:
            raise StateError(f"game {self.white} - {self.black} has no result")
        white = WHITE_POINTS[self.result]
        return white if name == self.white else 1.0 - white

    def opponent(self, name: str) -> str:
        """The other player of the game.

        >>> Game("A", "B").opponent("B")
        'A'
        """
        return self.black if name == self.white else self.white


@dataclass(frozen=True, slots=True)
class Team:
    """A team of a team Swiss: its players on fixed boards, board 1 first."""

    name: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    games: tuple[Game, ...]
    bye: str | None = None


@dataclass(frozen=True, slots=True)
class Phase:
    """`rounds` rounds paired by `system` with `options` (an event in phases)."""

    rounds: int
    system: System
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tournament:
    players: tuple[Player, ...]
    rounds: tuple[Round, ...] = ()
    format: Format = "single"
    schedule: Schedule = "legs"
    system: System = "swiss"
    cycles: int = 1
    options: Mapping[str, object] = field(default_factory=dict)  # the system's parameters
    phases: tuple[Phase, ...] = ()  # if any: the systems in turn (after them, the last)
    planned_rounds: int | None = None  # the event's rounds, where known (Gibsonization)
    fixed: tuple[tuple[str, str], ...] = ()  # the next round's pairs a director fixed (white first)
    teams: tuple[Team, ...] = ()  # a team Swiss's teams, seed 1 first

    def bye_players(self, bye: str) -> tuple[str, ...]:
        """The players a round's BYE goes to: a player, or every member of a team.

        >>> t = Tournament((), teams=(Team("T", ("A", "B")),))
        >>> t.bye_players("T"), t.bye_players("C")
        (('A', 'B'), ('C',))
        """
        return next((team.members for team in self.teams if team.name == bye), (bye,))

    def system_of(self, round_number: int) -> tuple[System, Mapping[str, object]]:
        """The system (and its options) that pairs round `round_number`.

        >>> t = Tournament((), phases=(Phase(2, "swiss"), Phase(1, "koth", {"repeats": 1})))
        >>> t.system_of(2), t.system_of(3), t.system_of(4)
        (('swiss', {}), ('koth', {'repeats': 1}), ('koth', {'repeats': 1}))
        >>> Tournament((), system="random", options={"seed": 3}).system_of(1)
        ('random', {'seed': 3})
        """
        if not self.phases:
            return self.system, self.options
        start = 1
        for phase in self.phases:
            if round_number < start + phase.rounds:
                return phase.system, phase.options
            start += phase.rounds
        return self.phases[-1].system, self.phases[-1].options

    @property
    def games_per_pair(self) -> int:
        """Games each pair plays in a round: two in a double round, with colours reversed.

        >>> Tournament((), format="double").games_per_pair
        2
        """
        return 2 if self.format == "double" else 1

    def by_seed(self) -> tuple[Player, ...]:
        """The players, seed 1 first.

        >>> Tournament((Player("B", 2), Player("A", 1))).by_seed()[0].name
        'A'
        """
        return tuple(sorted(self.players, key=lambda p: p.seed))


@dataclass(frozen=True, slots=True)
class Pairing:
    """The next round: its games in playing order, the BYE, and removed history rounds."""

    round: int
    games: tuple[Game, ...]
    bye: str | None = None
    dropped_rounds: int = 0

    def as_round(self, results: tuple[Result, ...]) -> Round:
        """The played round: these games with `results`, in order.

        >>> Pairing(1, (Game("A", "B"),)).as_round(("1-0",)).games
        (Game(white='A', black='B', result='1-0', forfeit=False),)
        """
        games = tuple(Game(g.white, g.black, r) for g, r in zip(self.games, results, strict=True))
        return Round(self.round, games, self.bye)
