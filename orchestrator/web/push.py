"""Push for the live view: one reader per web server follows the database and fans its
events out to every connected browser (Server-Sent Events through aiohttp-sse).

The reader asks SQLite five times a second whether anything was committed (`PRAGMA
data_version`, which costs no read of the database), and only then reads the new moves and
the games' states. Its work is the same for one viewer or a thousand, and the daemon, the
only writer, never waits for it (WAL mode: readers do not block the writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import chess
import structlog
from aiohttp import web
from aiohttp_sse import sse_response

from orchestrator.core.game.openings import START
from orchestrator.event.api import GameEvent, MoveEvent, RoundEvent
from orchestrator.event.feed import GameState, move_event, state_events
from orchestrator.event.read import EventView, load_view
from orchestrator.event.settings import EventSettings
from orchestrator.store.database import MoveRow, Store

#: how often the reader looks for a commit, in seconds
POLL_S = 0.2
#: game and round events a browser may fall behind by (the oldest are dropped)
OTHERS = 200
#: a ping keeps proxies from closing a quiet stream, and finds browsers that have gone
PING_S = 10.0
#: a cached view of the event serves requests for at most this long
VIEW_S = 1.0

log = structlog.get_logger()


class Viewer:
    """One browser's pending events. A move waiting to be sent is replaced by its game's next
    one, so a browser (or a server) that falls behind gets the latest position, never an
    ever longer queue; the page fetches the moves it skipped (their plies tell it)."""

    def __init__(self, game: int | None) -> None:
        self.game = game
        self.pending: OrderedDict[tuple[str, int], tuple[str, str]] = OrderedDict()
        self.ready = asyncio.Event()
        self.serial = 0

    def push(self, kind: str, of: int | None, text: str) -> None:
        if self.game is not None and of is not None and of != self.game:
            return
        if kind == "move" and of is not None:
            key = ("move", of)
            self.pending.pop(key, None)
        else:
            self.serial += 1
            key = (kind, self.serial)
            if len(self.pending) >= OTHERS:
                self.pending.popitem(last=False)
        self.pending[key] = (kind, text)
        self.ready.set()

    def take(self) -> list[tuple[str, str]]:
        items = list(self.pending.values())
        self.pending.clear()
        self.ready.clear()
        return items


class PushHub:
    """The one reader of a web server, and the queues of its viewers."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.viewers: set[Viewer] = set()
        self.boards: dict[int, chess.Board] = {}  # per attempt, the position after its last move
        self.attempts: dict[int, int] = {}  # attempt: its game
        self.last_rowid = 0
        self.states: list[GameState] = []
        self.task: asyncio.Task[None] | None = None
        self.generation = 0  # counts the changes of the games' and rounds' states
        self.reading = False  # whether the reader holds a connection (it waits between tries)
        self.cached: tuple[int, float, EventView] | None = None
        self.loading = asyncio.Lock()
        self.kibitz_stamps: dict[Path, int] = {}  # each kibitzer file's last seen mtime

    async def view(self) -> EventView:
        """The event, read once per change of its games and rounds (and never older than
        `VIEW_S`), however many viewers ask at once: pages reload on the events, together,
        and the first of them reads for all."""
        async with self.loading:
            now = time.monotonic()
            if self.cached is not None:
                generation, at, view = self.cached
                if generation == self.generation and now - at < VIEW_S:
                    return view
            generation = self.generation
            view = await load_view(self.db)
            self.cached = (generation, now, view)
            return view

    async def run(self) -> None:
        """Follow the database until cancelled; a database that cannot be read is retried."""
        failed = ""
        while True:
            try:
                self.reading = True
                async with _opened(self.db) as store:
                    await self._follow(store)
            except Exception as exc:  # a damaged or missing database: wait, and try again
                self.reading = False
                if str(exc) != failed:  # once per error, not every two seconds
                    failed = str(exc)
                    with contextlib.suppress(Exception):
                        log.warning("live_reader_waiting", error=failed)
            await asyncio.sleep(2.0)

    async def _follow(self, store: Store) -> None:
        self.last_rowid = await store.last_move_rowid()
        self.states = await store.game_states()
        kibitzers = await _kibitzer_files(store)
        seen = -1
        while True:
            version = await store.data_version()
            if version != seen:
                seen = version
                await self._read(store)
            for path in kibitzers:
                self._kibitzed(path)
            await asyncio.sleep(POLL_S)

    def _kibitzed(self, path: Path) -> None:
        """A `kibitz` event when a kibitzer's `data.json` has changed (the kibitzers'
        process writes it at most twice a second)."""
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return
        if self.kibitz_stamps.get(path) == stamp:
            return
        self.kibitz_stamps[path] = stamp
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # half written? the next look reads it whole
            self.kibitz_stamps.pop(path, None)
            return
        if not isinstance(entry, dict) or not isinstance(entry.get("game"), int):
            return
        index = 0 if path.name == "data.json" else int(path.name[4:-5] or 0)
        event = {**entry, "kibitzer": index}
        text = json.dumps(event)
        for viewer in self.viewers:
            viewer.push("kibitz", entry["game"], text)

    async def _read(self, store: Store) -> None:
        while rows := await store.moves_after(self.last_rowid):
            for row in rows:
                self.last_rowid = row.rowid
                board = await self._board(store, row)
                if board is None:
                    continue
                self._publish("move", row.game, move_event(board, row))
        states = await store.game_states()
        if states != self.states:
            self.generation += 1  # before the events: a page reloaded on one reads anew
        for event in state_events(self.states, states):
            if "game" not in event:
                self._publish("round", None, event)
                continue
            game = cast(GameEvent, event)  # the events that name a game
            if game["status"] != "running":  # its boards are done with
                for attempt in [a for a, g in self.attempts.items() if g == game["game"]]:
                    self.boards.pop(attempt, None)
                    self.attempts.pop(attempt, None)
            self._publish("game", game["game"], game)
        self.states = states

    async def _board(self, store: Store, row: MoveRow) -> chess.Board | None:
        """The position the move in `row` is played from."""
        board = self.boards.get(row.attempt)
        if board is None:
            board = (await store.game_opening(row.game) or START).after_book()
            for earlier in await store.attempt_moves(row.attempt, row.rowid):
                if not earlier.move.book:
                    board.push_uci(earlier.move.uci)
            self.boards[row.attempt] = board
            self.attempts[row.attempt] = row.game
        if row.move.book:
            return None
        return board

    def _publish(self, kind: str, of: int | None, data: MoveEvent | GameEvent | RoundEvent) -> None:
        text = json.dumps(data)
        for viewer in self.viewers:
            viewer.push(kind, of, text)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """`/api/live`: the events as they happen (`?game=ID` for one game's moves only)."""
        wanted = request.query.get("game", "")
        viewer = Viewer(int(wanted) if wanted.isdigit() and len(wanted) <= 18 else None)
        self.viewers.add(viewer)
        try:
            async with sse_response(request, ping_interval=PING_S) as response:
                # the ping ends when the browser has gone: stop waiting for events then
                gone = asyncio.ensure_future(response.wait())
                try:
                    while True:
                        ready = asyncio.ensure_future(viewer.ready.wait())
                        await asyncio.wait({ready, gone}, return_when=asyncio.FIRST_COMPLETED)
                        if not ready.done():
                            ready.cancel()
                            break
                        for kind, text in viewer.take():
                            await response.send(text, event=kind)
                except ConnectionError:  # the browser went mid-send
                    pass
                finally:
                    gone.cancel()
                return response
        finally:
            self.viewers.discard(viewer)


async def _kibitzer_files(store: Store) -> list[Path]:
    """The `data.json` files of the event's kibitzers (none without kibitzers)."""
    event = await store.event()
    if event is None:
        return []
    settings = EventSettings.from_json(event.settings)
    if settings.live_dir is None:
        return []
    return [
        settings.live_dir / f"data{'' if i == 0 else i}.json"
        for i in range(len(settings.kibitzers))
    ]


@contextlib.asynccontextmanager
async def _opened(db: Path) -> AsyncIterator[Store]:
    """A read-only connection, closed on leaving; a server that stops while it is being
    opened still closes it (its thread must not outlive the event loop)."""
    opening = asyncio.ensure_future(Store.open(db, readonly=True))
    try:
        store = await asyncio.shield(opening)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await (await opening).close()
        raise
    try:
        yield store
    finally:
        await store.close()


HUB = web.AppKey("push", PushHub)


async def push_context(app: web.Application) -> AsyncIterator[None]:
    """The hub's reader runs while the app does (aiohttp's cleanup context)."""
    hub = app[HUB]
    hub.task = asyncio.get_running_loop().create_task(hub.run())
    yield
    hub.task.cancel()
    await asyncio.gather(hub.task, return_exceptions=True)
