"""The pairing systems, as registered objects: each declares its name, its options (a
msgspec schema), how many rounds an event of it plays by default, whether it may be one
phase of an event, and its pairing function.  `engines.toml`, the state JSON, `simulate`'s
choices and the help texts all read the systems from here, so a new system is one module
and one `register` call (docs/systems/ has a page per system).

A system's function pairs the first leg of a round: the games of one leg in playing order
(worst first), grouped in units that stay together (one game, or a team match's boards).
`legs` expands them into the round: a double round plays every unit again with colours
reversed, after the whole first leg (`legs`) or right after it (`pairs`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from orchestrator.core.codec import SchemaError, convert
from orchestrator.core.event.parts import Format, Game, Options, RoundNotes, Schedule, StateError

__all__ = [
    "NO_OPTIONS",
    "Draft",
    "NoOptions",
    "System",
    "legs",
    "lookup",
    "names",
    "register",
    "unregister",
]


class NoOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The options of a system that takes none."""


NO_OPTIONS = NoOptions()


Opts = TypeVar("Opts", bound=msgspec.Struct)
#: the event a system pairs: `core/event/model.py`'s `Tournament`, which validates its rules
#: against the systems here, so this module names it only as a type variable (no import of
#: the model, not even for types: the model stands on the registry, never the other way)
Event = TypeVar("Event")


class Draft(RoundNotes, frozen=True):
    """A system's pairing of one round, before the legs: the first leg's units (each a
    tuple of games that stay together) in playing order, and its `RoundNotes` (the BYE,
    the history rounds removed to pair it, ...)."""

    units: tuple[tuple[Game, ...], ...]
    #: whether a double round's second leg reverses the colours (false: fastchess's
    #: `-noswap`, where a gauntlet asks for it)
    swap: bool = True

    @classmethod
    def of_games(
        cls,
        games: Iterable[Game],
        bye: str | None = None,
        dropped: int = 0,
        openings: tuple[int, ...] = (),
        swap: bool = True,
    ) -> Draft:
        """A draft whose units are single games.

        >>> Draft.of_games([Game("A", "B"), Game("C", "D")]).units == (
        ...     (Game("A", "B"),), (Game("C", "D"),))
        True
        """
        units = tuple((g,) for g in games)
        return cls(units, bye=bye, dropped_rounds=dropped, openings=openings, swap=swap)

    def games(self) -> tuple[Game, ...]:
        """The first leg's games, in playing order."""
        return tuple(g for unit in self.units for g in unit)


def legs(
    units: Iterable[tuple[Game, ...]], fmt: Format, schedule: Schedule, swap: bool = True
) -> tuple[Game, ...]:
    """The games of a round from its first leg: in a double round, every unit again with
    colours reversed (the same colours without `swap`), after the whole first leg (`legs`)
    or right after it (`pairs`).  The one place where double rounds are made.

    >>> units = [(Game("A", "B"),), (Game("C", "D"),)]
    >>> [(g.white, g.black) for g in legs(units, "double", "legs")]
    [('A', 'B'), ('C', 'D'), ('B', 'A'), ('D', 'C')]
    >>> [(g.white, g.black) for g in legs(units, "double", "pairs")]
    [('A', 'B'), ('B', 'A'), ('C', 'D'), ('D', 'C')]
    >>> len(legs(units, "single", "legs"))
    2
    >>> [(g.white, g.black) for g in legs(units[:1], "double", "pairs", swap=False)]
    [('A', 'B'), ('A', 'B')]
    """
    first = [tuple(unit) for unit in units]
    if fmt != "double":
        return tuple(g for unit in first for g in unit)
    second = [
        tuple(g.reversed() if swap else Game(g.white, g.black) for g in unit) for unit in first
    ]
    if schedule == "legs":
        return tuple(g for unit in first + second for g in unit)
    return tuple(g for one, two in zip(first, second, strict=True) for g in one + two)


def half(entrants: int, cycles: int, options: Any) -> int:
    """Half the entrants, at least one round: a Swiss's default number of rounds."""
    return max(1, entrants // 2)


def unlimited(entrants: int, cycles: int, options: Any) -> int | None:
    """No fixed number of rounds at most (the pairing says when it can go on no longer)."""
    return None


def any_field(options: Any, entrants: int) -> str | None:
    """Options that fit any field."""
    return None


@functools.cache
def _option_names(options: type[msgspec.Struct]) -> tuple[str, ...]:
    """The names of a system's options, in order (msgspec reads a class's annotations for
    them: once a class).

    >>> class Opts(msgspec.Struct):
    ...     seed: int = 0
    ...     legs: int = 2
    >>> _option_names(Opts)
    ('seed', 'legs')
    """
    return tuple(f.encode_name for f in msgspec.structs.fields(options))


@dataclass(frozen=True)
class System(Generic[Opts, Event]):
    """A pairing system: how it is named, configured and run."""

    name: str
    #: one line for the help texts and docs
    summary: str
    #: the first leg of the next round of a tournament, with the system's options
    pair: Callable[[Event, Opts], Draft]
    #: the options it takes (`system_options`): a frozen msgspec Struct
    options: type[Opts] = NoOptions  # type: ignore[assignment]
    #: how the system is named in a sentence ("a round robin")
    noun: str = ""
    #: rounds an event of `entrants` players (teams), `cycles` cycles and these options
    #: plays by default (for a system that ends itself, an estimate)
    default_rounds: Callable[[int, int, Opts], int] = half
    #: the most rounds such an event can have, where that is fixed (a round robin's table)
    max_rounds: Callable[[int, int, Opts], int | None] = unlimited
    #: why its options do not fit a field of so many entrants (None: they do)
    misfit: Callable[[Opts, int], str | None] = any_field
    #: whether it may pair one phase of an event (else it is a whole event)
    phase: bool = True
    #: why a director may not fix its pairs by hand (`pair-manual`); empty: they may
    unfixable: str = ""
    #: whether its entrants are teams (a team Swiss)
    teams: bool = False
    #: whether its pairing gives every game of a round with its colours (a match's game
    #: pairs, a knockout's games): `format` and `schedule` do not apply to it
    own_games: bool = False
    #: whether the event ends when its pairing says so (`Pairing.places`), not after a
    #: number of rounds: `rounds` does not apply to it
    ends_itself: bool = False
    #: for a system whose rounds are not everyone's (a knockout, a gauntlet): checks that
    #: the played rounds are its own, a `StateError` naming the first that is not
    check_rounds: Callable[[Event, Opts], None] | None = None
    #: the games of a whole event (its entrants, under its rules), for a system whose rounds
    #: do not all have a game per pair (None: a full round's games in every round)
    games_planned: Callable[[Event, Opts], int] | None = None
    #: whether its BYE scores a win of each game of a pair (the Swiss rule), or is a rest
    #: day that scores nothing (a round robin's, as FIDE's Berger tables and TCEC count it)
    bye_scores: bool = True

    @property
    def takes(self) -> tuple[str, ...]:
        """The names of its options, in order."""
        return _option_names(self.options)

    @property
    def seeded(self) -> bool:
        """Whether it makes random choices (from a `seed` option, the event's by default)."""
        return "seed" in self.takes

    def parse(self, options: Mapping[str, Any]) -> Opts:
        """`options` checked against the system's schema; a `StateError` naming the first
        bad one (`system_options: ...`)."""
        try:
            # as plain data all the way down: msgspec reads a Mapping that is not a dict
            # (the frozen `Options` of a nested table) by its known keys alone
            return convert(Options(options).thawed(), self.options)
        except SchemaError as exc:
            if exc.unknown is not None and not exc.path:
                takes = ", ".join(self.takes) or "no options"
                raise StateError(
                    f"system_options: {self.name} takes {takes}, not {exc.unknown!r}"
                ) from None
            raise StateError(f"system_options: {exc}") from None

    def check_field(self, options: Mapping[str, Any], entrants: int) -> None:
        """A `StateError` when the options do not fit a field of `entrants` players (teams).

        >>> lookup("factored").check_field({"factor": 4}, 4)
        Traceback (most recent call last):
        ...
        orchestrator.core.event.parts.StateError: system_options: factor 4 needs more than 4 ...
        """
        reason = self.misfit(self.parse(options), entrants)
        if reason is not None:
            raise StateError(f"system_options: {reason}")

    def planned(self, entrants: int, cycles: int, options: Mapping[str, Any]) -> int:
        """The rounds an event of this system plays by default.

        >>> lookup("round-robin").planned(6, 2, {}), lookup("swiss").planned(44, 1, {})
        (10, 22)
        """
        return self.default_rounds(entrants, cycles, self.parse(options))

    def most(self, entrants: int, cycles: int, options: Mapping[str, Any]) -> int | None:
        """The most rounds an event of this system can have, None where it is not fixed.

        >>> lookup("round-robin").most(5, 1, {}), lookup("koth").most(5, 1, {})
        (5, None)
        """
        return self.max_rounds(entrants, cycles, self.parse(options))

    def first_leg(self, t: Event, options: Mapping[str, Any]) -> Draft:
        """The first leg of `t`'s next round by this system."""
        return self.pair(t, self.parse(options))


#: the built-in systems, in the order they are listed: where each is defined (module and
#: name), imported when the system is first used, so that a command that pairs a Swiss never
#: loads the code of the others
BUILTIN: dict[str, str] = {
    "swiss": "orchestrator.core.pairing.swiss:SWISS",
    "round-robin": "orchestrator.core.pairing.roundrobin:ROUND_ROBIN",
    "olafsson": "orchestrator.core.pairing.olafsson:OLAFSSON",
    "bakert": "orchestrator.core.pairing.bakert:BAKERT",
    "koth": "orchestrator.core.pairing.ranked:KOTH",
    "factored": "orchestrator.core.pairing.ranked:FACTORED",
    "quartile": "orchestrator.core.pairing.ranked:QUARTILE",
    "random": "orchestrator.core.pairing.ranked:RANDOM",
    "team-swiss": "orchestrator.core.pairing.teams:TEAM_SWISS",
    "knockout": "orchestrator.core.pairing.knockout:KNOCKOUT",
    "gauntlet": "orchestrator.core.pairing.gauntlet:GAUNTLET",
    "match": "orchestrator.core.pairing.gauntlet:MATCH",
}
_SYSTEMS: dict[str, System[Any, Any] | str] = dict(BUILTIN)


def register(system: System[Any, Any]) -> System[Any, Any]:
    """Make `system` known by its name (a second system of the same name replaces it).

    >>> toy = register(System("toy", "a toy", lambda t, options: Draft(())))
    >>> lookup("toy") is toy, toy.noun, names()[-1]
    (True, 'a toy', 'toy')
    >>> unregister("toy")
    """
    if not system.noun:
        object.__setattr__(system, "noun", f"a {system.name}")
    _SYSTEMS[system.name] = system
    return system


def unregister(name: str) -> None:
    """Forget the system called `name` (a built-in one comes back as it was)."""
    _SYSTEMS.pop(name, None)
    if name in BUILTIN:
        _SYSTEMS[name] = BUILTIN[name]


def names() -> tuple[str, ...]:
    """The names of every registered system, in the order they were registered.

    >>> names()[:3]
    ('swiss', 'round-robin', 'olafsson')
    """
    return tuple(_SYSTEMS)


def lookup(name: str) -> System[Any, Any]:
    """The system called `name`; a `StateError` listing them all when there is none.

    >>> lookup("koth").takes
    ('repeats', 'gibson')
    >>> lookup("dutch")
    Traceback (most recent call last):
    ...
    orchestrator.core.event.parts.StateError: unknown system 'dutch' (one of swiss, ...)
    """
    system = _SYSTEMS.get(name)
    if system is None:
        raise StateError(f"unknown system {name!r} (one of {', '.join(_SYSTEMS)})")
    if isinstance(system, str):  # a built-in one, used for the first time
        module, _, attribute = system.partition(":")
        found: System[Any, Any] = getattr(importlib.import_module(module), attribute)
        system = register(found)
    return system
