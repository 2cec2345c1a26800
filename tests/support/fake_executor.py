"""An executor that plays no engines: each game is a few legal moves and a result decided by
the pair of names, at once.  It lets a daemon test run in-process where a subprocess and
real engine processes are not the point (`tests/support/daemon.py: run_in_process`)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from orchestrator.core.event.model import Result
from orchestrator.core.game.openings import START
from orchestrator.core.game.record import Cp, GameRecord, MoveRecord
from orchestrator.executor.base import OnStart
from orchestrator.game.game import GameSpec, OnLog, OnMove


def by_names(white: str, black: str) -> Result:
    """A result fixed by the two names, as the scripted engines' `--by-opponent` does.

    >>> by_names("A", "B") == by_names("A", "B")
    True
    """
    pair = sorted([white, black])
    outcome = int(hashlib.sha256("|".join(pair).encode()).hexdigest(), 16) % 3
    if outcome == 1:
        return "1/2-1/2"
    winner = pair[0] if outcome == 0 else pair[1]
    return "1-0" if winner == white else "0-1"


class FakeExecutor:
    """Games decided by `outcome`, each `plies` engine moves long (the first legal move, a
    score and a clock each), every move reported through `on_move` as a real game does;
    `before_result` runs before each game's result (a test gives controls there)."""

    label = "fake"

    def __init__(
        self,
        outcome: Callable[[str, str], Result] = by_names,
        plies: int = 6,
        before_result: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self.outcome = outcome
        self.plies = plies
        self.before_result = before_result  # awaited before each result (games played so far)
        self.played: list[tuple[str, str]] = []

    async def start(self) -> None:
        return None

    async def ready(self) -> None:
        return None

    async def play(
        self, spec: GameSpec, *, key: str, on_move: OnMove, on_start: OnStart, on_log: OnLog
    ) -> GameRecord:
        started = datetime.now(UTC)
        opening = spec.opening or START
        board = opening.after_book()
        moves = list(opening.book())
        for ply in range(self.plies):
            move = next(iter(board.legal_moves), None)
            if move is None:
                break
            record = MoveRecord(
                move.uci(), board.san(move), score=Cp(0), depth=1, time_ms=1,
                clock_ms=max(0, spec.tc.base_ms - ply), pv=(move.uci(),),
            )  # fmt: skip
            on_log(f"# the fake executor plays {record.san}\n")
            board.push(move)
            moves.append(record)
            on_move(record, len(board.move_stack), not board.turn)
            await asyncio.sleep(0)  # a real game gives the loop a turn at every move
        if self.before_result is not None:
            await self.before_result(len(self.played))
        result = self.outcome(spec.white.name, spec.black.name)
        self.played.append((spec.white.name, spec.black.name))
        return GameRecord(
            white=spec.white.name,
            black=spec.black.name,
            result=result,
            termination="adjudication",
            reason=f"{result} by the fake executor",
            moves=tuple(moves),
            started_at=started,
            ended_at=datetime.now(UTC),
            time_control=str(spec.tc),
            start_fen=opening.fen,
            chess960=opening.chess960,
            opening=spec.opening.name if spec.opening else None,
        )

    async def close(self) -> None:
        return None


__all__ = ["FakeExecutor", "by_names"]
