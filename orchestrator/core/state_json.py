"""The tournament-state JSON of SPEC.md section 1: decoding with validation, and encoding.

Pure: takes and returns plain Python values (the caller reads and writes the text).
Unknown keys are ignored, as the SPEC asks.
"""

from __future__ import annotations

import json
from typing import Any, cast

from orchestrator.core.model import (
    RESULTS,
    SYSTEMS,
    Game,
    Pairing,
    Phase,
    Player,
    Result,
    Round,
    StateError,
    Team,
    Tournament,
)
from orchestrator.core.pairing import check_options
from orchestrator.core.teams import check_teams, matches, team_tournament

_FORMATS = ("single", "double")
_SCHEDULES = ("legs", "pairs")


def _options(obj: dict[str, Any], where: str) -> dict[str, object]:
    options = obj.get("system_options", {})
    if not isinstance(options, dict):
        raise StateError(f"{where}'system_options' must be an object, not {options!r}")
    return options


def phases(raw: Any) -> tuple[Phase, ...]:
    """Phases from their JSON (or TOML) form: a list of {rounds, system, system_options}.

    >>> phases([{"rounds": 9, "system": "swiss"}, {"rounds": 2, "system": "koth",
    ...          "system_options": {"repeats": 1}}])[1]
    Phase(rounds=2, system='koth', options={'repeats': 1})
    """
    if not isinstance(raw, list) or not raw:
        raise StateError(f"'phases' must be a non-empty list, not {raw!r}")
    found = []
    for i, item in enumerate(raw):
        where = f"phases[{i}]: "
        if not isinstance(item, dict):
            raise StateError(f"{where}must be an object")
        rounds = item.get("rounds")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise StateError(f"{where}'rounds' must be a positive integer, not {rounds!r}")
        system = _choice(item, "system", SYSTEMS, "swiss")
        if system in ("round-robin", "team-swiss"):
            whole = "a round robin" if system == "round-robin" else "a team Swiss"
            raise StateError(f"{where}{whole} is a whole event, not one of its phases")
        options = _options(item, where)
        try:
            check_options(system, options)
        except StateError as exc:
            raise StateError(f"{where}{exc}") from None
        found.append(Phase(rounds, cast(Any, system), options))
    return tuple(found)


def loads(text: str) -> Tournament:
    """Decode and validate a tournament state from JSON text.

    >>> t = loads('{"players": [{"name": "A", "seed": 1}, {"name": "B", "seed": 2}]}')
    >>> [p.name for p in t.players], t.format
    (['A', 'B'], 'single')
    >>> loads('{"players": 3}')
    Traceback (most recent call last):
    orchestrator.core.model.StateError: state: 'players' must be list, not 3
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise StateError("malformed JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise StateError(f"malformed JSON: {exc}") from None
    return decode(data)


def _need(obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        raise StateError(f"{where}: missing key '{key}'")
    value = obj[key]
    if kind is int and isinstance(value, bool):
        raise StateError(f"{where}: '{key}' must be an integer, not {value!r}")
    if not isinstance(value, kind):
        raise StateError(f"{where}: '{key}' must be {kind.__name__}, not {value!r}")
    return value


def _choice(obj: dict[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
    value = obj.get(key, default)
    if value is None and key == "schedule":
        return default
    if value not in choices:
        raise StateError(f"'{key}' must be one of {', '.join(choices)}, not {value!r}")
    return cast(str, value)


def decode(data: Any) -> Tournament:
    """Build and validate a `Tournament` from decoded JSON.

    >>> data = {"format": "double", "players": [{"name": "A", "seed": 1}, {"name": "B", "seed": 2}]}
    >>> decode(data).games_per_pair
    2
    """
    if not isinstance(data, dict):
        raise StateError("the state must be a JSON object")
    fmt = _choice(data, "format", _FORMATS, "single")
    schedule = _choice(data, "schedule", _SCHEDULES, "legs")
    system = _choice(data, "system", SYSTEMS, "swiss")
    options = _options(data, "")
    check_options(system, options)
    in_phases = phases(data["phases"]) if data.get("phases") is not None else ()
    planned = data.get("planned_rounds")
    if planned is not None and (
        isinstance(planned, bool) or not isinstance(planned, int) or planned < 1
    ):
        raise StateError(f"'planned_rounds' must be a positive integer, not {planned!r}")
    cycles = data.get("cycles", 1)
    if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 1:
        raise StateError(f"'cycles' must be a positive integer, not {cycles!r}")
    raw_players = _need(data, "players", list, "state")
    players = []
    for i, raw in enumerate(raw_players):
        where = f"players[{i}]"
        if not isinstance(raw, dict):
            raise StateError(f"{where}: must be an object")
        name = _need(raw, "name", str, where)
        seed = _need(raw, "seed", int, where)
        withdrawn = raw.get("withdrawn_after")
        if withdrawn is not None and (
            isinstance(withdrawn, bool) or not isinstance(withdrawn, int) or withdrawn < 0
        ):
            raise StateError(
                f"{where}: 'withdrawn_after' must be a round number, not {withdrawn!r}"
            )
        players.append(Player(name, seed, withdrawn))
    rounds = []
    raw_rounds = data.get("rounds") or []
    if not isinstance(raw_rounds, list):
        raise StateError(f"'rounds' must be a list, not {raw_rounds!r}")
    for i, raw in enumerate(raw_rounds):
        where = f"rounds[{i}]"
        if not isinstance(raw, dict):
            raise StateError(f"{where}: must be an object")
        number = raw.get("round", i + 1)
        if number != i + 1:
            raise StateError(f"{where}: 'round' is {number!r}, expected {i + 1}")
        games = []
        for j, g in enumerate(_need(raw, "games", list, where)):
            gwhere = f"round {i + 1} game {j + 1}"
            if not isinstance(g, dict):
                raise StateError(f"{gwhere}: must be an object")
            result = g.get("result")
            if result not in RESULTS:
                raise StateError(f"{gwhere}: bad result {result!r} (expected 1-0, 0-1 or 1/2-1/2)")
            forfeit = g.get("forfeit", False)
            if not isinstance(forfeit, bool):
                raise StateError(f"{gwhere}: 'forfeit' must be true or false, not {forfeit!r}")
            if forfeit and result == "1/2-1/2":
                raise StateError(f"{gwhere}: a forfeit is won by one side, not drawn")
            games.append(
                Game(
                    _need(g, "white", str, gwhere),
                    _need(g, "black", str, gwhere),
                    cast(Result, result),
                    forfeit,
                )
            )
        bye = raw.get("bye")
        if bye is not None and not isinstance(bye, str):
            raise StateError(f"{where}: 'bye' must be a name or null, not {bye!r}")
        rounds.append(Round(i + 1, tuple(games), bye))
    tournament = Tournament(
        teams=_teams(data),
        players=tuple(players),
        rounds=tuple(rounds),
        format=cast(Any, fmt),
        schedule=cast(Any, schedule),
        system=cast(Any, system),
        cycles=cycles,
        options=options,
        phases=in_phases,
        planned_rounds=planned,
    )
    validate(tournament)
    return tournament


def _teams(data: dict[str, Any]) -> tuple[Team, ...]:
    raw = data.get("teams")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise StateError(f"'teams' must be a list, not {raw!r}")
    teams = []
    for i, item in enumerate(raw):
        where = f"teams[{i}]"
        if not isinstance(item, dict):
            raise StateError(f"{where}: must be an object")
        name = _need(item, "name", str, where)
        members = _need(item, "players", list, where)
        if not all(isinstance(m, str) for m in members):
            raise StateError(f"{where}: 'players' must be a list of player names")
        teams.append(Team(name, tuple(members)))
    return tuple(teams)


def validate(t: Tournament) -> None:
    """Raise `StateError` naming the first problem that makes `t` an illegal state.

    >>> from orchestrator.core.model import Player
    >>> validate(Tournament((Player("A", 1), Player("B", 1))))
    Traceback (most recent call last):
    orchestrator.core.model.StateError: duplicate seed 1
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
    if t.teams or t.system == "team-swiss":
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


def _validate_round(t: Tournament, rnd: Round, names: set[str], everyone: set[str]) -> None:
    """`names`: the players who play in the round (not withdrawn before it)."""
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
    for pair, games in games_of_pair.items():
        a, b = sorted(pair)
        if len(games) < t.games_per_pair and pair & withdrawing:
            continue  # a game of a withdrawing player was cancelled
        if len(games) != t.games_per_pair:
            raise StateError(
                f"{where}: {a!r} and {b!r} play {len(games)} games "
                f"(a {t.format} round has {t.games_per_pair} per pair)"
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

    >>> from orchestrator.core.model import Player
    >>> encode(Tournament((Player("A", 1),)))
    {'format': 'single', 'players': [{'name': 'A', 'seed': 1}], 'rounds': []}
    """
    out: dict[str, Any] = {"format": t.format}
    if t.format == "double":
        out["schedule"] = t.schedule
    if t.system != "swiss":
        out["system"] = t.system
        out["cycles"] = t.cycles
    if t.options:
        out["system_options"] = dict(t.options)
    if t.planned_rounds is not None:
        out["planned_rounds"] = t.planned_rounds
    if t.phases:
        out["phases"] = [
            {"rounds": p.rounds, "system": p.system}
            | ({"system_options": dict(p.options)} if p.options else {})
            for p in t.phases
        ]
    if t.teams:
        out["teams"] = [{"name": x.name, "players": list(x.members)} for x in t.teams]
    out["players"] = [
        {"name": p.name, "seed": p.seed}
        | ({"withdrawn_after": p.withdrawn_after} if p.withdrawn_after is not None else {})
        for p in t.by_seed()
    ]
    out["rounds"] = [
        {
            "round": r.number,
            "games": [
                {"white": g.white, "black": g.black, "result": g.result}
                | ({"forfeit": True} if g.forfeit else {})
                for g in r.games
            ],
            "bye": r.bye,
        }
        for r in t.rounds
    ]
    return out


def encode_pairing(p: Pairing) -> dict[str, Any]:
    """The `orchestrator pair` output object of SPEC.md section 2.

    >>> from orchestrator.core.model import Game
    >>> encode_pairing(Pairing(1, (Game("A", "B"),)))
    {'round': 1, 'bye': None, 'dropped_rounds': 0, 'games': [{'white': 'A', 'black': 'B'}]}
    """
    return {
        "round": p.round,
        "bye": p.bye,
        "dropped_rounds": p.dropped_rounds,
        "games": [{"white": g.white, "black": g.black} for g in p.games],
    }
