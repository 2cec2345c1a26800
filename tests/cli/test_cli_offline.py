"""`orchestrator pair` and `orchestrator simulate` as a user runs them (docs/state-json.md,
docs/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from tests.support.paths import ROOT

GOOD: dict[str, Any] = {
    "format": "single",
    "players": [
        {"name": "A", "seed": 1},
        {"name": "B", "seed": 2},
        {"name": "C", "seed": 3},
        {"name": "D", "seed": 4},
    ],
    "rounds": [
        {
            "round": 1,
            "games": [
                {"white": "B", "black": "A", "result": "1-0"},
                {"white": "D", "black": "C", "result": "1/2-1/2"},
            ],
            "bye": None,
        }
    ],
}


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_pair_prints_the_next_round() -> None:
    out = run("pair", "-", stdin=json.dumps(GOOD))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "round": 2,
        "bye": None,
        "dropped_rounds": 0,
        "games": [{"white": "A", "black": "D"}, {"white": "C", "black": "B"}],
    }


def broken(change: str) -> str:
    data = json.loads(json.dumps(GOOD))
    games = data["rounds"][0]["games"]
    if change == "unknown name":
        games[0]["white"] = "Nobody"
    elif change == "two games":
        games[1]["white"] = "B"
    elif change == "duplicate name":
        data["players"][1]["name"] = "A"
    elif change == "duplicate seed":
        data["players"][1]["seed"] = 1
    elif change == "bad result":
        games[0]["result"] = "2-0"
    elif change == "malformed":
        return json.dumps(data)[:-3]
    elif change == "missing player":
        data["rounds"][0]["games"] = games[:1]
    elif change == "not an object":
        return "[1, 2]"
    elif change == "factor beyond the field":
        data.update(system="factored", system_options={"factor": 4})
    elif change == "quartiles of three":
        data.update(system="quartile", rounds=[], players=data["players"][:3])
    elif change == "system beside phases":
        data.update(system="swiss", phases=[{"rounds": 1, "system": "koth"}])
    elif change == "unknown key in a phase":
        data["phases"] = [{"rounds": 1, "system": "koth", "colour": 1}]
    elif change == "names equal once composed":
        data["players"][0]["name"] = "Caf\u00e9"
        data["players"][1]["name"] = "Cafe\u0301"
        data["rounds"] = []
    elif change == "a bidi override in a name":
        data["players"][0]["name"] = "Evil\u202egnp"
        data["rounds"] = []
    elif change == "stage_games of the wrong length":
        data.update(system="knockout", system_options={"stage_games": [2, 2, 2]}, rounds=[])
    elif change == "an odd number of games":
        data.update(system="knockout", system_options={"stage_games": [2, 3]}, rounds=[])
    elif change == "a match of four engines":
        data.update(system="match", system_options={"games": 10}, rounds=[])
    elif change == "a game that is not its match's next":
        data.update(system="knockout", rounds=[{"games": [games[0]]}])
    return json.dumps(data)


CASES = {
    "unknown name": "unknown player 'Nobody'",
    "two games": "'B' plays in two games",
    "duplicate name": "duplicate player name 'A'",
    "duplicate seed": "duplicate seed 1",
    "bad result": 'round 1 game 1 result: expected one of "0-1", "1-0", "1/2-1/2", not \'2-0\'',
    "malformed": "malformed JSON",
    "missing player": "has neither a game nor the BYE",
    "not an object": "must be a JSON object",
    "factor beyond the field": "factor 4 needs more than 4 players, and the field has 4",
    "quartiles of three": "quartiles need at least 4 players, not 3",
    "system beside phases": "give either a system or phases, not both (system 'swiss', the",
    "unknown key in a phase": "phases[0]: unknown key 'colour'",
    "names equal once composed": "duplicate player name 'Café'",
    "a bidi override in a name": "U+202E",
    "stage_games of the wrong length": "stage_games has 3 entries, but a knockout of 4 engines",
    "an odd number of games": "stage_games[1]: expected an even number >= 2, not 3",
    "a match of four engines": "a match is between two engines, not 4",
    "a game that is not its match's next": "round 1: ",
}


@pytest.mark.parametrize(("change", "message"), CASES.items())
def test_pair_rejects_invalid_state(change: str, message: str) -> None:
    out = run("pair", "-", stdin=broken(change))
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert message in out.stderr


def test_pair_missing_file(tmp_path: Path) -> None:
    out = run("pair", str(tmp_path / "nope.json"))
    assert out.returncode == 2 and out.stdout == ""
    assert "nope.json" in out.stderr and "Traceback" not in out.stderr


def test_simulate_state_is_paired_by_the_real_core() -> None:
    out = run(
        "simulate",
        "--players",
        "9",
        "--rounds",
        "11",
        "--format",
        "double",
        "--schedule",
        "pairs",
        "--seed",
        "3",
    )
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert len(state["rounds"]) == 11 and state["format"] == "double"
    for played in range(11):  # every stored round is what `pair` gives for its prefix
        prefix = dict(state, rounds=state["rounds"][:played])
        again = json.loads(CliRunner().invoke(app, ["pair", "-"], input=json.dumps(prefix)).stdout)
        stored = state["rounds"][played]
        assert again["games"] == [
            {"white": g["white"], "black": g["black"]} for g in stored["games"]
        ]
        assert again["bye"] == stored["bye"]
        assert again["dropped_rounds"] == stored["dropped_rounds"]


def test_simulate_is_deterministic_and_seeded() -> None:
    a = run("simulate", "-n", "12", "--rounds", "6", "--seed", "5").stdout
    assert a == run("simulate", "-n", "12", "--rounds", "6", "--seed", "5").stdout
    assert a != run("simulate", "-n", "12", "--rounds", "6", "--seed", "6").stdout


def test_simulate_table_reports_first_removal() -> None:
    out = run("simulate", "-n", "6", "--rounds", "8", "--format", "single", "--table")
    assert out.returncode == 0, out.stderr
    assert "first removal when pairing round" in out.stdout
    assert "Place" in out.stdout and "SB" in out.stdout


def test_simulate_from_config_and_errors(tmp_path: Path) -> None:
    out = run("simulate", "--from", "engines.toml", "--table")
    assert out.returncode == 0, out.stderr
    assert "Stockfish" in out.stdout
    assert run("simulate").returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[tournament]\nrounds = 'five'\n")
    out = run("simulate", "--from", str(bad))
    assert out.returncode == 2 and "rounds" in out.stderr and "Traceback" not in out.stderr


HOSTILE = [
    ("[" * 100_000, "nested too deeply"),
    (
        '{"players": [{"name": "A", "seed": ' + "9" * 5000 + '}, {"name": "B", "seed": 2}]}',
        "Integer value out of range",
    ),
    (
        '{"players": [{"name": "A", "seed": 1}, {"name": "B", "seed": 2}], "rounds": 5}',
        "rounds: expected a list, not 5",
    ),
]


@pytest.mark.parametrize(("text", "message"), HOSTILE)
def test_pair_refuses_hostile_input_in_one_line(text: str, message: str) -> None:
    out = run("pair", "-", stdin=text)
    assert out.returncode == 2 and message in out.stderr and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_pair_refuses_input_that_is_not_utf8(tmp_path: Path) -> None:
    state = b'{"players": [{"name": "A\xff", "seed": 1}, {"name": "B", "seed": 2}]}'
    path = tmp_path / "state.json"
    path.write_bytes(state)
    for args, stdin in ((["pair", str(path)], None), (["pair", "-"], state)):
        out = subprocess.run(
            [sys.executable, "-m", "orchestrator", *args], input=stdin, capture_output=True,
            check=False,
        )  # fmt: skip
        assert out.returncode == 2 and b"not UTF-8 text" in out.stderr and out.stdout == b""


def test_version_names_the_package_and_python_chess() -> None:
    done = run("--version")
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    assert words[0] == "orchestrator" and words[1][0].isdigit()
    assert "python-chess" in done.stdout
