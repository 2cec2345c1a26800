"""The event as typed data: the rules that pair it, its players and rounds together, and the
pairing of a round.  The parts it is made of (players, games, rounds, options) are
`core/event/parts.py`'s, re-exported here; the rules know the pairing systems
(`core/pairing/registry.py`), which know the parts, never this module.

Every type here is a frozen msgspec `Struct`, so the same declaration is the schema that
`engines.toml`, the state JSON and the stored settings are validated against
(`core/codec.py`), and an instance never changes once made: a new round is a new
`Tournament`.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from orchestrator.core.event.parts import (
    RESULTS,
    WHITE_POINTS,
    Format,
    Game,
    Options,
    Player,
    Positive,
    Result,
    Round,
    RoundNotes,
    RoundNumber,
    Schedule,
    StateError,
    Team,
    clean_name,
)
from orchestrator.core.pairing.registry import lookup

__all__ = [
    "RESULTS",
    "WHITE_POINTS",
    "Format",
    "Game",
    "Options",
    "Pairing",
    "Phase",
    "Player",
    "Positive",
    "Result",
    "Round",
    "RoundNotes",
    "RoundNumber",
    "Rules",
    "Schedule",
    "StateError",
    "Team",
    "Tournament",
    "clean_name",
]


class Phase(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`rounds` rounds paired by `system` with `system_options` (an event in phases)."""

    rounds: Positive
    system: str = "swiss"
    system_options: Options = msgspec.field(default_factory=Options)

    def __post_init__(self) -> None:
        system = lookup(self.system)
        if not system.phase:
            raise StateError(f"{system.noun} is a whole event, not one of its phases")
        system.parse(self.system_options)


class Rules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How an event pairs its rounds: the one definition that `engines.toml` (its
    `[tournament]` keys), the stored settings and the pure core share.

    `system` pairs every round, or `phases` do, each in turn (after them, the last goes on).
    `rounds` is the number of rounds the event plays, where it is known.

    >>> rules = Rules(phases=(Phase(2, "swiss"), Phase(1, "koth", Options({"repeats": 1}))))
    >>> rules.system_of(2), rules.system_of(3), rules.system_of(4)
    (('swiss', {}), ('koth', {'repeats': 1}), ('koth', {'repeats': 1}))
    >>> Rules(system="random", system_options=Options({"seed": 3})).system_of(1)
    ('random', {'seed': 3})
    >>> Rules(format="single").games_per_pair, Rules().games_per_pair
    (1, 2)
    """

    system: str = "swiss"
    system_options: Options = msgspec.field(default_factory=Options)
    phases: tuple[Phase, ...] = ()
    rounds: Positive | None = None
    cycles: Positive = 1
    format: Format = "double"
    schedule: Schedule = "legs"

    def __post_init__(self) -> None:
        if self.phases:
            if self.system_options:
                raise StateError("a list of phases gives each phase its own system_options")
            if self.system not in ("swiss", self.phases[0].system):
                raise StateError("give either a system or phases, not both")
            msgspec.structs.force_setattr(self, "system", self.phases[0].system)
        else:
            try:
                system = lookup(self.system)
            except StateError as exc:
                raise StateError(f"system: {exc}") from None
            system.parse(self.system_options)

    def system_of(self, round_number: int) -> tuple[str, Options]:
        """The system (and its options) that pairs round `round_number`."""
        if not self.phases:
            return self.system, self.system_options
        start = 1
        for phase in self.phases:
            if round_number < start + phase.rounds:
                return phase.system, phase.system_options
            start += phase.rounds
        return self.phases[-1].system, self.phases[-1].system_options

    def check_field(self, entrants: int) -> None:
        """A `StateError` when a system's options do not fit a field of `entrants`.

        >>> Rules(system="factored", system_options=Options({"factor": 9})).check_field(6)
        Traceback (most recent call last):
        ...
        orchestrator.core.event.parts.StateError: system_options: factor 9 needs more than ...
        """
        for name, options in [(p.system, p.system_options) for p in self.phases] or [
            (self.system, self.system_options)
        ]:
            lookup(name).check_field(options, entrants)

    def systems(self) -> tuple[str, ...]:
        """Every system the event uses.

        >>> Rules(phases=(Phase(2, "swiss"), Phase(1, "koth"))).systems()
        ('swiss', 'koth')
        """
        return tuple(p.system for p in self.phases) or (self.system,)

    @property
    def games_per_pair(self) -> int:
        """Games each pair plays in a round: two in a double round, with colours reversed."""
        return 2 if self.format == "double" else 1

    def planned_rounds(self, entrants: int) -> int:
        """The rounds the event plays: as set, or its system's default for `entrants`
        players (teams in a team Swiss); phases add up.

        >>> Rules(format="single").planned_rounds(44), Rules(rounds=5).planned_rounds(44)
        (22, 5)
        >>> Rules(system="round-robin", cycles=2).planned_rounds(6)
        10
        """
        if self.rounds is not None:
            return self.rounds
        if self.phases:
            return sum(phase.rounds for phase in self.phases)
        return lookup(self.system).planned(entrants, self.cycles, self.system_options)


class Tournament(msgspec.Struct, frozen=True):
    """An event's players and rounds, and the rules that pair it.

    >>> t = Tournament((Player("B", 2), Player("A", 1)), rules=Rules(format="single"))
    >>> t.by_seed()[0].name, t.rules.games_per_pair, hash(t) == hash(t)
    ('A', 1, True)
    """

    players: tuple[Player, ...]
    rounds: tuple[Round, ...] = ()
    rules: Rules = msgspec.field(default_factory=lambda: Rules(format="single"))
    fixed: tuple[tuple[str, str], ...] = ()  # the next round's pairs a director fixed
    teams: tuple[Team, ...] = ()  # a team Swiss's teams, seed 1 first

    def bye_players(self, bye: str) -> tuple[str, ...]:
        """The players a round's BYE goes to: a player, or every member of a team.

        >>> t = Tournament((), teams=(Team("T", ("A", "B")),))
        >>> t.bye_players("T"), t.bye_players("C")
        (('A', 'B'), ('C',))
        """
        return next((team.members for team in self.teams if team.name == bye), (bye,))

    def by_seed(self) -> tuple[Player, ...]:
        """The players, seed 1 first."""
        return tuple(sorted(self.players, key=lambda p: p.seed))

    def finished_games(self) -> Iterator[tuple[Round, Game]]:
        """Every game that has a result, with its round, in order: what scores count.

        >>> t = Tournament((), (Round(1, (Game("A", "B", "1-0"), Game("C", "D"))),))
        >>> [(r.number, g.white) for r, g in t.finished_games()]
        [(1, 'A')]
        """
        return ((rnd, g) for rnd in self.rounds for g in rnd.games if g.result is not None)

    def playing(self, round_number: int) -> int:
        """How many are paired in round `round_number`: the players who have not withdrawn
        before it, or the teams none of whose players has.

        >>> t = Tournament((Player("a", 1), Player("b", 2, withdrawn_after=1), Player("c", 3)))
        >>> t.playing(1), t.playing(2)
        (3, 2)
        """
        playing = {p.name for p in self.players if p.plays_in(round_number)}
        if self.teams:
            return sum(1 for team in self.teams if playing.issuperset(team.members))
        return len(playing)

    def entrants(self) -> int:
        """Who is paired: the players, or the teams of a team Swiss.

        >>> Tournament((Player("a", 1), Player("b", 2)), teams=(Team("T", ("a", "b")),)).entrants()
        1
        """
        return len(self.teams) if self.teams else len(self.players)

    def games_per_round(self) -> int:
        """The games of a full round: a game per pair (per board of a team match) and per
        leg.  Every count of an event's games comes from here.

        >>> teams = tuple(Team(f"T{i}", tuple(f"T{i}b{b}" for b in range(4))) for i in range(5))
        >>> Tournament((), teams=teams, rules=Rules(format="single")).games_per_round()
        8
        >>> Tournament(tuple(Player(f"P{i}", i) for i in range(1, 12))).games_per_round()
        5
        """
        boards = len(self.teams[0].members) if self.teams else 1
        return self.entrants() // 2 * boards * self.rules.games_per_pair

    def games_planned(self) -> int:
        """The games of the whole event as planned: its system's count where it has one (a
        knockout's regulation games, a gauntlet's), else a full round's games per round.

        >>> players = tuple(Player(f"P{i}", i) for i in range(1, 7))
        >>> Tournament(players, rules=Rules(rounds=3)).games_planned()
        18
        """
        rules, entrants = self.rules, self.entrants()
        system = lookup(rules.system)
        if system.games_planned is not None:
            return system.games_planned(self, system.parse(rules.system_options))
        return self.games_per_round() * rules.planned_rounds(entrants)


class Pairing(RoundNotes, frozen=True):
    """The next round: its number, its games in playing order, and its `RoundNotes` (the
    BYE, removed history rounds, the openings' numbers, or the final places)."""

    round: int
    games: tuple[Game, ...]

    @property
    def finished(self) -> bool:
        """Whether the event is over (no round to play: its places are known)."""
        return bool(self.places)

    def as_round(self, results: tuple[Result, ...]) -> Round:
        """The played round: these games with `results`, in order.

        >>> Pairing(1, (Game("A", "B"),)).as_round(("1-0",)).games == (Game("A", "B", "1-0"),)
        True
        """
        games = tuple(
            msgspec.structs.replace(g, result=r) for g, r in zip(self.games, results, strict=True)
        )
        return Round(self.round, games, self.bye)
