"""The bad-command corpus (`tests/data/bad_commands.toml`): each refused command line is one
line on stderr and its exit code, and changes no file of the folder it runs in (every file's
bytes, compared before and after)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.store.season import SeasonStore
from tests.support.engines import QUICK_LEAGUE, scripted_table
from tests.support.paths import DATA

CASES: list[dict[str, Any]] = tomllib.loads((DATA / "bad_commands.toml").read_text())["case"]


SEASON = (
    '[season]\nname = "Corpus"\n\n'
    + "".join(scripted_table(n, "--by-opponent") for n in "ABCDE")
    + '[[event]]\nname = "League 2"\nfield = ["A", "B", "C", "D"]\npromote = 1\nrelegate = 1\n'
    + QUICK_LEAGUE
    + """
[[event]]
name = "Final"
field = ["E", { top = 1, of = "League 2" }]
relegate = 1
[event.tournament]
system = "match"
system_options = { games = 2, shared = true }
tc = "10+0.1"
"""
)


def _decided(folder: Path) -> None:
    """League 2 finished: 1 A, 2-3 B, 2-3 C, 4 D (the season's store as `season run` keeps
    it)."""
    (folder / "season.toml").write_text(SEASON)
    with SeasonStore(folder / "season" / "season.sqlite") as store:
        store.own("../season.toml")
        store.start("League 2", "ABCD", {n: {"name": n, "command": ["x"]} for n in "ABCD"}, {})
        store.finish("League 2", [("1", "A"), ("2-3", "B"), ("2-3", "C"), ("4", "D")])


def make(fixture: str, folder: Path) -> None:
    if fixture == "season":
        (folder / "season.toml").write_text(SEASON)
    elif fixture == "decided":
        _decided(folder)
    elif fixture == "second":
        _decided(folder)
        second = SEASON.replace('name = "Corpus"', 'name = "Corpus"\nfolder = "season"')
        (folder / "second.toml").write_text(second)
    elif fixture == "orphan":
        _decided(folder)
        renamed = SEASON.replace('"League 2"', '"League Two"')
        (folder / "season.toml").write_text(renamed)
    elif fixture == "console":
        (folder / "engines.toml").write_text(
            '[tournament]\nsystem = "match"\n\n'
            + scripted_table("New (v1.0) vs Old): 1-0 {White mates}")
            + scripted_table("Old")
        )
    elif fixture == "match":
        (folder / "m.toml").write_text("[tournament]\n# a director's own config\n")
    else:
        assert fixture == "empty", fixture


def snapshot(folder: Path) -> dict[str, str]:
    """Every file and folder under `folder`: its bytes' digest (a folder: "dir")."""
    out = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        out[key] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_the_corpus_covers_every_fixture() -> None:
    assert {c["fixture"] for c in CASES} == {
        "empty", "season", "decided", "second", "orphan", "console", "match",
    }  # fmt: skip
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c["args"])[:60] for c in CASES])
def test_a_refused_command_is_one_line_and_changes_nothing(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(case["fixture"], tmp_path)
    before = snapshot(tmp_path)
    args: list[str] = case["args"]
    if args[0] in ("run", "match"):  # a daemon's command: in a process of its own
        out = subprocess.run(
            [sys.executable, "-m", "orchestrator", *args], cwd=tmp_path, capture_output=True,
            text=True, timeout=120, check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )  # fmt: skip
        code, stderr = out.returncode, out.stderr
    else:
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(app, args)
        code, stderr = result.exit_code, result.stderr
    assert code == case.get("code", 2), stderr
    assert stderr.count("\n") == 1 and stderr.startswith("orchestrator: error: "), stderr
    assert case["expect"] in stderr, stderr
    assert "Traceback" not in stderr
    assert snapshot(tmp_path) == before
