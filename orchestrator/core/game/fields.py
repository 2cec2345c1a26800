"""What TCEC writes about each move, pure: the fields of its PGN comments and live files.

Every value is a string, as TCEC writes them: `d` depth, `sd` selective depth, `mt` the move's
time (ms), `tl` the mover's time left (ms), `s` speed (nodes per second), `n` nodes, `pv` the
principal variation in SAN, `tb` tablebase hits, `h` hashfull (percent), `wv` the score from
White's side in pawns (`M5` / `-M5` for mates), and three countdowns after the move:

- `R50`: full moves left before the fifty-move rule, `(100 - halfmove clock) // 2`;
- `Rd`: plies left before the draw adjudication, while its streak runs; otherwise
  `-(plies + 1)`, and `-1000` when the rule is off;
- `Rr`: the same for the win adjudication ("resign").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import chess

from orchestrator.core.game.adjudication import Adjudication, Adjudicator
from orchestrator.core.game.record import MoveRecord, Score

#: a countdown of a rule that is off
OFF = -1000


def white_view(score: Score | None, white_moved: bool) -> str:
    """The `wv` field: a score from White's side, in pawns.

    >>> from orchestrator.core.game.record import Cp, Mate
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


def pv_san(board: chess.Board, pv: Iterable[str]) -> list[str]:
    """The PV's moves in SAN from `board` (the position moved from), up to the first move
    that is not legal there.

    >>> pv_san(chess.Board(), ["e2e4", "e7e5", "g1f3", "a1a8"])
    ['e4', 'e5', 'Nf3']
    """
    board, out = board.copy(stack=False), []
    for uci in pv:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            break
        if not board.is_legal(move):
            break
        out.append(board.san(move))
        board.push(move)
    return out


@dataclass(frozen=True, slots=True)
class Annotated:
    """One ply of a game with everything TCEC shows about it."""

    move: MoveRecord
    white_moved: bool
    board_before: chess.Board
    fields: dict[str, str]  # empty for a book move

    def comment(self) -> str:
        """The TCEC-style PGN comment: `book`, or `d=.., sd=.., ...`.

        >>> from orchestrator.core.game.record import Cp
        >>> move = MoveRecord("e2e4", "e4", score=Cp(20), depth=9, pv=("e2e4", "e7e5"))
        >>> [a.comment() for a in annotate(chess.Board(), [move], Adjudication())]
        ['d=9, sd=, mt=0, tl=, s=, n=, pv=e4 e5, tb=, h=, wv=0.20, R50=50, Rd=-11, Rr=-11']
        """
        if self.move.book:
            return "book"
        return ", ".join(f"{k}={v}" for k, v in self.fields.items())


def _text(value: int | None) -> str:
    return "" if value is None else str(value)


def _countdown(streak: int, plies: int | None) -> int:
    if plies is None:
        return OFF
    return plies - streak if streak else -(plies + 1)


class Annotator:
    """Annotates a game one ply at a time (a live game), as `annotate` does a whole one.

    >>> from orchestrator.core.game.record import Cp
    >>> annotator = Annotator(chess.Board(), Adjudication())
    >>> annotator.add(MoveRecord("e2e4", "e4", score=Cp(30))).fields["wv"]
    '0.30'
    >>> annotator.board.fen()
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
    """

    def __init__(self, start: chess.Board, rules: Adjudication) -> None:
        self.board = start.copy(stack=False)
        self.rules = rules
        self.judge = Adjudicator(rules)

    def add(self, move: MoveRecord) -> Annotated:
        board, rules, judge = self.board, self.rules, self.judge
        before = board.copy(stack=False)
        white_moved = board.turn == chess.WHITE
        played = chess.Move.from_uci(move.uci)
        fullmove, zeroing = board.fullmove_number, board.is_zeroing(played)
        board.push(played)
        if move.book:
            return Annotated(move, white_moved, before, {})
        judge.after_ply(
            white_moved=white_moved,
            score=move.score,
            fullmove=fullmove,
            zeroing=zeroing,
            moves_played=board.fullmove_number - 1,
        )
        fields = {
            "d": _text(move.depth),
            "sd": _text(move.seldepth),
            "mt": str(move.time_ms),
            "tl": _text(move.clock_ms),
            "s": _text(move.nps),
            "n": _text(move.nodes),
            "pv": " ".join(pv_san(before, move.pv)),
            "tb": _text(move.tbhits),
            "h": "" if move.hashfull is None else f"{move.hashfull / 10:.1f}",
            "wv": white_view(move.score, white_moved),
            "R50": str((100 - board.halfmove_clock) // 2),
            "Rd": str(_countdown(judge.draw_streak, rules.draw.plies if rules.draw else None)),
            "Rr": str(_countdown(judge.win_streak, rules.win.plies if rules.win else None)),
        }
        return Annotated(move, white_moved, before, fields)


def annotate(
    start: chess.Board, moves: Iterable[MoveRecord], rules: Adjudication
) -> Iterator[Annotated]:
    """Replay `moves` from `start` through the adjudication `rules`, yielding each ply with
    its TCEC fields.

    >>> from orchestrator.core.game.record import Cp
    >>> from orchestrator.core.game.adjudication import DrawRule
    >>> rules = Adjudication(win=None, draw=DrawRule(from_move=1, plies=4, score=0.5))
    >>> moves = [MoveRecord("g1f3", "Nf3", score=Cp(10), time_ms=900, clock_ms=9100,
    ...                     nodes=5000, nps=5555, tbhits=0, hashfull=123),
    ...          MoveRecord("g8f6", "Nf6", score=Cp(-5))]
    >>> [(a.fields["wv"], a.fields["Rd"], a.fields["Rr"]) for a in annotate(chess.Board(),
    ...                                                                  moves, rules)]
    [('0.10', '3', '-1000'), ('0.05', '2', '-1000')]
    >>> first = next(annotate(chess.Board(), moves, rules)).fields
    >>> first["mt"], first["tl"], first["s"], first["n"], first["h"], first["R50"]
    ('900', '9100', '5555', '5000', '12.3', '49')
    """
    annotator = Annotator(start, rules)
    for move in moves:
        yield annotator.add(move)
