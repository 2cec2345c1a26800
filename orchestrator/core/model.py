"""Plain data for a tournament: players, games, rounds and the pairing of a round.

Everything here is immutable and free of I/O; the pairing, standings and simulation
modules are functions over these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Result = Literal["1-0", "0-1", "1/2-1/2"]
RESULTS: tuple[Result, ...] = ("1-0", "0-1", "1/2-1/2")
Format = Literal["single", "double"]
Schedule = Literal["legs", "pairs"]
System = Literal["swiss", "round-robin"]

WHITE_POINTS: dict[Result, float] = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


class StateError(ValueError):
    """The tournament state is not a legal one; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Player:
    name: str
    seed: int


@dataclass(frozen=True, slots=True)
class Game:
    white: str
    black: str
    result: Result | None = None

    def points(self, name: str) -> float:
        """Points `name` scored in this game (which must be finished)."""
        if self.result is None:
            raise StateError(f"game {self.white} - {self.black} has no result")
        white = WHITE_POINTS[self.result]
        return white if name == self.white else 1.0 - white

    def opponent(self, name: str) -> str:
        return self.black if name == self.white else self.white


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    games: tuple[Game, ...]
    bye: str | None = None


@dataclass(frozen=True, slots=True)
class Tournament:
    players: tuple[Player, ...]
    rounds: tuple[Round, ...] = ()
    format: Format = "single"
    schedule: Schedule = "legs"
    system: System = "swiss"
    cycles: int = 1

    @property
    def games_per_pair(self) -> int:
        return 2 if self.format == "double" else 1

    def by_seed(self) -> tuple[Player, ...]:
        return tuple(sorted(self.players, key=lambda p: p.seed))


@dataclass(frozen=True, slots=True)
class Pairing:
    """The next round: its games in playing order, the BYE, and removed history rounds."""

    round: int
    games: tuple[Game, ...]
    bye: str | None = None
    dropped_rounds: int = 0

    def as_round(self, results: tuple[Result, ...]) -> Round:
        games = tuple(Game(g.white, g.black, r) for g, r in zip(self.games, results, strict=True))
        return Round(self.round, games, self.bye)
