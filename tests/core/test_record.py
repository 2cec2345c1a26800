"""A game's record: what is read off its moves."""

from __future__ import annotations

from datetime import datetime

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.game.record import Cp, GameRecord, Mate, MoveRecord, Score, white_view

_SCORES = st.one_of(
    st.none(), st.builds(Cp, st.integers(-900, 900)), st.builds(Mate, st.integers(-9, 9))
)
_MOVES = st.lists(st.tuples(st.booleans(), _SCORES), max_size=40)


@settings(max_examples=200, deadline=None)
@given(_MOVES, st.booleans())
def test_each_side_s_last_eval_is_its_last_scored_move_s(
    moves: list[tuple[bool, Score | None]], black_starts: bool
) -> None:
    """`last_evals` (read from the end) gives what a walk through every move gives: each
    side's last scored move that is not a book move, from White's side, None without one."""
    fen = "4k3/8/8/8/8/8/8/4K3 b - - 0 1" if black_starts else None
    records = tuple(MoveRecord("e1e2", "Ke2", book=book, score=score) for book, score in moves)
    now = datetime(2026, 1, 1)
    record = GameRecord("A", "B", "1/2-1/2", "normal", "", records, now, now, "1+0", start_fen=fen)
    turn = not black_starts
    expected: dict[bool, str | None] = {chess.WHITE: None, chess.BLACK: None}
    for move in records:
        if not move.book and move.score is not None:
            expected[turn] = white_view(move.score, turn)
        turn = not turn
    assert record.last_evals() == (expected[chess.WHITE], expected[chess.BLACK])
