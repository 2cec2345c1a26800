"""SPRT tests played by `orchestrator run` with scripted engines whose results the pair of
names fixes (`--by-opponent`): a match with a strong edge accepts H1, a match of equal
engines (every game drawn) accepts H0, each long before its `games`; a daemon killed with
SIGKILL mid-test resumes with the LLR of the games it had stored and ends where an
uninterrupted run ends.  A gauntlet under SPRT ends once its test has a verdict.

The bounds are wide (elo0 = 0, elo1 = 100) so that a test ends within a few dozen games."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from orchestrator.web.app import make_app
from tests.support.daemon import cli, finished_count, run_daemon
from tests.support.engines import scripted_engines_toml

SPRT = "sprt = { elo0 = 0, elo1 = 100 }"


def config(folder: Path, names: list[str], system: str) -> Path:
    """A `system` event of scripted engines `names` under SPRT."""
    engines = scripted_engines_toml(names, folder)  # results fixed by the pair of names
    options = (
        f"system_options = {{ games = 200, {SPRT} }}"
        if system == "match"
        else f'format = "double"\ncycles = 20\nsystem_options = {{ gauntlets = 1, {SPRT} }}'
    )
    path = folder / "event.toml"
    path.write_text(
        f"""
[tournament]
name = "SPRT"
system = "{system}"
{options}
tc = "60+1"
concurrency = 2
database = "event.sqlite"
pgn_dir = "pgn"

[adjudication]
win = {{ plies = 4, score = 10.0 }}
draw = {{ from_move = 1, plies = 4, score = 0.15 }}
max_moves = 40
{engines}"""
    )
    return path


async def standings_page(db: Path) -> str:
    async with TestClient(TestServer(make_app(db))) as client:
        return await (await client.get("/standings")).text()


def standings(folder: Path) -> Any:
    return cli("standings", "--db", str(folder / "event.sqlite"), "--json")


def test_a_match_with_a_strong_edge_accepts_h1_early(tmp_path: Path) -> None:
    # Gamma (seed 1: the engine under test) beats Alpha with either colour (`by_names`)
    out = run_daemon(config(tmp_path, ["Gamma", "Alpha"], "match"))
    assert out.returncode == 0, out.stderr[-3000:]
    match = standings(tmp_path)["match"]
    test = match["sprt"]
    assert test["verdict"] == "H1" and test["llr"] >= test["upper"]
    assert match["games"] < 200 and match["games"] % 2 == 0
    assert match["winner"] == "Gamma"
    assert "H1 accepted" in cli("standings", "--db", str(tmp_path / "event.sqlite"))


def test_a_match_of_equal_engines_accepts_h0_and_resumes_after_kill_9(tmp_path: Path) -> None:
    # Alpha and Beta draw every game: the test accepts H0
    straight = tmp_path / "straight"
    straight.mkdir()
    out = run_daemon(config(straight, ["Alpha", "Beta"], "match"))
    assert out.returncode == 0, out.stderr[-3000:]
    final = standings(straight)["match"]
    assert final["sprt"]["verdict"] == "H0" and final["sprt"]["llr"] <= final["sprt"]["lower"]
    assert final["draws"] == final["games"] < 200 and final["shared"]

    killed = tmp_path / "killed"
    killed.mkdir()
    path = config(killed, ["Alpha", "Beta"], "match")
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=killed,
    )
    deadline = time.monotonic() + 120
    while finished_count(killed / "event.sqlite") < 7 and time.monotonic() < deadline:
        assert proc.poll() is None, "the daemon ended before it was killed"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = standings(killed)["match"]
    assert 7 <= stored["games"] < final["games"] and stored["sprt"]["verdict"] is None
    # the LLR is the stored games' own, whoever computes it: the same as the straight run's
    # after as many complete game pairs
    assert stored["sprt"]["llr"] < 0
    out = run_daemon(path)
    assert out.returncode == 0, out.stderr[-3000:]
    resumed = standings(killed)["match"]
    assert resumed["games"] == final["games"] and resumed["sprt"] == final["sprt"]
    assert resumed["penta"] == final["penta"]


def test_a_gauntlet_under_sprt_ends_at_its_verdict(tmp_path: Path) -> None:
    # Gamma (the gauntlet engine) beats Alpha, Eps and Theta with either colour
    out = run_daemon(config(tmp_path, ["Gamma", "Alpha", "Eps", "Theta"], "gauntlet"))
    assert out.returncode == 0, out.stderr[-3000:]
    data = standings(tmp_path)
    test = data["gauntlet"]["sprt"]["Gamma"]
    assert test["verdict"] == "H1"
    pairs = data["gauntlet"]["pairs"]
    assert [p["engines"][1] for p in pairs] == ["Alpha", "Eps", "Theta"]
    played = sum(p["games"] for p in pairs)
    assert played < 20 * 2 * 3  # long before its 20 double cycles
    for pair in pairs:
        assert pair["model"] == "pentanomial" and pair["wdl"][1:] == [0, 0]
        assert pair["penta"][:4] == [0, 0, 0, 0] and pair["elo"] is None  # all won: unbounded
    assert standings(tmp_path)["standings"][0]["name"] == "Gamma"
    # the web view's standings show every pair and the test
    page = asyncio.run(standings_page(tmp_path / "event.sqlite"))
    assert "<table id='gauntlet'>" in page
    assert all(f"<td>{name}</td>" in page for name in ("Alpha", "Eps", "Theta"))
    assert "SPRT of Gamma against the field" in page and "H1 accepted" in page
