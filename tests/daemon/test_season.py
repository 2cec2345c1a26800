"""`orchestrator season`: a season of scripted engines from an Entrance League of 10 to a
Superfinal, played unattended with a kill -9 during each event and compared game for game
with an uninterrupted run; `season next`; a tie at a cut held for a director; bad season
files as one line."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from tests.support.daemon import finished_count
from tests.support.engines import QUICK_LEAGUE, scripted_table
from tests.support.paths import DATA

NAMES = [f"E{i:02d}" for i in range(1, 17)]
EVENTS = ("Entrance League", "League 1", "Premier Division", "Superfinal")
LEAGUE = QUICK_LEAGUE.replace("[event.tournament]\n", '[event.tournament]\nlive_dir = "live"\n')


def engines(names: list[str], *args: str) -> str:
    return "".join(scripted_table(n, *args) for n in names)


def season_file(folder: Path) -> Path:
    """Ten engines in the Entrance League (its top 2 go up), four more in League 1 (its top
    2 go up, its bottom 2 down), two more in the Premier Division (its bottom one down), and
    its top 2 in a 4-game Superfinal."""
    folder.mkdir(parents=True, exist_ok=True)
    text = f"""[season]
name = "Test Season"

{engines(NAMES, "--by-opponent")}
[[event]]
name = "Entrance League"
field = {json.dumps(NAMES[:10])}
promote = 2
{LEAGUE}
[[event]]
name = "League 1"
field = ["E11", "E12", "E13", "E14", {{ top = 2, of = "Entrance League" }}]
promote = 2
relegate = 2
{LEAGUE}
[[event]]
name = "Premier Division"
field = ["E15", "E16", {{ top = 2, of = "League 1" }}]
relegate = 1
{LEAGUE}
[[event]]
name = "Superfinal"
field = [{{ top = 2, of = "Premier Division" }}]
[event.tournament]
system = "match"
system_options = {{ games = 4, shared = true }}
tc = "10+0.1"
live_dir = "live"
[event.adjudication]
max_moves = 12
"""
    path = folder / "season.toml"
    path.write_text(text)
    return path


def season_command(path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "orchestrator", "season", *args, str(path)]


def games(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every event's games: round, number, white, black, result, moves."""
    out = {}
    for event in EVENTS:
        db = folder / "season" / f"{event.replace(' ', '_')}.sqlite"
        with sqlite3.connect(db) as conn:
            out[event] = conn.execute(
                "SELECT g.round, g.number, g.white, g.black, g.result, "
                "(SELECT group_concat(m.uci, ' ') FROM moves m WHERE m.attempt = "
                "(SELECT max(a.id) FROM attempts a WHERE a.game = g.id AND a.status = 'finished'))"
                " FROM games g ORDER BY g.round, g.number"
            ).fetchall()
    return out


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The season played once, uninterrupted."""
    path = season_file(tmp_path_factory.mktemp("whole"))
    out = subprocess.run(
        season_command(path, "run"), capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:] + out.stdout[-3000:]
    assert '"event": "season_finished"' in out.stdout
    return path


def test_a_season_killed_in_every_event_plays_as_an_uninterrupted_one(
    whole: Path, tmp_path: Path
) -> None:
    broken = season_file(tmp_path / "broken")
    killed = []
    for event in EVENTS:
        db = broken.parent / "season" / f"{event.replace(' ', '_')}.sqlite"
        daemon = subprocess.Popen(
            season_command(broken, "run"), start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while finished_count(db) < 1 and daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if event == EVENTS[0]:  # one `season run` at a time
            second = subprocess.run(
                season_command(broken, "run"), capture_output=True, text=True, timeout=60,
                check=False,
            )  # fmt: skip
            assert second.returncode == 2 and "another daemon" in second.stderr, second.stderr
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait()
        killed.append((event, finished_count(db)))
        time.sleep(0.3)  # its engines follow it (their parent-death signal)
    last = subprocess.run(
        season_command(broken, "run"), capture_output=True, text=True, timeout=600, check=False
    )
    assert last.returncode == 0, last.stderr[-3000:] + last.stdout[-3000:]
    assert all(count >= 1 for _, count in killed), killed
    assert games(broken.parent) == games(whole.parent)
    status = CliRunner().invoke(app, ["season", "status", str(broken)])
    assert status.exit_code == 0, status.output
    assert status.stdout.count(": finished;") == 4


def test_season_next_moves_engines_up_and_down(whole: Path, tmp_path: Path) -> None:
    path = whole
    store = sqlite3.connect(whole.parent / "season" / "season.sqlite")
    rows = {
        name: (json.loads(field), [n for _, n in json.loads(places)])
        for name, field, places in store.execute("SELECT name, field, places FROM events")
    }
    store.close()
    entrance, league1, premier = (rows[e] for e in EVENTS[:3])
    # the field of each event came from the places of the one before
    assert league1[0] == ["E11", "E12", "E13", "E14", *entrance[1][:2]]
    assert premier[0] == ["E15", "E16", *league1[1][:2]]
    assert rows["Superfinal"][0] == premier[1][:2]
    first = tmp_path / "next.toml"
    second = tmp_path / "next-again.toml"
    for target in (first, second):
        made = CliRunner().invoke(app, ["season", "next", str(path), "-o", str(target)])
        assert made.exit_code == 0, made.output
    assert first.read_text() == second.read_text()
    import tomllib

    events = {e["name"]: e["field"] for e in tomllib.loads(first.read_text())["event"]}
    named = {name: [f for f in field if isinstance(f, str)] for name, field in events.items()}
    # League 1's bottom 2 go down, its top 2 up; the Premier Division's bottom one down
    assert named["Entrance League"] == [n for n in entrance[0] if n not in entrance[1][:2]] + list(
        league1[1][-2:]
    )
    assert (
        named["League 1"]
        == [n for n in league1[0] if n not in league1[1][:2] + league1[1][-2:]] + premier[1][-1:]
    )
    assert named["Premier Division"] == [n for n in premier[0] if n != premier[1][-1]]
    assert events["Superfinal"] == [{"of": "Premier Division", "top": 2}]
    assert CliRunner().invoke(app, ["season", "check", str(first)]).exit_code == 0


async def test_the_season_web_view_and_gamelist(whole: Path) -> None:
    """`season serve`'s app over the finished season: its page, every event's own pages
    mounted under its name (links and URLs from there), the season's PGN, and the
    `gamelist.json` of the events' shared live folder listing every event, as TCEC's does."""
    from aiohttp.test_utils import TestClient, TestServer

    from orchestrator.config.season import load_season
    from orchestrator.web.season import make_season_app

    folder = whole.parent / "season"
    live = json.loads((whole.parent / "live" / "gamelist.json").read_text())
    listed = live["Seasons"]["Test Season"]["sub"]
    assert [e["menu"] for e in listed] == list(EVENTS)
    assert [e["abb"] for e in listed] == [
        f"Test_Season_-_{e.replace(' ', '_')}" for e in EVENTS
    ]  # the whole PGN's names
    async with TestClient(TestServer(make_season_app(load_season(whole)))) as client:
        page = await (await client.get("/")).text()
        for event in EVENTS:
            assert f"<a href='{event.replace(' ', '_')}/'>{event}</a>" in page
        assert page.count("data-state='finished'") == 4 and "up: " in page and "down: " in page
        status = await (await client.get("/api/season")).json()
        assert [e["state"] for e in status["events"]] == ["finished"] * 4
        assert status["events"][0]["up"] == status["events"][1]["field"][-2:]
        assert (await (await client.get("/gamelist.json")).json())["Seasons"] == live["Seasons"]

        total = 0
        for event in EVENTS:
            root = "/" + event.replace(" ", "_")
            overview = await (await client.get(f"{root}/")).text()
            assert f"<base href='{root}/'>" in overview and "<a href='/'>Season</a>" in overview
            data = await (await client.get(f"{root}/api/overview")).json()
            assert data["event"] == f"Test Season - {event}" and data["finished"]
            total += data["games_finished"]
            pgn = await (await client.get(f"{root}/download/event.pgn")).read()
            on_disk = folder / f"{event.replace(' ', '_')}-pgn"
            assert (
                pgn
                == next(on_disk.rglob(f"Test_Season_-_{event.replace(' ', '_')}.pgn")).read_bytes()
            )
            game = await (await client.get(f"{root}/api/games/1")).json()
            assert game["log"] is None or game["log"].startswith(f"{root}/download/games/")
            assert (await client.get(f"{root}/games/1")).status == 200
        whole_pgn = await (await client.get("/download/season.pgn")).text()
        assert (
            whole_pgn.count("[Event ") == total == sum(len(g) for g in games(whole.parent).values())
        )


def two_events(path: Path, c_args: tuple[str, ...] = ()) -> Path:
    """A two-game Qualifier of A and B (100 ms a move: a second game long enough for a hold
    given after the first to come before the Final), then a Final of C and its winner."""
    text = f"""[season]
name = "Controls"

{engines(["A", "B"], "--score", "0", "--delay", "100")}{engines(["C"], "--score", "0", *c_args)}
[[event]]
name = "Qualifier"
field = ["A", "B"]
[event.tournament]
system = "match"
system_options = {{ games = 2, shared = true }}
tc = "10+0.1"
[event.adjudication]
max_moves = 6

[[event]]
name = "Final"
field = ["C", {{ top = 1, of = "Qualifier" }}]
[event.tournament]
system = "match"
system_options = {{ games = 2, shared = true }}
tc = "10+0.1"
[event.adjudication]
max_moves = 6
"""
    path.write_text(text)
    return path


def test_a_tie_at_the_cut_holds_the_season_until_a_director_decides(tmp_path: Path) -> None:
    """Two engines that draw every game share first place; the next event takes the top 1:
    the season holds (exit 3) and names the tie; `season decide` orders it, audited, and the
    season goes on with the director's choice."""
    path = two_events(tmp_path / "season.toml")
    held = subprocess.run(
        season_command(path, "run"), capture_output=True, text=True, timeout=300, check=False
    )
    assert held.returncode == 3, held.stderr[-3000:]
    line = next(json.loads(x) for x in held.stdout.splitlines() if "season_held" in x)
    assert line["tied"] == ["A", "B"] and "cuts through place 1-2" in line["detail"]
    refused = CliRunner().invoke(app, ["season", "decide", str(path), "Qualifier", "B", "C",
                                       "--reason", "x"])  # fmt: skip
    assert refused.exit_code == 2 and "C did not play" in refused.stderr
    decided = CliRunner().invoke(
        app, ["season", "decide", str(path), "Qualifier", "B", "A", "--reason", "coin toss"]
    )
    assert decided.exit_code == 0, decided.output
    done = subprocess.run(
        season_command(path, "run"), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(tmp_path / "season" / "season.sqlite") as conn:
        field = json.loads(
            conn.execute("SELECT field FROM events WHERE name = 'Final'").fetchone()[0]
        )
        audit = conn.execute("SELECT event, engines, reason FROM decisions").fetchall()
    assert field == ["C", "B"]
    assert audit == [("Qualifier", '["B", "A"]', "coin toss")]


BAD = DATA / "bad_seasons"


@pytest.mark.parametrize("source", sorted(BAD.glob("*.toml")), ids=lambda p: p.stem)
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_bad_season_file_is_one_line(source: Path, command: str, tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    path.write_text(source.read_text())
    expected = source.read_text().splitlines()[0].removeprefix("# expect: ")
    out = CliRunner().invoke(app, ["season", command, str(path)])
    assert out.exit_code == 2, out.output
    assert out.stderr == f"orchestrator: error: {path}: {expected}\n"
    assert not (tmp_path / "season").exists()


def test_a_director_holds_the_season_sets_a_field_and_updates_an_engine(tmp_path: Path) -> None:
    """A hold stops the season before its next event; a field set by hand replaces the one
    the draws give (here: one that would hold on a tie); an engine changed in the season file
    between events plays from the next event on, the finished one keeping what it had."""
    path = two_events(tmp_path / "season.toml")
    cli = CliRunner()
    assert cli.invoke(app, ["season", "hold", str(path), "--reason", "wait"]).exit_code == 0
    held = subprocess.run(
        season_command(path, "run"), capture_output=True, text=True, timeout=300, check=False
    )
    assert held.returncode == 3 and "held: wait" in held.stdout
    assert not (tmp_path / "season" / "Qualifier.sqlite").exists()
    status = cli.invoke(app, ["season", "status", str(path)])
    assert "held before its next event: wait" in status.stdout
    bad = cli.invoke(app, ["season", "field", str(path), "Final", "C", "Z", "--reason", "x"])
    assert bad.exit_code == 2 and "no [[engine]] is named 'Z'" in bad.stderr
    given = cli.invoke(app, ["season", "field", str(path), "Final", "C", "A", "--reason", "seed"])
    assert given.exit_code == 0, given.output
    assert cli.invoke(app, ["season", "release", str(path), "--reason", "go"]).exit_code == 0
    # the Qualifier, then a hold again before the Final
    first = subprocess.Popen(
        season_command(path, "run"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    db = tmp_path / "season" / "Qualifier.sqlite"
    deadline = time.monotonic() + 120
    while finished_count(db) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cli.invoke(app, ["season", "hold", str(path), "--reason", "update C"]).exit_code == 0
    out, _ = first.communicate(timeout=300)
    assert first.returncode == 3 and "held: update C" in out
    qualifier = (tmp_path / "season" / "Qualifier.toml").read_text()
    two_events(path, ("--depth", "7"))  # C's author sends an update
    refused = cli.invoke(
        app, ["season", "field", str(path), "Qualifier", "A", "B", "--reason", "x"]
    )
    assert refused.exit_code == 2 and "has started" in refused.stderr
    assert cli.invoke(app, ["season", "release", str(path), "--reason", "go"]).exit_code == 0
    done = subprocess.run(
        season_command(path, "run"), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    final = (tmp_path / "season" / "Final.toml").read_text()
    assert '"--depth", "7"' in final and '"--depth", "7"' not in qualifier
    assert (tmp_path / "season" / "Qualifier.toml").read_text() == qualifier
    with sqlite3.connect(tmp_path / "season" / "season.sqlite") as conn:
        field = conn.execute("SELECT field FROM events WHERE name = 'Final'").fetchone()[0]
        audit = conn.execute("SELECT kind, event, reason FROM controls ORDER BY id").fetchall()
    assert json.loads(field) == ["C", "A"]
    # named as TCEC names its events, and so is its PGN archive
    pgn = tmp_path / "season" / "Final-pgn" / "Controls_-_Final" / "Controls_-_Final.pgn"
    assert pgn.read_text().count('[Event "Controls - Final"]') == 2
    assert audit == [
        ("hold", None, "wait"), ("field", "Final", "seed"), ("release", None, "go"),
        ("hold", None, "update C"), ("release", None, "go"),
    ]  # fmt: skip


def test_the_season_schema() -> None:
    out = CliRunner().invoke(app, ["schema", "season"])
    assert out.exit_code == 0
    assert "SeasonEvent" in json.loads(out.stdout)["$defs"]


def test_season_run_on_an_address_in_use_is_one_line_and_makes_nothing(tmp_path: Path) -> None:
    import socket

    path = two_events(tmp_path / "season.toml")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [*season_command(path, "run"), "--http", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["season.toml"]
