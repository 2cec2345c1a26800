"""The daemon end to end: a 10-player, 5-round double Swiss of scripted engines, run through,
killed and resumed, and read back through the CLI."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from tests.support.daemon import (
    PLAYERS,
    cli,
    event_config,
    finished_count,
    run_daemon,
    stored_games,
)
from tests.support.processes import engines_alive


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("straight")
    config = event_config(folder)
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    return config


def test_event_runs_to_the_end_and_everything_agrees(uninterrupted: Path) -> None:
    folder = uninterrupted.parent
    db = folder / "event.sqlite"
    games = stored_games(db)
    assert len(games) == 5 * 10  # 5 double rounds of 5 pairs
    assert all(g[4] in ("1-0", "0-1", "1/2-1/2") for g in games)
    # every round is what `orchestrator pair` gives for the results before it
    with sqlite3.connect(db) as conn:
        players = conn.execute("SELECT name, seed FROM players ORDER BY seed").fetchall()
    state: dict[str, Any] = {
        "format": "double",
        "schedule": "legs",
        "players": [{"name": n, "seed": s} for n, s in players],
        "rounds": [],
    }
    for number in range(1, 6):
        paired = json.loads(CliRunner().invoke(app, ["pair", "-"], input=json.dumps(state)).stdout)
        mine = [g for g in games if g[0] == number]
        assert paired["games"] == [{"white": g[2], "black": g[3]} for g in mine]
        state["rounds"].append(
            {
                "round": number,
                "bye": None,
                "games": [{"white": g[2], "black": g[3], "result": g[4]} for g in mine],
            }
        )
    # pgn_out agrees with the database, game for game
    pgn_folder = folder / "pgn" / "Daemon_Test"
    # files for people keep the umask (0644 under the usual 022), not mkstemp's 0600
    umask = os.umask(0o022)
    os.umask(umask)
    modes = {path.name: path.stat().st_mode & 0o777 for path in pgn_folder.iterdir()}
    assert set(modes.values()) == {0o666 & ~umask}, modes
    with (pgn_folder / "Daemon_Test.pgn").open() as handle:
        archive = []
        while (game := chess.pgn.read_game(handle)) is not None:
            archive.append(game)
    assert [(g.headers["White"], g.headers["Black"], g.headers["Result"]) for g in archive] == [
        (g[2], g[3], g[4]) for g in games
    ]
    assert [g.headers["Round"] for g in archive] == [f"{g[0]}.{g[1]}" for g in games]
    assert (
        "".join(g[7] + "\n" for g in games if g[0] == 3)
        == (pgn_folder / "round-03.pgn").read_text()
    )
    # standings --json agrees with the results
    standings = cli("standings", "--db", str(db), "--json")
    points: dict[str, float] = dict.fromkeys(PLAYERS, 0.0)
    for g in games:
        w = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[g[4]]
        points[g[2]] += w
        points[g[3]] += 1 - w
    assert {s["name"]: s["score"] for s in standings["standings"]} == points
    assert (
        json.loads((pgn_folder / "standings.json").read_text())["standings"]
        == standings["standings"]
    )
    status = cli("status", "--db", str(db), "--json")
    assert status["finished"] and status["games_finished"] == 50 and not status["games_running"]
    exported = cli("export", "--db", str(db))
    assert exported == (pgn_folder / "Daemon_Test.pgn").read_text()
    # --epd: a line a game, its id and its last position, as the database holds them
    with sqlite3.connect(db) as conn:
        finals = {str(i): fen for i, fen in conn.execute("SELECT id, final_fen FROM games")}
    epd = cli("export", "--db", str(db), "--epd").splitlines()
    assert len(epd) == len(finals) == 50
    for line in epd:
        board, operations = chess.Board.from_epd(line)
        assert board.epd() == chess.Board(finals[str(operations["id"])]).epd()
    assert cli("pairings", "--db", str(db), "--round", "2", "--json")["games"][0]["number"] == 1


#: the kills of the kill -9 test: at random moments, then the event plays to its end
KILLS = 12


def test_kill_nine_and_resume_changes_nothing(uninterrupted: Path, tmp_path: Path) -> None:
    config = event_config(tmp_path, delay_ms=5)  # slower moves, the same games
    db = tmp_path / "event.sqlite"
    rng = random.Random(20261122)
    kills = 0
    for _ in range(200):
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        # kill at a random moment: mostly just after some progress (mid-game, mid-write),
        # sometimes while the daemon starts, pairs or resumes; after KILLS kills, the event
        # is let run to its end (each restart costs the suite a daemon's start)
        before = finished_count(db)
        early = rng.random() < 0.2
        deadline = time.monotonic() + (rng.uniform(0.2, 1.5) if early else 60)
        if kills >= KILLS:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            break
        while proc.poll() is None and time.monotonic() < deadline:
            if not early and finished_count(db) > before:
                time.sleep(rng.uniform(0.0, 0.6))
                break
            time.sleep(0.05)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
        break
    else:
        pytest.fail("the event did not finish")
    assert kills >= 10, f"only {kills} kills happened before the event finished"
    out = run_daemon(config)  # once more on the finished event: nothing to do
    assert out.returncode == 0
    expected = [g[:7] for g in stored_games(uninterrupted.parent / "event.sqlite")]
    assert [g[:7] for g in stored_games(db)] == expected
    with sqlite3.connect(db) as conn:
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM attempts GROUP BY status"))
        assert statuses.get("finished") == 50 and "running" not in statuses
        assert (
            conn.execute("SELECT COUNT(*) FROM rounds WHERE finished_at IS NULL").fetchone()[0] == 0
        )
    time.sleep(0.5)
    assert not engines_alive(str(tmp_path)), "engine processes outlived the daemon"
