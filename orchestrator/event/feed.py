"""What the live view pushes (Server-Sent Events at `/api/live`): `move`, `game` and
`round` events, made from stored rows. No I/O here: the web server reads the rows once for
all of its viewers and hands them over.
"""

from __future__ import annotations

from typing import Any

import chess

from orchestrator.core.game.fields import pv_san, white_view
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import Cp, Mate

GameState = tuple[int, int, str, str | None]  # id (-number for a round), round, status, result


def move_event(board: chess.Board, row: dict[str, Any]) -> dict[str, Any]:
    """A stored move (`row`, played from `board`, which it advances) as a `move` event.

    >>> board = chess.Board()
    >>> row = {"game": 3, "attempt": 5, "ply": 1, "uci": "e2e4", "san": "e4", "book": 0,
    ...        "score_cp": -20, "score_mate": None, "depth": 12, "seldepth": 15,
    ...        "nodes": 9000, "nps": 90000, "tbhits": 0, "hashfull": 10, "time_ms": 100,
    ...        "clock_ms": 59900, "pv": "e2e4 e7e5 a1a8"}
    >>> event = move_event(board, row)
    >>> event["side"], event["wv"], event["pv"], board.fullmove_number
    ('white', '-0.20', ['e4', 'e5'], 1)
    """
    white_moved = board.turn == chess.WHITE
    score = (
        Mate(row["score_mate"])
        if row.get("score_mate") is not None
        else (Cp(row["score_cp"]) if row.get("score_cp") is not None else None)
    )
    pv = pv_san(board, (row.get("pv") or "").split())
    board.push(chess.Move.from_uci(row["uci"]))
    return {
        "game": row["game"],
        "attempt": row["attempt"],
        "ply": row["ply"],
        "san": row["san"],
        "uci": row["uci"],
        "book": bool(row["book"]),
        "side": "white" if white_moved else "black",
        "fen": board.fen(),
        "score_cp": row.get("score_cp"),
        "score_mate": row.get("score_mate"),
        "wv": white_view(score, white_moved),
        "depth": row.get("depth"),
        "seldepth": row.get("seldepth"),
        "nodes": row.get("nodes"),
        "nps": row.get("nps"),
        "tbhits": row.get("tbhits"),
        "hashfull": row.get("hashfull"),
        "time_ms": row.get("time_ms"),
        "clock_ms": row.get("clock_ms"),
        "pv": pv,
    }


def start_board(opening: Opening | None) -> chess.Board:
    """The position a game's first engine move is played from: the opening's book moves made.

    >>> start_board(Opening("x", None, ("e2e4",))).fen()
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
    """
    board = opening.board() if opening else chess.Board()
    for uci in opening.moves if opening else ():
        board.push_uci(uci)
    return board


def state_events(
    before: list[GameState], after: list[GameState]
) -> list[tuple[str, dict[str, Any]]]:
    """The `game` events (a game started or ended) and `round` events (a round was paired
    or finished) between two snapshots of the games' and rounds' states.

    >>> before = [(-1, 1, "", None), (1, 1, "running", None), (2, 1, "pending", None)]
    >>> after = [(-1, 1, "2026-01-01", None), (1, 1, "finished", "1-0"), (2, 1, "running", None)]
    >>> state_events(before, after)  # doctest: +NORMALIZE_WHITESPACE
    [('round', {'round': 1, 'finished': True}),
     ('game', {'game': 1, 'round': 1, 'status': 'finished', 'result': '1-0'}),
     ('game', {'game': 2, 'round': 1, 'status': 'running', 'result': None})]
    """
    old = {s[0]: s for s in before}
    events: list[tuple[str, dict[str, Any]]] = []
    for state in after:
        key, number, status, result = state
        if old.get(key) == state:
            continue
        if key < 0:
            events.append(("round", {"round": number, "finished": bool(status)}))
        else:
            game = {"game": key, "round": number, "status": status, "result": result}
            events.append(("game", game))
    return events
