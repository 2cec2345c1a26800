"""TCEC's live files: their fields as TCEC's runner writes them, read back the way its viewer
(tcecgui's game.js) reads them: replaying `Moves` by SAN and checking every FEN."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from tests.support.daemon import BOOK, event_config

PLAYERS = ["E01", "E02", "E03", "E04"]
MOVE_STRINGS = ["d", "sd", "mt", "tl", "s", "n", "tb", "h", "wv"]
SCHEDULE_PLAYED = [
    "Game",
    "White",
    "Black",
    "Start",
    "Result",
    "Termination",
    "Duration",
    "Moves",
    "FinalFen",
    "Opening",
    "ECO",
]
TABLE_FIELDS = [
    "Rank",
    "Score",
    "Games",
    "GamesAsWhite",
    "GamesAsBlack",
    "WinsAsWhite",
    "WinsAsBlack",
    "LossAsWhite",
    "LossAsBlack",
    "Neustadtl",
    "Strikes",
    "Performance",
    "Rating",
    "Results",
]


def replay(live: dict[str, Any]) -> chess.Board:
    """What game.js does with live.json: the moves, by SAN, from the start position."""
    headers = live["Headers"]
    board = chess.Board(headers["FEN"]) if "FEN" in headers else chess.Board()
    for move in live["Moves"]:
        before = board.copy()
        played = board.push_san(move["m"])
        assert (chess.square_name(played.from_square), chess.square_name(played.to_square)) == (
            move["from"],
            move["to"],
        )
        assert move["fen"] == board.fen()
        assert isinstance(move["book"], bool)
        if move["book"]:
            continue
        for key in MOVE_STRINGS:
            assert isinstance(move[key], str), (key, move)
        pv = move["pv"]
        assert pv["San"].split()[0] == move["m"]
        line = before.copy()
        for step in pv["Moves"]:
            line.push_san(step["m"])
            assert step["fen"] == line.fen()
    return board


def test_live_files_have_tcec_s_fields(tmp_path: Path) -> None:
    (tmp_path / "book.pgn").write_text(BOOK)
    config = event_config(
        tmp_path,
        players=PLAYERS,
        rounds=2,
        delay_ms=30,
        extra='live_dir = "live"\npgn_comments = "tcec"\nopenings = "book.pgn"',
    )
    daemon = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    live = tmp_path / "live"
    reads = 0
    try:
        while daemon.poll() is None:  # whatever moment it is read, a whole file
            if (live / "live.json").exists():
                data = json.loads((live / "live.json").read_text())
                replay(data)
                reads += 1
            time.sleep(0.05)
        _, err = daemon.communicate(timeout=300)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err
    assert reads > 5

    data = json.loads((live / "live.json").read_text())
    headers = data["Headers"]
    for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result", "TimeControl"):
        assert headers[tag]
    assert headers["Result"] in ("1-0", "0-1", "1/2-1/2")  # the last game, finished
    for side in ("White", "Black"):
        assert isinstance(data[f"{side}EngineOptions"], list)  # its [{Name, Value}] options
    assert headers["Termination"] and headers["TerminationDetails"]  # the game's end
    final = replay(data)
    assert data["Moves"][0]["book"] and not data["Moves"][-1]["book"]
    assert headers["ECO"] in ("C50", "D30")
    game = chess.pgn.read_game(io.StringIO((live / "live.pgn").read_text()))
    assert game is not None and not game.errors
    assert game.end().board().fen() == final.fen()

    schedule = json.loads((live / "schedule.json").read_text())
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        games = db.execute(
            "SELECT white, black, result, pgn FROM games ORDER BY round, number"
        ).fetchall()
    assert [(r["White"], r["Black"], r["Result"]) for r in schedule] == [g[:3] for g in games]
    for row, (_, _, _, pgn) in zip(schedule, games, strict=True):
        assert [k for k in SCHEDULE_PLAYED if k in row] == SCHEDULE_PLAYED
        stored = chess.pgn.read_game(io.StringIO(pgn))
        assert stored is not None and row["FinalFen"] == stored.end().board().fen()
        assert row["Game"] == schedule.index(row) + 1

    cross = json.loads((live / "crosstable.json").read_text())
    assert cross["Event"] == "Daemon Test" and sorted(cross["Order"]) == PLAYERS
    total = 0.0
    for name in cross["Order"]:
        row = cross["Table"][name]
        assert [k for k in TABLE_FIELDS if k in row] == TABLE_FIELDS
        assert row["Rank"] == cross["Order"].index(name) + 1
        assert row["Games"] == row["GamesAsWhite"] + row["GamesAsBlack"] == 4
        total += row["Score"]
        for opponent, result in row["Results"].items():
            assert len(result["Text"]) == len(result["Scores"])
            for score in result["Scores"]:
                played = schedule[score["Game"] - 1]
                assert {played["White"], played["Black"]} == {name, opponent}
                assert score["Winner"] in ("White", "Black", "None")
                assert score["Result"] in (0.0, 0.5, 1.0)
    assert total == len(schedule)
