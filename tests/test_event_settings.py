"""EventSettings: the stored form, and which changes a resume may accept."""

from __future__ import annotations

import dataclasses
import json

import pytest

from orchestrator.config.load import load
from orchestrator.event.settings import FREE, LOCKED, EngineSettings, EventSettings
from orchestrator.event.state import seeded_players
from tests.conftest import ROOT

#: the settings of the bundled event as the first release stored them (schema 1)
STORED_BY_0_1 = {
    "adjudication": {
        "draw": {"from_move": 35, "plies": 10, "score": 0.15},
        "max_moves": 200,
        "tablebases": "",
        "tb_pieces": 6,
        "win": {"plies": 10, "score": 10.0},
    },
    "concurrency": 2,
    "cycles": 1,
    "database": "tournament.sqlite",
    "engines": {"A": {"command": ["/usr/games/a"], "options": {"Hash": 16}, "protocol": "uci"}},
    "format": "double",
    "name": "Old",
    "opening_order": "random",
    "openings": "",
    "pgn_dir": "pgn_out",
    "players": ["A", "B"],
    "random_seed": 2026,
    "rounds": 3,
    "schedule": "legs",
    "site": "localhost",
    "system": "swiss",
    "tc": "5+0.05",
    "tiebreaks": ["sb", "wins", "direct"],
    "timemargin": 100,
}


def bundled() -> EventSettings:
    config = load(ROOT / "engines.toml")
    return EventSettings.of(config, tuple(p.name for p in seeded_players(config)))


def test_the_stored_form_round_trips_and_keeps_the_old_keys() -> None:
    settings = bundled()
    assert EventSettings.from_json(settings.to_json()) == settings
    old = EventSettings.from_json(json.dumps(STORED_BY_0_1))
    assert old.engines["A"] == EngineSettings(("/usr/games/a",), "uci", {"Hash": 16})
    new_keys = {
        "strikes": 0,
        "withdrawn_games": "forfeit",
        "live_dir": "",
        "pgn_comments": "cutechess",
        "system_options": {},
        "phases": [],
        "teams": [],
    }
    assert json.loads(old.to_json()) == STORED_BY_0_1 | new_keys  # nothing renamed or lost
    newer = dict(STORED_BY_0_1, some_future_key=1)
    assert EventSettings.from_json(json.dumps(newer)) == old


CHANGES = [
    ("players", ("X", "Y"), "locked"),
    ("system", "round-robin", "locked"),
    ("system_options", {"repeats": 1}, "locked"),
    ("phases", ({"rounds": 2, "system": "koth", "system_options": {}},), "locked"),
    ("teams", ({"name": "T", "players": ["A", "B"]},), "locked"),
    ("format", "single", "locked"),
    ("schedule", "pairs", "locked"),
    ("cycles", 2, "locked"),
    ("rounds", 9, "forced"),
    ("tc", "10+0.1", "forced"),
    ("timemargin", 500, "forced"),
    ("openings", "book.pgn", "forced"),
    ("opening_order", "sequential", "forced"),
    ("random_seed", 7, "forced"),
    ("tiebreaks", ("wins",), "forced"),
    ("adjudication", {"max_moves": 100}, "forced"),
    ("engines", {"A": EngineSettings(("/other",))}, "forced"),
    ("name", "Renamed", "forced"),
    ("strikes", 3, "forced"),
    ("withdrawn_games", "cancel", "forced"),
    ("concurrency", 4, "free"),
    ("database", "other.sqlite", "free"),
    ("pgn_dir", "elsewhere", "free"),
    ("site", "Mars", "free"),
    ("live_dir", "live", "free"),
    ("pgn_comments", "tcec", "free"),
]


@pytest.mark.parametrize(("key", "value", "kind"), CHANGES)
def test_each_change_is_locked_forced_or_free(key: str, value: object, kind: str) -> None:
    stored = bundled()
    current = dataclasses.replace(stored, **{key: value})
    locked, forced = stored.changes(current)
    assert (locked, forced) == {
        "locked": ([key], []),
        "forced": ([], [key]),
        "free": ([], []),
    }[kind]


def test_every_setting_is_classified() -> None:
    keys = {f.name for f in dataclasses.fields(EventSettings)}
    assert {key for key, _, _ in CHANGES} == keys
    assert set(LOCKED) | set(FREE) <= keys


def test_no_change_no_difference() -> None:
    assert bundled().changes(bundled()) == ([], [])
