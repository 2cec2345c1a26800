"""What of a config an event is tied to, and which changes a resume may accept.

Pure: a config becomes a plain dict that is stored with the event; on resume the two dicts
are compared.  Changing the players or the pairing system would make the stored pairings
wrong, so it is always refused; changes that only affect games still to be played (time
control, rounds, adjudication, engine commands and options, openings) need `--force`;
where the files go and how many games run at once may change freely.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from orchestrator.config.event import initial_tournament
from orchestrator.config.model import Config

LOCKED = ("players", "system", "format", "schedule", "cycles")
FREE = ("concurrency", "database", "pgn_dir", "site")


def event_settings(config: Config) -> dict[str, Any]:
    t = config.tournament
    adjudication = dataclasses.asdict(config.adjudication)
    adjudication["tablebases"] = str(config.adjudication.tablebases or "")
    return {
        "name": t.name,
        "site": t.site,
        "players": [p.name for p in initial_tournament(config).by_seed()],
        "system": t.system,
        "format": t.format,
        "schedule": t.schedule,
        "cycles": t.cycles,
        "rounds": config.rounds(),
        "tc": str(t.tc),
        "timemargin": t.timemargin_ms,
        "concurrency": t.concurrency,
        "openings": str(t.openings or ""),
        "opening_order": t.opening_order,
        "random_seed": t.random_seed,
        "database": str(t.database),
        "pgn_dir": str(t.pgn_dir),
        "tiebreaks": list(t.tiebreaks),
        "adjudication": adjudication,
        "engines": {
            e.name: {"command": list(e.command), "protocol": e.protocol, "options": e.options}
            for e in config.engines
        },
    }


def changes(stored: dict[str, Any], current: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(keys that may never change, keys that need --force) that differ."""
    differ = sorted(k for k in set(stored) | set(current) if stored.get(k) != current.get(k))
    locked = [k for k in differ if k in LOCKED]
    forced = [k for k in differ if k not in LOCKED and k not in FREE]
    return locked, forced
