"""A season's own store (`season.sqlite` in its folder): each event's state, its field as
fixed when it started with the final places that chose it, its final places once over, and
the directors' decisions of ties.  Every change is one committed transaction: a season
killed at any moment resumes where it stopped.  (The events' games are in their own
databases, beside it.)"""

from __future__ import annotations

import getpass
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.core.season import Places

__all__ = ["EventRow", "SeasonStore"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('running', 'finished')),
    field TEXT NOT NULL,          -- JSON: the engines, in seed order
    engines TEXT NOT NULL,        -- JSON: their [[engine]] tables as they were when it started
    chosen_by TEXT NOT NULL,      -- JSON: the final places of the events that fed it
    places TEXT,                  -- JSON: its own final places, once finished
    started_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE TABLE IF NOT EXISTS controls (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('hold', 'release', 'field')),
    event TEXT,                   -- field: the event whose field a director set
    engines TEXT,                 -- field: JSON, the engines in seed order
    user TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,         -- 'season_file': the season file it belongs to, from
    value TEXT NOT NULL           -- its folder ("../season.toml")
);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY,
    event TEXT NOT NULL,          -- the event whose tie it orders
    engines TEXT NOT NULL,        -- JSON: the tied engines, best first
    user TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class EventRow:
    name: str
    state: str
    field: tuple[str, ...]
    engines: dict[str, dict[str, Any]]
    chosen_by: dict[str, list[tuple[str, str]]]
    places: list[tuple[str, str]] | None


class SeasonStore:
    """The season's rows, read and written in transactions."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> SeasonStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def events(self) -> dict[str, EventRow]:
        rows = self.conn.execute(
            "SELECT name, state, field, engines, chosen_by, places FROM events"
        ).fetchall()
        return {
            name: EventRow(
                name,
                state,
                tuple(json.loads(field)),
                json.loads(engines),
                {k: [tuple(p) for p in v] for k, v in json.loads(chosen).items()},
                None if places is None else [tuple(p) for p in json.loads(places)],
            )
            for name, state, field, engines, chosen, places in rows
        }

    def start(
        self,
        name: str,
        field: Sequence[str],
        engines: Mapping[str, Mapping[str, Any]],
        chosen_by: Mapping[str, Places],
    ) -> None:
        """Fix `name`'s field, its engines' tables and the places that chose it: before its
        first game (a later change of an engine in the season file applies from the next
        event on)."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO events (name, state, field, engines, chosen_by, started_at) "
                "VALUES (?, 'running', ?, ?, ?, ?)",
                (
                    name,
                    json.dumps(list(field)),
                    json.dumps({n: dict(engines[n]) for n in field}),
                    json.dumps({k: list(v) for k, v in chosen_by.items()}),
                    _now(),
                ),
            )

    def finish(self, name: str, places: Places) -> None:
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "UPDATE events SET state = 'finished', places = ?, finished_at = ? WHERE name = ?",
                (json.dumps(list(places)), _now(), name),
            )

    def decide(
        self, event: str, engines: Sequence[str], reason: str, user: str | None = None
    ) -> None:
        """A director's order of tied engines of `event`, audited (who, when, why)."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO decisions (event, engines, user, reason, at) VALUES (?, ?, ?, ?, ?)",
                (event, json.dumps(list(engines)), user or getpass.getuser(), reason, _now()),
            )

    def control(
        self,
        kind: str,
        reason: str,
        event: str | None = None,
        engines: Sequence[str] | None = None,
        user: str | None = None,
    ) -> None:
        """A director's control of the season, audited: `hold` (before its next event),
        `release`, or `field` (an event's field, set before it starts)."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO controls (kind, event, engines, user, reason, at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    kind,
                    event,
                    None if engines is None else json.dumps(list(engines)),
                    user or getpass.getuser(),
                    reason,
                    _now(),
                ),
            )

    def owner(self) -> str | None:
        """The season file this store belongs to, as a path from its folder (None: a store
        made before it was kept)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'season_file'").fetchone()
        return None if row is None else str(row[0])

    def own(self, season_file: str) -> None:
        """Tie the store to `season_file` (a path from its folder), once."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('season_file', ?)",
                (season_file,),
            )

    def held(self) -> str | None:
        """The reason of the hold in force (the last hold, not released since), or None."""
        row = self.conn.execute(
            "SELECT kind, reason FROM controls WHERE kind IN ('hold', 'release') "
            "ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return row[1] if row is not None and row[0] == "hold" else None

    def fields(self) -> dict[str, list[str]]:
        """The fields directors set, by event (the last one given for each)."""
        out: dict[str, list[str]] = {}
        for event, engines in self.conn.execute(
            "SELECT event, engines FROM controls WHERE kind = 'field' ORDER BY id"
        ):
            out[event] = json.loads(engines)
        return out

    def decisions(self) -> dict[str, list[str]]:
        """Each event's latest decision (a later one replaces an earlier one)."""
        out: dict[str, list[str]] = {}
        for event, engines in self.conn.execute("SELECT event, engines FROM decisions ORDER BY id"):
            out[event] = json.loads(engines)
        return out
