"""The read model that the status commands and the web view share: the stored event, as
the `--json` outputs and the JSON API give it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess

from orchestrator.core.model import Tournament
from orchestrator.core.openings import Opening
from orchestrator.event.export import standings_data
from orchestrator.event.settings import EventSettings
from orchestrator.event.state import tournament
from orchestrator.store.database import GameRow, RoundRow, Store, StoreError


@dataclass(frozen=True)
class EventView:
    """What the read commands need, loaded in one go."""

    name: str
    settings: EventSettings
    rounds: list[RoundRow]
    tournament: Tournament

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
async def reading(db: Path) -> AsyncIterator[tuple[EventView, Store]]:
    """The stored event, and the read-only connection it came from, closed on leaving
    (whatever happens inside).

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def moves(db):
    ...     async with reading(db) as (view, store):
    ...         return [m["san"] for m in await store.live_moves(view.game(1).id)]
    >>> asyncio.run(moves(sample_database()))
    ['e4', 'e5']
    """
    store = await Store.open(db, readonly=True)
    try:
        event = await store.event()
        if event is None:
            raise StoreError(f"{db}: no event has been started in this database")
        settings = EventSettings.from_json(event.settings)
        rounds = await store.rounds()
        players = await store.players()
        yield EventView(event.name, settings, rounds, tournament(settings, players, rounds)), store
    finally:
        await store.close()


async def load_view(db: Path) -> EventView:
    """The stored event, read in one go; a `StoreError` naming `db` when it cannot be read.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> view = asyncio.run(load_view(sample_database()))
    >>> view.name, view.settings.players, len(view.rounds)
    ('Sample', ('A', 'B', 'C', 'D'), 1)
    """
    async with reading(db) as (view, _):
        return view


def standings_json(view: EventView) -> dict[str, Any]:
    """The standings, as `standings --json` and `/api/standings` give them.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> standings_json(view)["rounds"]  # round 1 is not over: no round counts yet
    0
    """
    return {
        "event": view.name,
        "rounds": len(view.tournament.rounds),
        "standings": standings_data(view.tournament, view.settings.tiebreaks),
    }


def round_json(r: RoundRow) -> dict[str, Any]:
    """A round's games in playing order, as `pairings --json` and `/api/rounds/N` give them.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> [(g["white"], g["black"], g["status"]) for g in round_json(view.rounds[0])["games"]]
    [('D', 'C', 'finished'), ('B', 'A', 'pending'), ('C', 'D', 'pending'), ('A', 'B', 'pending')]
    """
    return {
        "round": r.number,
        "bye": r.bye,
        "dropped_rounds": r.dropped_rounds,
        "finished": r.finished_at is not None,
        "games": [
            {
                "id": g.id,
                "number": g.number,
                "white": g.white,
                "black": g.black,
                "status": g.status,
                "result": g.result,
                "termination": g.termination,
                "reason": g.reason,
                "plies": g.plies,
                "opening": g.opening.name if g.opening else None,
            }
            for g in r.games
        ],
    }


def white_moved(opening: Opening | None, ply: int) -> bool:
    """Whether ply `ply` (1 = the first move from the start position) was white's.

    >>> black_first = Opening("black to move", "4k3/8/8/8/8/8/8/4K3 b - - 0 1")
    >>> white_moved(None, 1), white_moved(black_first, 1), white_moved(black_first, 2)
    (True, False, True)
    """
    first_white = opening is None or opening.board().turn == chess.WHITE
    return (ply % 2 == 1) == first_white


async def game_json(store: Store, game: GameRow) -> dict[str, Any]:
    """A game with its moves (the running or last attempt), scores, clocks and position.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def game(db):
    ...     async with reading(db) as (view, store):
    ...         return await game_json(store, view.game(1))
    >>> data = asyncio.run(game(sample_database()))
    >>> [(m["san"], m["side"], m["clock_ms"]) for m in data["moves"]]
    [('e4', 'white', 9200), ('e5', 'black', 9400)]
    """
    moves = await store.live_moves(game.id)
    board = game.opening.board() if game.opening else chess.Board()
    listed: list[dict[str, Any]] = []
    for uci in game.opening.moves if game.opening else ():
        move = chess.Move.from_uci(uci)
        listed.append({"ply": len(listed) + 1, "san": board.san(move), "uci": uci, "book": True})
        board.push(move)
    last: dict[str, dict[str, Any] | None] = {"white": None, "black": None}
    for m in moves:
        if m["book"]:
            continue
        side = "white" if white_moved(game.opening, m["ply"]) else "black"
        entry = {
            "ply": m["ply"],
            "san": m["san"],
            "uci": m["uci"],
            "book": False,
            "side": side,
            "score_cp": m["score_cp"],
            "score_mate": m["score_mate"],
            "depth": m["depth"],
            "time_ms": m["time_ms"],
            "clock_ms": m["clock_ms"],
            "reported_ms": m["reported_ms"],
        }
        listed.append(entry)
        last[side] = entry
        board.push_uci(m["uci"])
    return {
        "id": game.id,
        "round": game.round,
        "number": game.number,
        "white": game.white,
        "black": game.black,
        "status": game.status,
        "result": game.result,
        "termination": game.termination,
        "reason": game.reason,
        "opening": game.opening.name if game.opening else None,
        "fen": board.fen(),
        "moves": listed,
        "last": last,
    }


async def overview_json(view: EventView, store: Store) -> dict[str, Any]:
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
    running = []
    for r in view.rounds:
        for g in r.games:
            if g.status != "running":
                continue
            moves = await store.live_moves(g.id)
            clocks: dict[str, int | None] = {"white": None, "black": None}
            for m in moves:
                clocks["white" if white_moved(g.opening, m["ply"]) else "black"] = m["clock_ms"]
            running.append(
                {
                    "id": g.id,
                    "round": r.number,
                    "number": g.number,
                    "white": g.white,
                    "black": g.black,
                    "plies": len(moves),
                    "last": moves[-1]["san"] if moves else None,
                    "clock_ms": clocks,
                }
            )
    total = view.settings.rounds
    played = sum(1 for r in view.rounds for g in r.games if g.status == "finished")
    per_round = len(view.tournament.players) // 2 * view.settings.games_per_pair
    return {
        "event": view.name,
        "round": view.rounds[-1].number if view.rounds else 0,
        "rounds": total,
        "games_finished": played,
        "games_total": per_round * total if total else None,
        "games_running": running,
        "finished": all(r.finished_at for r in view.rounds) and len(view.rounds) == total,
        "top": standings_data(view.tournament, view.settings.tiebreaks)[:5],
    }
