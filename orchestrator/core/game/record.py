"""The complete record of one played game, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import chess
import msgspec
from chess.engine import Cp, Mate, Score

from orchestrator.core.event.model import Result
from orchestrator.core.game.rmobility import Goal, g_score
from orchestrator.core.game.variants import new_board

__all__ = [
    "Cp",
    "Fault",
    "GameRecord",
    "Mate",
    "MoveRecord",
    "Score",
    "score_from",
    "score_parts",
    "score_pawns",
    "white_view",
]

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


def score_parts(score: Score | None) -> tuple[int | None, int | None]:
    """A score as it is stored and sent: (centipawns, moves to mate), the other one None.

    >>> score_parts(Cp(35)), score_parts(Mate(-3)), score_parts(None)
    ((35, None), (None, -3), (None, None))
    """
    if score is None:
        return None, None
    return score.score(), score.mate()


def score_from(cp: int | None, mate: int | None) -> Score | None:
    """The score of `score_parts`.

    >>> score_from(35, None), score_from(None, -3), score_from(None, None)
    (Cp(+35), Mate(-3), None)
    """
    if mate is not None:
        return Mate(mate)
    return None if cp is None else Cp(cp)


def white_view(score: Score | None, white_moved: bool) -> str:
    """The `wv` field: a score from White's side, in pawns.

    >>> white_view(Cp(35), True), white_view(Cp(35), False), white_view(Mate(3), False)
    ('0.35', '-0.35', '-M3')
    """
    if score is None:
        return ""
    mate = score.mate()
    if mate is not None:
        mate = mate if white_moved else -mate
        return f"M{mate}" if mate > 0 else f"-M{-mate}"
    cp = score.score(mate_score=0)
    return f"{(cp if white_moved else -cp) / 100:.2f}"


def score_text(score: Score) -> str:
    """cutechess notation.

    >>> score_text(Cp(35)), score_text(Cp(-120)), score_text(Mate(5)), score_text(Mate(-6))
    ('+0.35', '-1.20', '+M5', '-M6')
    """
    mate = score.mate()
    if mate is not None:
        return f"+M{mate}" if mate > 0 else f"-M{-mate}"
    return f"{score.score(mate_score=0) / 100:+.2f}"


class MoveRecord(msgspec.Struct, frozen=True):
    """One move as played: made once a move, so a Struct (built in C, a fifth of a frozen
    dataclass's time), pickled by its fields in order (a game's result brings a few
    hundred moves from its host).

    >>> import pickle
    >>> move = MoveRecord("e2e4", "e4", score=Cp(35), depth=20, pv=("e2e4", "e7e5"))
    >>> pickle.loads(pickle.dumps(move)) == move
    True
    """

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
    ponder: str | None = None  # the reply the engine expects (UCI), pondered on if it ponders

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
    #: how it ended in TCEC's words, as its PGNs' TerminationDetails: "White mates", "TCEC
    #: win rule", "3-fold repetition", "White loses on time", "White disconnects", ...
    details: str = ""
    #: what the runner found at the end, where the game's board was (None: found from the
    #: moves when asked): the r-mobility result, and the last position
    rmobility: str | None = None
    final_fen: str | None = None
    #: its PGN, where the game's host wrote it (`GameSpec.pgn`); None: the daemon writes it
    pgn: str | None = None
    #: Black's time control where it is not White's (`time_control`): time odds
    black_time_control: str | None = None
    #: the variant of the rules it was played by (`variants.rules_of`; "chess": standard)
    rules: str = "chess"

    def start(self) -> chess.Board:
        """The board it started from, before any book move.

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> horde = GameRecord("A", "B", "*", "normal", "", (), now, now, "1+0", rules="horde")
        >>> horde.start().fen()
        'rnbqkbnr/pppppppp/8/1PP2PP1/PPPPPPPP/PPPPPPPP/PPPPPPPP/PPPPPPPP w kq - 0 1'
        """
        return new_board(self.start_fen, self.chess960, self.rules)

    def goal(self) -> Goal:
        """The game's r-mobility goal (`core/game/rmobility.py`).

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> moves = (MoveRecord("f2f3", "f3"), MoveRecord("e7e5", "e5"),
        ...          MoveRecord("g2g4", "g4"), MoveRecord("d8h4", "Qh4#"))
        >>> str(GameRecord("A", "B", "0-1", "normal", "", moves, now, now, "1+0").goal())
        '-G0.0'
        """
        board = self.start()
        return g_score(board, (chess.Move.from_uci(m.uci) for m in self.moves))

    def rmobility_result(self) -> str:
        """The G-score as TCEC writes it: the runner's, or found from the moves.

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> GameRecord("A", "B", "0-1", "normal", "", (), now, now, "1+0").rmobility_result()
        '-G20.5'
        """
        return self.rmobility if self.rmobility is not None else str(self.goal())

    def last_fen(self) -> str:
        """The last position's FEN: the runner's, or found from the moves.

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> moves = (MoveRecord("e2e4", "e4"),)
        >>> GameRecord("A", "B", "*", "normal", "", moves, now, now, "1+0").last_fen()
        'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
        """
        if self.final_fen is not None:
            return self.final_fen
        board = self.start()
        for move in self.moves:
            board.push_uci(move.uci)
        return board.fen()

    def last_evals(self) -> tuple[str | None, str | None]:
        """Each engine's last score, from White's side in pawns (TCEC's wv): White's and
        Black's, None for an engine that scored no move.

        >>> from datetime import datetime
        >>> now = datetime(2026, 1, 1)
        >>> moves = (MoveRecord("e2e4", "e4", score=Cp(30)), MoveRecord("e7e5", "e5", score=Cp(10)))
        >>> GameRecord("A", "B", "1/2-1/2", "normal", "", moves, now, now, "1+0").last_evals()
        ('0.30', '-0.10')
        """
        first = self.start().turn  # who made the first move; the moves alternate
        last: dict[chess.Color, str | None] = {chess.WHITE: None, chess.BLACK: None}
        left = 2  # from the end: each side's last scored move is all it needs
        for ply in range(len(self.moves) - 1, -1, -1):
            move, side = self.moves[ply], first if ply % 2 == 0 else not first
            if last[side] is None and not move.book and move.score is not None:
                last[side] = white_view(move.score, side == chess.WHITE)
                left -= 1
                if not left:
                    break
        return last[chess.WHITE], last[chess.BLACK]

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
