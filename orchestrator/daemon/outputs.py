"""Files for people: the PGN archive and the standings, always equal to the database.

Every file is written to a temporary name in the same folder and renamed into place, so a
reader (or a kill) never sees half a file.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from orchestrator.event.export import round_pgn, slug, standings_text
from orchestrator.event.read import EventView, standings_json, standings_notes
from orchestrator.store.database import RoundRow


def _umask() -> int:
    """The process's umask (read once, at import, in the main thread: os.umask sets it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: files people read get the usual permissions (0644 under umask 022), not mkstemp's 0600
MODE = 0o666 & ~_umask()


def write_atomic(path: Path, text: str) -> None:
    """`text` to `path` through a temporary file in the same folder, renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class PgnFiles:
    """The round and event PGN files, rewritten after every game without reading the whole
    event again: the text of every finished round is kept, so a game costs one query of its
    own round.  A worker thread writes the files (`asyncio.to_thread`), one write at a time,
    so that no write or fsync blocks the event loop while games' clocks run.
    """

    def __init__(self, folder: Path, event: str) -> None:
        self.folder = folder
        self.event = event
        self.closed: dict[int, str] = {}  # the text of each finished round
        self.lock = asyncio.Lock()

    async def write(self, rounds: Sequence[RoundRow], *, every: bool = False) -> None:
        """Rewrite the files of `rounds` (`every` round, or the current one alone) and the
        event's file."""
        async with self.lock:
            if every:  # a control may have reopened a finished round
                self.closed.clear()
            texts = {r.number: round_pgn(r) for r in rounds}
            self.closed.update((r.number, texts[r.number]) for r in rounds if r.finished_at)
            last = max(texts, default=0)
            event = "".join(self.closed[n] for n in sorted(self.closed) if n < last)
            event += texts.get(last, "")
            files = [(self.folder / f"round-{n:02d}.pgn", text) for n, text in texts.items()]
            files.append((self.folder / f"{slug(self.event)}.pgn", event))
            await asyncio.to_thread(_write_all, files)


def remove_leftovers(folder: Path) -> int:
    """Temporary files a kill left behind mid-write (`.round-01.pgn.x1y2.tmp`); how many."""
    leftovers = list(folder.glob(".*.tmp")) if folder.is_dir() else []
    for path in leftovers:
        path.unlink(missing_ok=True)
    return len(leftovers)


def _write_all(files: list[tuple[Path, str]]) -> None:
    for path, text in files:
        write_atomic(path, text)


def write_standings(folder: Path, view: EventView) -> None:
    """`standings.txt` and `standings.json` (as `standings --json` prints them)."""
    order = view.settings.tiebreaks
    text = standings_text(view.standings_tournament(), order, standings_notes(view))
    write_atomic(folder / "standings.txt", text)
    write_atomic(folder / "standings.json", json.dumps(standings_json(view), indent=1) + "\n")
