"""The tournament-state JSON (docs/state-json.md): decoding with validation, and encoding.

Pure: takes and returns plain Python values (the caller reads and writes the text).  The
shape is declared (`State`, checked by `core/codec.py`); unknown keys are ignored, as the
format promises.  What a schema cannot say (unique names, who plays whom) `validate` checks.
"""

from __future__ import annotations

from typing import Any

import msgspec

from orchestrator.core.codec import Key, SchemaError, convert, parse_json, show_path, to_builtins
from orchestrator.core.event.model import (
    Format,
    Game,
    Options,
    Pairing,
    Phase,
    Player,
    Positive,
    Round,
    Rules,
    Schedule,
    StateError,
    Team,
    Tournament,
)
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.teams import check_teams, matches, team_tournament

__all__ = ["State", "decode", "encode", "encode_pairing", "loads", "schema", "validate"]


class StateRound(msgspec.Struct, frozen=True):
    """A round as the state JSON gives it: its number may be left out."""

    games: tuple[Game, ...]
    round: int | None = None
    bye: str | None = None


class State(msgspec.Struct, frozen=True, kw_only=True):
    """The tournament-state JSON (unknown keys are ignored)."""

    players: tuple[Player, ...]
    rounds: tuple[StateRound, ...] | None = None
    format: Format = "single"
    schedule: Schedule | None = "legs"
    system: str | None = None  # "swiss" unless `phases` are given
    system_options: Options = msgspec.field(default_factory=Options)
    phases: tuple[Phase, ...] | None = None
    planned_rounds: Positive | None = None
    cycles: Positive = 1
    teams: tuple[Team, ...] | None = None


def schema() -> dict[str, Any]:
    """The JSON Schema of the state, for editors, with the names of the registered systems.

    >>> sorted(schema()["$defs"]["State"]["required"])
    ['players']
    """
    from orchestrator.core.codec import json_schema
    from orchestrator.core.pairing.registry import names

    out = json_schema(State)
    systems = {"enum": list(names())}
    out["$defs"]["State"]["properties"]["system"] |= systems
    out["$defs"]["Phase"]["properties"]["system"] |= systems
    return out


def where(path: tuple[Key, ...]) -> str:
    """A place in the state, as the error messages name it.

    >>> where(("rounds", 0, "games", 1, "result")), where(("players", 2, "seed"))
    ('round 1 game 2 result', 'players[2].seed')
    """
    if len(path) >= 2 and path[0] == "rounds" and isinstance(path[1], int):
        text = f"round {path[1] + 1}"
        rest = path[2:]
        if len(rest) >= 2 and rest[0] == "games" and isinstance(rest[1], int):
            text, rest = f"{text} game {rest[1] + 1}", rest[2:]
        return " ".join([text, *(str(k) for k in rest)])
    return show_path(path)


def loads(text: str) -> Tournament:
    """Decode and validate a tournament state from JSON text.

    >>> t = loads('{"players": [{"name": "A", "seed": 1}, {"name": "B", "seed": 2}]}')
    >>> [p.name for p in t.players], t.rules.format
    (['A', 'B'], 'single')
    >>> loads('{"players": 3}')
    Traceback (most recent call last):
    orchestrator.core.event.parts.StateError: players: expected a list, not 3
    """
    try:
        data = parse_json(text)
    except SchemaError as exc:
        raise StateError(str(exc)) from None
    return decode(data)


def decode(data: Any) -> Tournament:
    """Build and validate a `Tournament` from decoded JSON.

    >>> data = {"format": "double", "players": [{"name": "A", "seed": 1}, {"name": "B", "seed": 2}]}
    >>> decode(data).rules.games_per_pair
    2
    """
    if not isinstance(data, dict):
        raise StateError("the state must be a JSON object")
    try:
        state = convert(data, State)
    except SchemaError as exc:
        text = f"{where(exc.path)}: {exc.message}" if exc.path else exc.message
        raise StateError(text) from None
    rounds = []
    for i, raw in enumerate(state.rounds or ()):
        if raw.round not in (None, i + 1):
            raise StateError(f"rounds[{i}]: 'round' is {raw.round!r}, expected {i + 1}")
        for j, g in enumerate(raw.games):
            if g.result is None:
                raise StateError(f"round {i + 1} game {j + 1}: missing key 'result'")
            if g.forfeit and g.result == "1/2-1/2":
                raise StateError(
                    f"round {i + 1} game {j + 1}: a forfeit is won by one side, not drawn"
                )
        rounds.append(Round(i + 1, raw.games, raw.bye))
    if state.phases and state.system not in (None, state.phases[0].system):
        raise StateError(
            f"give either a system or phases, not both (system {state.system!r}, the first "
            f"phase's {state.phases[0].system!r})"
        )
    rules = Rules(
        system=state.system or (state.phases[0].system if state.phases else "swiss"),
        system_options=state.system_options,
        phases=state.phases or (),
        rounds=state.planned_rounds,
        cycles=state.cycles,
        format=state.format,
        schedule=state.schedule or "legs",
    )
    tournament = Tournament(
        players=state.players, rounds=tuple(rounds), rules=rules, teams=state.teams or ()
    )
    validate(tournament)
    return tournament


def validate(t: Tournament) -> None:
    """Raise `StateError` naming the first problem that makes `t` an illegal state.

    >>> validate(Tournament((Player("A", 1), Player("B", 1))))
    Traceback (most recent call last):
    orchestrator.core.event.parts.StateError: duplicate seed 1
    """
    names: set[str] = set()
    seeds: set[int] = set()
    for p in t.players:
        if not p.name:
            raise StateError("a player has an empty name")
        if p.name in names:
            raise StateError(f"duplicate player name {p.name!r}")
        if p.seed < 1:
            raise StateError(f"player {p.name!r}: seed must be a positive integer, not {p.seed}")
        if p.seed in seeds:
            raise StateError(f"duplicate seed {p.seed}")
        names.add(p.name)
        seeds.add(p.seed)
    if len(t.players) < 2:
        raise StateError("a tournament needs at least two players")
    t.rules.check_field(t.entrants())
    system = lookup(t.rules.system)
    if system.check_rounds is not None:  # its own rounds: the system knows who plays
        for rnd in t.rounds:
            playing = {p.name for p in t.players if p.plays_in(rnd.number)}
            _validate_round(t, rnd, playing, names, counted=False)
        system.check_rounds(t, system.parse(t.rules.system_options))
        return
    if t.teams or system.teams:
        check_teams(t)
        teams = team_tournament(t)
        withdrawn = {p.name: p.withdrawn_after for p in t.players}
        for rnd in t.rounds:
            for m in matches(t, rnd):
                cancelled = any(  # a withdrawing engine's games may have been cancelled
                    withdrawn[name] == rnd.number
                    for team in t.teams
                    if team.name in (m.team1, m.team2)
                    for name in team.members
                )
                if not m.complete() and not cancelled:
                    raise StateError(
                        f"round {rnd.number}: match {m.team1} - {m.team2} has "
                        f"{len(m.games)} of its {m.boards} boards"
                    )
            playing = {p.name for p in teams.players if p.plays_in(rnd.number)}
            _validate_round(teams, teams.rounds[rnd.number - 1], playing, playing)
            if rnd.bye is not None and rnd.bye not in playing:
                raise StateError(f"round {rnd.number}: unknown or withdrawn BYE team {rnd.bye!r}")
        return
    for rnd in t.rounds:
        playing = {p.name for p in t.players if p.plays_in(rnd.number)}
        _validate_round(t, rnd, playing, names)


def _validate_round(
    t: Tournament, rnd: Round, names: set[str], everyone: set[str], *, counted: bool = True
) -> None:
    """`names`: the players who play in the round (not withdrawn before it).  With
    `counted`, every one of them has a game (or the BYE) and each pair its games."""
    where = f"round {rnd.number}"
    withdrawing = {p.name for p in t.players if p.withdrawn_after == rnd.number}
    seen: dict[str, tuple[str, str]] = {}
    games_of_pair: dict[frozenset[str], list[Game]] = {}
    for g in rnd.games:
        for name in (g.white, g.black):
            if name not in everyone:
                raise StateError(f"{where}: unknown player {name!r}")
            if name not in names:
                raise StateError(f"{where}: {name!r} withdrew before this round")
        if g.white == g.black:
            raise StateError(f"{where}: {g.white!r} plays against itself")
        if g.result is None:
            raise StateError(f"{where}: game {g.white} - {g.black} has no result")
        pair = frozenset((g.white, g.black))
        for name in (g.white, g.black):
            other = seen.get(name)
            if other is not None and frozenset(other) != pair:
                raise StateError(f"{where}: {name!r} plays in two games of the round")
            seen[name] = (g.white, g.black)
        games_of_pair.setdefault(pair, []).append(g)
    if not counted:
        return
    for pair, games in games_of_pair.items():
        a, b = sorted(pair)
        per_pair = t.rules.games_per_pair
        if len(games) < per_pair and pair & withdrawing:
            continue  # a game of a withdrawing player was cancelled
        if len(games) != per_pair:
            raise StateError(
                f"{where}: {a!r} and {b!r} play {len(games)} games "
                f"(a {t.rules.format} round has {per_pair} per pair)"
            )
        if len(games) == 2 and games[0].white == games[1].white:
            raise StateError(f"{where}: {a!r} and {b!r} play both games with the same colours")
    if rnd.bye is not None:
        if rnd.bye not in names:
            raise StateError(f"{where}: unknown or withdrawn BYE player {rnd.bye!r}")
        if rnd.bye in seen:
            raise StateError(f"{where}: BYE player {rnd.bye!r} also plays a game")
    missing = sorted(names - set(seen) - ({rnd.bye} if rnd.bye else set()))
    if missing and not withdrawing:  # cancelled games leave players without one
        raise StateError(f"{where}: {missing[0]!r} has neither a game nor the BYE")
    if len(names) % 2 == 1 and rnd.bye is None:
        raise StateError(f"{where}: an odd number of players needs a BYE")


def encode(t: Tournament) -> dict[str, Any]:
    """The tournament-state JSON object for `t`.

    >>> encode(Tournament((Player("A", 1),)))
    {'format': 'single', 'players': [{'name': 'A', 'seed': 1}], 'rounds': []}
    """
    rules = t.rules
    out: dict[str, Any] = {"format": rules.format}
    if rules.format == "double":
        out["schedule"] = rules.schedule
    if rules.system != "swiss" and not rules.phases:
        out["system"] = rules.system
        out["cycles"] = rules.cycles
    if rules.system_options:
        out["system_options"] = to_builtins(rules.system_options)
    if rules.rounds is not None:
        out["planned_rounds"] = rules.rounds
    if rules.phases:
        out["phases"] = [
            {"rounds": p.rounds, "system": p.system}
            | ({"system_options": to_builtins(p.system_options)} if p.system_options else {})
            for p in rules.phases
        ]
    if t.teams:
        out["teams"] = to_builtins(t.teams)
    out["players"] = to_builtins(t.by_seed())
    out["rounds"] = to_builtins(t.rounds)
    return out


def encode_pairing(p: Pairing) -> dict[str, Any]:
    """The `orchestrator pair` output object (docs/state-json.md).

    >>> encode_pairing(Pairing(1, (Game("A", "B"),)))
    {'round': 1, 'bye': None, 'dropped_rounds': 0, 'games': [{'white': 'A', 'black': 'B'}]}
    >>> encode_pairing(Pairing(1, (Game("A", "B", stage=2, match=1, number=5, tc="5+1"),)))
    {'round': 1, 'bye': None, 'dropped_rounds': 0, 'games': [{'white': 'A', 'black': 'B', \
'stage': 2, 'match': 1, 'game': 5, 'tc': '5+1'}]}
    >>> encode_pairing(Pairing(9, (), places=(("1", "A"), ("2", "B"))))
    {'finished': True, 'winner': 'A', 'places': [{'place': '1', 'name': 'A'}, {'place': '2', \
'name': 'B'}]}
    """
    if p.finished:
        return {
            "finished": True,
            "winner": p.places[0][1],
            "places": [{"place": place, "name": name} for place, name in p.places],
        }
    return {
        "round": p.round,
        "bye": p.bye,
        "dropped_rounds": p.dropped_rounds,
        "games": [
            {k: v for k, v in to_builtins(g).items() if k not in ("result", "forfeit")}
            for g in p.games
        ],
    }
