"""Chess960 and double Chess960: start positions by number, real Debian engines playing a
Chess960 Swiss through `orchestrator run`, a double-Chess960 match from a list, engines
that do not declare Chess960, and positions that survive a kill -9."""

from __future__ import annotations

import io
import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.game.openings import (
    OpeningError,
    draw_position,
    parse_position,
    parse_suite,
    position,
)
from tests.support.daemon import finished_count, run_daemon
from tests.support.paths import SCRIPTED

CHESS960_ENGINES = {  # the Debian engines that declare Chess960 (UCI_Chess960)
    "Stockfish": "/usr/games/stockfish",
    "Fairy-Stockfish": "/usr/games/fairy-stockfish",
    "Ethereal": "/usr/games/ethereal-chess",
    "Glaurung": "/usr/games/glaurung",
}


def test_every_position_by_number_is_python_chess_s() -> None:
    """All 960: the FEN of position n is python-chess's, with the castling rights of both
    rooks of each side, and reads back to the same Chess960 board."""
    for n in range(960):
        opening = parse_position(str(n), "chess960")
        expected = chess.Board.from_chess960_pos(n)
        assert opening.fen == expected.fen()
        board = opening.board()
        assert board.chess960 and board == expected
        assert chess.popcount(board.castling_rights) == 4


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 959), st.integers(0, 959))
def test_a_double_chess960_position_has_each_side_s_own_back_rank(white: int, black: int) -> None:
    board = parse_position(f"{white}-{black}", "dfrc").board()
    own, theirs = chess.Board.from_chess960_pos(white), chess.Board.from_chess960_pos(black)
    for file in range(8):
        assert board.piece_at(chess.square(file, 0)) == own.piece_at(chess.square(file, 0))
        assert board.piece_at(chess.square(file, 7)) == theirs.piece_at(chess.square(file, 7))
    rooks = board.pieces(chess.ROOK, chess.WHITE) | board.pieces(chess.ROOK, chess.BLACK)
    assert board.castling_rights == int(rooks)
    assert board.is_valid()
    again = chess.Board(board.fen(), chess960=True)
    assert again == board and again.castling_rights == board.castling_rights


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 5_000), st.sampled_from(["chess960", "dfrc"]))
def test_drawn_positions_are_repeatable_and_never_the_standard_one(
    seed: int, index: int, variant: str
) -> None:
    drawn = draw_position(variant, seed, index)  # type: ignore[arg-type]
    assert drawn == draw_position(variant, seed, index)  # type: ignore[arg-type]
    assert drawn.chess960 and drawn.fen != chess.STARTING_FEN


@pytest.mark.parametrize(
    ("text", "variant", "message"),
    [
        ("960", "chess960", "no Chess960 position 960 (the positions are 0 to 959)"),
        ("12-34", "chess960", "'12-34': a pair of back ranks is double Chess960 (variant dfrc)"),
        ("518 1. e5", "chess960", "illegal or unknown move 'e5'"),
        ("x", "dfrc", "frc.txt: line 1: not a valid EPD position"),
        ("1-x", "dfrc", "'1-x' is not a position number (such as 518 or 123-456)"),
    ],
)
def test_bad_positions_are_named(text: str, variant: str, message: str) -> None:
    with pytest.raises(OpeningError, match=re.escape(message)):
        parse_suite(text, "frc.txt", variant)  # type: ignore[arg-type]


def chess960_config(folder: Path, engines: dict[str, str], extra: str = "") -> Path:
    lines = "".join(
        f'\n[[engine]]\nname = "{name}"\ncommand = "{command}"\n'
        for name, command in engines.items()
    )
    config = folder / "frc.toml"
    config.write_text(
        f"""[tournament]
name = "FRC"
variant = "chess960"
format = "double"
rounds = 3
tc = "depth=5"
concurrency = 2
random_seed = 5
database = "frc.sqlite"
pgn_dir = "pgn"
live_dir = "live"
{extra}
[adjudication]
win = {{ plies = 6, score = 6.0 }}
draw = {{ from_move = 30, plies = 8, score = 0.2 }}
max_moves = 80
{lines}"""
    )
    return config


def stored_moves(db: Path) -> dict[int, list[str]]:
    """Each finished game's moves (book and engine) from the database, by game id."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.game, m.uci FROM moves m JOIN attempts a ON a.id = m.attempt "
            "WHERE a.status = 'finished' AND a.voided_at IS NULL ORDER BY a.game, m.ply"
        ).fetchall()
    out: dict[int, list[str]] = {}
    for game, uci in rows:
        out.setdefault(game, []).append(uci)
    return out


def test_a_chess960_swiss_of_debian_engines(tmp_path: Path) -> None:
    """Stockfish, Fairy-Stockfish, Ethereal and Glaurung (depth-limited, so the games are
    the same on any machine) play a 3-round double Chess960 Swiss through `orchestrator
    run`: every game ends normally or by adjudication; each pair of games shares one
    position, never the standard one; the PGN carries Variant, SetUp and FEN and reads back
    with python-chess to the database's moves and final position; every castling move is
    legal Chess960 castling, and the engines castle on both sides."""
    config = chess960_config(tmp_path, CHESS960_ENGINES)
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-2000:]
    db = tmp_path / "frc.sqlite"
    moves = stored_moves(db)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT id, round, pair, white, black, opening, termination, pgn FROM games ORDER BY id"
        ).fetchall()
    assert len(rows) == 12
    sides: set[str] = set()
    positions: dict[tuple[int, int], str] = {}
    for game_id, rnd, pair, white, black, opening, termination, pgn in rows:
        assert termination in ("normal", "adjudication"), (white, black, termination)
        start = json.loads(opening)
        assert start["chess960"] is True and start["fen"] != chess.STARTING_FEN
        assert positions.setdefault((rnd, pair), start["fen"]) == start["fen"]
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None and not game.errors, game.errors if game else pgn
        assert game.headers["Variant"] == "Chess960"
        assert game.headers["SetUp"] == "1" and game.headers["FEN"] == start["fen"]
        board = game.board()
        assert board.chess960
        for move in game.mainline_moves():
            if board.is_castling(move):
                king = board.king(board.turn)
                assert move.from_square == king  # king takes its own rook
                assert board.piece_at(move.to_square) == chess.Piece(chess.ROOK, board.turn)
                sides.add("O-O" if board.is_kingside_castling(move) else "O-O-O")
            board.push(move)
        assert [m.uci() for m in game.mainline_moves()] == moves[game_id]
        replayed = chess.Board(start["fen"], chess960=True)
        for uci in moves[game_id]:
            replayed.push_uci(uci)
        assert board.fen() == replayed.fen()
    assert sides == {"O-O", "O-O-O"}
    assert len(set(positions.values())) == 6  # a position per pair
    live = json.loads((tmp_path / "live" / "live.json").read_text())
    assert live["Headers"]["Variant"] == "Chess960"


def test_an_engine_that_does_not_declare_chess960_is_refused(tmp_path: Path) -> None:
    """Toga II has no UCI_Chess960: `check` and `run` name it in one line, exit 2, and no
    game starts."""
    engines = {"Stockfish": CHESS960_ENGINES["Stockfish"], "Toga II": "/usr/games/toga2"}
    config = chess960_config(tmp_path, engines)
    for command in ("check", "run"):
        result = CliRunner().invoke(app, [command, str(config)])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f'orchestrator: error: {config}: [[engine]] "Toga II": the engine does not declare '
            "Chess960 (no UCI_Chess960 option), so it cannot play a chess960 event"
        )
    assert not (tmp_path / "frc.sqlite").exists()


def scripted_chess960(name: str, protocol: str, *extra: str) -> str:
    command = json.dumps(
        [sys.executable, str(SCRIPTED), "--protocol", protocol, "--name", name, "--chess960",
         "--castle", *extra]
    )  # fmt: skip
    return f'\n[[engine]]\nname = "{name}"\ncommand = {command}\nprotocol = "{protocol}"\n'


def test_a_double_chess960_match_from_a_list(tmp_path: Path) -> None:
    """A UCI and an XBoard engine play a dfrc match from a list of back-rank pairs: each
    position twice, colours reversed, back to back; White's and Black's back ranks differ;
    castling goes king-takes-rook to the UCI engine and as O-O / O-O-O to the XBoard one."""
    (tmp_path / "dfrc.txt").write_text("# White's back rank, then Black's\n12-345\n700-3\n")
    config = tmp_path / "dfrc.toml"
    config.write_text(
        """[tournament]
name = "DFRC"
variant = "dfrc"
system = "match"
system_options = { games = 4, shared = true }
openings = "dfrc.txt"
opening_order = "sequential"
tc = "60+1"
database = "dfrc.sqlite"
pgn_dir = "pgn"
[adjudication]
max_moves = 30
"""
        + scripted_chess960("Uci", "uci")
        + scripted_chess960("Xb", "xboard")
    )
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-2000:]
    with sqlite3.connect(tmp_path / "dfrc.sqlite") as conn:
        rows = conn.execute("SELECT white, black, opening, pgn FROM games ORDER BY id").fetchall()
    assert len(rows) == 4
    names = [json.loads(r[2])["name"] for r in rows]
    assert names == ["DFRC 12-345", "DFRC 12-345", "DFRC 700-3", "DFRC 700-3"]
    castled = 0
    for (w1, b1, o1, _), (w2, b2, o2, _) in zip(rows[0::2], rows[1::2], strict=True):
        assert o1 == o2 and (w1, b1) == (b2, w2)
    for white, black, opening, pgn in rows:
        board = chess.Board(json.loads(opening)["fen"], chess960=True)
        ranks = [board.piece_at(chess.square(f, 0)) for f in range(8)]
        theirs = [board.piece_at(chess.square(f, 7)) for f in range(8)]
        assert [p.symbol().lower() for p in ranks if p] != [p.symbol() for p in theirs if p]
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None and not game.errors
        replay = game.board()
        for move in game.mainline_moves():
            castled += replay.is_castling(move)
            replay.push(move)
        assert game.headers["Termination"] in ("normal", "adjudication"), (white, black, pgn)
    assert castled >= 4  # both engines castle as soon as they can, in every game


def test_the_drawn_positions_survive_a_kill_nine(tmp_path: Path) -> None:
    """Without a list the positions are drawn from random_seed when a round is paired and
    stored: a daemon killed with SIGKILL and restarted plays the same ones as one that ran
    through."""
    engines = "".join(
        scripted_chess960(name, "uci", "--delay", "5") for name in ("A1", "B2", "C3", "D4")
    )

    def config(folder: Path) -> Path:
        folder.mkdir()
        path = folder / "frc.toml"
        path.write_text(
            """[tournament]
name = "FRC"
variant = "chess960"
rounds = 3
tc = "60+1"
random_seed = 11
database = "frc.sqlite"
pgn_dir = "pgn"
[adjudication]
max_moves = 15
"""
            + engines
        )
        return path

    through = config(tmp_path / "through")
    assert run_daemon(through).returncode == 0
    killed = config(tmp_path / "killed")
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(killed)],
        cwd=killed.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while finished_count(killed.parent / "frc.sqlite") < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert run_daemon(killed).returncode == 0

    def openings(db: Path) -> list[tuple[str, str, str]]:
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT white, black, opening FROM games ORDER BY id").fetchall()
        return [(w, b, json.loads(o)["fen"]) for w, b, o in rows]

    first = openings(through.parent / "frc.sqlite")
    assert len(first) == 12 and all(fen != chess.STARTING_FEN for _, _, fen in first)
    assert openings(killed.parent / "frc.sqlite") == first


def test_standard_position_518_is_played_when_asked_for() -> None:
    opening = position(518, "chess960")
    assert opening.board() == chess.Board(chess960=True)
    assert opening.fen == chess.STARTING_FEN
