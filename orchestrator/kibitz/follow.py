"""The kibitz process: follow the featured game in the database, keep each kibitzer
analysing its current position (without a limit, started again on every move), and write
TCEC's kibitzer files.

- `data.json` (`data1.json` for the second kibitzer): the current position's analysis, at
  once for a new position, then at most twice a second;
- `liveeval.json` (`liveeval1.json`): the last analysis of every position of the game so
  far, after every move; a game's whole history is kept as `archive/game-<id>-liveeval.json`
  once it is no longer featured (it ended, or the kibitzers stopped).

The featured game is the running game that started first (the lowest id), as for the live
files.  Each kibitzer runs in a task of its own, its engine here or, with `requires`, on a
game host of its own (`kibitz/remote.py`): an engine that dies, says something the adapter
refuses, or says nothing of a new position for `HANG_S` is killed and started again after a
growing pause (`kibitzer_restarted` in the log).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import chess
import chess.engine
import structlog

from orchestrator.config.model import KibitzerConfig
from orchestrator.core.game.openings import START
from orchestrator.daemon.outputs import write_atomic
from orchestrator.engines.adapter import Engine, EngineFault
from orchestrator.event.export import round_tag
from orchestrator.event.settings import EventSettings
from orchestrator.event.tcec_files import KibitzEntry, kibitz_entry, liveeval_json
from orchestrator.kibitz.analysis import analyse
from orchestrator.store.database import Store, StoreError

__all__ = ["Kibitzer", "Position", "featured", "follow"]

log = structlog.get_logger()

#: a kibitzer silent this long while it analyses is taken for hung, and started again
HANG_S = float(os.environ.get("ORCHESTRATOR_KIBITZ_HANG_S", "30"))
#: the pauses before each restart in a row (the last one repeating)
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
POLL_S = 0.2  # how often the database is asked whether anything was committed
WRITE_EVERY_S = 0.5  # data.json at most this often


@dataclass(frozen=True)
class Position:
    """The featured game's current position (the board carries its moves)."""

    game: int
    round_tag: str
    board: chess.Board

    @property
    def key(self) -> tuple[int, int]:
        return self.game, len(self.board.move_stack)


async def featured(store: Store) -> Position | None:
    """The running game that started first, and its position now; None when no game runs.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def now(db):
    ...     store = await Store.open(db, readonly=True)
    ...     try:
    ...         return await featured(store)
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(now(sample_database())) is None  # the sample has no running game
    True
    """
    current = await store.last_round()
    running = [g for g in current.games if g.status == "running"] if current else []
    if not running:
        return None
    game = min(running, key=lambda g: g.id)
    opening = game.opening or START
    board = opening.board()
    for book in opening.book():
        board.push_uci(book.uci)
    for row in await store.current_moves(game.id):
        if not row.move.book:
            board.push_uci(row.move.uci)
    return Position(game.id, round_tag(game.round, game), board)


class _Hung(Exception):
    """The kibitzer stopped answering."""


class Analyser(Protocol):
    """Where a kibitzer's engine runs: here (`LocalAnalyser`) or on a game host of its own
    (`kibitz/remote.py`)."""

    #: what the log says of it: its process, and where it runs
    where: dict[str, object]

    def infos(self, board: chess.Board) -> AsyncGenerator[chess.engine.InfoDict, None]:
        """Its analysis of `board`, one info at a time, until it stops by itself; an
        `EngineError` or `EngineTerminatedError` when the engine fails."""
        ...

    async def close(self) -> None:
        """Stop it and kill its engine."""


class LocalAnalyser:
    """A kibitzer's engine on this machine, at the lowest CPU priority."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.where: dict[str, object] = {"pid": engine.pid}

    @classmethod
    async def start(cls, config: KibitzerConfig) -> LocalAnalyser:
        return cls(await Engine.start(config.engine(), idle=True))

    def infos(self, board: chess.Board) -> AsyncGenerator[chess.engine.InfoDict, None]:
        return analyse(self.engine, board)

    async def close(self) -> None:
        await self.engine.close()


#: starts a kibitzer's analyser (a local engine, or one on a game host)
Start = Callable[[KibitzerConfig], Awaitable[Analyser]]


@dataclass
class Kibitzer:
    """One kibitzer: its engine, the position it should analyse, and what it wrote."""

    config: KibitzerConfig
    index: int  # 0 writes data.json and liveeval.json, 1 data1.json and liveeval1.json
    folder: Path
    start: Start = LocalAnalyser.start
    wanted: Position | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    history: list[KibitzEntry] = field(default_factory=list)
    history_game: int | None = None
    last: KibitzEntry | None = None  # the deepest analysis of the current position so far
    restarts: int = 0
    written_at: float = 0.0
    #: set once its engine's first start has been tried (started, or failed)
    tried: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def suffix(self) -> str:
        return "" if self.index == 0 else str(self.index)

    def follow(self, position: Position | None) -> None:
        """Analyse `position` from now on (None: the game is over, wait)."""
        old = None if self.wanted is None else self.wanted.key
        new = None if position is None else position.key
        if old != new:
            self.wanted = position
            self.changed.set()

    async def run(self) -> None:
        """Forever: start the engine, analyse what is wanted, start it again if it fails."""
        while True:
            analyser: Analyser | None = None
            reason = ""
            try:
                try:
                    analyser = await self.start(self.config)
                finally:
                    self.tried.set()
                log.info("kibitzer_started", kibitzer=self.config.name, **analyser.where)
                await self._analyse(analyser)
            except EngineFault as fault:
                reason = f"{fault.kind}: {fault.detail}"
            except _Hung:
                reason = f"no answer for {HANG_S:g}s"
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
                reason = str(exc) or type(exc).__name__
            finally:
                if analyser is not None:
                    await analyser.close()
            pause = BACKOFF_S[min(self.restarts, len(BACKOFF_S) - 1)]
            self.restarts += 1
            log.warning(
                "kibitzer_restarted",
                kibitzer=self.config.name,
                reason=reason,
                restarts=self.restarts,
                retry_in_s=pause,
            )
            await asyncio.sleep(pause)

    async def _analyse(self, analyser: Analyser) -> None:
        while True:
            position = self.wanted
            self.changed.clear()
            if position is None:
                self.end()
                await self.changed.wait()
                continue
            self._begin(position)
            infos = analyser.infos(position.board)
            try:
                await self._until_changed(infos, position)
            finally:
                await infos.aclose()

    async def _until_changed(
        self, infos: AsyncGenerator[chess.engine.InfoDict, None], at: Position
    ) -> None:
        """Take the analysis of `at` until the position changes.  A kibitzer that says
        nothing of a new position for `HANG_S` is hung (`_Hung`); once it has spoken it may
        fall silent (it has searched the position out).  The first analysis of a position
        is written at once, later ones twice a second."""
        first, spoken = True, False
        while not self.changed.is_set():
            get = asyncio.ensure_future(anext(infos))
            change = asyncio.ensure_future(self.changed.wait())
            done, _ = await asyncio.wait(
                {get, change},
                timeout=None if spoken else HANG_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
            change.cancel()
            if get not in done:
                get.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await get
                if not done:
                    raise _Hung
                return
            try:
                info = get.result()
            except StopAsyncIteration:  # it stopped by itself: wait for a move
                await self.changed.wait()
                return
            spoken = True
            entry = kibitz_entry(
                at.board,
                info,
                engine=self.config.name,
                desc=self.config.desc,
                round_tag=at.round_tag,
                game=at.game,
            )
            if entry is not None:
                self.last = entry
                self.restarts = 0  # it works: a later failure starts the pauses again
                self._write_data(entry, now=first)
                first = False

    def _begin(self, position: Position) -> None:
        """A new position: the last one's analysis joins the game's history (a new game
        starts a new history, the old one archived)."""
        if position.game != self.history_game:
            self.end()
            self.history, self.history_game = [], position.game
        else:
            self._keep_last()
        self._write_history(position)

    def _keep_last(self) -> None:
        """The last position's analysis joins its game's history."""
        last, self.last = self.last, None
        if last is not None and last.get("game") == self.history_game:
            self.history = [e for e in self.history if e.get("ply") != last.get("ply")]
            self.history.append(last)

    def end(self) -> None:
        """The game followed is over (or the kibitzers stop): its history, the last
        position's analysis with it, is archived."""
        self._keep_last()
        self._archive()

    def _write_data(self, entry: KibitzEntry, *, now: bool = False) -> None:
        if not now and time.monotonic() - self.written_at < WRITE_EVERY_S:
            return
        self.written_at = time.monotonic()
        self._write(f"data{self.suffix}.json", entry)

    def _write_history(self, position: Position) -> None:
        data = self._liveeval(position.round_tag, position.game)
        self._write(f"liveeval{self.suffix}.json", data)

    def _liveeval(self, round_tag: str, game: int) -> object:
        return liveeval_json(
            self.history,
            engine=self.config.name,
            desc=self.config.desc,
            round_tag=round_tag,
            game=game,
        )

    def _archive(self) -> None:
        """The finished game's history, kept beside the live files."""
        if self.history_game is None or not self.history:
            return
        data = self._liveeval(str(self.history[-1].get("round", "")), self.history_game)
        name = f"archive/game-{self.history_game}-liveeval{self.suffix}.json"
        self._write(name, data)

    def _write(self, name: str, data: object) -> None:
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(data) + "\n", durable=False)
        except OSError as exc:  # a full disk: the kibitzers wait, nothing else does
            log.error("kibitzer_files_failed", kibitzer=self.config.name, error=str(exc))


async def follow(
    db: Path, stop: asyncio.Event | None = None, ready: Callable[[], None] | None = None
) -> None:
    """Follow the event of `db` with its kibitzers until `stop` (or forever).  `ready` is
    called once every kibitzer's engine has been tried and the featured game read: from
    then on, a game that starts is followed from its first position."""
    stop = stop or asyncio.Event()
    store = await Store.open(db, readonly=True)
    try:
        event = await store.event()
        if event is None:
            raise StoreError(f"{db}: no event has been started in this database")
        settings = EventSettings.from_json(event.settings)
        if not settings.kibitzers or settings.live_dir is None:
            if ready is not None:
                ready()
            return
        hosts = None
        if any(k.requires for k in settings.kibitzers):
            from orchestrator.kibitz.remote import RemoteHosts

            hosts = RemoteHosts(settings)
        kibitzers = [
            Kibitzer(
                config,
                index,
                settings.live_dir,
                start=hosts.start if hosts is not None and config.requires else LocalAnalyser.start,
            )
            for index, config in enumerate(settings.kibitzers)
        ]
        tasks = [asyncio.create_task(k.run(), name=f"kibitzer-{k.index}") for k in kibitzers]
        try:
            seen = -1
            while not stop.is_set():
                version = await store.data_version()
                if version != seen:
                    seen = version
                    position = await featured(store)
                    for kibitzer in kibitzers:
                        kibitzer.follow(position)
                if ready is not None and all(k.tried.is_set() for k in kibitzers):
                    ready()
                    ready = None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), POLL_S)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for kibitzer in kibitzers:
                kibitzer.end()
            if hosts is not None:
                await hosts.close()
    finally:
        await store.close()
