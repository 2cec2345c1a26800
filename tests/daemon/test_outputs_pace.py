"""The daemon's pace (`daemon/loop.py`): the standings files at a round's end are written at
most every `STANDINGS_EVERY_S` (a round that ends sooner has them once the time is up), and
`wait_ms` rests each place between its games."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import datetime
from pathlib import Path

from orchestrator.daemon.loop import STANDINGS_EVERY_S
from tests.support.daemon import event_config, run_in_process
from tests.support.fake_executor import FakeExecutor


def test_a_quick_rounds_standings_come_once_the_time_is_up(tmp_path: Path) -> None:
    """Round 1's four games end at once, right after the start's standings: its own write
    waits.  Round 2's first game then takes longer than `STANDINGS_EVERY_S`: before it
    ends, standings.json already shows all of round 1 (4 points); at the end, all 12."""
    config = event_config(tmp_path, players=["E1", "E2", "E3", "E4"], rounds=3, concurrency=1)
    standings = tmp_path / "pgn" / "Daemon_Test" / "standings.json"
    seen: list[float] = []

    async def slow_first_game_of_round_2(played: int) -> None:
        if played == 4:
            await asyncio.sleep(STANDINGS_EVERY_S + 1.5)
            data = json.loads(standings.read_text())
            seen.append(sum(line["score"] for line in data["standings"]))

    executor = FakeExecutor(before_result=slow_first_game_of_round_2)
    asyncio.run(run_in_process(config, executor))
    assert seen == [4.0]
    final = json.loads(standings.read_text())
    assert sum(line["score"] for line in final["standings"]) == 12.0


def test_wait_ms_pauses_each_place_between_its_games(tmp_path: Path) -> None:
    """`wait_ms = 300`, two games at once: every game starts at least 300 ms after the game
    that held its place ended (cutechess's `-wait`)."""
    config = event_config(
        tmp_path, players=["E1", "E2", "E3", "E4"], rounds=2, concurrency=2, extra="wait_ms = 300"
    )
    asyncio.run(run_in_process(config, FakeExecutor()))
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        rows = conn.execute("SELECT started_at, ended_at FROM games ORDER BY started_at").fetchall()
    times = [(datetime.fromisoformat(s), datetime.fromisoformat(e)) for s, e in rows]
    assert len(times) == 8
    ends: list[datetime] = []  # when each of the two places last freed
    for start, end in times:
        if len(ends) == 2:
            freed = min(ends)
            assert (start - freed).total_seconds() >= 0.3, (start, freed)
            ends.remove(freed)
        ends.append(end)
