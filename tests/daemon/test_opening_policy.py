"""`opening_policy = "round"`: every game of a round starts from the round's opening."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.daemon import BOOK, event_config, run_in_process
from tests.support.fake_executor import FakeExecutor


@pytest.mark.parametrize("policy", ["round", "pair"])
def test_each_round_or_each_pair_takes_the_next_opening(tmp_path: Path, policy: str) -> None:
    """Six engines, three double rounds of three pairs, a suite of two openings in order:
    by round, each round's six games share one (Italian, Queen's Gambit, Italian); by pair,
    each round's pairs take them in turn."""
    (tmp_path / "book.pgn").write_text(BOOK)
    extra = f'openings = "book.pgn"\nopening_order = "sequential"\nopening_policy = "{policy}"'
    config = event_config(
        tmp_path, players=[f"E{i}" for i in range(1, 7)], rounds=3, groups=1, extra=extra
    )
    asyncio.run(run_in_process(config, FakeExecutor()))
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        rows = conn.execute("SELECT round, pair, opening FROM games ORDER BY id").fetchall()
    by_round: dict[int, set[str]] = {}
    by_pair: dict[int, set[str]] = {}
    for rnd, pair, opening in rows:
        name = json.loads(opening)["name"]
        by_round.setdefault(rnd, set()).add(name)
        by_pair.setdefault(pair, set()).add(name)
    assert len(rows) == 18 and all(len(names) == 1 for names in by_pair.values())
    if policy == "round":
        assert [by_round[r] for r in (1, 2, 3)] == [
            {"Italian Game"}, {"Queen's Gambit"}, {"Italian Game"}
        ]  # fmt: skip
    else:
        assert all(len(names) == 2 for names in by_round.values())
