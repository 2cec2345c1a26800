"""Files for people: the PGN archive and the standings, always equal to the database.

Every file is written to a temporary name in the same folder and renamed into place, so a
reader (or a kill) never sees half a file.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.fields import Annotated, Annotator
from orchestrator.core.game.openings import START, Opening
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.event.export import round_pgn, slug, standings_text
from orchestrator.event.read import EventView, standings_json, standings_notes
from orchestrator.event.tcec_files import (
    LiveMove,
    crosstable_json,
    eventcrosstable_json,
    gamelist_json,
    live_json,
    live_move,
    live_pgn,
    schedule_json,
    tournament_json,
)
from orchestrator.store.database import RoundRow
from orchestrator.store.logs import log_tail


def _umask() -> int:
    """The process's umask (read once, at import, in the main thread: os.umask sets it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: files people read get the usual permissions (0644 under umask 022), not mkstemp's 0600
MODE = 0o666 & ~_umask()


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """`text` to `path` through a temporary file in the same folder, renamed into place;
    `durable` files are synced to disk first (the live files, rewritten every move, are not).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if durable:
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


#: how much of the featured game's engine log `live.log` shows (its latest lines)
LIVE_LOG_TAIL = 256 << 10


def live_log(path: Path | None) -> str:
    """`live.log`: the end of the featured game's engine log (plain while the game is played,
    compressed once it has ended); empty when there is none yet."""
    for candidate in () if path is None else (path, path.with_name(path.name + ".gz")):
        try:
            return log_tail(candidate, LIVE_LOG_TAIL)
        except FileNotFoundError:
            continue
    return ""


@dataclass
class _FollowedGame:
    headers: dict[str, str]
    options: tuple[dict[str, Any], dict[str, Any]]  # White's engine's, Black's
    annotator: Annotator
    log: Path | None  # its engine log, as `EngineLogs` writes it
    plies: list[Annotated] = field(default_factory=list)
    moves: list[LiveMove] = field(default_factory=list)


class TcecFiles:
    """TCEC's live files in `folder`: `live.json`, `live.pgn` and `live.log` (the end of its
    engine log) after every move of the game they follow (the earliest started of the running
    games), `schedule.json` and `crosstable.json` after every game.

    Each move is annotated once, as it comes; the files are serialized and written by a
    worker thread, and a write still waiting when a newer state comes is dropped for it, so
    the event loop (and the clocks it stamps) never waits for a disk.
    """

    def __init__(self, folder: Path, rules: Adjudication) -> None:
        self.folder, self.rules = folder, rules
        self.games: dict[int, _FollowedGame] = {}
        self.followed: int | None = None
        self.pending: dict[str, Callable[[], str]] = {}
        self.writer: asyncio.Task[None] | None = None
        self.failing = False  # logged once until a write succeeds again

    def start(
        self,
        game: int,
        headers: dict[str, str],
        options: tuple[dict[str, Any], dict[str, Any]],
        opening: Opening | None,
        log: Path | None = None,
    ) -> None:
        """A game starts, from `opening` (its book moves are its first moves); `log` is where
        its engine log is written (`live.log` shows its end)."""
        opening = opening or START
        live = self.games[game] = _FollowedGame(
            headers, options, Annotator(opening.board(), self.rules), log
        )
        for book in opening.book():
            annotated = live.annotator.add(book)
            live.plies.append(annotated)
            live.moves.append(live_move(annotated))
        if self.followed is None or self.followed not in self.games:
            self.followed = game
            self._game_files(game)

    def move(self, game: int, move: MoveRecord) -> None:
        live = self.games.get(game)
        if live is None:
            return
        annotated = live.annotator.add(move)
        live.plies.append(annotated)
        live.moves.append(live_move(annotated))
        if game == self.followed:
            self._game_files(game)

    def finish(self, game: int, record: GameRecord | None = None) -> None:
        """The game ended (its `record`) or its attempt was aborted (no record): an ended
        game's last files carry its result and how it ended (`Termination`, and
        `TerminationDetails` in TCEC's words), so that TCEC's viewer stops its clock."""
        live = self.games.pop(game, None)
        if live is None or game != self.followed:
            return
        if record is not None:
            ending: dict[str, str] = {"Result": record.result, "Termination": record.termination}
            if record.details:
                ending["TerminationDetails"] = record.details
            live.headers = {**live.headers, **ending}
            self._game_files(game, live, record.reason)
        self.followed = min(self.games, default=None)
        if self.followed is not None:
            self._game_files(self.followed)

    def event(self, view: EventView) -> None:
        self._queue("tournament.json", lambda: json.dumps(tournament_json(view), indent=1))
        self._queue("gamelist.json", lambda: json.dumps(gamelist_json(view), indent=1))
        self._queue("schedule.json", lambda: json.dumps(schedule_json(view), indent=1))
        self._queue("crosstable.json", lambda: json.dumps(crosstable_json(view), indent=1))
        if view.settings.system == "knockout":  # TCEC's Cup viewer draws its bracket
            self._queue("Eventcrosstable.json", lambda: json.dumps(eventcrosstable_json(view)))

    def _game_files(
        self, game: int, live: _FollowedGame | None = None, reason: str | None = None
    ) -> None:
        live = live or self.games[game]
        headers, moves, plies = live.headers, list(live.moves), list(live.plies)
        options = live.options
        self._queue("live.json", lambda: json.dumps(live_json(headers, moves, options)))
        self._queue("live.pgn", lambda: live_pgn(headers, plies, reason, options))
        self._queue("live.log", lambda: live_log(live.log))

    def _queue(self, name: str, render: Callable[[], str]) -> None:
        self.pending[name] = render
        if self.writer is None or self.writer.done():
            self.writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, {}
            try:
                await asyncio.to_thread(self._write_batch, batch)
            except Exception as exc:  # a full disk: the live view waits, the games go on
                if not self.failing:
                    structlog.get_logger().error("live_files_failed", error=str(exc))
                self.failing = True
            else:
                self.failing = False

    def _write_batch(self, batch: dict[str, Callable[[], str]]) -> None:
        for name, render in batch.items():
            text = render()
            end = "" if text.endswith("\n") or not text else "\n"
            write_atomic(self.folder / name, text + end, durable=False)

    async def close(self) -> None:
        """Wait for the last writes."""
        while self.writer is not None and not self.writer.done():
            await self.writer
