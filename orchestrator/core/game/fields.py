"""What TCEC writes about each move, pure: the fields of its PGN comments and live files.

Every value is a string, as TCEC writes them, in TCEC's order: `d` depth, `sd` selective depth
(the depth when the engine gives none), `pd` the ponder move in SAN (where the engine names
one), `mt` the move's time (ms), `tl` the mover's time left (ms), `s` speed (nodes per
second), `n` nodes, `pv` the principal variation in SAN, `tb` tablebase hits, `h` hashfull
(percent), `ph` the share of the mover's ponder moves so far that the opponent played
(percent), `wv` the score from White's side in pawns (`M5` / `-M5` for mates), three
countdowns after the move, and `mb` the material balance after it (White's pawns, knights,
bishops, rooks and queens less Black's, each signed: `+1+0-1+0+0`):

- `R50`: full moves left before the fifty-move rule, `(100 - halfmove clock) // 2`;
- `Rd`: plies left before the draw adjudication, while its streak runs; otherwise
  `-(plies + 1)`, and `-1000` when the rule is off;
- `Rr`: the same for the win adjudication ("resign").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import chess

from orchestrator.core.game.adjudication import Adjudication, Adjudicator
from orchestrator.core.game.record import MoveRecord, white_view

#: a countdown of a rule that is off
OFF = -1000


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
        ['d=9, sd=9, mt=0, tl=, s=, n=, pv=e4 e5, tb=, h=, ph=0.0, wv=0.20, R50=50, Rd=-11, \
Rr=-11, mb=+0+0+0+0+0']
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
        #: each side's last ponder move, and its ponder moves the opponent played / made
        self.expected: dict[chess.Color, str | None] = {chess.WHITE: None, chess.BLACK: None}
        self.hits = {chess.WHITE: 0, chess.BLACK: 0}
        self.tries = {chess.WHITE: 0, chess.BLACK: 0}

    def add(self, move: MoveRecord) -> Annotated:
        board, rules, judge = self.board, self.rules, self.judge
        before = board.copy(stack=False)
        mover = board.turn
        white_moved = mover == chess.WHITE
        played = chess.Move.from_uci(move.uci)
        fullmove, zeroing = board.fullmove_number, board.is_zeroing(played)
        board.push(played)
        guessed = self.expected[not mover]  # what the opponent expected this move to be
        if guessed is not None:
            self.tries[not mover] += 1
            self.hits[not mover] += guessed == move.uci
            self.expected[not mover] = None
        if move.book:
            return Annotated(move, white_moved, before, {})
        self.expected[mover] = move.ponder
        judge.after_ply(
            white_moved=white_moved,
            score=move.score,
            fullmove=fullmove,
            zeroing=zeroing,
            moves_played=board.fullmove_number - 1,
        )
        depth = _text(move.depth)
        fields = {"d": depth, "sd": _text(move.seldepth) or depth}
        if move.ponder:
            fields["pd"] = " ".join(pv_san(board, [move.ponder]))
        fields |= {
            "mt": str(move.time_ms),
            "tl": _text(move.clock_ms),
            "s": _text(move.nps),
            "n": _text(move.nodes),
            "pv": " ".join(pv_san(before, move.pv)),
            "tb": _text(move.tbhits),
            "h": "" if move.hashfull is None else f"{move.hashfull / 10:.1f}",
            "ph": f"{100 * self.hits[mover] / self.tries[mover] if self.tries[mover] else 0:.1f}",
            "wv": white_view(move.score, white_moved),
            "R50": str((100 - board.halfmove_clock) // 2),
            "Rd": str(_countdown(judge.draw_streak, rules.draw.plies if rules.draw else None)),
            "Rr": str(_countdown(judge.win_streak, rules.win.plies if rules.win else None)),
            "mb": material_balance(board),
        }
        return Annotated(move, white_moved, before, fields)


def material_balance(board: chess.Board) -> str:
    """TCEC's `mb`: White's pawns, knights, bishops, rooks and queens less Black's.

    >>> material_balance(chess.Board("4k3/8/8/8/8/8/PP6/R3K3 w - - 0 1"))
    '+2+0+0+1+0'
    """
    diffs = (
        len(board.pieces(kind, chess.WHITE)) - len(board.pieces(kind, chess.BLACK))
        for kind in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
    )
    return "".join(f"{d:+d}" for d in diffs)


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


def options_comment(white: Mapping[str, Any], black: Mapping[str, Any]) -> str:
    """The first comment of a game, the engines' options as TCEC writes them (its viewer
    splits the engines at ";, " and the options at ";").

    >>> options_comment({"Hash": 256, "Threads": 8}, {})
    'WhiteEngineOptions: Hash=256; Threads=8;, BlackEngineOptions: ;'
    """
    white_text, black_text = ("".join(f" {k}={v};" for k, v in o.items()) for o in (white, black))
    return f"WhiteEngineOptions:{white_text or ' ;'}, BlackEngineOptions:{black_text or ' ;'}"
