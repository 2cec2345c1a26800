"""The event as typed data: players, games, rounds, teams, the rules that pair it, and the
pairing of a round.

Every type here is a frozen msgspec `Struct`, so the same declaration is the schema that
`engines.toml`, the state JSON and the stored settings are validated against
(`core/codec.py`), and an instance never changes once made: a new round is a new
`Tournament`.  Options are an immutable `Options` mapping, so a `Tournament` can be hashed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import msgspec

from orchestrator.core.errors import OrchestratorError

Result = Literal["1-0", "0-1", "1/2-1/2"]
RESULTS: tuple[Result, ...] = ("1-0", "0-1", "1/2-1/2")
Format = Literal["single", "double"]
Schedule = Literal["legs", "pairs"]

WHITE_POINTS: dict[Result, float] = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}

#: a positive whole number (rounds, cycles, seeds)
Positive = Annotated[int, msgspec.Meta(ge=1, description="a positive integer")]
#: a round number that may be 0 (withdrawn before the first round)
RoundNumber = Annotated[int, msgspec.Meta(ge=0, description="a round number")]


class StateError(OrchestratorError, ValueError):
    """The tournament state is not a legal one; the message names the problem."""


def clean_name(name: str) -> str:
    """A name as it is compared and shown: in Unicode's composed form (NFC), so that "é" as
    one character and as "e" with a combining accent are one name; a `ValueError` for a name
    that is blank or holds an invisible character (a control character, a bidi override, a
    zero-width or unassigned one), which would make names that look alike differ.

    >>> clean_name("Fe\u0301lix") == clean_name("F\u00e9lix") == "F\u00e9lix"
    True
    >>> clean_name("Stock\u202efish")
    Traceback (most recent call last):
    ...
    ValueError: 'Stock\u202efish' holds the invisible character U+202E (a control, format or ...
    """
    text = unicodedata.normalize("NFC", name)
    if not text.strip():
        raise ValueError("must not be empty")
    for char in text:
        if unicodedata.category(char)[0] == "C":
            raise ValueError(
                f"{name!r} holds the invisible character U+{ord(char):04X} (a control, format "
                "or unassigned character): names must look as they are"
            )
    return text


class Options(Mapping[str, Any]):
    """A pairing system's options as given (`system_options`): an immutable, hashable
    mapping that keeps the order it was given in (lists become tuples).

    >>> options = Options({"points": [3, 1, 0], "seed": 7})
    >>> options["points"], options, hash(options) == hash(Options(options))
    ((3, 1, 0), {'points': (3, 1, 0), 'seed': 7}, True)
    """

    __slots__ = ("_items",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._items = tuple((str(k), _frozen(v)) for k, v in (data or {}).items())

    def __getitem__(self, key: str) -> Any:
        for name, value in self._items:
            if name == key:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other.items())

    def __repr__(self) -> str:
        return repr(dict(self._items))

    def with_default(self, key: str, value: Any) -> Options:
        """These options, with `key` set to `value` unless they set it themselves.

        >>> Options({"repeats": 1}).with_default("seed", 7)
        {'repeats': 1, 'seed': 7}
        """
        return self if key in self else Options({**dict(self._items), key: value})


def _frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return Options(value)
    return value


class Player(msgspec.Struct, frozen=True, omit_defaults=True):
    """A player; one withdrawn after round N is left out of pairing from round N + 1 on."""

    name: Annotated[str, msgspec.Meta(min_length=1, description="a name")]
    seed: Annotated[int, msgspec.Meta(ge=1, le=1_000_000, description="a seed of 1 to 1000000")]
    withdrawn_after: RoundNumber | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "name", clean_name(self.name))

    def plays_in(self, round_number: int) -> bool:
        """Whether the player is paired (or may get the BYE) in round `round_number`.

        >>> Player("A", 1, withdrawn_after=3).plays_in(3), Player("A", 1, 3).plays_in(4)
        (True, False)
        """
        return self.withdrawn_after is None or round_number <= self.withdrawn_after


class Game(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game; a forfeit (an opponent withdrew) counts for the score, but gives neither
    player a colour nor an encounter.  A knockout's game says where it stands in the
    bracket (its `stage`, `match` and `number` in the match, given as "game") and the time
    control of a tiebreak pair (`tc`, None for the event's); a played game may carry its
    r-mobility result (`rmobility`, TCEC's RMobilityResult)."""

    white: str
    black: str
    result: Result | None = None
    forfeit: bool = False
    stage: Positive | None = None
    match: Positive | None = None
    number: Positive | None = msgspec.field(default=None, name="game")
    tc: str | None = None
    #: its r-mobility result (`core/game/rmobility.py`), such as "G1.5" or "-G8.5"
    rmobility: str | None = None

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

    def reversed(self) -> Game:
        """The same pair with colours reversed (the second game of a double round).

        >>> Game("A", "B", "1-0").reversed() == Game("B", "A")
        True
        """
        return Game(self.black, self.white)


class Team(msgspec.Struct, frozen=True):
    """A team of a team Swiss: its players on fixed boards, board 1 first."""

    name: str
    members: tuple[str, ...] = msgspec.field(name="players")

    def __post_init__(self) -> None:
        names = tuple(clean_name(n) for n in self.members)
        msgspec.structs.force_setattr(self, "name", clean_name(self.name))
        msgspec.structs.force_setattr(self, "members", names)


class Round(msgspec.Struct, frozen=True):
    """A played (or paired) round: its games in playing order and its BYE."""

    number: int = msgspec.field(name="round")
    games: tuple[Game, ...] = ()
    bye: str | None = None


class Phase(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`rounds` rounds paired by `system` with `system_options` (an event in phases)."""

    rounds: Positive
    system: str = "swiss"
    system_options: Options = msgspec.field(default_factory=Options)

    def __post_init__(self) -> None:
        from orchestrator.core.pairing.registry import lookup  # the registry pairs with us

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
        from orchestrator.core.pairing.registry import lookup  # the registry pairs with us

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
        orchestrator.core.event.model.StateError: system_options: factor 9 needs more than ...
        """
        from orchestrator.core.pairing.registry import lookup

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
        from orchestrator.core.pairing.registry import lookup

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
        from orchestrator.core.pairing.registry import lookup

        rules, entrants = self.rules, self.entrants()
        system = lookup(rules.system)
        if system.games_planned is not None:
            return system.games_planned(entrants, rules, system.parse(rules.system_options))
        return self.games_per_round() * rules.planned_rounds(entrants)


class Pairing(msgspec.Struct, frozen=True):
    """The next round: its games in playing order, the BYE, and removed history rounds.  A
    system that numbers its openings itself (a knockout: game pair p of every match of a
    stage plays one opening) gives each game's opening number in `openings`; one that
    decides its own end gives the final `places` (place, name) instead of a round."""

    round: int
    games: tuple[Game, ...]
    bye: str | None = None
    dropped_rounds: int = 0
    openings: tuple[int, ...] = ()
    places: tuple[tuple[str, str], ...] = ()

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
