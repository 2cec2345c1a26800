"""Polyglot books (`core/game/book.py`), `opening_plies` and `opening_start`
(`event/state.py: OpeningChoice`).  The book is written by the test: python-chess computes
each position's key (`chess.polyglot.zobrist_hash`), and an entry is the 16 bytes of the
Polyglot format (key, move, weight, learn; big-endian)."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import chess
import chess.polyglot
import pytest

from orchestrator.core.game.book import Book
from orchestrator.core.game.openings import Opening
from orchestrator.event.state import OpeningChoice


def entry(board: chess.Board, uci: str, weight: int) -> bytes:
    move = chess.Move.from_uci(uci)
    raw = move.to_square | move.from_square << 6
    return struct.pack(">QHHI", chess.polyglot.zobrist_hash(board), raw, weight, 0)


def write_book(path: Path, lines: dict[tuple[str, ...], dict[str, int]]) -> Path:
    """A book: after each line of moves (UCI), its moves with their weights; the entries
    sorted by key, as the format requires."""
    entries = []
    for line, moves in lines.items():
        board = chess.Board()
        for uci in line:
            board.push_uci(uci)
        entries += [entry(board, uci, weight) for uci, weight in moves.items()]
    path.write_bytes(b"".join(sorted(entries)))
    return path


#: 1. e4 three times as often as 1. d4; after each, one reply; after 1. e4 c5 two moves
LINES = {
    (): {"e2e4": 3, "d2d4": 1},
    ("e2e4",): {"c7c5": 1},
    ("d2d4",): {"d7d5": 1},
    ("e2e4", "c7c5"): {"g1f3": 1, "b1c3": 1},
}


@pytest.fixture
def book(tmp_path: Path) -> Book:
    opened = Book(write_book(tmp_path / "book.bin", LINES), 8)
    yield opened
    opened.close()


def test_the_choice_follows_the_weights(book: Book) -> None:
    lines = [book.extend(None, 7, pair).moves for pair in range(2000)]
    first = Counter(line[0] for line in lines)
    assert set(first) == {"e2e4", "d2d4"}
    # 3:1 by weight; 2,000 draws put the share within 0.72-0.78 (4 standard deviations)
    assert 0.72 < first["e2e4"] / len(lines) < 0.78
    third = Counter(line[2] for line in lines if line[0] == "e2e4")
    assert 0.45 < third["g1f3"] / sum(third.values()) < 0.55


def test_a_line_ends_where_the_book_does_or_at_its_depth(book: Book, tmp_path: Path) -> None:
    for pair in range(50):
        line = book.extend(None, 1, pair).moves
        assert line in {("d2d4", "d7d5"), ("e2e4", "c7c5", "g1f3"), ("e2e4", "c7c5", "b1c3")}
    short = Book(book.path, 1)
    try:
        assert {short.extend(None, 1, pair).moves for pair in range(50)} == {
            ("e2e4",),
            ("d2d4",),
        }
    finally:
        short.close()


def test_the_same_seed_and_pair_give_the_same_line(book: Book) -> None:
    again = Book(book.path, 8)
    try:
        assert [book.extend(None, 3, p) for p in range(40)] == [
            again.extend(None, 3, p) for p in range(40)
        ]
    finally:
        again.close()
    # another seed draws other lines
    assert [book.extend(None, 3, p).moves for p in range(40)] != [
        book.extend(None, 4, p).moves for p in range(40)
    ]


def test_the_book_continues_a_suite_s_line(book: Book) -> None:
    line = book.extend(Opening.from_san("1. e4"), 1, 0)
    assert line.moves[:2] == ("e2e4", "c7c5")
    assert line.name.startswith("1. e4 ") and line.moves[2] in {"g1f3", "b1c3"}
    # out of book at once: the suite's line as it was
    out = Opening.from_san("1. c4")
    assert book.extend(out, 1, 0) == out


def test_opening_start_and_opening_plies_cut_the_suite(book: Book) -> None:
    suite = [Opening.from_san(s) for s in ("1. e4 c5 2. Nf3 d6", "1. d4 d5 2. c4", "1. c4")]
    choice = OpeningChoice(suite, order="sequential", start=3, plies=1)
    assert [choice.for_pair(p).moves for p in range(4)] == [
        ("c2c4",),
        ("e2e4",),
        ("d2d4",),
        ("c2c4",),
    ]
    # cut, then the book goes on from the cut line
    with_book = OpeningChoice(suite, order="sequential", plies=1, book=book)
    assert with_book.for_pair(0).moves[:3] == ("e2e4", "c7c5", with_book.for_pair(0).moves[2])
    assert with_book.for_pair(1).moves == ("d2d4", "d7d5")
    # random order: the start skips the first lines of the same walk (a run that goes on
    # where another stopped, as fastchess's `start` is used)
    walk = OpeningChoice(suite, seed=5)
    assert [OpeningChoice(suite, seed=5, start=3).for_pair(p) for p in range(7)] == [
        walk.for_pair(p + 2) for p in range(7)
    ]
