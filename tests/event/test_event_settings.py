"""EventSettings: the stored form, and which changes a resume may accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from orchestrator.config.load import load
from orchestrator.config.model import EngineSettings, KibitzerConfig
from orchestrator.core.event.model import Options, Phase, Team
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.event.settings import FREE, LOCKED, EventSettings
from orchestrator.event.state import seeded_players
from tests.support.paths import ROOT

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
    assert old.engines["A"] == EngineSettings(
        command=("/usr/games/a",), protocol="uci", options={"Hash": 16}
    )
    new_keys = {
        "concurrency_cap": 64,
        "strikes": 0,
        "withdrawn_games": "forfeit",
        "live_dir": None,
        "pgn_comments": "cutechess",
        "rating_interval": 20,
        "rating_anchor": None,
        "system_options": {},
        "phases": [],
        "teams": [],
        "seeding": "explicit",
        "groups": None,
        "executor": "local",
        "tls_ca_file": None,
        "tls_cert": None,
        "tls_key": None,
        "openings": None,  # no suite: stored as null now, as "" before
        "variant": "standard",
        "ratings": {},
        "kibitzers": [],
        "ponder": False,
        "affinity": False,
        "cpus": None,
        "opening_start": 1,
        "opening_plies": None,
        "book": None,
        "book_depth": 8,
        "wait_ms": 0,
        "opening_policy": "pair",
    }
    nothing_lost = STORED_BY_0_1 | new_keys
    nothing_lost["adjudication"] = STORED_BY_0_1["adjudication"] | {
        "tablebases": None,
        "resign": None,
        "tb_adjudicate": "both",
        "tb_ignore50": False,
    }
    nothing_lost["engines"] = {
        name: engine
        | {"ponder": None, "tc": None, "timemargin": None, "nodes": None, "depth": None}
        | {"init": [], "white_pov": False, "book": None, "book_depth": 16}
        for name, engine in STORED_BY_0_1["engines"].items()
    }
    assert json.loads(old.to_json()) == nothing_lost  # nothing renamed or lost
    newer = dict(STORED_BY_0_1, some_future_key=1)
    assert EventSettings.from_json(json.dumps(newer)) == old


CHANGES: list[tuple[str, Any, str]] = [
    ("players", ("X", "Y"), "locked"),
    ("system", "round-robin", "locked"),
    ("system_options", Options({"repeats": 1}), "locked"),
    ("phases", (Phase(2, "swiss"), Phase(1, "koth")), "locked"),
    ("teams", (Team("T", ("A", "B")),), "locked"),
    ("format", "single", "locked"),
    ("schedule", "pairs", "locked"),
    ("cycles", 2, "locked"),
    ("variant", "chess960", "locked"),
    ("rounds", 9, "forced"),
    ("tc", TimeControl.parse("10+0.1"), "forced"),
    ("timemargin", 500, "forced"),
    ("openings", Path("book.pgn"), "forced"),
    ("opening_order", "sequential", "forced"),
    ("opening_start", 5, "forced"),
    ("opening_plies", 4, "forced"),
    ("book", Path("book.bin"), "forced"),
    ("book_depth", 12, "forced"),
    ("random_seed", 7, "forced"),
    ("tiebreaks", ("wins",), "forced"),
    ("adjudication", Adjudication(max_moves=100), "forced"),
    ("engines", {"A": EngineSettings(command=("/other",))}, "forced"),
    ("name", "Renamed", "forced"),
    ("strikes", 3, "forced"),
    ("withdrawn_games", "cancel", "forced"),
    ("ponder", True, "forced"),
    ("opening_policy", "round", "forced"),
    ("concurrency", 4, "free"),
    ("concurrency_cap", 128, "free"),
    ("wait_ms", 500, "free"),
    ("database", Path("other.sqlite"), "free"),
    ("pgn_dir", Path("elsewhere"), "free"),
    ("site", "Mars", "free"),
    ("live_dir", Path("live"), "free"),
    ("pgn_comments", "tcec", "free"),
    ("rating_interval", 5, "free"),
    ("rating_anchor", "A", "free"),
    ("executor", "processes", "free"),
    ("tls_ca_file", Path("ca.pem"), "free"),
    ("tls_cert", Path("cert.pem"), "free"),
    ("tls_key", Path("key.pem"), "free"),
    ("seeding", "group", "free"),
    ("groups", 3, "free"),
    ("ratings", {"A": 3300.0}, "free"),
    ("kibitzers", (KibitzerConfig(name="K", command=("/k",)),), "free"),
    ("affinity", True, "free"),
    ("cpus", "0-3", "free"),
]
#: the stored keys that are not the field's own name
FIELD = {"timemargin": "timemargin_ms"}


@pytest.mark.parametrize(("key", "value", "kind"), CHANGES)
def test_each_change_is_locked_forced_or_free(key: str, value: object, kind: str) -> None:
    stored = bundled()
    if key == "system_options":  # options the stored system takes
        stored = msgspec.structs.replace(stored, system="koth")
    if key == "cpus":  # a pool of CPUs is for pinned cores
        stored = msgspec.structs.replace(stored, affinity=True)
    if key.startswith("tls_"):  # certificates are for a tls:// executor, all three
        files = {k: Path(f"{k}.old") for k in ("tls_ca_file", "tls_cert", "tls_key")}
        stored = msgspec.structs.replace(stored, executor="tls://sched:8786", **files)
    current = msgspec.structs.replace(stored, **{FIELD.get(key, key): value})
    locked, forced = stored.changes(current)
    assert (locked, forced) == {
        "locked": ([key], []),
        "forced": ([], [key]),
        "free": ([], []),
    }[kind]


def test_every_setting_is_classified() -> None:
    keys = {f.encode_name for f in msgspec.structs.fields(EventSettings)}
    assert {key for key, _, _ in CHANGES} == keys
    assert set(LOCKED) | set(FREE) <= keys


def test_no_change_no_difference() -> None:
    assert bundled().changes(bundled()) == ([], [])
