"""The complete record of one played game, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from chess.engine import Cp, Mate, Score

from orchestrator.core.event.model import Result

__all__ = ["Cp", "Fault", "GameRecord", "Mate", "MoveRecord", "Score", "score_pawns"]

#: the PGN standard's Termination values
Termination = Literal["normal", "adjudication", "time forfeit", "rules infraction", "abandoned"]
#: the kinds of `engine_fault` (docs/log-events.md)
FaultKind = Literal["crash", "stall", "illegal_move", "time_forfeit", "startup", "garbage"]


def score_pawns(score: Score) -> float:
    """A score in pawns, mates as +-1000.

    >>> score_pawns(Cp(-120)), score_pawns(Mate(3)), score_pawns(Mate(-2))
    (-1.2, 1000.0, -1000.0)
    """
    mate = score.mate()
    if mate is not None:
        return 1000.0 if mate > 0 else -1000.0
    return score.score(mate_score=0) / 100.0


def score_text(score: Score) -> str:
    """cutechess notation.

    >>> score_text(Cp(35)), score_text(Cp(-120)), score_text(Mate(5)), score_text(Mate(-6))
    ('+0.35', '-1.20', '+M5', '-M6')
    """
    mate = score.mate()
    if mate is not None:
        return f"+M{mate}" if mate > 0 else f"-M{-mate}"
    return f"{score.score(mate_score=0) / 100:+.2f}"


@dataclass(frozen=True, slots=True)
class MoveRecord:
    uci: str
    san: str
    book: bool = False
    score: Score | None = None  # python-chess's Cp or Mate, from the mover's side
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    time_ms: int = 0  # measured at the pipe: go written to bestmove read
    clock_ms: int | None = None  # the mover's clock after the move
    reported_ms: int | None = None  # the search time the engine reported (UCI info time)
    pv: tuple[str, ...] = ()  # the principal variation in UCI, from the position moved from
    nps: int | None = None
    tbhits: int | None = None
    hashfull: int | None = None  # permille, as UCI reports it

    def comment(self) -> str:
        """The cutechess-style PGN comment: {+0.35/20 1.2s}, or {book}.

        >>> MoveRecord("e2e4", "e4", score=Cp(35), depth=20, time_ms=1234).comment()
        '+0.35/20 1.2s'
        >>> MoveRecord("e2e4", "e4", book=True).comment()
        'book'
        """
        if self.book:
            return "book"
        used = f"{self.time_ms / 1000:.{3 if self.time_ms < 100 else 2}g}s"
        if self.score is None:
            return used
        return f"{score_text(self.score)}/{self.depth or 0} {used}"


@dataclass(frozen=True, slots=True)
class Fault:
    """An engine's misbehaviour, from the adapter that saw it to the store that keeps it."""

    engine: str
    kind: FaultKind
    detail: str
    output: tuple[str, ...] = ()  # the last lines the engine printed


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
    eco: str | None = None  # the opening's, when its suite names them
    variation: str | None = None
    host: str | None = None  # the game host (Dask worker) it ran on; None: in the daemon
    chess960: bool = False  # a Chess960 game (castling rights by rook, king-takes-rook)

    @property
    def plies(self) -> int:
        """Half-moves played, book moves included.

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> moves = (MoveRecord("e2e4", "e4", book=True), MoveRecord("e7e5", "e5"))
        >>> GameRecord("A", "B", "1/2-1/2", "normal", "agreed", moves, now, now, "1+0").plies
        2
        """
        return len(self.moves)
