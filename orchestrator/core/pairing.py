"""The one entry point for "pair the next round", whatever the system."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from orchestrator.core.bakert import pair_bakert, points_option
from orchestrator.core.model import SYSTEMS, Game, Pairing, StateError, System, Tournament
from orchestrator.core.olafsson import pair_olafsson
from orchestrator.core.roundrobin import pair_round_robin, total_rounds
from orchestrator.core.swiss import pair_swiss
from orchestrator.core.teams import pair_team_swiss
from orchestrator.core.tsh import option, pair_factored, pair_koth, pair_quartile, pair_random


def pair_next(tournament: Tournament) -> Pairing:
    """The next round of `tournament` in playing order, by its system's rules.

    >>> from orchestrator.core.model import Player
    >>> pairing = pair_next(Tournament(tuple(Player(n, s) for s, n in enumerate("ABCD", 1))))
    >>> [(g.white, g.black) for g in pairing.games]
    [('D', 'C'), ('B', 'A')]
    """
    if tournament.fixed:
        return _with_fixed(tournament)
    system, options = tournament.system_of(len(tournament.rounds) + 1)
    if system == "round-robin":
        if tournament.phases:
            raise StateError("a round robin is a whole event, not one of its phases")
        return pair_round_robin(tournament)
    if system == "swiss":
        return pair_swiss(tournament)
    if system == "team-swiss":
        if tournament.phases:
            raise StateError("a team Swiss is a whole event, not one of its phases")
        return pair_team_swiss(tournament)
    if system == "olafsson":
        return pair_olafsson(tournament, options)
    if system == "bakert":
        return pair_bakert(tournament, options)
    if system == "koth":
        return pair_koth(tournament, options)
    if system == "factored":
        return pair_factored(tournament, options)
    if system == "quartile":
        return pair_quartile(tournament, options)
    return pair_random(tournament, options)


def _with_fixed(t: Tournament) -> Pairing:
    """The next round with the director's fixed pairs (manual pairings): the system pairs
    the rest, who may include the BYE; the fixed pairs play first-leg colours as given.

    >>> from orchestrator.core.model import Player
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCDEF", 1))
    >>> pairing = pair_next(Tournament(players, fixed=(("F", "A"),)))
    >>> [(g.white, g.black) for g in pairing.games]
    [('E', 'D'), ('C', 'B'), ('F', 'A')]
    """
    number = len(t.rounds) + 1
    playing = {p.name for p in t.players if p.plays_in(number)}
    taken = [name for pair in t.fixed for name in pair]
    for name in taken:
        if name not in playing:
            raise StateError(f"round {number}: {name!r} does not play this round")
    if len(set(taken)) != len(taken) or any(a == b for a, b in t.fixed):
        raise StateError(f"round {number}: a player is in two fixed pairs")
    if t.system_of(number)[0] == "round-robin":
        raise StateError("a round robin's pairings are its table: none can be fixed")
    if t.system_of(number)[0] == "team-swiss":
        raise StateError("a team Swiss pairs whole teams: its games cannot be fixed one by one")
    rest = replace(
        t,
        fixed=(),
        players=tuple(
            replace(p, withdrawn_after=number - 1) if p.name in taken else p for p in t.players
        ),
    )
    left = sorted(playing - set(taken))
    if len(left) >= 2:
        paired = pair_next(rest)
        first_leg, bye = _first_leg(paired, t.format, t.schedule), paired.bye
        dropped = paired.dropped_rounds
    else:
        first_leg, bye, dropped = [], (left[0] if left else None), 0
    fixed = [Game(white, black) for white, black in t.fixed]
    return Pairing(number, _both_legs(first_leg + fixed, t.format, t.schedule), bye, dropped)


def _first_leg(p: Pairing, fmt: str, schedule: str) -> list[Game]:
    if fmt != "double":
        return list(p.games)
    if schedule == "legs":
        return list(p.games[: len(p.games) // 2])
    return list(p.games[::2])


def _both_legs(first: list[Game], fmt: str, schedule: str) -> tuple[Game, ...]:
    if fmt != "double":
        return tuple(first)
    second = [Game(g.black, g.white) for g in first]
    if schedule == "legs":
        return (*first, *second)
    return tuple(g for pair in zip(first, second, strict=True) for g in pair)


#: the `system_options` each system takes
OPTIONS: dict[System, tuple[str, ...]] = {
    "swiss": (),
    "round-robin": (),
    "olafsson": (),
    "bakert": ("points", "seed"),
    "koth": ("repeats", "gibson"),
    "factored": ("factor", "repeats", "gibson"),
    "quartile": ("quartile", "repeats", "seed"),
    "random": ("repeats", "seed"),
    "team-swiss": (),
}


def check_options(system: str, options: Mapping[str, object]) -> None:
    """A `StateError` naming the first bad system name or option.

    >>> check_options("koth", {"repeats": 1})
    >>> check_options("koth", {"factor": 2})
    Traceback (most recent call last):
    ...
    orchestrator.core.model.StateError: system_options: koth takes repeats, gibson, not 'factor'
    >>> check_options("dutch", {})
    Traceback (most recent call last):
    ...
    orchestrator.core.model.StateError: unknown system 'dutch' (one of swiss, round-robin, ...)
    """
    if system not in OPTIONS:
        raise StateError(f"unknown system {system!r} (one of {', '.join(SYSTEMS)})")
    known = OPTIONS[system]
    for key in options:
        if key not in known:
            takes = ", ".join(known) or "no options"
            raise StateError(f"system_options: {system} takes {takes}, not {key!r}")
    for key in ("repeats",):
        if key in options:
            option(options, key, 0)
    if "seed" in options:
        option(options, "seed", 0)
    if "factor" in options:
        option(options, "factor", 1, least=1)
    if "quartile" in options and option(options, "quartile", 4, least=2) > 4:
        raise StateError(f"system_options: quartile must be 2, 3 or 4, not {options['quartile']}")
    if "points" in options:
        points_option(options)
    if "gibson" in options and not isinstance(options["gibson"], bool):
        raise StateError(f"system_options: gibson must be true or false, not {options['gibson']!r}")


def default_rounds(system: System, players: int, cycles: int = 1) -> int:
    """How many rounds an event plays when none are set: the whole table of a round robin
    (`cycles` times), half the players for a Swiss (at least one).

    >>> default_rounds("swiss", 44), default_rounds("round-robin", 6, cycles=2)
    (22, 10)

    For a team Swiss, `players` counts the teams.
    """
    if system == "round-robin":
        return total_rounds(players, cycles)
    return max(1, players // 2)
