"""Operator controls end to end, through the CLI, on a daemon playing scripted engines: pause
and resume, adjudicate, replay, withdraw, strikes, engine updates, the audit log; liveness
after kill -9; and every control's bad input refused with the database unchanged."""

from __future__ import annotations

import io
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from tests.support.daemon import event_config
from tests.support.paths import SCRIPTED
from tests.support.processes import engines_alive, wait_for

PLAYERS = ["A", "B", "C", "D", "E", "F", "G"]


def crasher(folder: Path) -> str:
    """An eighth engine that crashes in every game: `strikes = 2` withdraws it."""
    return f"""
[[engine]]
name = "X"
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "--name", "X",
           "--crash-at", "1", "--tag", {json.dumps(str(folder))}]
rating = 2000
"""


def start(config: Path) -> subprocess.Popen[str]:
    """The daemon, its log lines going to a file (a pipe nobody reads would fill up)."""
    log = (config.parent / "daemon.log").open("a")
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config)],
        cwd=config.parent,
        stdout=log,
        stderr=subprocess.PIPE,
        text=True,
    )


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.stdout


def query(db: Path, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """Rows of `sql`; none while the daemon has created the database but not its schema."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise


def applied(db: Path, control: int) -> str:
    """Wait until the daemon applied `control`; its outcome."""
    sql = "SELECT applied_at FROM controls WHERE id = ?"
    wait_for(lambda: (rows := query(db, sql, control)) and rows[0][0])
    outcome: str = query(db, "SELECT outcome FROM controls WHERE id = ?", control)[0][0]
    return outcome


def control(db: Path, *args: str) -> int:
    out = invoke(*args, "--db", str(db))
    return int(out.split()[1])


def games_with(db: Path, status: str) -> list[tuple[Any, ...]]:
    return query(
        db,
        "SELECT id, round, white, black FROM games WHERE status = ? ORDER BY round, number",
        status,
    )


def test_a_director_steers_a_running_event(tmp_path: Path) -> None:
    config = event_config(
        tmp_path,
        players=PLAYERS,
        rounds=4,
        delay_ms=40,
        concurrency=2,
        extra="strikes = 2",
        adjudication="win = false\ndraw = false\nmax_moves = 12",
    )
    config.write_text(config.read_text() + crasher(tmp_path))
    db = tmp_path / "event.sqlite"
    daemon = start(config)
    try:
        wait_for(lambda: db.exists() and games_with(db, "running"))

        # pause: no new game starts; the running ones play on; resume
        pause = control(db, "pause", "--reason", "maintenance")
        assert applied(db, pause) == "paused"
        wait_for(lambda: not games_with(db, "running"))
        attempts = query(db, "SELECT COUNT(*) FROM attempts")
        time.sleep(2.5)
        assert query(db, "SELECT COUNT(*) FROM attempts") == attempts
        assert invoke("status", "--db", str(db), "--json")["paused"] is True
        applied(db, control(db, "resume"))

        # adjudicate a running game: it ends at once, by the director's decision
        wait_for(lambda: games_with(db, "running"))
        game = games_with(db, "running")[0][0]
        outcome = applied(db, control(db, "adjudicate", str(game), "0-1", "--reason", "test"))
        assert outcome == f"game {game}: 0-1 by adjudication"
        (row,) = query(db, "SELECT status, result, termination, pgn FROM games WHERE id = ?", game)
        assert row[:3] == ("finished", "0-1", "adjudication")
        pgn = chess.pgn.read_game(io.StringIO(row[3]))
        assert pgn is not None and pgn.headers["Result"] == "0-1"
        assert pgn.headers["TerminationDetails"] == "Manual adjudication"  # TCEC's words
        assert "by the tournament director's decision: test" in pgn.end().comment

        # replay a finished game of the current round: two attempts, one voided (a game of
        # neither G, withdrawn below, nor X, withdrawn by strikes: theirs would be forfeited)
        def replayable() -> list[tuple[Any, ...]]:
            return query(
                db,
                "SELECT id, round, white, black FROM games WHERE status = 'finished' AND round = "
                "(SELECT MAX(round) FROM games WHERE status != 'pending') AND id != ? AND white "
                "NOT IN ('G', 'X') AND black NOT IN ('G', 'X') AND forfeit = 0 ORDER BY number",
                game,
            )

        wait_for(replayable)
        applied(db, control(db, "pause", "--reason", "a replay"))  # the round cannot move on
        replayed, current, _, _ = replayable()[0]
        assert "voided" in applied(db, control(db, "replay", str(replayed), "--reason", "glitch"))
        applied(db, control(db, "resume"))

        # withdraw G mid-round
        withdraw = control(db, "withdraw", "G", "--reason", "the author asked")
        assert "G withdrawn after round" in applied(db, withdraw)

        # engine-update: A searches to depth 33 from its next game on
        command = [sys.executable, str(SCRIPTED), "--name", "A", "--by-opponent", "--seed", "0"]
        command += ["--delay", "40", "--depth", "33", "--tag", str(tmp_path)]
        update = control(
            db, "engine-update", "A", "--command", " ".join(command), "--reason", "fixed build"
        )
        assert "A: new command" in applied(db, update)

        assert daemon.wait(timeout=240) == 0, daemon.stderr.read() if daemon.stderr else ""
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()

    # the replayed game: two attempts, the first voided; the standings count the replay
    attempts_of = query(db, "SELECT voided_at FROM attempts WHERE game = ? ORDER BY id", replayed)
    assert len(attempts_of) >= 2 and attempts_of[0][0] is not None and attempts_of[-1][0] is None
    pairings = invoke("pairings", "--db", str(db), "--round", str(current), "--json")
    listed = next(g for g in pairings["games"] if g["id"] == replayed)
    assert listed["voided"] and listed["status"] == "finished"

    # G: left out of every later pairing; the later rounds are what `pair` makes of the state
    (after,) = query(db, "SELECT withdrawn_after FROM players WHERE name = 'G'")[0]
    data = json.loads(invoke("state", "--db", str(db)))
    assert any(p["name"] == "G" and p["withdrawn_after"] == after for p in data["players"])
    for number in range(after + 1, len(data["rounds"]) + 1):
        prefix = dict(data, rounds=data["rounds"][: number - 1])
        paired = subprocess.run(
            [sys.executable, "-m", "orchestrator", "pair", "-"],
            input=json.dumps(prefix),
            capture_output=True,
            text=True,
            check=True,
        )
        games = json.loads(paired.stdout)["games"]
        stored = data["rounds"][number - 1]["games"]
        assert games == [{"white": g["white"], "black": g["black"]} for g in stored], number
        assert all("G" not in (g["white"], g["black"]) for g in games)

    # X crashed in every game: withdrawn by strikes after its second
    sql = "SELECT withdrawn_after, withdrawn_reason FROM players WHERE name = 'X'"
    ((x_after, x_reason),) = query(db, sql)
    assert x_after is not None and x_reason.startswith("2 strikes: game ")
    standings = invoke("standings", "--db", str(db), "--json")["standings"]
    x_line = next(line for line in standings if line["name"] == "X")
    assert x_line["strikes"] == 2 and x_line["withdrawn_after"] == x_after

    # A: depth 5 before its update, 33 from the game it applies to
    (first_game,) = query(db, "SELECT first_game FROM engine_updates WHERE engine = 'A'")[0]
    assert first_game is not None
    depths = query(
        db,
        "SELECT g.id, m.depth FROM moves m JOIN attempts a ON a.id = m.attempt "
        "JOIN games g ON g.id = a.game WHERE m.book = 0 AND a.voided_at IS NULL AND "
        "((g.white = 'A' AND m.ply % 2 = 1) OR (g.black = 'A' AND m.ply % 2 = 0))",
    )
    assert {d for g, d in depths if g < first_game} == {5}
    assert {d for g, d in depths if g >= first_game} == {33}

    # the audit log has all of it
    log = invoke("log", "--db", str(db), "--json")
    kinds = [e["kind"] for e in log if e["what"] == "control" and e["user"] != "orchestrator"]
    assert kinds == [
        "pause",
        "resume",
        "adjudicate",
        "pause",
        "replay",
        "resume",
        "withdraw",
        "engine-update",
    ]
    assert all(e["applied_at"] for e in log if e["what"] == "control")
    assert any(e["what"] == "control" and e["user"] == "orchestrator" for e in log)  # strikes
    assert sum(e["what"] == "strike" for e in log) >= 2
    assert {e["engine"] for e in log if e["what"] == "withdrawal"} == {"G", "X"}
    assert any(e["what"] == "engine_update" and e["first_game"] == first_game for e in log)
    assert not engines_alive(str(tmp_path))


def test_after_kill_9_nothing_shows_as_running_and_controls_wait(tmp_path: Path) -> None:
    config = event_config(tmp_path, rounds=2, delay_ms=60, concurrency=2)
    db = tmp_path / "event.sqlite"
    daemon = start(config)
    wait_for(lambda: db.exists() and games_with(db, "running"))
    status = invoke("status", "--db", str(db), "--json")
    assert status["daemon"]["running"] is True and status["daemon"]["pid"] == daemon.pid
    daemon.send_signal(signal.SIGKILL)
    daemon.wait()
    started = time.monotonic()
    wait_for(lambda: invoke("status", "--db", str(db), "--json")["daemon"]["running"] is False)
    assert time.monotonic() - started < 15
    status = invoke("status", "--db", str(db), "--json")
    assert status["games_running"] == [] and status["games_interrupted"]
    pairings = invoke("pairings", "--db", str(db), "--json")
    assert "running" not in {g["status"] for g in pairings["games"]}
    assert "interrupted" in {g["status"] for g in pairings["games"]}
    # a control given while no daemon runs waits, and is applied when one starts
    pause = control(db, "pause", "--reason", "while down")
    assert query(db, "SELECT applied_at FROM controls WHERE id = ?", pause) == [(None,)]
    daemon = start(config)
    try:
        assert applied(db, pause) == "paused"
        time.sleep(2)
        assert not games_with(db, "running")  # paused: nothing starts
        assert invoke("status", "--db", str(db), "--json")["paused"] is True
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
    # a paused event that is restarted stays paused
    daemon = start(config)
    try:
        wait_for(lambda: invoke("status", "--db", str(db), "--json")["daemon"]["running"])
        time.sleep(2)
        assert not games_with(db, "running")
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


BAD = [
    (["adjudicate", "99", "1-0", "--reason", "x"], "no game 99"),
    (["adjudicate", "1", "2-0", "--reason", "x"], "'2-0' is not a PGN result"),
    (["adjudicate", "1", "1-0", "--reason", " "], "adjudicate needs --reason"),
    (["replay", "99", "--reason", "x"], "no game 99"),
    (["replay", "1", "--reason", "x"], "round 2 has started: it can no longer be changed"),
    (["withdraw", "Nobody", "--reason", "x"], "no engine named 'Nobody'"),
    (["engine-update", "E01", "--reason", "x"], "engine-update needs --command or --option"),
    (["engine-update", "Nobody", "--option", "Hash=1", "--reason", "x"], "no engine named"),
    (["engine-update", "E01", "--option", "Hash=16", "--reason", "x"], "no option 'Hash'"),
    (["engine-update", "E01", "--option", "Hash", "--reason", "x"], "expected NAME=VALUE"),
    (["engine-update", "E01", "--command", "/nonexistent", "--reason", "x"], "does not start"),
]


@pytest.fixture(scope="module")
def finished_round(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database whose round 2 has started: round 1's games can no longer change."""
    folder = tmp_path_factory.mktemp("bad")
    config = event_config(folder, rounds=3, delay_ms=0)
    db = folder / "event.sqlite"
    daemon = start(config)
    try:
        sql = "SELECT COUNT(*) FROM attempts a JOIN games g ON g.id = a.game WHERE g.round = 2"
        wait_for(lambda: db.exists() and (rows := query(db, sql)) and rows[0][0])
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
    return db


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_controls_change_nothing(finished_round: Path, args: list[str], message: str) -> None:
    before = dump(finished_round)
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", *args, "--db", str(finished_round)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert dump(finished_round) == before
