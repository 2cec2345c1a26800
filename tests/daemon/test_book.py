"""A Polyglot book used by a daemon-played event (`book`, `book_depth`): every game starts
with the book's moves, both games of a pair with the same line, and the same event run again
draws the same lines.  A bad book is one line and exit 2."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import chess.pgn
import pytest

from tests.core.test_book import LINES, write_book
from tests.support.daemon import event_config, run_daemon

PLAYERS = ["A", "B", "C", "D"]


def play(folder: Path) -> list[tuple[int, int, str, str, int, list[str], list[str]]]:
    """The event with the book, to its end: each game's round, number, players, pair, stored
    opening and the PGN's first moves."""
    folder.mkdir()
    write_book(folder / "book.bin", LINES)
    config = event_config(
        folder, players=PLAYERS, rounds=2, extra='book = "book.bin"\nbook_depth = 3'
    )
    done = run_daemon(config)
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(folder / "event.sqlite") as db:
        rows = db.execute(
            "SELECT round, number, white, black, pair, opening, pgn FROM games "
            "ORDER BY round, number"
        ).fetchall()
    games = []
    for rnd, number, white, black, pair, opening, pgn in rows:
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None
        moves = [m.uci() for m in game.mainline_moves()]
        games.append((rnd, number, white, black, pair, json.loads(opening)["moves"], moves))
    return games


def test_an_event_s_games_start_with_the_book_s_moves_and_replay_the_same(
    tmp_path: Path,
) -> None:
    games = play(tmp_path / "first")
    assert len(games) == 8
    by_pair: dict[int, list[list[str]]] = {}
    for _, _, _, _, pair, line, moves in games:
        assert line in (["d2d4", "d7d5"], ["e2e4", "c7c5", "g1f3"], ["e2e4", "c7c5", "b1c3"])
        assert moves[: len(line)] == line  # played as book moves, then the engines
        assert len(moves) > len(line)
        by_pair.setdefault(pair, []).append(line)
    assert all(len(lines) == 2 and lines[0] == lines[1] for lines in by_pair.values())
    # the same event in a fresh folder draws the same lines for the same games
    again = play(tmp_path / "again")
    assert [g[:6] for g in again] == [g[:6] for g in games]
    # and the book moves carry the PGN's `book` comment
    with sqlite3.connect(tmp_path / "first" / "event.sqlite") as db:
        (pgn,) = db.execute("SELECT pgn FROM games LIMIT 1").fetchone()
    assert "{ book }" in pgn


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "is not a Polyglot book"),
        (b"x" * 17, "is not a Polyglot book"),
        (b"\0" * 16, "has no move for the start position"),
    ],
)
def test_a_bad_book_is_one_line_and_exit_2(tmp_path: Path, content: bytes, words: str) -> None:
    (tmp_path / "book.bin").write_bytes(content)
    config = event_config(tmp_path, players=PLAYERS, rounds=2, extra='book = "book.bin"')
    done = run_daemon(config)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "[tournament] book" in lines[0] and words in lines[0], lines
    assert not (tmp_path / "event.sqlite").exists()
