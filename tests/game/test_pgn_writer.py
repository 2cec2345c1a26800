"""The PGN writer's short cut (`game/pgn.py`): the moves and comments the runner already has
are handed to python-chess's exporter, instead of a tree of nodes that python-chess walks
playing each move twice.  The text must be what python-chess writes from such a tree."""

from __future__ import annotations

from datetime import UTC, datetime

import chess
import chess.pgn
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.game.fields import options_comment
from orchestrator.core.game.record import Cp, GameRecord, Mate, MoveRecord
from orchestrator.game.pgn import _Exporter, to_pgn

STARTS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2",  # Black to move first
]


def by_tree(record: GameRecord, options: tuple[dict[str, int], dict[str, int]] | None) -> str:
    """The movetext of the same game as python-chess writes it from a tree of nodes (the
    writer before the short cut): every move a node with its comment, [%clk] and [%emt]
    set on the node, the game's comment the engines' options (and the reason of a game
    without moves)."""
    game = chess.pgn.Game()
    if record.start_fen:
        game.setup(record.start_fen)
    node: chess.pgn.GameNode = game
    last = len(record.moves) - 1
    for i, move in enumerate(record.moves):
        comment = move.comment() + (f", {record.reason}" if i == last else "")
        node = node.add_variation(chess.Move.from_uci(move.uci), comment=comment)
        if not move.book:
            if move.clock_ms is not None:
                node.set_clock(move.clock_ms / 1000)
            node.set_emt(move.time_ms / 1000)
    if node is game:
        game.comment = record.reason
    if options is not None:
        first = options_comment(*options)
        game.comment = f"{first} {game.comment}" if game.comment else first
    game.headers["Result"] = record.result
    text = game.accept(_Exporter(None)) + "\n"
    return text[text.index("\n\n") + 2 :]


@st.composite
def records(draw: st.DrawFn) -> GameRecord:
    board = chess.Board(draw(st.sampled_from(STARTS)))
    start = board.fen()
    moves = []
    for _ in range(draw(st.integers(0, 40))):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = draw(st.sampled_from(legal))
        book = all(m.book for m in moves) and draw(st.booleans())  # a book's first
        score = draw(
            st.one_of(
                st.none(),
                st.builds(Cp, st.integers(-900, 900)),
                st.builds(Mate, st.integers(-9, 9).filter(bool)),
            )
        )
        moves.append(
            MoveRecord(
                move.uci(),
                board.san(move),
                book=bool(book),
                score=None if book else score,
                depth=draw(st.one_of(st.none(), st.integers(1, 60))),
                time_ms=draw(st.integers(0, 4_000_000)),
                clock_ms=draw(st.one_of(st.none(), st.integers(0, 9_000_000))),
            )
        )
        board.push(move)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return GameRecord(
        "White {x}",
        'Black "y"',
        "1/2-1/2",
        "adjudication",
        draw(st.sampled_from(["Draw", "Draw } by {rule}", ""])),
        tuple(moves),
        now,
        now,
        "60+1",
        start_fen=None if start == chess.STARTING_FEN else start,
    )


@settings(max_examples=200, deadline=None)
@given(records(), st.booleans())
def test_the_short_cut_writes_what_python_chess_writes_from_a_tree(
    record: GameRecord, with_options: bool
) -> None:
    options = ({"Hash": 64}, {"Threads": 2}) if with_options else None
    text = to_pgn(record, event="E", options=options)
    assert text[text.index("\n\n") + 2 :] == by_tree(record, options)
