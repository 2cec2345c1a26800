"""`match` and `run --output` as engine testers' frameworks use them, with scripted engines:
a refused command writes nothing, fishtest's own counting of crashes and time losses over
standard output and error together equals the database's, and strikes in a match end it as
planned."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT, SCRIPTED

#: what fishtest's worker (worker/games.py, `parse_fastchess_output`) counts in every line
#: of fastchess's standard output and error, read through one queue
CRASH = re.compile(r"disconnect|stall")
TIME_LOSS = re.compile(r"on time|timeout")
RESULT = re.compile(r"Games: (\d+), Wins: (\d+), Losses: (\d+), Draws: (\d+), Points: ")


def engine(name: str, *args: str) -> str:
    """fastchess's -engine keys for a scripted engine."""
    return f"name={name} cmd={sys.executable} args='{SCRIPTED} --name {name} {' '.join(args)}'"


def orchestrator(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args], cwd=folder, capture_output=True,
        text=True, timeout=300, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_fishtest_counts_the_database_s_crashes_and_time_losses(tmp_path: Path) -> None:
    """New crashes at its third move, Base oversteps its clock at its third: whoever moves
    first does it, so each colour gives one kind.  fishtest reads stdout and stderr as one
    stream and counts every line with "on time" as a time loss: the log, with its
    `"reason": "... lost on time ..."`, counted them twice before it left both streams."""
    out = orchestrator(
        tmp_path, "match", engine("New", "--crash-at", "3"),
        engine("Base", "--overstep-at", "3", "--overstep-ms", "400"),
        "--games", "4", "--tc", "1+0.01", "--db", "m.sqlite", "--output", "fastchess",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = (out.stdout + out.stderr).splitlines()
    crashes = sum(1 for line in lines if CRASH.search(line))
    time_losses = sum(1 for line in lines if TIME_LOSS.search(line))
    with sqlite3.connect(tmp_path / "m.sqlite") as conn:
        kinds = [
            json.loads(f)["kind"] for (f,) in conn.execute("SELECT fault FROM games")
            if f is not None
        ]  # fmt: skip
    assert kinds.count("crash") == crashes == 2
    assert kinds.count("time_forfeit") == time_losses == 2
    assert out.stderr == ""
    games, wins, losses, draws = map(int, RESULT.findall(out.stdout)[-1])
    assert (games, wins, losses, draws) == (4, 2, 2, 0)
    log = (tmp_path / "m.log").read_text()  # the log went beside the config
    assert '"event": "engine_fault"' in log and "lost on time" in log


def test_a_refused_match_changes_nothing_and_the_first_command_resumes(tmp_path: Path) -> None:
    """`--games 6 --force` on a match of 4: its games may never change, so it is refused,
    and the match's config is left as it was (it was rewritten before, and then the first
    command was refused too)."""
    first = [engine("New"), engine("Base"), "--tc", "10+0.1", "--db", "m.sqlite"]
    done = orchestrator(tmp_path, "match", *first, "--games", "4")
    assert done.returncode == 0, done.stderr[-3000:]
    config = (tmp_path / "m.toml").read_text()
    files = sorted(p.name for p in tmp_path.iterdir())
    refused = orchestrator(tmp_path, "match", *first, "--games", "6", "--force")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "system_options; they cannot change" in refused.stderr
    assert (tmp_path / "m.toml").read_text() == config
    assert sorted(p.name for p in tmp_path.iterdir()) == files
    again = orchestrator(tmp_path, "match", *first, "--games", "4")
    assert again.returncode == 0, again.stderr[-3000:]


def test_strikes_in_a_match_end_it_as_planned(tmp_path: Path) -> None:
    """`strikes = 2` in a match where one engine crashes in every game: withdrawing it would
    leave one engine, so no one is withdrawn; it loses every game and the match ends (it
    exited 1 on every run before)."""
    tables = "".join(
        f'[[engine]]\nname = "{name}"\n'
        f"command = {json.dumps([sys.executable, str(SCRIPTED), '--name', name, *args])}\n\n"
        for name, args in (("Good", []), ("Bad", ["--crash-at", "2"]))
    )
    (tmp_path / "m.toml").write_text(
        '[tournament]\nsystem = "match"\nsystem_options = { games = 6, shared = true }\n'
        'tc = "10+0.1"\nstrikes = 2\ndatabase = "m.sqlite"\n\n' + tables
    )
    out = orchestrator(tmp_path, "run", "m.toml")
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count('"event": "strikes_not_withdrawn"') == 1
    with sqlite3.connect(tmp_path / "m.sqlite") as conn:
        results = conn.execute("SELECT white, result FROM games ORDER BY id").fetchall()
    assert len(results) == 6  # (in the last round, with no round left, it may withdraw)
    assert all((r == "1-0") == (white == "Good") for white, r in results)


def test_log_level_keeps_the_lines_at_it_and_above(tmp_path: Path) -> None:
    """`--log-level warning`: a match that goes well logs nothing; `--log-level debug`: the
    daemon's lines and the libraries' own, python-chess's engine lines among them."""
    for level in ("warning", "debug"):
        out = orchestrator(
            tmp_path, "match", engine("A"), engine("B"), "--games", "2", "--tc", "1+0.01",
            "--db", f"{level}.sqlite", "--log-file", f"{level}.log", "--log-level", level,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
    assert not (tmp_path / "warning.log").exists()  # not a line: the file is never made
    lines = [json.loads(line) for line in (tmp_path / "debug.log").read_text().splitlines()]
    events = {line["event"] for line in lines}
    assert {"tournament_started", "game_finished", "tournament_finished"} <= events
    engine_lines = [
        line for line in lines if line["event"] == "library_log" and line["level"] == "debug"
    ]
    assert any(line["logger"] == "chess.engine" for line in engine_lines), events
