"""The read model that the status commands and the web view share: the stored event, as
the `--json` outputs and the JSON API give it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import chess

from orchestrator.core.event.model import Game, Round, Tournament
from orchestrator.core.event.standings import standings
from orchestrator.core.game.endings import Ended, Tally, ended, tally
from orchestrator.core.game.openings import START
from orchestrator.core.game.variants import rules_on
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.teams import board_tags, matches, seats, team_standings
from orchestrator.event.api import (
    ComingRound,
    DaemonJSON,
    EndingsJSON,
    ExportedGame,
    GameJSON,
    GameSummary,
    KibitzerJSON,
    KibitzerPoint,
    MatchJSON,
    MoveJSON,
    OverviewJSON,
    RoundJSON,
    RunningGame,
    ScheduleGame,
    ScheduleJSON,
    Side,
    StandingsJSON,
    VoidedJSON,
)
from orchestrator.event.columns import Record, records
from orchestrator.event.export import (
    bracket_data,
    gauntlet_data,
    head_to_head,
    standings_data,
    team_data,
)
from orchestrator.event.feed import move_json
from orchestrator.event.settings import EventSettings
from orchestrator.event.state import tournament
from orchestrator.store.database import (
    AttemptRow,
    ControlRow,
    DaemonRow,
    GameRow,
    RoundRow,
    Store,
    StoreError,
)
from orchestrator.store.lock import held
from orchestrator.store.logs import find_log, logs_folder

#: the engine faults that count as strikes (`strikes` in [tournament])
STRIKES = frozenset({"crash", "stall", "illegal_move", "startup"})


@dataclass(frozen=True)
class EventView:
    """What the read commands need, loaded in one go."""

    name: str
    settings: EventSettings
    rounds: list[RoundRow]
    tournament: Tournament  # the rounds that count for pairing: complete ones
    attempts: list[AttemptRow]  # those of `Store.open_attempts`: running, voided, unfinished
    withdrawals: dict[str, tuple[int, str]]  # name: (withdrawn after round, reason)
    paused: bool
    finished: bool
    daemon: DaemonRow | None  # the last daemon's heartbeat
    running: bool  # whether a daemon holds the database now
    controls: list[ControlRow]  # every control, applied or pending, in the order given

    @property
    def provisional(self) -> bool:
        """Whether the standings include a round that is not over.

        >>> from orchestrator.event.sample import sample_view
        >>> sample_view().provisional
        True
        """
        return bool(self.rounds) and self.rounds[-1].finished_at is None

    def standings_tournament(self) -> Tournament:
        """What the standings count: every finished game, also of the round being played.

        >>> from orchestrator.event.sample import sample_view
        >>> view = sample_view()
        >>> len(view.tournament.rounds), len(view.standings_tournament().rounds[0].games)
        (0, 1)
        """
        return tournament(self.settings, self.tournament.players, self.rounds, played=True)

    def status(self, game: GameRow) -> str:
        """pending, running, interrupted (running, but no daemon runs) or finished.

        >>> from orchestrator.event.sample import sample_view
        >>> view = sample_view()
        >>> [view.status(g) for g in view.rounds[0].games[:2]]
        ['finished', 'pending']
        """
        if game.status == "running" and not self.running:
            return "interrupted"
        return game.status

    def strikes(self) -> dict[str, list[GameRow]]:
        """Per engine, the games it lost by a fault that counts as a strike.

        >>> from orchestrator.event.sample import sample_view
        >>> sample_view().strikes()
        {'A': [], 'B': [], 'C': [], 'D': []}
        """
        out: dict[str, list[GameRow]] = {p.name: [] for p in self.tournament.players}
        for r in self.rounds:
            for g in r.games:
                if g.fault is not None and g.fault.kind in STRIKES and g.fault.engine in out:
                    out[g.fault.engine].append(g)
        return out

    def game(self, game_id: int) -> GameRow | None:
        """The game with this id, if the event has one.

        >>> from orchestrator.event.sample import sample_view
        >>> view = sample_view()
        >>> game = view.game(1)
        >>> game.white, game.black, game.result, view.game(99)
        ('D', 'C', '1-0', None)
        """
        return next((g for r in self.rounds for g in r.games if g.id == game_id), None)


@asynccontextmanager
async def reading(db: Path, *, pgn: bool = False) -> AsyncIterator[tuple[EventView, Store]]:
    """The stored event (its games' PGN texts with `pgn`), and the read-only connection it
    came from, closed on leaving (whatever happens inside).

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def moves(db):
    ...     async with reading(db) as (view, store):
    ...         return [m.move.san for m in await store.current_moves(view.game(1).id)]
    >>> asyncio.run(moves(sample_database()))
    ['e4', 'e5']
    """
    store = await Store.open(db, readonly=True)
    try:
        yield await view_of(store, pgn=pgn), store
    except sqlite3.DatabaseError as exc:  # a damaged file: one line, never a traceback
        raise StoreError(f"{db}: the database cannot be read: {exc}") from None
    finally:
        await store.close()


async def view_of(store: Store, *, pgn: bool = False, brief: bool = False) -> EventView:
    """The event as `store` holds it now; its games' PGN texts only with `pgn`, and with
    `brief` only what the standings and the pairings read (`Store.rounds`).

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def read(db):
    ...     store = await Store.open(db, readonly=True)
    ...     try:
    ...         return await view_of(store)
    ...     finally:
    ...         await store.close()
    >>> view = asyncio.run(read(sample_database()))
    >>> view.name, view.paused, view.running
    ('Sample', False, False)
    """
    stored = await store.whole(pgn=pgn, brief=brief)  # one state: a control is seen whole
    event = stored.event
    if event is None:
        raise StoreError(f"{store.path}: no event has been started in this database")
    settings = EventSettings.from_json(event.settings)
    return EventView(
        event.name,
        settings,
        stored.rounds,
        tournament(settings, stored.players, stored.rounds),
        stored.attempts,
        stored.withdrawals,
        stored.paused,
        event.finished_at is not None,
        stored.daemon,
        await asyncio.to_thread(held, store.path),
        stored.controls,
    )


async def load_view(db: Path, *, pgn: bool = False) -> EventView:
    """The stored event, read in one go (its games' PGN texts with `pgn`); a `StoreError`
    naming `db` when it cannot be read.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> view = asyncio.run(load_view(sample_database()))
    >>> view.name, view.settings.players, len(view.rounds)
    ('Sample', ('A', 'B', 'C', 'D'), 1)
    """
    async with reading(db, pgn=pgn) as (view, _):
        return view


def final_places(view: EventView) -> list[tuple[str, str]]:
    """Every engine's place (a team Swiss: every team's), best first, as the standings
    write it ("4-5" for a tie no tiebreak broke): a knockout's and a match's from their
    own ends, the others' from the standings with the event's tiebreaks.

    >>> from orchestrator.event.sample import sample_view
    >>> final_places(sample_view())[:2]
    [('1', 'D'), ('2-4', 'A')]
    """
    final = view.standings_tournament()
    if lookup(final.rules.system).ends_itself:
        places = pair_next(final).places
        if places:
            return list(places)
    if final.teams:
        return [(line.place, line.name) for line in team_standings(final)]
    return [(line.place, line.name) for line in standings(final, view.settings.tiebreaks)]


def ending_tally(view: EventView) -> tuple[Tally, dict[str, Tally]]:
    """How the event's finished games ended: the event's tally and each engine's.

    >>> from orchestrator.event.sample import sample_view
    >>> event, engines = ending_tally(sample_view())
    >>> event.games, sorted(engines)
    (1, ['C', 'D'])
    """
    return tally(game for game, _ in finished_games(view))


def finished_games(view: EventView) -> list[tuple[Ended, str]]:
    """The event's finished games, each as its ending reads (`core/game/endings.py`), with
    its result.

    >>> from orchestrator.event.sample import sample_view
    >>> [(game.white, result) for game, result in finished_games(sample_view())]
    [('D', '1-0')]
    """
    return [
        (ended(g.white, g.black, g.termination, g.details, g.fault, g.forfeit), g.result or "*")
        for r in view.rounds
        for g in r.games
        if g.status == "finished"
    ]


def result_records(view: EventView) -> list[Record]:
    """Each engine's games counted as cutechess's result table counts them
    (`standings --columns`), in the standings' order.

    >>> from orchestrator.event.sample import sample_view
    >>> [(r.name, r.white, r.black) for r in result_records(sample_view())][:2]
    [('D', [1, 0, 0], [0, 0, 0]), ('A', [0, 0, 0], [0, 0, 0])]
    """
    lines = standings(view.standings_tournament(), view.settings.tiebreaks)
    tcs = {name: str(e.tc or view.settings.tc) for name, e in view.settings.engines.items()}
    return records([line.name for line in lines], finished_games(view), tcs)


def endings_json(view: EventView) -> EndingsJSON:
    """`ending_tally` as JSON (`standings --json`'s `endings`).

    >>> from orchestrator.event.sample import sample_view
    >>> data = endings_json(sample_view())
    >>> data["event"]["games"], sorted(data["engines"])
    (1, ['C', 'D'])
    """
    event, engines = ending_tally(view)
    return {
        "event": event.json(),
        "engines": {name: t.json() for name, t in engines.items()},
    }


def standings_json(view: EventView, *, ratings: bool = True) -> StandingsJSON:
    """The standings, as `standings --json` and `/api/standings` give them: every finished
    game counts, and while a round is being played they are `provisional`; without
    `ratings`, no Elo is fitted (its fields are null).

    >>> from orchestrator.event.sample import sample_view
    >>> data = standings_json(sample_view())
    >>> data["provisional"], [(line["name"], line["score"]) for line in data["standings"][:2]]
    (True, [('D', 1.0), ('A', 0.0)])
    """
    strikes = {name: len(games) for name, games in view.strikes().items()}
    withdrawn = {name: after for name, (after, _) in view.withdrawals.items()}
    lines = standings_data(
        view.standings_tournament(),
        view.settings.tiebreaks,
        strikes,
        withdrawn,
        view.settings.anchor,
        ratings=ratings,
    )
    out: StandingsJSON = {
        "event": view.name,
        "rounds": len(view.tournament.rounds),
        "provisional": view.provisional,
        "standings": lines,
        "endings": endings_json(view),
    }
    if view.tournament.teams:
        out["teams"] = team_data(view.standings_tournament())
    system = view.settings.system
    if system == "knockout":
        ids = {
            (g.stage, g.slot, g.match_game): g.id
            for r in view.rounds
            for g in r.games
            if g.stage is not None and g.slot is not None and g.match_game is not None
        }
        out["bracket"] = bracket_data(view.standings_tournament(), ids)
    elif system == "match":
        out["match"] = head_to_head(view.standings_tournament())
    elif system == "gauntlet":
        out["gauntlet"] = gauntlet_data(view.standings_tournament())
    return out


def game_summary(view: EventView, g: GameRow) -> GameSummary:
    """A game as every list of games shows it: who, its place, where it stands.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> summary = game_summary(view, view.game(1))
    >>> summary["white"], summary["status"], summary["result"], summary["termination"]
    ('D', 'finished', '1-0', 'time forfeit')
    """
    summary: GameSummary = {
        "id": g.id,
        "round": g.round,
        "number": g.number,
        "white": g.white,
        "black": g.black,
        "status": view.status(g),
        "result": g.result,
        "termination": g.termination,
        "reason": g.reason,
        "opening": g.opening.name if g.opening else None,
    }
    tags = board_tags(view.tournament.teams, g.white, g.black)
    if tags:  # a team Swiss: its board and teams
        summary["board"] = int(tags["Board"])
        summary["white_team"] = tags["WhiteTeam"]
        summary["black_team"] = tags["BlackTeam"]
    return summary


def exported(view: EventView, rounds: list[RoundRow]) -> list[ExportedGame]:
    """The finished games of `rounds` with their PGN, as `export --json` gives them.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> [(g["white"], g["pgn"][:14]) for g in exported(view, view.rounds)]
    [('D', '[Result "1-0"]')]
    """
    return [
        {**game_summary(view, g), "pgn": g.pgn}
        for r in rounds
        for g in r.games
        if g.status == "finished"
    ]


def round_json(view: EventView, r: RoundRow) -> RoundJSON:
    """A round's games in playing order, as `pairings --json` and `/api/rounds/N` give them,
    with each game's voided attempts.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> [(g["white"], g["black"], g["status"]) for g in round_json(view, view.rounds[0])["games"]]
    [('D', 'C', 'finished'), ('B', 'A', 'pending'), ('C', 'D', 'pending'), ('A', 'B', 'pending')]
    """
    voided: dict[int, list[VoidedJSON]] = {}
    hosts = {a.game: a.host for a in view.attempts if a.status == "running" and a.host}
    for a in view.attempts:
        if a.voided_at is not None:
            entry: VoidedJSON = {
                "attempt": a.id,
                "voided_at": a.voided_at,
                "reason": a.void_reason,
            }
            voided.setdefault(a.game, []).append(entry)
    teams = view.tournament.teams
    out: RoundJSON = {
        "round": r.number,
        "bye": r.bye,
        "dropped_rounds": r.dropped_rounds,
        "finished": r.finished_at is not None,
        "games": [
            {
                **game_summary(view, g),
                "plies": g.plies,
                "forfeit": g.forfeit,
                "voided": voided.get(g.id, []),
                "host": g.host or hosts.get(g.id),
                "fault_log": log_url(g.id) if g.fault is not None else None,
            }
            for g in r.games
        ],
    }
    if teams:
        out["matches"] = matches_json(view, r)
    return out


def matches_json(view: EventView, r: RoundRow) -> list[MatchJSON]:
    """A team Swiss round's matches in playing order: Team 1, Team 2, their board points
    so far, the result once every board is over, and the games' ids board by board.

    >>> from orchestrator.event.sample import sample_view
    >>> matches_json(sample_view(), sample_view().rounds[0])  # no teams, no matches
    []
    """
    t = view.tournament
    if not t.teams:
        return []
    rnd = Round(r.number, tuple(Game(g.white, g.black, g.result, g.forfeit) for g in r.games))
    ids = {(g.white, g.black): g.id for g in r.games}
    seat = seats(t)
    return [
        {
            "team1": m.team1,
            "team2": m.team2,
            "points1": m.points(m.team1, seat),
            "points2": m.points(m.team2, seat),
            "result": m.result(seat),
            "games": [ids[g.white, g.black] for _, g in m.games],
        }
        for m in matches(t, rnd)
    ]


def standings_notes(view: EventView) -> dict[str, str]:
    """A note per engine with strikes or withdrawn, for the standings as text.

    >>> from orchestrator.event.sample import sample_view
    >>> standings_notes(sample_view())
    {}
    """
    notes: dict[str, str] = {}
    for name, games in view.strikes().items():
        if games:
            notes[name] = f"{len(games)} strike{'s' if len(games) > 1 else ''}"
    for name, (after, reason) in view.withdrawals.items():
        withdrawn = f"withdrawn after round {after} ({reason})"
        notes[name] = f"{notes[name]}; {withdrawn}" if name in notes else withdrawn
    return notes


def daemon_json(view: EventView) -> DaemonJSON:
    """Whether a daemon runs the event, its pid and its last heartbeat.

    >>> from orchestrator.event.sample import sample_view
    >>> daemon_json(sample_view())
    {'running': False, 'pid': None, 'last_seen': None}
    """
    beat = view.daemon
    return {
        "running": view.running,
        "pid": beat.pid if beat is not None and view.running else None,
        "last_seen": beat.last_seen if beat is not None else None,
    }


async def game_json(view: EventView, store: Store, game: GameRow) -> GameJSON:
    """A game with its moves (the running or last attempt), scores, clocks and position,
    its PGN once finished, and its board and teams in a team Swiss.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def game(db):
    ...     async with reading(db) as (view, store):
    ...         return await game_json(view, store, view.game(1))
    >>> data = asyncio.run(game(sample_database()))
    >>> [(m["san"], m["side"], m.get("clock_ms")) for m in data["moves"]]
    [('e4', 'white', 9200), ('e5', 'black', 9400)]
    """
    rows = await store.current_moves(game.id)
    opening = game.opening or START
    board = opening.board()
    start_fen = board.fen()
    moves = [*opening.book(), *(r.move for r in rows if not r.move.book)]
    listed = [move_json(board, ply, move) for ply, move in enumerate(moves, 1)]
    last: dict[Side, MoveJSON | None] = {"white": None, "black": None}
    for entry in listed:
        if not entry["book"]:
            last[entry["side"]] = entry
    tc = view.settings.tc
    data: GameJSON = {
        **game_summary(view, game),
        "host": await store.game_host(game.id),
        "start_fen": start_fen,
        "fen": board.fen(),
        "chess960": board.chess960,
        "variant": rules_on(board),
        "turn": "white" if board.turn == chess.WHITE else "black",
        "moves": listed,
        "last": last,
        "kibitzers": await asyncio.to_thread(kibitzers_json, view, game.id),
        "log": log_url(game.id) if await asyncio.to_thread(_has_log, store, game.id) else None,
        "pgn": game.pgn if game.pgn is not None else await store.game_pgn(game.id),
        "clock_start_ms": tc.base_ms if tc.kind == "clock" else None,
    }
    return data


def log_url(game: int) -> str:
    """Where the web view serves a game's engine log.

    >>> log_url(12)
    '/download/games/12.log'
    """
    return f"/download/games/{game}.log"


def _has_log(store: Store, game: int) -> bool:
    return find_log(logs_folder(store.path), game) is not None


def kibitzers_json(view: EventView, game: int) -> list[KibitzerJSON]:
    """What the event's kibitzers said about `game`, from their files in `live_dir`: the
    current analysis (`data.json`, while it is the featured game) and the score of every
    position so far (`liveeval.json`, or the game's archived copy once it is over).

    >>> from orchestrator.event.sample import sample_view
    >>> kibitzers_json(sample_view(), 1)  # the sample has no kibitzers
    []
    """
    folder = view.settings.live_dir
    if folder is None:
        return []
    out: list[KibitzerJSON] = []
    for index, config in enumerate(view.settings.kibitzers):
        suffix = "" if index == 0 else str(index)
        current = _json_file(folder / f"data{suffix}.json")
        if current is None or current.get("game") != game:
            current = None
        history = _json_file(folder / f"liveeval{suffix}.json")
        if history is None or history.get("game") != game:
            history = _json_file(folder / "archive" / f"game-{game}-liveeval{suffix}.json")
        points: list[KibitzerPoint] = []
        moves = history.get("moves") if history else None
        for entry in moves if isinstance(moves, list) else ():
            ply, value = entry.get("ply"), entry.get("eval")
            if isinstance(ply, int) and isinstance(value, int | float | str):
                points.append({"ply": ply, "eval": _white_side(value, ply)})
        out.append(
            {
                "index": index,
                "engine": config.name,
                "desc": config.desc,
                "current": current,
                "history": points,
            }
        )
    return out


def _white_side(value: float | str, ply: int) -> float | str:
    """A kibitzer history's score (from the side to move) from White's side."""
    if ply % 2 == 0:
        return value
    if isinstance(value, str):
        return value[1:] if value.startswith("-") else "-" + value
    return -value + 0.0


def _json_file(path: Path) -> dict[str, Any] | None:
    """A JSON object from a file another process writes (None if missing or half seen)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


async def overview_json(view: EventView, store: Store) -> OverviewJSON:
    """The round, the running games (ply, clocks), progress and the top of the standings.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def overview(db):
    ...     async with reading(db) as (view, store):
    ...         return await overview_json(view, store)
    >>> data = asyncio.run(overview(sample_database()))
    >>> data["round"], data["games_finished"], data["games_total"], data["finished"]
    (1, 1, 8, False)
    """
    running: list[RunningGame] = []
    for r in view.rounds:
        for g in r.games:
            if view.status(g) != "running":
                continue
            moves = await store.current_moves(g.id)
            board = (g.opening or START).after_book()
            clocks: dict[Side, int | None] = {"white": None, "black": None}
            for row in moves:
                if not row.move.book:
                    clocks["white" if board.turn == chess.WHITE else "black"] = row.move.clock_ms
                    board.push_uci(row.move.uci)
            running.append(
                {
                    **game_summary(view, g),
                    "plies": len(moves),
                    "last": moves[-1].move.san if moves else None,
                    "clock_ms": clocks,
                }
            )
    total = view.settings.rounds
    table = standings_json(view, ratings=False)  # polled: no fit, no numpy or scipy
    played = sum(1 for r in view.rounds for g in r.games if g.status == "finished")
    out: OverviewJSON = {
        "event": view.name,
        "variant": view.settings.variant,
        "round": view.rounds[-1].number if view.rounds else 0,
        "rounds": total,
        "games_finished": played,
        "games_total": view.tournament.games_planned() if total else None,
        "games_running": running,
        "games_interrupted": [
            g.id for r in view.rounds for g in r.games if view.status(g) == "interrupted"
        ],
        "finished": view.finished,
        "paused": view.paused,
        "daemon": daemon_json(view),
        "provisional": view.provisional,
        "top": table["standings"][:5],
        "endings": table["endings"]["event"],
    }
    if "teams" in table:
        out["top_teams"] = table["teams"][:5]
    return out


#: the most games and coming rounds `/schedule` lists: a long match's page stays bounded
SCHEDULE_GAMES = 1000
SCHEDULE_ROUNDS = 100


def schedule_data(view: EventView, now: datetime) -> ScheduleJSON:
    """The schedule: every game paired so far, in playing order, with its result once played
    and, for the games and rounds to come, an estimated start.

    The estimate plays the coming games in order on the event's `concurrency` slots, each
    taking the mean duration of the games played so far (before any, two full sessions of
    the time control), and starts a round when the one before it ends.  It lists the latest
    `SCHEDULE_GAMES` games and the next `SCHEDULE_ROUNDS` rounds; the others are counted.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> data = schedule_data(view, datetime.fromisoformat("2026-01-01T00:00:00+00:00"))
    >>> [(g["white"], g["status"], g["estimated_start"] is None) for g in data["games"][:2]]
    [('D', 'finished', True), ('B', 'pending', False)]
    >>> [r["round"] for r in data["coming_rounds"]]
    [2]
    """
    games = [g for r in view.rounds for g in r.games]
    durations = [
        d
        for g in games
        if g.status == "finished" and not g.forfeit
        if (d := g.duration_s) is not None
    ]
    if durations:
        mean = sum(durations) / len(durations)
    else:
        tc = view.settings.tc
        mean = max(10.0, (2 * tc.base_ms + 120 * tc.inc_ms) / 1000)
    slots = [now] * max(1, view.settings.concurrency)
    for g in games:
        if g.status == "running" and g.started_at:
            end = datetime.fromisoformat(g.started_at) + timedelta(seconds=mean)
            slots.sort()
            slots[0] = max(end, now)
    rows: list[ScheduleGame] = []
    earlier = max(0, len(games) - SCHEDULE_GAMES)
    for n, g in enumerate(games):
        estimate = None
        if g.status == "pending":
            slots.sort()
            estimate = slots[0]
            slots[0] = estimate + timedelta(seconds=mean)
        if n < earlier:  # counted, not listed: a page stays bounded
            continue
        rows.append(
            {
                **game_summary(view, g),
                "started_at": g.started_at,
                "duration_s": g.duration_s,
                "estimated_start": None if estimate is None else estimate.isoformat("T", "seconds"),
            }
        )
    per_round = -(-view.tournament.games_planned() // max(1, view.settings.rounds))
    start = max(slots)
    coming: list[ComingRound] = []
    first = len(view.rounds) + 1
    last = min(view.settings.rounds, first + SCHEDULE_ROUNDS - 1)
    for number in range(first, last + 1):
        coming.append({"round": number, "estimated_start": start.isoformat("T", "seconds")})
        waves = -(-per_round // max(1, view.settings.concurrency))
        start += timedelta(seconds=mean * waves)
    return {
        "event": view.name,
        "mean_game_s": round(mean),
        "games": rows,
        "coming_rounds": coming,
        "earlier_games": earlier,
        "later_rounds": max(0, view.settings.rounds - last),
    }
