"""Files for people: the PGN archive and the standings, always equal to the database.

Every file is written to a temporary name in the same folder and renamed into place, so a
reader (or a kill) never sees half a file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from orchestrator.core.model import Tournament
from orchestrator.core.standings import Tiebreak
from orchestrator.reports import crosstable, standings_data, standings_table
from orchestrator.store.database import RoundRow


def slug(name: str) -> str:
    """A folder and file name for an event name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "event"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def round_pgn(rnd: RoundRow) -> str:
    """The finished games of a round, in playing order."""
    return "".join((g.pgn or "") + "\n" for g in rnd.games if g.status == "finished")


def event_pgn(rounds: Sequence[RoundRow]) -> str:
    return "".join(round_pgn(r) for r in rounds)


def write_pgns(folder: Path, event: str, rounds: Sequence[RoundRow], changed: int | None) -> None:
    """Rewrite round `changed` (every round if None) and the whole event's file."""
    for rnd in rounds:
        if changed is None or rnd.number == changed:
            write_atomic(folder / f"round-{rnd.number:02d}.pgn", round_pgn(rnd))
    write_atomic(folder / f"{slug(event)}.pgn", event_pgn(rounds))


def write_standings(folder: Path, t: Tournament, order: Sequence[Tiebreak]) -> None:
    finished = Tournament(
        t.players,
        tuple(r for r in t.rounds if all(g.result for g in r.games)),
        t.format,
        t.schedule,
        t.system,
        t.cycles,
    )
    text = standings_table(finished, order) + "\n" + crosstable(finished, order)
    write_atomic(folder / "standings.txt", text)
    data = {"rounds": len(finished.rounds), "standings": standings_data(finished, order)}
    write_atomic(folder / "standings.json", json.dumps(data, indent=1) + "\n")
