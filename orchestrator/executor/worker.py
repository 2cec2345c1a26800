"""What runs on a game host (a Dask worker): one game, or one engine's or kibitzer's check.

A game runs on the worker, on an event loop of the worker process's own (`_Games`, in a
thread beside Dask's): both engines start there and their clocks are kept there, next to the
engines' pipes, so no network lag is ever charged to an engine.  The moves go to the daemon
with Dask's structured events (`Worker.log_event`, which never waits for the network), each
with the engines' log written since the move before: the moves of all the worker's games
together, every `SEND_EVERY_S` (`_Outbox`, packed by `wire.pack`), a game's last ones before
its result.  The whole `GameRecord`, with its PGN written here (`GameSpec.pgn`: the daemon
only stores it), and the log's last chunk are the task's result.  The task watches its own
key: once the daemon no longer wants the game (it aborted the attempt, lost the scheduler, or
died), the game is cancelled and its engines are killed at once.

Pinned cores (`affinity = true`) are planned here, by the host, with the daemon's own
`plan_slots`: over the cores the host announces (`host_cores`: its `/sys`, its worker's CPU
mask, `ORCHESTRATOR_GAME_CPUS`), a slot for each game its `game` resource lets it play at
once.  Only the host knows which of its slots are free when Dask hands it a game; the worker's
own threads move to the CPUs no slot uses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import chess
from distributed import get_worker
from distributed.worker import Worker

from orchestrator.config.model import Config, ConfigError, EngineConfig, KibitzerConfig
from orchestrator.core.cpus import Slot, TooFewCores, cpu_text, plan_slots
from orchestrator.core.errors import DaemonFault
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.engines.affinity import host_cores, pin
from orchestrator.engines.pool import EnginePool
from orchestrator.engines.probe import probe, probe_kibitzer
from orchestrator.engines.slices import runner_slice
from orchestrator.executor.wire import MoveEvent, pack
from orchestrator.game.game import GameSpec, OnLog, OnMove, play_game

#: how often a game checks that the daemon still wants it (seconds)
WATCH_S = 0.25
#: engines kept for their next game (`reuse = true`) are closed after this long without games
IDLE_S = 5.0
#: the task states in which a worker still runs a task for a client that wants it
WANTED = frozenset({"executing", "long-running"})
#: how long a game host gathers its games' moves before it sends them together (one event
#: of the daemon's topic for all of them: the daemon's cost per move, not per message)
SEND_EVERY_S = 0.1
#: how long a pinned game waits for a slot of its host's cores (one whose game was cancelled
#: may still be ending) before the host gives up on it
SLOT_WAIT_S = 30.0


def host_name(worker: Worker) -> str:
    """The name a game host goes by: its `dask worker --name`, or its address."""
    return str(worker.name)


class NotWanted(Exception):
    """The daemon no longer wants a game that was running here: it was cancelled."""


def _wanted(worker: Worker, key: Any) -> bool:
    task = worker.state.tasks.get(key)
    return task is not None and task.state in WANTED


class _Outbox:
    """The moves of this worker's games, sent to their daemons' topics in batches (one
    `log_event` per topic every `SEND_EVERY_S`, from the games' loop, its moves packed as
    one bytes value: `wire.pack`); `flush` sends what is held at once, from any thread."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.lock = threading.Lock()
        self.held: dict[str, list[MoveEvent]] = {}

    def add(self, topic: str, move: MoveEvent) -> None:
        with self.lock:
            self.held.setdefault(topic, []).append(move)

    def flush(self) -> None:
        with self.lock:
            held, self.held = self.held, {}
        for topic, moves in held.items():
            self.worker.log_event(topic, {"moves": pack(moves)})


class _Games:
    """This worker process's games: one event loop in a thread of its own and one engine
    pool, kept between games, so that `reuse = true` engines stay running between their games
    on this host as they do in the daemon.  Engines left idle for `IDLE_S` (no game here) are
    closed, and so are all idle engines when a game is cancelled (its daemon may be gone)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="orchestrator-games", daemon=True)
        self.thread.start()
        self.pool = EnginePool()
        self.running = 0
        self.idle: asyncio.TimerHandle | None = None
        self.outbox: _Outbox | None = None
        self.sending: asyncio.TimerHandle | None = None

    def _run(self) -> None:
        runner_slice()  # the games' loop, as the daemon's: its engines come first
        self.loop.run_forever()

    def send(self, worker: Worker, topic: str, move: MoveEvent) -> None:
        """Hold `move` for `topic` (from the games' loop); it goes out within
        `SEND_EVERY_S`."""
        if self.outbox is None:
            self.outbox = _Outbox(worker)
        self.outbox.add(topic, move)
        if self.sending is None:
            self.sending = self.loop.call_later(SEND_EVERY_S, self._send)

    def _send(self) -> None:
        self.sending = None
        if self.outbox is not None:
            self.outbox.flush()

    def flush(self) -> None:
        """Send what is held now (from any thread): a game's last moves before its result."""
        if self.outbox is not None:
            self.outbox.flush()

    def play(
        self, spec: GameSpec, on_move: OnMove, on_log: OnLog, wanted: Callable[[], bool]
    ) -> GameRecord:
        """Play `spec` on the games' loop; blocks the calling (task) thread until it ends."""
        return asyncio.run_coroutine_threadsafe(
            self._play(spec, on_move, on_log, wanted), self.loop
        ).result()

    async def _play(
        self, spec: GameSpec, on_move: OnMove, on_log: OnLog, wanted: Callable[[], bool]
    ) -> GameRecord:
        self.running += 1
        if self.idle is not None:
            self.idle.cancel()
        game = asyncio.create_task(play_game(spec, pool=self.pool, on_move=on_move, on_log=on_log))
        try:
            while True:
                done, _ = await asyncio.wait({game}, timeout=WATCH_S)
                if done:
                    return game.result()
                if not wanted():  # aborted, or its daemon is gone: engines die now
                    game.cancel()
                    await asyncio.gather(game, return_exceptions=True)
                    await self.pool.close()
                    raise NotWanted("the daemon no longer wants this game")
        finally:
            self.running -= 1
            if not self.running:
                self.idle = self.loop.call_later(IDLE_S, self._close_idle)

    def _close_idle(self) -> None:
        if not self.running:
            self.loop.create_task(self.pool.close())


def host_games(worker: Worker) -> int:
    """How many games this worker plays at once: its `game` resource."""
    return max(1, int(worker.state.total_resources.get("game", 1)))


def announce() -> list[tuple[int, list[int]]]:
    """The cores this host announces for pinned games, as (NUMA node, CPUs) pairs: run on
    each worker by `orchestrator check` (`Client.run`)."""
    return [(c.node, list(c.cpus)) for c in host_cores(allowed=_cores.mask or None)]


class _Cores:
    """This host's slots of pinned cores: planned on the first pinned game (again for one
    whose engines need more CPUs, once no slot is taken), taken by each game for its length."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.threads = 0  # the CPUs per engine of the plan; 0: no plan yet
        self.mask: list[int] = []  # the worker's CPU mask before it moved to the spare CPUs
        self.free: list[Slot] = []
        self.taken = 0

    def take(self, games: int, threads: int, host: str) -> Slot:
        """A free slot for a game of `threads`-CPU engines (waiting `SLOT_WAIT_S` at most);
        a `DaemonFault` naming the host when its cores cannot hold its games."""
        deadline = time.monotonic() + SLOT_WAIT_S
        with self.changed:
            while True:
                if threads > self.threads and not self.taken:
                    self._plan(games, threads, host)
                if threads <= self.threads and self.free:
                    self.taken += 1
                    return self.free.pop(0)
                left = deadline - time.monotonic()
                if left <= 0 or not self.changed.wait(left):
                    raise DaemonFault(f"game host {host}: no slot of pinned cores came free")

    def give_back(self, slot: Slot) -> None:
        with self.changed:
            self.taken -= 1
            self.free.append(slot)
            self.changed.notify_all()

    def _plan(self, games: int, threads: int, host: str) -> None:
        self.mask = self.mask or sorted(os.sched_getaffinity(0))
        try:
            plan = plan_slots(host_cores(allowed=self.mask), games, threads)
        except (TooFewCores, ValueError) as exc:
            raise DaemonFault(f"game host {host}: pinned cores: {exc}") from None
        self.threads, self.free = threads, list(plan.slots)
        used = {cpu for slot in plan.slots for cpu in slot.cpus}
        spare = sorted(set(self.mask) - used)
        if spare:  # the worker's own threads keep off the engines' cores
            pin(os.getpid(), spare)


_games: _Games | None = None
_cores = _Cores()
_games_lock = threading.Lock()


def _this_host() -> _Games:
    """The games of this worker process, made on its first game.  Then the heap the worker
    holds (Dask's modules and ours, python-chess: most of what the collector tracks) is
    frozen for the process's life, as the daemon's is for an event (`frozen_heap` in
    `daemon/system.py`): a host that plays for a month pays no full collection over it."""
    global _games  # noqa: PLW0603 - one per worker process, made on its first game
    with _games_lock:
        if _games is None:
            gc.collect()
            gc.freeze()
            _games = _Games()
        return _games


def run_game(spec: GameSpec, topic: str) -> tuple[GameRecord, str]:
    """Play `spec` on this worker; its events go to `topic`, the daemon's, each naming the
    game by its task's key (a Dask task, see the module).  The game's record, with its PGN
    written here (`spec.pgn`), and the last chunk of its engines' log."""
    worker = get_worker()
    key = worker.get_current_task()
    host = host_name(worker)
    run = uuid.uuid4().hex  # a rerun of this task by Dask is told apart from this one
    start: dict[str, Any] = {
        "kind": "start", "key": key, "run": run, "host": host, "at": worker.address,
    }  # fmt: skip
    slot = None
    if spec.pin_threads is not None:
        slot = _cores.take(host_games(worker), spec.pin_threads, host)
        spec = dataclasses.replace(spec, cpus=(slot.first, slot.second))
        start["cpus"] = [cpu_text(slot.first), cpu_text(slot.second)]
    try:
        return _run_game(worker, spec, topic, key, run, host, start)
    finally:
        if slot is not None:
            _cores.give_back(slot)


def _run_game(
    worker: Worker, spec: GameSpec, topic: str, key: Any, run: str, host: str,
    start: dict[str, Any],
) -> tuple[GameRecord, str]:  # fmt: skip
    worker.log_event(topic, {"events": [start]})
    log: list[str] = []  # the engines' log since the last move sent
    games = _this_host()

    def on_log(text: str) -> None:
        log.append(text)

    def on_move(move: MoveRecord, ply: int, mover: chess.Color) -> None:
        text = "".join(log)
        log.clear()
        games.send(worker, topic, MoveEvent.of(str(key), run, ply, text, move))

    try:
        record = games.play(spec, on_move, on_log, lambda: _wanted(worker, key))
    finally:
        games.flush()  # the game's last moves go before its result
    record = dataclasses.replace(record, host=host)
    if spec.pgn is not None:
        record = dataclasses.replace(record, pgn=spec.pgn.render(record))
    return record, "".join(log)


def check_engine(config: Config, engine: EngineConfig, fen_reason: str | None) -> str:
    """Start, configure and close `engine` on this worker (`orchestrator check`); the name
    of the host.  A `ConfigError` naming the engine (and the host) when it cannot start."""
    host = host_name(get_worker())

    async def main() -> None:
        try:
            started = await probe(config, engine, fen_reason)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (on game host {host})") from None
        await started.close()

    asyncio.run(main())
    return host


def check_kibitzer(path: str, kibitzer: KibitzerConfig, variant: str = "standard") -> str:
    """Start and close a kibitzer's engine on this worker (`orchestrator check`, for a
    kibitzer that `requires` a game host); the name of the host.  A `ConfigError` naming
    the kibitzer (and the host) when it cannot start."""
    host = host_name(get_worker())
    asyncio.run(probe_kibitzer(path, kibitzer, host, variant))
    return host
