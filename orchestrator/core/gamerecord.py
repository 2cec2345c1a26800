"""The complete record of one played game, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from orchestrator.core.model import Result

#: the PGN standard's Termination values
Termination = Literal["normal", "adjudication", "time forfeit", "rules infraction", "abandoned"]
#: SPEC.md section 5: engine_fault kinds
FaultKind = Literal["crash", "stall", "illegal_move", "time_forfeit", "startup"]


@dataclass(frozen=True, slots=True)
class Score:
    """An engine's score from the mover's side: centipawns, or mate in N (negative: mated)."""

    cp: int | None = None
    mate: int | None = None

    def pawns(self) -> float:
        """The score in pawns, mates as +-1000."""
        if self.mate is not None:
            return 1000.0 if self.mate > 0 else -1000.0
        return (self.cp or 0) / 100.0

    def text(self) -> str:
        """cutechess notation: +0.35, -1.20, +M5, -M6."""
        if self.mate is not None:
            return f"+M{self.mate}" if self.mate > 0 else f"-M{-self.mate}"
        return f"{(self.cp or 0) / 100:+.2f}"


@dataclass(frozen=True, slots=True)
class MoveRecord:
    uci: str
    san: str
    book: bool = False
    score: Score | None = None
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    time_ms: int = 0  # measured at the pipe: go written to bestmove read
    clock_ms: int | None = None  # the mover's clock after the move
    reported_ms: int | None = None  # the search time the engine reported (UCI info time)

    def comment(self) -> str:
        """The cutechess-style PGN comment: {+0.35/20 1.2s}, or {book}."""
        if self.book:
            return "book"
        used = f"{self.time_ms / 1000:.{3 if self.time_ms < 100 else 2}g}s"
        if self.score is None:
            return used
        return f"{self.score.text()}/{self.depth or 0} {used}"


@dataclass(frozen=True, slots=True)
class Fault:
    engine: str
    kind: FaultKind
    detail: str
    last_output: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameRecord:
    white: str
    black: str
    result: Result
    termination: Termination
    reason: str
    moves: tuple[MoveRecord, ...]
    started_at: datetime
    ended_at: datetime
    time_control: str
    start_fen: str | None = None  # None: the standard starting position
    opening: str | None = None
    fault: Fault | None = None

    @property
    def plies(self) -> int:
        return len(self.moves)
