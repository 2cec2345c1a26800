"""What the live view pushes (Server-Sent Events at `/api/live`): `move`, `game` and
`round` events, made from stored rows; and a stored move as every JSON output shows it.
No I/O here: the web server reads the rows once for all of its viewers and hands them over.
"""

from __future__ import annotations

import chess

from orchestrator.core.game.fields import pv_san
from orchestrator.core.game.record import MoveRecord, white_view
from orchestrator.event.api import GameEvent, MoveEvent, MoveJSON, RoundEvent
from orchestrator.store.database import MoveRow

__all__ = ["GameState", "move_event", "move_json", "state_events"]

GameState = tuple[int, int, str, str | None]  # id (-number for a round), round, status, result


def move_json(board: chess.Board, ply: int, move: MoveRecord) -> MoveJSON:
    """A move played from `board` (which it advances), as the JSON outputs show it.

    >>> from orchestrator.core.game.record import Cp
    >>> board = chess.Board()
    >>> data = move_json(board, 1, MoveRecord("e2e4", "e4", score=Cp(-20), pv=("e2e4", "e7e5")))
    >>> data["side"], data["wv"], data["pv"], data["expected"], board.fullmove_number
    ('white', '-0.20', ['e4', 'e5'], 'e7e5', 1)
    >>> sorted(move_json(board, 2, MoveRecord("e7e5", "e5", book=True)))
    ['book', 'fen', 'ply', 'san', 'side', 'uci']
    """
    white_moved = board.turn == chess.WHITE
    pv = [] if move.book else pv_san(board, move.pv)
    board.push(chess.Move.from_uci(move.uci))
    out: MoveJSON = {
        "ply": ply,
        "san": move.san,
        "uci": move.uci,
        "book": move.book,
        "side": "white" if white_moved else "black",
        "fen": board.fen(),
    }
    if move.book:
        return out
    score = move.score
    out |= {
        "score_cp": None if score is None or score.is_mate() else score.score(),
        "score_mate": None if score is None else score.mate(),
        "wv": white_view(score, white_moved),
        "depth": move.depth,
        "seldepth": move.seldepth,
        "nodes": move.nodes,
        "nps": move.nps,
        "tbhits": move.tbhits,
        "hashfull": move.hashfull,
        "pv": pv,
        **({"expected": move.pv[1]} if len(pv) > 1 else {}),
        "time_ms": move.time_ms,
        "clock_ms": move.clock_ms,
        "reported_ms": move.reported_ms,
    }
    return out


def move_event(board: chess.Board, row: MoveRow) -> MoveEvent:
    """A stored move (`row`, played from `board`, which it advances) as a `move` event.

    >>> from orchestrator.core.game.record import Cp
    >>> row = MoveRow(7, 3, 5, 1, MoveRecord("e2e4", "e4", score=Cp(-20), depth=12))
    >>> event = move_event(chess.Board(), row)
    >>> event["game"], event["attempt"], event["side"], event["depth"]
    (3, 5, 'white', 12)
    """
    data = move_json(board, row.ply, row.move)
    return {**data, "game": row.game, "attempt": row.attempt}


def state_events(before: list[GameState], after: list[GameState]) -> list[GameEvent | RoundEvent]:
    """The `game` events (a game started or ended: they name their game) and `round` events
    (a round was paired or finished) between two snapshots of the games' and rounds' states.

    >>> before = [(-1, 1, "", None), (1, 1, "running", None), (2, 1, "pending", None)]
    >>> after = [(-1, 1, "2026-01-01", None), (1, 1, "finished", "1-0"), (2, 1, "running", None)]
    >>> state_events(before, after)  # doctest: +NORMALIZE_WHITESPACE
    [{'round': 1, 'finished': True},
     {'game': 1, 'round': 1, 'status': 'finished', 'result': '1-0'},
     {'game': 2, 'round': 1, 'status': 'running', 'result': None}]
    """
    old = {s[0]: s for s in before}
    events: list[GameEvent | RoundEvent] = []
    for state in after:
        key, number, status, result = state
        if old.get(key) == state:
            continue
        if key < 0:
            events.append({"round": number, "finished": bool(status)})
        else:
            events.append({"game": key, "round": number, "status": status, "result": result})
    return events
