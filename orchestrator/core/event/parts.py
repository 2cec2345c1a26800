"""The parts an event is made of, as typed data: results, players, games, teams, rounds and
the options of a pairing system.  They depend on nothing else of the event: the pairing
systems (`core/pairing/registry.py`) and the codec build on them, and the rules that pair an
event (`model.py`) build on those.

Every type here is a frozen msgspec `Struct`, so the same declaration is the schema that
`engines.toml`, the state JSON and the stored settings are validated against
(`core/codec.py`), and an instance never changes once made.  Options are an immutable
`Options` mapping, so everything made of them can be hashed.
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

    def thawed(self) -> dict[str, Any]:
        """These options as plain data all the way down (tables as dicts, lists as lists),
        as a schema reads them: every key of a nested table is seen.

        >>> Options({"sprt": {"elo0": 0}, "points": [3, 1, 0]}).thawed()
        {'sprt': {'elo0': 0}, 'points': [3, 1, 0]}
        """
        return {name: _thawed(value) for name, value in self._items}


def _thawed(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    if isinstance(value, Options):
        return value.thawed()
    return value


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


class RoundNotes(msgspec.Struct, frozen=True, kw_only=True):
    """What a pairing says of its round besides its games (`Pairing`, and a system's
    `Draft`): the BYE, the history rounds removed to pair it, each game's opening number for
    a system that numbers them itself (a knockout: game pair p of every match of a stage
    plays one opening), and the final places (place, name) of an event its system has ended
    instead of pairing a round."""

    bye: str | None = None
    dropped_rounds: int = 0
    openings: tuple[int, ...] = ()
    places: tuple[tuple[str, str], ...] = ()


class Round(msgspec.Struct, frozen=True):
    """A played (or paired) round: its games in playing order and its BYE."""

    number: int = msgspec.field(name="round")
    games: tuple[Game, ...] = ()
    bye: str | None = None
