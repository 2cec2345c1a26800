"""`standings --columns`: cutechess-cli's result table, counted from the stored games."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.stats.elo import trinomial
from orchestrator.event.columns import FORMATS, GROUPS, HEADS, tokens
from tests.support.daemon import run_daemon
from tests.support.engines import scripted_table


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A double round robin of three scripted engines: A wins by its scores, B crashes at
    its second move of every game, C makes an illegal third move."""
    folder = tmp_path_factory.mktemp("columns")
    config = folder / "event.toml"
    config.write_text(
        """[tournament]
name = "Columns"
system = "round-robin"
format = "double"
tc = "10+0.1"
database = "event.sqlite"
pgn_dir = "pgn"
[adjudication]
win = { plies = 8, score = 10.0 }
draw = false
max_moves = 20

"""
        + scripted_table("A", "--score", "1500")
        + scripted_table("B", "--crash-at", "2")
        + scripted_table("C", "--illegal-at", "3", "--score", "-1500")
    )
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr[-2000:]
    return folder / "event.sqlite"


def columns(db: Path, spec: str, *more: str) -> CliRunner:
    result = CliRunner().invoke(app, ["standings", "--db", str(db), "--columns", spec, *more])
    assert result.exit_code == 0, result.output
    return result


def test_the_counts_are_the_database_s(event: Path) -> None:
    """Each engine's wins, draws and losses with each colour, its points, and the losses by
    its own faults equal what the games table holds; Elo, its error and LOS are the
    trinomial estimate of its results, as cutechess's are."""
    rows = json.loads(columns(event, "wide3", "--json").stdout)
    assert [r["Rank"] for r in rows] == [1, 2, 3]
    with sqlite3.connect(event) as conn:
        games = conn.execute("SELECT white, black, result, fault FROM games").fetchall()
    assert len(games) == 6
    for row in rows:
        name = row["Name"]
        expect = {"wW": 0, "wD": 0, "wL": 0, "bW": 0, "bD": 0, "bL": 0, "Discon": 0, "Illegal": 0}
        for white, black, result, fault in games:
            if name not in (white, black):
                continue
            side = "w" if name == white else "b"
            won = result == ("1-0" if side == "w" else "0-1")
            expect[side + ("W" if won else "D" if result == "1/2-1/2" else "L")] += 1
            at_fault = json.loads(fault)["engine"] == name if fault else False
            kind = json.loads(fault)["kind"] if fault else ""
            if at_fault and kind in ("crash", "startup"):
                expect["Discon"] += 1
            if at_fault and kind in ("illegal_move", "garbage"):
                expect["Illegal"] += 1
        assert {k: row[k] for k in expect} == expect, name
        wins, draws, losses = row["wW"] + row["bW"], row["wD"] + row["bD"], row["wL"] + row["bL"]
        assert (row["W"], row["D"], row["L"], row["Games"]) == (wins, draws, losses, 4)
        assert row["Points"] == wins + draws / 2 and row["Score"] == row["Points"] / 4
        assert row["Elo"] == trinomial(wins, draws, losses)["elo"]
        assert row["TC"] == "10+0.1"
    by_name = {r["Name"]: r for r in rows}
    assert by_name["B"]["Discon"] == 4 and by_name["C"]["Illegal"] >= 1
    wins = {r["Name"]: r for r in json.loads(columns(event, "Name,OtherW,RegulW", "--json").stdout)}
    assert wins["A"]["OtherW"] + wins["A"]["RegulW"] == by_name["A"]["W"]
    assert wins["A"]["OtherW"] >= 3  # its opponents' faults: B's crashes and C's illegal move


def test_the_text_has_cutechess_s_heads(event: Path) -> None:
    lines = columns(event, "default").stdout.splitlines()
    assert lines[0].split() == ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"]
    assert [line.split()[1] for line in lines[1:]] == ["A", "C", "B"]
    assert columns(event, "Name,bW,Terminations").stdout.splitlines()[0].split() == [
        "Name", "BWins", "Time", "Illegal", "Discon", "Stall", "WrClaim",
    ]  # fmt: skip


def test_every_named_format_and_group_is_made_of_tokens() -> None:
    for name in [*FORMATS, *GROUPS]:
        assert all(token in HEADS for token in tokens(name))


@pytest.mark.parametrize("spec", ["Wins", "Rank,,Name", "wide4", ""])
def test_an_unknown_column_is_one_line(spec: str) -> None:
    result = CliRunner().invoke(app, ["standings", "--db", "nowhere.sqlite", "--columns", spec])
    assert result.exit_code == 2
    assert result.stderr.startswith("orchestrator: error: --columns: unknown column ")
    assert len(result.stderr.strip().splitlines()) == 1
