"""The changes an operator control makes, as SQL statements for `Store.apply_control`.

Each function returns the statements of one change; `apply_control` runs all of a control's
changes and marks the control applied in one committed transaction, so a control is either
applied whole or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from orchestrator.core.event.model import Result
from orchestrator.store.database import Change, now


def paused(flag: bool) -> list[Change]:
    return [("UPDATE event SET paused = ?", (int(flag),))]


def game_result(
    game: int,
    result: Result,
    termination: str,
    reason: str,
    *,
    details: str | None = None,
    plies: int = 0,
    pgn: str | None = None,
    forfeit: bool = False,
    attempt: int | None = None,
    rmobility: str | None = None,
    final_fen: str | None = None,
) -> list[Change]:
    """`game` ends with `result` (and `attempt`, if any, counts as its finished attempt);
    its last position stays what it was unless `final_fen` says otherwise."""
    changes: list[Change] = [
        (
            "UPDATE games SET status = 'finished', result = ?, termination = ?, reason = ?, "
            "details = ?, plies = ?, pgn = ?, forfeit = ?, fault = NULL, rmobility = ?, "
            "final_fen = COALESCE(?, final_fen), ended_at = ?, "
            "started_at = COALESCE(started_at, ?) WHERE id = ?",
            (result, termination, reason, details, plies, pgn, int(forfeit), rmobility,
             final_fen, now(), now(), game),
        )
    ]  # fmt: skip
    if attempt is not None:
        changes.append(
            (
                "UPDATE attempts SET status = 'finished', ended_at = COALESCE(ended_at, ?) "
                "WHERE id = ?",
                (now(), attempt),
            )
        )
    return changes


def game_voided(game: int, reason: str) -> list[Change]:
    """Every attempt at `game` so far is voided, and the game is to be played again."""
    return [
        (
            "UPDATE attempts SET voided_at = ?, void_reason = ? "
            "WHERE game = ? AND voided_at IS NULL",
            (now(), reason, game),
        ),
        (
            "UPDATE games SET status = 'pending', result = NULL, termination = NULL, "
            "reason = NULL, plies = NULL, started_at = NULL, ended_at = NULL, fault = NULL, "
            "pgn = NULL, forfeit = 0, details = NULL WHERE id = ?",
            (game,),
        ),
    ]


def round_reopened(number: int) -> list[Change]:
    return [("UPDATE rounds SET finished_at = NULL WHERE number = ?", (number,))]


def round_dropped(number: int) -> list[Change]:
    """A paired round none of whose games has started: its pairing is made again."""
    return [
        ("DELETE FROM games WHERE round = ?", (number,)),
        ("DELETE FROM rounds WHERE number = ?", (number,)),
    ]


def games_dropped(games: Sequence[int]) -> list[Change]:
    """Cancelled games, with whatever attempts and moves they had."""
    changes: list[Change] = []
    for game in games:
        changes += [
            ("UPDATE engine_updates SET first_game = NULL WHERE first_game = ?", (game,)),
            (
                "DELETE FROM moves WHERE attempt IN (SELECT id FROM attempts WHERE game = ?)",
                (game,),
            ),
            ("DELETE FROM attempts WHERE game = ?", (game,)),
            ("DELETE FROM games WHERE id = ?", (game,)),
        ]
    return changes


def player_withdrawn(name: str, after: int, reason: str) -> list[Change]:
    return [
        (
            "UPDATE players SET withdrawn_after = ?, withdrawn_reason = ? WHERE name = ?",
            (after, reason, name),
        )
    ]


def engine_updated(
    engine: str, command: Sequence[str] | None, options: dict[str, Any], control: int
) -> list[Change]:
    return [
        (
            "INSERT INTO engine_updates (engine, command, options, control, applied_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                engine,
                json.dumps(list(command)) if command is not None else None,
                json.dumps(options),
                control,
                now(),
            ),
        )
    ]
