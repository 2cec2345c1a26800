"""Games on Dask workers: the "dask://", "tls://" and (through `processes`) "processes"
executors.

The daemon is a Dask client (`Client(asynchronous=True)`).  Each attempt at a game is one
task, `worker.run_game`, with the resources it needs: a `game` slot and what both engines
`require`.  Dask's scheduler places it on a worker that has them, or keeps it waiting until
one connects.  The moves come back as Dask structured events on a topic of the attempt's
own (`Worker.log_event` on the host, `Client.subscribe_topic` here): the game's thread never
waits for the network, the events of one worker arrive in order over one stream, and no
polling is needed.  An event lost with its worker costs nothing: the attempt is aborted
then, and a finished game's `GameRecord` (the task's result) holds every move.

Faults are the daemon's to decide, never Dask's: a lost worker (detected by the scheduler's
worker list, or by Dask starting the task again elsewhere) or a lost scheduler ends the
attempt with `HostFault`; the daemon aborts it and plays the game again as a new task.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, cast

import chess
import structlog
from distributed import Client, Future
from distributed.client import FutureCancelledError
from distributed.security import Security

from orchestrator.config.model import Config, EngineConfig, TournamentConfig
from orchestrator.core.errors import DaemonFault
from orchestrator.core.game.record import GameRecord
from orchestrator.executor.base import HostFault, OnStart
from orchestrator.executor.worker import check_engine, check_kibitzer, move_from_wire, run_game
from orchestrator.game.game import GameSpec, OnLog, OnMove

log = structlog.get_logger()

CONNECT_S = 5.0  # how long one try to reach the scheduler may take
RETRY_S = 5.0  # between tries while the scheduler is unreachable
WORKERS_S = 1.0  # how often the list of connected workers is read
CANCEL_S = 5.0  # how long cancelling a task may take before it is left to the scheduler


def resources(*engines: EngineConfig) -> dict[str, float]:
    """What a game needs of its host: a game slot, and its engines' requirements.

    >>> gpu = EngineConfig(name="Lc0", command=("lc0",), requires={"gpu": 1})
    >>> resources(gpu, EngineConfig(name="SF", command=("stockfish",)))
    {'game': 1.0, 'gpu': 1.0}
    >>> resources(gpu, gpu)
    {'game': 1.0, 'gpu': 2.0}
    """
    need = {"game": 1.0}
    for engine in engines:
        for name, amount in engine.requires.items():
            need[name] = need.get(name, 0.0) + float(amount)
    return need


def unmet(need: dict[str, float], workers: dict[str, dict[str, Any]]) -> bool:
    """Whether no worker has everything `need` asks for (busy or not).

    >>> workers = {"tcp://a:1": {"resources": {"game": 1, "gpu": 1}}}
    >>> unmet({"game": 1, "gpu": 1}, workers), unmet({"game": 1, "gpu": 2}, workers)
    (False, True)
    """
    return not any(
        all(w.get("resources", {}).get(k, 0) >= amount for k, amount in need.items())
        for w in workers.values()
    )


def security(section: TournamentConfig) -> Security | None:
    """Dask's TLS settings of a "tls://" executor (None for the others)."""
    if not section.executor.startswith("tls://"):
        return None
    return Security(
        tls_ca_file=str(section.tls_ca_file),
        tls_client_cert=str(section.tls_cert),
        tls_client_key=str(section.tls_key),
        require_encryption=True,
    )


async def connect_client(address: str, security: Security | None, name: str) -> Client:
    """An asynchronous Dask client of the scheduler at `address` (`CONNECT_S` at most to
    reach it; OSError or TimeoutError), never the process's default client."""
    client: Client = await Client(
        address,
        asynchronous=True,
        security=security,
        timeout=CONNECT_S,
        name=name,
        set_as_default=False,
    )
    return client


async def _bounded(work: Awaitable[object], seconds: float) -> None:
    """Await `work` for `seconds` at most, then leave it cancelled without waiting for the
    cancellation to finish: a shutdown must never hang on Dask's own clean-up."""
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
    elif not task.cancelled() and task.exception() is not None:
        log.warning("dask_close_failed", error=repr(task.exception()))


async def _identity(client: Client) -> dict[str, Any]:
    """The scheduler's identity, with every connected worker (name, resources, ...)."""
    rpc: Any = client.scheduler
    return cast(dict[str, Any], await rpc.identity(n_workers=-1))


class DaskExecutor:
    """Games as tasks on the workers of the Dask scheduler at `address`."""

    def __init__(self, address: str, label: str, security: Security | None = None) -> None:
        self.address = address
        self.label = label
        self.security = security
        self.client: Client | None = None
        self.workers: dict[str, dict[str, Any]] = {}  # address: name, resources
        self.workers_read = 0.0  # monotonic time of the last read of `workers`
        self._connecting = asyncio.Lock()
        self._down_since: float | None = None
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect in the background: the daemon applies controls and answers signals while
        the scheduler is unreachable, and its games wait in `ready`."""
        self._watch = asyncio.create_task(self._read_workers())

    # the scheduler ----------------------------------------------------------------------

    def _connected(self) -> bool:
        return self.client is not None and self.client.status == "running"

    async def ready(self) -> None:
        """Until the scheduler is connected: an outage is logged once when it starts
        (`scheduler_unreachable`) and once when it ends (`scheduler_reconnected`)."""
        async with self._connecting:
            while not self._connected():
                if self.client is not None:
                    self._outage("the connection to the scheduler was lost")
                    if self.client.status == "connecting":  # Dask's own reconnection
                        await asyncio.sleep(0.5)
                        continue
                    await self._drop_client()
                try:
                    await self.connect()
                except (OSError, TimeoutError) as exc:
                    self._outage(str(exc) or type(exc).__name__)
                    await asyncio.sleep(RETRY_S)
            if self._down_since is not None:
                down = round(time.monotonic() - self._down_since, 1)
                log.info("scheduler_reconnected", scheduler=self.label, down_s=down)
                self._down_since = None

    async def connect(self) -> None:
        """One try to reach the scheduler (`CONNECT_S` at most); OSError or TimeoutError."""
        self.client = await connect_client(self.address, self.security, "orchestrator")

    def _outage(self, error: str) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.error(
                "scheduler_unreachable", scheduler=self.label, error=error, retry_in_s=RETRY_S
            )

    async def _drop_client(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await _bounded(client.close(), CANCEL_S)

    async def _read_workers(self) -> None:
        """Keep `workers` current: the workers connected to the scheduler now."""
        while True:
            await self.ready()
            client = self.client
            if client is not None and client.status == "running":
                try:
                    identity = await asyncio.wait_for(_identity(client), CONNECT_S)
                except Exception:  # the watch must outlive any one failed read
                    pass
                else:
                    self.workers = dict(identity.get("workers", {}))
                    self.workers_read = time.monotonic()
            await asyncio.sleep(WORKERS_S)

    async def refresh_workers(self) -> dict[str, dict[str, Any]]:
        """The connected workers, read now."""
        await self.ready()
        assert self.client is not None
        identity = await _identity(self.client)
        self.workers = dict(identity.get("workers", {}))
        self.workers_read = time.monotonic()
        return self.workers

    # games ------------------------------------------------------------------------------

    async def play(
        self, spec: GameSpec, *, key: str, on_move: OnMove, on_start: OnStart, on_log: OnLog
    ) -> GameRecord:
        await self.ready()
        client = self.client
        assert client is not None
        topic = f"orchestrator/{key}"
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        client.subscribe_topic(topic, lambda event: events.put_nowait(event[1]))
        need = resources(spec.white, spec.black)
        future: Future[tuple[GameRecord, str]] = client.submit(
            run_game, spec, topic, key=key, resources=need, pure=False, retries=0
        )
        try:
            follow = _Follow(self, spec, future, events, need, on_move, on_start, on_log)
            return await follow.run()
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(topic)
            if not future.done():
                await _bounded(client.cancel([future], reason="aborted"), CANCEL_S)
            future.release()

    async def check(self, config: Config, fen_reason: str | None) -> list[str]:
        """`orchestrator check` on the workers: each engine started once on a worker that
        can run its games, and each kibitzer that `requires` a game host on one that has it;
        the lines to print for those whose requirements no connected worker meets (their
        games, or the kibitzer, would wait).  A `ConfigError` for an engine that fails."""
        workers = await self.refresh_workers()
        assert self.client is not None
        tries: list[tuple[str, dict[str, float], str, Any, tuple[Any, ...]]] = [
            (f'[[engine]] "{e.name}"', resources(e), "its games", check_engine,
             (config, e, fen_reason))
            for e in config.engines
        ]  # fmt: skip
        tries += [
            (f'[[kibitzer]] "{k.name}"', dict(k.requires), "it", check_kibitzer,
             (str(config.path), k))
            for k in config.kibitzers
            if k.requires  # one without runs beside the daemon: tried there
        ]  # fmt: skip
        warnings = []
        futures = []
        for section, need, who, task, args in tries:
            if unmet(need, workers):
                shown = ", ".join(f"{k}={v:g}" for k, v in need.items())
                warnings.append(
                    f"{config.path}: {section} requires {shown}: no worker connected to "
                    f"{self.label} has it, so {who} will wait for one"
                )
                continue
            futures.append(self.client.submit(task, *args, resources=need, pure=False))
        assert self.client is not None
        try:
            await self.client.gather(futures)
        finally:
            for future in futures:
                future.release()
        return warnings

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.wait({self._watch}, timeout=CANCEL_S)
        await self._drop_client()


class _Follow:
    """One attempt's task, followed from here: its start, its moves, its end."""

    def __init__(
        self,
        executor: DaskExecutor,
        spec: GameSpec,
        future: Future[tuple[GameRecord, str]],
        events: asyncio.Queue[dict[str, Any]],
        need: dict[str, float],
        on_move: OnMove,
        on_start: OnStart,
        on_log: OnLog,
    ) -> None:
        self.executor = executor
        self.future = future
        self.events = events
        self.need = need
        self.on_move = on_move
        self.on_start = on_start
        self.on_log = on_log
        self.board = (spec.opening.board() if spec.opening else chess.Board()).copy()
        if spec.opening:
            for uci in spec.opening.moves:
                self.board.push_uci(uci)
        self.run_id: str | None = None
        self.host: str | None = None
        self.address: str | None = None
        self.started = 0.0  # monotonic time of the start event
        self.submitted = time.monotonic()
        self.waiting_logged = False

    async def run(self) -> GameRecord:
        result = asyncio.ensure_future(self._result())
        try:
            while not result.done():
                get = asyncio.ensure_future(self.events.get())
                done, _ = await asyncio.wait(
                    {result, get}, timeout=WORKERS_S, return_when=asyncio.FIRST_COMPLETED
                )
                if get in done:
                    await self._event(get.result())
                else:
                    get.cancel()
                self._check_host()
            while not self.events.empty():  # the moves that came with the result
                await self._event(self.events.get_nowait())
            record, log = result.result()
        finally:
            result.cancel()
        for move in record.moves[len(self.board.move_stack) :]:  # any the events lacked
            self.board.push(chess.Move.from_uci(move.uci))
            await self.on_move(move, self.board)
        self.on_log(log)
        return record

    async def _result(self) -> tuple[GameRecord, str]:
        try:
            return cast(tuple[GameRecord, str], await self.future)
        except FutureCancelledError as exc:
            detail = f"the scheduler cancelled the game ({exc.reason})"
            lost_scheduler = exc.reason == "scheduler-connection-lost"
            raise HostFault(self.host, detail, lost=True, scheduler=lost_scheduler) from None
        except HostFault:
            raise
        except (OSError, TimeoutError) as exc:
            detail = f"the scheduler was lost: {exc}"
            raise HostFault(self.host, detail, lost=True, scheduler=True) from None
        except Exception as exc:
            if isinstance(exc, DaemonFault):  # the host's own limits: as in the daemon
                raise
            detail = f"the game failed on its host: {type(exc).__name__}: {exc}"
            raise HostFault(self.host, detail, lost=False) from None

    async def _event(self, message: dict[str, Any]) -> None:
        kind, run = message.get("kind"), message.get("run")
        if kind == "start":
            if self.run_id is None:
                self.run_id, self.host = run, str(message.get("host"))
                self.address, self.started = str(message.get("at")), time.monotonic()
                await self.on_start(self.host)
            elif run != self.run_id:  # Dask started it again: its first worker was lost
                raise HostFault(
                    self.host,
                    "the game host was lost (the game was started again elsewhere)",
                    lost=True,
                )
        elif (
            kind == "move"
            and run == self.run_id
            and message.get("ply") == len(self.board.move_stack) + 1
        ):
            move = move_from_wire(message["move"])
            self.board.push(chess.Move.from_uci(move.uci))  # found legal on the host
            self.on_log(str(message.get("log", "")))
            await self.on_move(move, self.board)

    def _check_host(self) -> None:
        executor = self.executor
        if executor.client is None or executor.client.status != "running":
            raise HostFault(self.host, "the scheduler was lost", lost=True, scheduler=True)
        if self.address is not None:
            fresh = executor.workers_read > self.started + WORKERS_S
            if fresh and self.address not in executor.workers:
                raise HostFault(self.host, "the game host was lost", lost=True)
        elif (
            not self.waiting_logged
            and time.monotonic() - self.submitted > 2 * WORKERS_S
            and executor.workers_read > self.submitted
            and unmet(self.need, executor.workers)
        ):
            self.waiting_logged = True
            log.warning(
                "placement_waiting",
                needs=dict(self.need),
                workers=len(executor.workers),
                detail="no connected worker has these resources: the game waits for one",
            )
