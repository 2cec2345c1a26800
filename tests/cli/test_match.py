"""`orchestrator match`: two Debian engines from a fresh shell, no config file; the PGN,
kill -9 and the same command resuming; bad input as one line and exit 2, nothing written."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import chess.pgn
import pytest

from tests.support.daemon import finished_count
from tests.support.processes import wait_for

STOCKFISH = Path("/usr/games/stockfish")
TOGA = Path("/usr/games/toga2")
ENGINES = ["name=SF cmd=stockfish nodes=3000", "name=Toga cmd=toga2"]
pytestmark = pytest.mark.skipif(
    not (STOCKFISH.exists() and TOGA.exists()), reason="Debian's stockfish and toga2"
)


def command(folder: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "orchestrator", "match", *ENGINES,
        "--games", "4", "--tc", "2+0.02", "--db", str(folder / "m.sqlite"), *extra,
    ]  # fmt: skip


def test_a_match_from_the_command_line_resumes_after_kill_nine(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    shell = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    first = subprocess.Popen(
        command(tmp_path), cwd=tmp_path, env=shell, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for(lambda: finished_count(db) >= 1 or first.poll() is not None, timeout=120)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert (tmp_path / "m.toml").read_text().startswith("# written by `orchestrator match`")
    done = finished_count(db)
    assert 1 <= done < 4  # killed mid-match
    time.sleep(0.5)  # the killed daemon's engines follow it (their parent-death signal)
    again = subprocess.run(
        command(tmp_path), cwd=tmp_path, env=shell, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert finished_count(db) == 4
    with sqlite3.connect(db) as conn:
        played = conn.execute("SELECT white, black FROM games ORDER BY round, number").fetchall()
    assert sorted(played) == [("SF", "Toga"), ("SF", "Toga"), ("Toga", "SF"), ("Toga", "SF")]
    path = next((tmp_path / "m-pgn").rglob("*.pgn"))
    pgn = path.read_text()
    headers = []
    with path.open() as handle:
        while (h := chess.pgn.read_headers(handle)) is not None:
            headers.append(h)
    assert len(headers) == 4 and '[Event "SF vs Toga"]' in pgn
    config = (tmp_path / "m.toml").read_text()
    other = subprocess.run(
        [*command(tmp_path), "--games", "6"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert other.returncode == 2 and "started by another command line" in other.stderr
    assert (tmp_path / "m.toml").read_text() == config


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "3"], "--games: a match is played in game pairs"),
        (["--tc", "fast"], "--tc: bad time control 'fast'"),
        (["--sprt", "x"], "--sprt: expected ELO0,ELO1"),
        (["--sprt=-inf,inf"], "--sprt: elo0 must be a number from -200 to 200"),
        (["--sprt", "0,240"], "--sprt: elo1 must be a number from -200 to 200"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    out = subprocess.run(
        command(tmp_path, *args), cwd=tmp_path, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("engine", "message"),
    [
        ("cmd=stockfish tc=inf", 'm.toml: [[engine]] "stockfish": its tc = "inf" (no clock) '),
        ("cmd=stockfish foo=1", "unknown key 'foo'"),
        ("cmd=stockfish tc=40/x", 'm.toml: [[engine]] "stockfish" tc: bad time control'),
        ("nosuchengine", "'nosuchengine' is not an executable program"),
    ],
)
def test_a_bad_engine_is_one_line(tmp_path: Path, engine: str, message: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "match", engine, "toga2", "--db",
         str(tmp_path / "m.sqlite")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_config_of_its_own_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text("[tournament]\n")
    out = subprocess.run(
        command(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 2 and "is not a match's config" in out.stderr, out.stderr
    assert (tmp_path / "m.toml").read_text() == "[tournament]\n"
