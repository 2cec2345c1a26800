"""The read model the status commands and the web view share: what is stored, as the
`--json` outputs and the JSON API give it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import chess

from orchestrator.core.model import Game, Player, Round, Tournament
from orchestrator.core.standings import Tiebreak
from orchestrator.reports import standings_data
from orchestrator.store.database import GameRow, RoundRow, Store, StoreError


class EventView:
    """What the read commands need, loaded in one go."""

    def __init__(
        self, name: str, settings: dict[str, Any], players: list[Player], rounds: list[RoundRow]
    ) -> None:
        self.name, self.settings, self.rounds = name, settings, rounds
        self.tiebreaks = cast(tuple[Tiebreak, ...], tuple(settings.get("tiebreaks", ())))
        self.tournament = Tournament(
            tuple(players),
            tuple(
                Round(r.number, tuple(_game(g) for g in r.games), r.bye)
                for r in rounds
                if r.finished_at is not None or all(g.result for g in r.games)
            ),
            settings["format"],
            settings["schedule"],
            settings["system"],
            settings["cycles"],
        )


def _game(g: GameRow) -> Game:
    return Game(g.white, g.black, g.result)


async def load_view(db: Path) -> tuple[EventView, Store]:
    """The stored event, and the read-only connection it came from (the caller closes it)."""
    store = await Store.open(db, readonly=True)
    event = await store.event()
    if event is None:
        await store.close()
        raise StoreError(f"{db}: no event has been started in this database")
    return EventView(event[0], event[1], await store.players(), await store.rounds()), store


def standings_json(v: EventView) -> dict[str, Any]:
    return {
        "event": v.name,
        "rounds": len(v.tournament.rounds),
        "standings": standings_data(v.tournament, v.tiebreaks),
    }


def round_json(r: RoundRow) -> dict[str, Any]:
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


def white_moved(game: GameRow, ply: int) -> bool:
    """Whether ply `ply` (1 = the first move from the start position) was white's."""
    first_white = game.opening is None or game.opening.board().turn == chess.WHITE
    return (ply % 2 == 1) == first_white


async def game_json(store: Store, game: GameRow) -> dict[str, Any]:
    """A game with its moves (the running or last attempt), scores, clocks and position."""
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
        side = "white" if white_moved(game, m["ply"]) else "black"
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


async def overview_json(v: EventView, store: Store) -> dict[str, Any]:
    """The round, the running games (ply, clocks), progress and the top of the standings."""
    running = []
    for r in v.rounds:
        for g in r.games:
            if g.status != "running":
                continue
            moves = await store.live_moves(g.id)
            clocks: dict[str, int | None] = {"white": None, "black": None}
            for m in moves:
                clocks["white" if white_moved(g, m["ply"]) else "black"] = m["clock_ms"]
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
    total = v.settings.get("rounds")
    played = sum(1 for r in v.rounds for g in r.games if g.status == "finished")
    per_round = len(v.tournament.players) // 2 * (2 if v.settings["format"] == "double" else 1)
    return {
        "event": v.name,
        "round": v.rounds[-1].number if v.rounds else 0,
        "rounds": total,
        "games_finished": played,
        "games_total": per_round * total if total else None,
        "games_running": running,
        "finished": all(r.finished_at for r in v.rounds) and len(v.rounds) == total,
        "top": standings_data(v.tournament, v.tiebreaks)[:5],
    }
