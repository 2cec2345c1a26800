"""The tally of how games ended (`core/game/endings.py`): played by the daemon with scripted
engines that misbehave in every way a game can be lost by a fault, it equals the database's
count of each ending, for the event and for each engine, in `standings --json`, the
standings text, `status` and the web view."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

from orchestrator.web import pages
from tests.support.daemon import cli, event_config, run_daemon

#: each engine's misbehaviour (E01 plays well)
FAULTS = {
    "E02": ["--crash-at", "3"],
    "E03": ["--illegal-at", "2"],
    "E04": ["--garbage-at", "4"],
    "E05": ["--overstep-at", "2", "--overstep-ms", "400"],
    "E06": ["--stall-at", "3"],
}
#: the fault kinds of the database as endings (the PGN's own words for the rest)
BY_KIND = {
    "crash": "disconnect",
    "startup": "disconnect",
    "illegal_move": "illegal_move",
    "garbage": "illegal_move",
    "time_forfeit": "time_loss",
    "stall": "stall",
}


def test_the_tally_of_endings_equals_the_database(tmp_path: Path) -> None:
    players = ["E01", *FAULTS, "E07", "E08"]
    config = event_config(tmp_path, players=players, rounds=3, legs=False, extra="timemargin = 100")
    text = config.read_text().replace('tc = "60+1"', 'tc = "1+0.1"')
    for name, args in FAULTS.items():
        flags = ", ".join(json.dumps(a) for a in args)
        text = text.replace(f'"--name", "{name}",', f'"--name", "{name}", {flags},')
    config.write_text(text)
    done = run_daemon(config)
    assert done.returncode == 0, done.stderr[-2000:]

    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        rows = db.execute("SELECT fault FROM games WHERE status = 'finished'").fetchall()
    expected: Counter[str] = Counter()
    by_engine: dict[str, Counter[str]] = {name: Counter() for name in players}
    for (fault,) in rows:
        if fault is not None:
            found = json.loads(fault)
            ending = BY_KIND[found["kind"]]
            by_engine[found["engine"]][ending] += 1
            expected[ending] += 1
    data = cli("standings", "--db", str(tmp_path / "event.sqlite"), "--json")
    event = data["endings"]["event"]
    assert event["games"] == len(rows) == 24  # 3 double rounds of 4 pairs
    for ending in ("disconnect", "illegal_move", "time_loss", "stall"):
        assert event[ending] == expected[ending], ending
    # each fault counts against its own engine alone
    for name, counts in data["endings"]["engines"].items():
        for ending in ("disconnect", "illegal_move", "time_loss", "stall"):
            assert counts[ending] == by_engine[name][ending], (name, ending)
    assert by_engine["E02"]["disconnect"] and by_engine["E05"]["time_loss"]
    assert by_engine["E06"]["stall"] and by_engine["E03"]["illegal_move"]
    assert by_engine["E04"]["illegal_move"]
    # E05 slept its whole clock and 400 ms more: the overstep is about that much
    assert 300 <= data["endings"]["engines"]["E05"]["overstep_ms_max"] < 2000
    assert sum(v for k, v in event.items() if k not in ("games", "overstep_ms_max")) == 24
    # the daemon writes its standings from a brief read of the event (`Store.rounds`): the
    # same as a whole one
    (written,) = tmp_path.glob("**/standings.json")
    assert json.loads(written.read_text()) == data

    text = cli("standings", "--db", str(tmp_path / "event.sqlite"))
    table = text[text.index("Endings") :]
    assert "Disconn." in table and "Stall" in table and "Overstep ms" in table
    all_row = next(line for line in table.splitlines() if line.startswith("All"))
    assert all_row.split()[1] == "24"
    status = cli("status", "--db", str(tmp_path / "event.sqlite"))
    assert f"{expected['disconnect']} disconnect" in status
    assert f"{expected['stall']} stall" in status
    assert "ms over)" in status
    page = pages.standings(data)
    assert "<table id='endings'>" in page and "<td>E05</td>" in page
