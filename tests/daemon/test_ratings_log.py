"""The `ratings` log line: every `rating_interval` finished games, every engine's fitted Elo,
the same as the standings show at that moment."""

from __future__ import annotations

from pathlib import Path

from tests.support.daemon import event_config, run_in_process


async def test_a_ratings_line_every_rating_interval_games(tmp_path: Path) -> None:
    config = event_config(tmp_path, rounds=3, extra="rating_interval = 4")
    logs = await run_in_process(config)
    finished = sum(1 for entry in logs if entry["event"] == "game_finished")
    lines = [entry for entry in logs if entry["event"] == "ratings"]
    assert finished == 30
    # one line each time the finished games pass a multiple of 4 (two games that end
    # together may pass it together)
    assert [line["games"] // 4 for line in lines] == list(range(1, finished // 4 + 1))
    last = lines[-1]["ratings"]
    assert len(last) == 10 and {r["engine"] for r in last} == {f"E{i:02d}" for i in range(1, 11)}
    rated = [r for r in last if r["elo"] is not None]
    assert [r["elo"] for r in rated] == sorted((r["elo"] for r in rated), reverse=True)
    assert all(r["low"] < r["elo"] < r["high"] for r in rated)
    assert abs(sum(r["elo"] for r in rated)) < 1.0  # the field's mean at 0


async def test_no_ratings_line_with_rating_interval_0(tmp_path: Path) -> None:
    logs = await run_in_process(event_config(tmp_path, rounds=1, extra="rating_interval = 0"))
    assert not [entry for entry in logs if entry["event"] == "ratings"]
