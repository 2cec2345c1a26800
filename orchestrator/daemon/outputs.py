"""Files for people: the PGN archive and the standings, always equal to the database.

A file is written to a temporary name in the same folder and renamed into place, so a
reader (or a kill) never sees half a file; or, for the PGN files a finished game adds to, its
game is appended in one write (a kill mid-write leaves a file the next daemon writes again
whole: each start writes every file from the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import structlog

from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.fields import Annotated, Annotator
from orchestrator.core.game.openings import START, Opening
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.event.export import round_pgn, slug, standings_text
from orchestrator.event.read import EventView, ending_tally, standings_json, standings_notes
from orchestrator.event.tcec_files import (
    ArchiveMenu,
    LiveMove,
    crosstable_json,
    event_menu,
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
    with atomic(path, durable=durable) as handle:
        handle.write(text.encode())


@contextlib.contextmanager
def atomic(path: Path, *, durable: bool = True) -> Iterator[BinaryIO]:
    """A temporary file in `path`'s folder to write, renamed to `path` once written (synced
    first if `durable`), removed if the writing fails: a reader (or a kill) never sees half
    a file.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "x.txt"
    >>> with atomic(target) as out:
    ...     _ = out.write(b"whole")
    >>> target.read_text(), [p.name for p in target.parent.iterdir()]
    ('whole', ['x.txt'])
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, MODE)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class PgnFiles:
    """The round and event PGN files, kept equal to the database without holding any game's
    text in memory and without rewriting the whole event after each game.

    - A finished game is appended to its round's file when it follows the games the file
      holds in playing order (as games end with one at a time), else the file is rewritten
      (that round's games are read, nothing more); and it is appended to the event's file.
    - A finished round (and a daemon's start, and a control that changed results) rewrites
      its round's file unless it already holds the round, and the event's file from the
      round files, in round and playing order, streamed from disk.

    So the event's file holds every finished game at once; within the round being played they
    are in the order they finished until the round ends.  A worker thread writes the files
    (`asyncio.to_thread`), one write at a time, so that no write or fsync blocks the event
    loop.  An append costs a write; a file made anew costs a new inode, which costs some
    file systems ten times as much (ext4 mounted with ``discard``: docs/measurements.md).
    """

    def __init__(self, folder: Path, event: str) -> None:
        self.folder = folder
        self.event = event
        self.lock = asyncio.Lock()
        #: the rounds the event's file holds whole and in order (None: not known), and what
        #: was appended to it since (the games of the round being played): a round whose
        #: games were appended in playing order leaves the file as a rewrite would make it
        self.covered: tuple[int, ...] | None = None
        self.appended = hashlib.sha256()
        #: what the latest round file written holds: its round, its size and its digest
        self.round_holds: tuple[int, int, bytes] | None = None

    @property
    def event_file(self) -> Path:
        return self.folder / f"{slug(self.event)}.pgn"

    def round_file(self, number: int) -> Path:
        return self.folder / f"round-{number:02d}.pgn"

    async def game_finished(self, rnd: RoundRow, pgn: str) -> None:
        """A game of `rnd` (read with its games' PGN texts) finished with `pgn`."""
        async with self.lock:
            await asyncio.to_thread(self._game_finished, rnd, pgn)

    def _game_finished(self, rnd: RoundRow, pgn: str) -> None:
        self._write_round_file(rnd.number, round_pgn(rnd).encode())
        if self.event_file.exists():
            covered, self.covered = self.covered, None  # unknown, until the append is whole
            append_durable(self.event_file, pgn + "\n")
            self.appended.update((pgn + "\n").encode())
            self.covered = covered
        else:
            self._rewrite_event(range(1, rnd.number + 1))

    async def round_finished(self, rnd: RoundRow, rounds: Sequence[int]) -> None:
        """`rnd` (read with its games' PGN texts) is over: its file, and the event's file
        from the files of `rounds` unless its games were appended in playing order (a
        match's rounds: rewriting the whole event at each round's end would cost the event's
        size squared)."""
        async with self.lock:
            await asyncio.to_thread(self._round_finished, rnd, tuple(rounds))

    def _round_finished(self, rnd: RoundRow, rounds: tuple[int, ...]) -> None:
        digest = self._write_round_file(rnd.number, round_pgn(rnd).encode())
        in_order = (
            self.covered is not None
            and rounds == (*self.covered, rnd.number)
            and self.appended.digest() == digest
            and self.event_file.exists()
        )
        if in_order:
            self.covered, self.appended = rounds, hashlib.sha256()
        else:
            self._rewrite_event(rounds)

    def _write_round_file(self, number: int, data: bytes) -> bytes:
        """Round `number`'s file to hold `data`: what it lacks appended when it holds the
        start of `data` (the games before in playing order), nothing done when it holds
        `data`, else written anew; `data`'s digest."""
        path, held = self.round_file(number), self.round_holds
        self.round_holds = None  # unknown, until the write is whole
        size = held[1] if held is not None and held[0] == number else len(data) + 1
        digest = hashlib.sha256(data[:size])  # what the file holds, if it holds a start of `data`
        if held is not None and size <= len(data) and digest.digest() == held[2] and path.exists():
            if size < len(data):
                append_durable(path, data[size:])
        else:
            with atomic(path) as out:
                out.write(data)
            digest, size = hashlib.sha256(), 0
        digest.update(data[size:])
        self.round_holds = (number, len(data), digest.digest())
        return self.round_holds[2]

    async def write_round(self, rnd: RoundRow) -> None:
        """`rnd`'s file (`rnd` read with its games' PGN texts), written anew."""
        async with self.lock:
            await asyncio.to_thread(self._write_round, rnd.number, round_pgn(rnd).encode())

    def _write_round(self, number: int, data: bytes) -> None:
        self.round_holds = None
        self._write_round_file(number, data)

    async def rewrite_event(self, rounds: Sequence[int]) -> None:
        """The event's file from the files of `rounds` (the event's rounds, in order); the
        file of any other round (dropped by a control) is removed."""
        async with self.lock:
            await asyncio.to_thread(self._rewrite_event, rounds)

    def _rewrite_event(self, rounds: Sequence[int]) -> None:
        """The event's file: the round files one after another, streamed from disk."""
        self.covered, self.appended = None, hashlib.sha256()
        wanted = {self.round_file(n) for n in rounds}
        for stale in self.folder.glob("round-*.pgn") if self.folder.is_dir() else ():
            if stale not in wanted:
                stale.unlink(missing_ok=True)
        with atomic(self.event_file) as out:
            for number in rounds:
                with (
                    contextlib.suppress(FileNotFoundError),
                    self.round_file(number).open("rb") as source,
                ):
                    shutil.copyfileobj(source, out)
        self.covered = tuple(rounds)


def append_durable(path: Path, text: str | bytes) -> None:
    """`text` at the end of `path`, in one write, synced to disk.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "event.pgn"
    >>> _ = path.write_text("one\\n")
    >>> append_durable(path, "two\\n")
    >>> path.read_text()
    'one\\ntwo\\n'
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        data = text.encode() if isinstance(text, str) else text
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)


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
    text = standings_text(
        view.standings_tournament(),
        order,
        standings_notes(view),
        view.settings.anchor,
        ending_tally(view),
    )
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
class _LiveGame:
    """A running game as the live files know it: its moves as they came (book moves first),
    and, once it is the game followed, their annotation (TCEC's fields) so far."""

    headers: dict[str, str]
    options: tuple[dict[str, Any], dict[str, Any]]  # White's engine's, Black's
    start: Opening
    log: Path | None  # its engine log, as `EngineLogs` writes it
    records: list[MoveRecord] = field(default_factory=list)
    annotator: Annotator | None = None  # made when it is first followed
    plies: list[Annotated] = field(default_factory=list)
    moves: list[LiveMove] = field(default_factory=list)

    def annotate(self, rules: Adjudication) -> None:
        """Annotate the moves not annotated yet (all of them when first followed)."""
        if self.annotator is None:
            self.annotator = Annotator(self.start.board(), rules)
        for record in self.records[len(self.plies) :]:
            annotated = self.annotator.add(record)
            self.plies.append(annotated)
            self.moves.append(live_move(annotated))


#: the live files are written at most this often (a write waiting meanwhile is replaced by
#: a newer one): TCEC's viewer reads them every few seconds
LIVE_EVERY_S = 0.25


class TcecFiles:
    """TCEC's live files in `folder`: `live.json`, `live.pgn` and `live.log` (the end of its
    engine log) after the moves of the game they follow (the earliest started of the running
    games), `schedule.json` and `crosstable.json` after every game.

    A move costs the loop an append: only the followed game's moves are annotated (a game
    that becomes followed is annotated then, once).  The files are serialized and written by
    a worker thread at most every `LIVE_EVERY_S`, and a write still waiting when a newer
    state comes is dropped for it, so the event loop never waits for a disk.
    """

    def __init__(self, folder: Path, rules: Adjudication, menu: ArchiveMenu | None = None) -> None:
        self.folder, self.rules = folder, rules
        self.menu = menu  # a season's events, for gamelist.json
        self.games: dict[int, _LiveGame] = {}
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
        live = self.games[game] = _LiveGame(headers, options, opening, log)
        live.records.extend(opening.book())
        if self.followed is None or self.followed not in self.games:
            self._follow(game)

    def move(self, game: int, move: MoveRecord) -> None:
        live = self.games.get(game)
        if live is None:
            return
        live.records.append(move)
        if game == self.followed:
            self._game_files(live)

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
            self._game_files(live, record.reason)
        self.followed = None
        if self.games:
            self._follow(min(self.games))

    def _follow(self, game: int) -> None:
        self.followed = game
        self._game_files(self.games[game])

    def event(self, view: EventView) -> None:
        self._queue("tournament.json", lambda: json.dumps(tournament_json(view), indent=1))
        self._queue(
            "gamelist.json",
            lambda: json.dumps(gamelist_json(self.menu or event_menu(view)), indent=1),
        )
        self._queue("schedule.json", lambda: json.dumps(schedule_json(view), indent=1))
        self._queue("crosstable.json", lambda: json.dumps(crosstable_json(view), indent=1))
        if view.settings.system == "knockout":  # TCEC's Cup viewer draws its bracket
            self._queue("Eventcrosstable.json", lambda: json.dumps(eventcrosstable_json(view)))

    def _game_files(self, live: _LiveGame, reason: str | None = None) -> None:
        live.annotate(self.rules)
        # the lists only grow: the writer takes the first `n` of each, whenever it runs
        headers, options, n = live.headers, live.options, len(live.plies)
        self._queue("live.json", lambda: json.dumps(live_json(headers, live.moves[:n], options)))
        self._queue("live.pgn", lambda: live_pgn(headers, live.plies[:n], reason, options))
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
            if self.pending:
                await asyncio.sleep(LIVE_EVERY_S)

    def _write_batch(self, batch: dict[str, Callable[[], str]]) -> None:
        for name, render in batch.items():
            text = render()
            end = "" if text.endswith("\n") or not text else "\n"
            write_atomic(self.folder / name, text + end, durable=False)

    async def close(self) -> None:
        """Wait for the last writes."""
        while self.writer is not None and not self.writer.done():
            await self.writer
