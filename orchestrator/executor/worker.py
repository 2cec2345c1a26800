"""What runs on a game host (a Dask worker): one game, or one engine's or kibitzer's check.

A game runs on the worker, on an event loop of the worker process's own (`_Games`, in a
thread beside Dask's): both engines start there and their clocks are kept there, next to the
engines' pipes, so no network lag is ever charged to an engine.  Each move is sent to the
daemon as it is played with Dask's structured events (`Worker.log_event`, which never waits
for the network), with the engines' log written since the move before; the whole
`GameRecord` and the log's last chunk are the task's result.  The task watches its own
key: once the daemon no longer wants the game (it aborted the attempt, lost the scheduler, or
died), the game is cancelled and its engines are killed at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import uuid
from collections.abc import Callable
from typing import Any

import chess
from distributed import get_worker
from distributed.worker import Worker

from orchestrator.config.model import Config, ConfigError, EngineConfig, KibitzerConfig
from orchestrator.core.game.record import Cp, GameRecord, Mate, MoveRecord
from orchestrator.engines.pool import EnginePool
from orchestrator.engines.probe import probe, probe_kibitzer
from orchestrator.game.game import GameSpec, OnLog, OnMove, play_game

#: how often a game checks that the daemon still wants it (seconds)
WATCH_S = 0.25
#: engines kept for their next game (`reuse = true`) are closed after this long without games
IDLE_S = 5.0
#: the task states in which a worker still runs a task for a client that wants it
WANTED = frozenset({"executing", "long-running"})


def move_to_wire(move: MoveRecord) -> dict[str, Any]:
    """A move as msgpack can carry it (Dask's events are msgpack).

    >>> wire = move_to_wire(MoveRecord("e2e4", "e4", score=Mate(-3), pv=("e2e4", "e7e5")))
    >>> wire["score"], wire["pv"]
    (['mate', -3], ['e2e4', 'e7e5'])
    >>> move_from_wire(wire) == MoveRecord("e2e4", "e4", score=Mate(-3), pv=("e2e4", "e7e5"))
    True
    """
    plain = {f.name: getattr(move, f.name) for f in dataclasses.fields(move)}
    score = move.score
    if score is not None:
        mate = score.mate()
        plain["score"] = ["mate", mate] if mate is not None else ["cp", score.score()]
    plain["pv"] = list(move.pv)
    return plain


def move_from_wire(plain: dict[str, Any]) -> MoveRecord:
    """The `MoveRecord` of `move_to_wire` (see there)."""
    fields = dict(plain)
    score = fields.get("score")
    if score is not None:
        kind, value = score
        fields["score"] = Mate(value) if kind == "mate" else Cp(value)
    fields["pv"] = tuple(fields.get("pv") or ())
    return MoveRecord(**fields)


def host_name(worker: Worker) -> str:
    """The name a game host goes by: its `dask worker --name`, or its address."""
    return str(worker.name)


class NotWanted(Exception):
    """The daemon no longer wants a game that was running here: it was cancelled."""


def _wanted(worker: Worker, key: Any) -> bool:
    task = worker.state.tasks.get(key)
    return task is not None and task.state in WANTED


class _Games:
    """This worker process's games: one event loop in a thread of its own and one engine
    pool, kept between games, so that `reuse = true` engines stay running between their games
    on this host as they do in the daemon.  Engines left idle for `IDLE_S` (no game here) are
    closed, and so are all idle engines when a game is cancelled (its daemon may be gone)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="orchestrator-games", daemon=True
        )
        self.thread.start()
        self.pool = EnginePool()
        self.running = 0
        self.idle: asyncio.TimerHandle | None = None

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


_games: _Games | None = None
_games_lock = threading.Lock()


def _this_host() -> _Games:
    global _games  # noqa: PLW0603 - one per worker process, made on its first game
    with _games_lock:
        if _games is None:
            _games = _Games()
        return _games


def run_game(spec: GameSpec, topic: str) -> tuple[GameRecord, str]:
    """Play `spec` on this worker; its events go to `topic` (a Dask task, see the module).
    The game's record, and the last chunk of its engines' log."""
    worker = get_worker()
    key = worker.get_current_task()
    host = host_name(worker)
    run = uuid.uuid4().hex  # a rerun of this task by Dask is told apart from this one
    worker.log_event(topic, {"kind": "start", "run": run, "host": host, "at": worker.address})
    log: list[str] = []  # the engines' log since the last move sent

    def on_log(text: str) -> None:
        log.append(text)

    async def on_move(move: MoveRecord, board: chess.Board) -> None:
        ply = len(board.move_stack)
        text = "".join(log)
        log.clear()
        worker.log_event(
            topic,
            {"kind": "move", "run": run, "ply": ply, "move": move_to_wire(move), "log": text},
        )

    record = _this_host().play(spec, on_move, on_log, lambda: _wanted(worker, key))
    return dataclasses.replace(record, host=host), "".join(log)


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


def check_kibitzer(path: str, kibitzer: KibitzerConfig) -> str:
    """Start and close a kibitzer's engine on this worker (`orchestrator check`, for a
    kibitzer that `requires` a game host); the name of the host.  A `ConfigError` naming
    the kibitzer (and the host) when it cannot start."""
    host = host_name(get_worker())
    asyncio.run(probe_kibitzer(path, kibitzer, host))
    return host
