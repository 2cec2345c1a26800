"""A season that survives what a real season does to it: engines renamed for a new version
between events (TCEC Season 20's "Seer 1.2.1_dev" became "Seer 1.2.1_20201210"), a program
removed, a running event's time control changed, a director's decisions shown where the
season says who moves; each event a config in memory, its files outputs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.store.season import SeasonStore
from tests.support.daemon import finished_count
from tests.support.engines import QUICK_LEAGUE
from tests.support.paths import SCRIPTED

ENGINES = "ABCDE"
QUALIFIER = (
    '[[event]]\nname = "Qualifier"\nfield = ["A", "B", "C", "D"]\npromote = 1\nrelegate = 1\n'
    + QUICK_LEAGUE
)
FINAL = '\n[[event]]\nname = "Final"\nfield = [{FIELD}]\n' + QUICK_LEAGUE


def programs(folder: Path, names: str = ENGINES) -> dict[str, Path]:
    """An engine program for each name: a script that runs the scripted engine (the name
    it plays under is its table's; the program's own name stays the letter)."""
    (folder / "bin").mkdir(exist_ok=True)
    out = {}
    for name in names:
        path = folder / "bin" / name
        path.write_text(
            f'#!/bin/sh\nexec {sys.executable} {SCRIPTED} --name {name} --by-opponent "$@"\n'
        )
        path.chmod(0o755)
        out[name] = path
    return out


def season_text(
    folder: Path, final: str | None = None, tables: dict[str, str] | None = None
) -> str:
    """The season file: an [[engine]] per program (`tables` replaces one's lines), the
    Qualifier, and a Final of `final` when given."""
    engines = ""
    for name, path in programs(folder).items():
        table = (tables or {}).get(name, f'name = "{name}"\ncommand = {json.dumps(str(path))}')
        engines += f"[[engine]]\n{table}\n\n"
    text = f'[season]\nname = "Hardened"\n\n{engines}{QUALIFIER}'
    return text + (FINAL.replace("{FIELD}", final) if final else "")


def season(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "season", *args], capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip


def cli(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(app, ["season", *args])
    return out.exit_code, out.stdout, out.stderr


def stored_events(folder: Path) -> dict[str, tuple[list[str], list[list[str]] | None]]:
    with sqlite3.connect(folder / "season" / "season.sqlite") as conn:
        return {
            name: (json.loads(field), None if places is None else json.loads(places))
            for name, field, places in conn.execute("SELECT name, field, places FROM events")
        }


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip


def test_engines_renamed_for_new_versions_play_on_and_keep_their_places(tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    path.write_text(season_text(tmp_path))
    first = season("run", str(path))
    assert first.returncode == 0, first.stderr[-3000:]
    qualifier_toml = (tmp_path / "season" / "Qualifier.toml").read_text()
    assert cli("hold", str(path), "--reason", "new versions")[0] == 0

    # D's author sends a new version, named anew; the next event draws the Qualifier's top 4
    programs_ = programs(tmp_path)
    renamed_without_formerly = season_text(
        tmp_path, '"E", { top = 4, of = "Qualifier" }',
        {"D": f'name = "Dee"\ncommand = [{json.dumps(str(programs_["D"]))}, "--depth", "7"]'},
    ).replace('field = ["A", "B", "C", "D"]', 'field = ["A", "B", "C", "Dee"]')  # fmt: skip
    path.write_text(renamed_without_formerly)
    before = snapshot(tmp_path)
    code, _, err = cli("check", str(path))
    assert code == 2 and 'its field brings "D", whom no [[engine]] names now' in err, err
    assert 'formerly = ["D"]' in err
    assert cli("release", str(path), "--reason", "go")[0] == 0
    refused = season("run", str(path))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert '[[event]] "Final": its field brings "D"' in refused.stderr
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("season/season.sqlite")} == {
        k: v for k, v in before.items() if not k.startswith("season/season.sqlite")
    }
    assert "Final" not in stored_events(tmp_path)  # nothing of the Final was stored

    # with `formerly`, the renamed engine keeps its places: the Final plays
    dee = (
        f'name = "Dee"\nformerly = ["D"]\n'
        f'command = [{json.dumps(str(programs_["D"]))}, "--depth", "7"]'
    )
    path.write_text(season_text(tmp_path, '"E", { top = 4, of = "Qualifier" }', {"D": dee}))
    assert cli("check", str(path))[0] == 0
    done = season("run", str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    events = stored_events(tmp_path)
    qualifier_field, qualifier_places = events["Qualifier"]
    final_field, _ = events["Final"]
    assert qualifier_field == ["A", "B", "C", "D"]  # as it was played
    assert qualifier_places is not None and "D" in [n for _, n in qualifier_places]
    assert sorted(final_field) == ["A", "B", "C", "Dee", "E"]
    assert (tmp_path / "season" / "Qualifier.toml").read_text() == qualifier_toml
    final_toml = (tmp_path / "season" / "Final.toml").read_text()
    assert '"--depth", "7"' in final_toml and "formerly" not in final_toml
    with sqlite3.connect(tmp_path / "season" / "Final.sqlite") as conn:
        players = {
            n for (n,) in conn.execute("SELECT white FROM games UNION SELECT black FROM games")
        }
    assert players == {"A", "B", "C", "Dee", "E"}
    code, out, _ = cli("status", str(path))
    assert code == 0 and "Qualifier: finished; field A, B, C, D" in out
    # the next season names the engine as it is now
    code, _, err = cli("next", str(path), "-o", str(tmp_path / "next.toml"))
    assert code == 0, err
    following = tomllib.loads((tmp_path / "next.toml").read_text())
    assert following["season"]["name"] == "Hardened"  # no number to count up
    qualifier = next(e for e in following["event"] if e["name"] == "Qualifier")
    assert "D" not in qualifier["field"] and all("formerly" not in e for e in following["engine"])


def test_a_removed_program_stops_only_what_needs_it(tmp_path: Path) -> None:
    """The program of an engine that played only the finished Qualifier is removed: reading
    the season and every director's command go on, `check` and `run` too; removing the
    program of an engine still to play is named by `check` and refused by `run`, which
    changes nothing."""
    path = tmp_path / "season.toml"
    path.write_text(season_text(tmp_path, '"E", { top = 1, of = "Qualifier" }'))
    (tmp_path / "season.toml").write_text(
        path.read_text() + '\n[[event]]\nname = "Later"\nfield = ["A", "E"]\n'
        '[event.tournament]\nsystem = "match"\nsystem_options = { games = 2, shared = true }\n'
    )
    # the Qualifier alone: held once it has begun (a hold is checked before each event)
    runner = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "season", "run", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    db = tmp_path / "season" / "Qualifier.sqlite"
    deadline = time.monotonic() + 120
    while finished_count(db) < 1 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    assert cli("hold", str(path), "--reason", "programs")[0] == 0
    assert runner.wait(timeout=300) == 3
    places = stored_events(tmp_path)["Qualifier"][1]
    assert places is not None
    winner = places[0][1]  # plays the Final; A plays Later: neither loses its program
    gone = next(n for _, n in reversed(places) if n not in (winner, "A"))
    (tmp_path / "bin" / gone).unlink()

    assert cli("status", str(path))[0] == 0
    code, _, err = cli("check", str(path))
    assert code == 0, err
    assert cli("field", str(path), "Later", "A", "E", "--reason", "as drawn")[0] == 0
    assert cli("hold", str(path), "--reason", "still")[0] == 0
    code, _, err = cli("next", str(path), "-o", str(tmp_path / "next.toml"))
    assert code == 0, err

    import asyncio

    from orchestrator.config.season import load_season
    from orchestrator.web.season import make_season_app

    async def page() -> int:
        async with TestClient(TestServer(make_season_app(load_season(path)))) as client:
            return (await client.get("/")).status

    assert asyncio.run(page()) == 200

    # an engine still to play loses its program: named, refused, nothing changed
    (tmp_path / "bin" / "E").unlink()
    code, _, err = cli("check", str(path))
    assert code == 2 and '[[event]] "Final": [[engine]] "E" command:' in err, err
    assert cli("release", str(path), "--reason", "go")[0] == 0
    before = snapshot(tmp_path)
    refused = season("run", str(path))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert '[[event]] "Final": [[engine]] "E" command:' in refused.stderr
    assert snapshot(tmp_path) == before
    # the program back: the season goes on
    programs(tmp_path, "E")
    done = season("run", str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(stored_events(tmp_path)) == {"Qualifier", "Final", "Later"}


def test_a_running_event_s_changed_time_control_resumes_with_force(tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    path.write_text(season_text(tmp_path))
    runner = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "season", "run", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    db = tmp_path / "season" / "Qualifier.sqlite"
    deadline = time.monotonic() + 120
    while finished_count(db) < 1 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait()
    time.sleep(0.3)  # its engines follow it (their parent-death signal)
    path.write_text(path.read_text().replace('tc = "10+0.1"', 'tc = "12+0.1"'))
    refused = season("run", str(path))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert f'{path}: [[event]] "Qualifier": tc differ' in refused.stderr
    assert "resume with --force" in refused.stderr
    done = season("run", str(path), "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    assert stored_events(tmp_path)["Qualifier"][1] is not None


def test_status_shows_who_moves_as_a_director_decided(tmp_path: Path) -> None:
    """After `decide D C B A` the status showed "up: A, B" while D and C went up."""
    text = season_text(tmp_path).replace("promote = 1", "promote = 2")
    path = tmp_path / "season.toml"
    path.write_text(text)
    with SeasonStore(tmp_path / "season" / "season.sqlite") as store:
        store.own("../season.toml")
        store.start("Qualifier", "ABCD", {n: {"name": n, "command": ["x"]} for n in "ABCD"}, {})
        store.finish("Qualifier", [("1-4", n) for n in "ABCD"])
    code, out, _ = cli("status", str(path))
    assert code == 0 and "undecided: top 2 of Qualifier cuts through place 1-4" in out
    assert "up:" not in out
    assert cli("decide", str(path), "Qualifier", "D", "C", "B", "A", "--reason", "lots")[0] == 0
    code, out, _ = cli("status", str(path))
    assert "up: D, C" in out and "down: A" in out and "undecided" not in out
    assert cli("hold", str(path), "--reason", "wait")[0] == 0
    assert "(held before its next event: wait)" in cli("status", str(path))[1]
