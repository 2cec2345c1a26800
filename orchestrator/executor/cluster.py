"""Games on Dask workers: the "dask://", "tls://" and (through `processes`) "processes"
executors.

The daemon is a Dask client (`Client(asynchronous=True)`).  Each attempt at a game is one
task, `worker.run_game`, with the resources it needs: a `game` slot and what both engines
`require`.  Dask's scheduler places it on a worker that has them, or keeps it waiting until
one connects.  The moves come back as Dask structured events on one topic of this daemon's
(`Worker.log_event` on the host, `Client.subscribe_topic` here), each naming its attempt by
the task's key: the game's thread never waits for the network, the events of one worker
arrive in order over one stream, and no polling is needed.  The scheduler keeps the last
events of a topic (`distributed.admin.low-level-log-length`, 1,000 by default), so one topic
costs it a bounded amount of memory however many games are played (a topic per attempt
would keep every game's).  An event lost with its worker costs nothing: the attempt is
aborted then, and a finished game's `GameRecord` (the task's result) holds every move.

Faults are the daemon's to decide, never Dask's: a lost worker (detected by the scheduler's
worker list, or by Dask starting the task again elsewhere) or a lost scheduler ends the
attempt with `HostFault`; the daemon aborts it and plays the game again as a new task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Awaitable
from typing import Any, cast

import structlog
from dask.utils import key_split
from distributed import Client, Future
from distributed.client import FutureCancelledError
from distributed.security import Security

from orchestrator.config.model import Config, ConfigError, EngineConfig, TournamentConfig
from orchestrator.core.cpus import Core, TooFewCores, cpu_text, plan_slots
from orchestrator.core.errors import DaemonFault
from orchestrator.core.game.openings import START
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.executor.base import HostFault, OnStart
from orchestrator.executor.wire import MoveEvent, unpack
from orchestrator.executor.worker import announce, check_engine, check_kibitzer, run_game
from orchestrator.game.game import GameSpec, OnLog, OnMove
from orchestrator.timeouts import timeout

log = structlog.get_logger()

CONNECT_S = 5.0  # how long one try to reach the scheduler may take
RETRY_S = 5.0  # between tries while the scheduler is unreachable
WORKERS_S = 1.0  # how often the list of connected workers is read
CANCEL_S = 5.0  # how long cancelling a task may take before it is left to the scheduler
#: every this many attempts, Dask's cache of split task keys is emptied (`_forget_keys`)
FORGET_EVERY = 100


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


def _keep_one_idle(client: Client) -> None:
    """Close all but one of the client's idle pooled connections to each address.

    Dask's client sends each call (`identity`, the `gather` of a result, `cancel`, `run`)
    on a connection of its pool, opens another when calls overlap, and keeps every one it
    opened: the pool holds as many connections as calls ever overlapped, a descriptor each,
    so a daemon running for a month would gain one whenever a rarer overlap happens.  This
    is what Dask's own `ConnectionPool.collect` does with every idle connection (closed,
    and its place in the pool's limit given back), for all but the one the next call takes.
    """
    pool: Any = client.rpc
    for idle in pool.available.values():
        while len(idle) > 1:
            idle.pop().abort()
            pool.semaphore.release()


class DaskExecutor:
    """Games as tasks on the workers of the Dask scheduler at `address`."""

    def __init__(
        self,
        address: str,
        label: str,
        security: Security | None = None,
        pin_threads: int | None = None,
    ) -> None:
        self.address = address
        self.label = label
        self.security = security
        #: pinned cores (`affinity`): the CPUs each engine needs, planned by each host
        self.pin_threads = pin_threads
        self.client: Client | None = None
        self.workers: dict[str, dict[str, Any]] = {}  # address: name, resources
        self.workers_read = 0.0  # monotonic time of the last read of `workers`
        self._connecting = asyncio.Lock()
        self._down_since: float | None = None
        self._watch: asyncio.Task[None] | None = None
        #: this daemon's topic, and the attempts followed now (by their task's key)
        self.topic = f"orchestrator/{uuid.uuid4().hex}"
        self.followed: dict[str, _Follow] = {}
        self.attempts = 0  # attempts played (`FORGET_EVERY`)
        self._forgetting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect in the background: the daemon applies controls and answers signals while
        the scheduler is unreachable, and its games wait in `ready`."""
        self._watch = asyncio.create_task(self._read_workers())

    # the scheduler ----------------------------------------------------------------------

    def connected(self) -> bool:
        """Whether the scheduler is connected now."""
        return self.client is not None and self.client.status == "running"

    async def ready(self) -> None:
        """Until the scheduler is connected: an outage is logged once when it starts
        (`scheduler_unreachable`) and once when it ends (`scheduler_reconnected`)."""
        async with self._connecting:
            while not self.connected():
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
        """One try to reach the scheduler (`CONNECT_S` at most); OSError or TimeoutError.
        The new connection subscribes to this daemon's topic."""
        self.client = await connect_client(self.address, self.security, "orchestrator")
        self.client.subscribe_topic(self.topic, self._event)

    def _event(self, event: tuple[float, dict[str, Any]]) -> None:
        """An event of the topic: a game's start, or a game host's batch of its games'
        moves (`wire.pack`), each to the attempt it names (one no longer followed: dropped)."""
        message = event[1]
        for one in message.get("events", ()):
            follow = self.followed.get(str(one.get("key")))
            if follow is not None:
                follow.event(one)
        packed = message.get("moves")
        if packed is not None:
            try:
                moves = unpack(packed)
            except ValueError as exc:  # not our hosts' packing: their live moves are lost
                log.warning("host_moves_unreadable", scheduler=self.label, error=str(exc))
                return
            for move in moves:
                follow = self.followed.get(move.key)
                if follow is not None:
                    follow.moved(move)

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
                _keep_one_idle(client)
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
        need = resources(spec.white, spec.black)
        if self.pin_threads is not None:
            spec = dataclasses.replace(spec, pin_threads=self.pin_threads)
        future: Future[tuple[GameRecord, str]] = client.submit(
            run_game, spec, self.topic, key=key, resources=need, pure=False, retries=0
        )
        follow = self.followed[key] = _Follow(self, spec, future, need, on_move, on_start, on_log)
        try:
            return await follow.run()
        finally:
            self.followed.pop(key, None)
            if follow.starting is not None and not follow.starting.done():
                follow.starting.cancel()
            if not future.done():
                await _bounded(client.cancel([future], reason="aborted"), CANCEL_S)
            future.release()
            self.attempts += 1
            if self.attempts % FORGET_EVERY == 0 and self._forgetting is None:
                self._forgetting = asyncio.create_task(self._forget_keys(client))

    async def _forget_keys(self, client: Client) -> None:
        """Empty Dask's cache of the task keys it has split (`dask.utils.key_split`), which
        the scheduler and every worker keep, up to 100,000 keys each: each attempt at a game
        is a task with a key of its own, so a long event would leave an entry for every game
        played in each of those processes.  A cache: what it forgets is split again when
        needed.  Dask's own `key_split.cache_clear` is sent (a scheduler of your own needs
        nothing of ours installed), in the background: a scheduler that does not answer
        costs the daemon nothing but a log line."""
        try:
            async with timeout(CANCEL_S):
                await client.run_on_scheduler(key_split.cache_clear)
                await client.run(key_split.cache_clear)
        except Exception as exc:  # the games go on whatever a cache does
            log.warning("dask_keys_not_forgotten", scheduler=self.label, error=repr(exc))
        finally:
            self._forgetting = None

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
             (str(config.path), k, config.tournament.variant))
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

    async def host_plans(self, config: Config, threads: int) -> list[str]:
        """`orchestrator check` with pinned cores: each connected host's slots, planned over
        the cores it announces (`worker.announce`) for as many games as its `game` resource,
        a line each; a `ConfigError` naming the first host whose cores cannot hold them."""
        assert self.client is not None
        client: Any = self.client
        try:
            announced: dict[str, list[tuple[int, list[int]]]] = await client.run(announce)
        except ValueError as exc:  # a host's ORCHESTRATOR_GAME_CPUS
            raise ConfigError(f"{config.path}: [tournament] affinity: a game host: {exc}") from None
        lines = []
        for address, info in sorted(self.workers.items(), key=lambda w: str(w[1].get("name"))):
            name = str(info.get("name", address))
            games = max(1, int(info.get("resources", {}).get("game", 1)))
            cores = [Core(node, tuple(cpus)) for node, cpus in announced.get(address, [])]
            try:
                plan = plan_slots(cores, games, threads)
            except TooFewCores as exc:
                raise ConfigError(
                    f"{config.path}: [tournament] affinity: game host {name}: {exc} (give it "
                    "fewer game slots, or more CPUs)"
                ) from None
            slots = "; ".join(f"{cpu_text(s.first)} | {cpu_text(s.second)}" for s in plan.slots)
            lines.append(f"game host {name}: pinned cores: {slots}; spare: "
                         f"{cpu_text(plan.spare) or 'none'}")  # fmt: skip
        return lines

    async def close(self) -> None:
        for task in (self._watch, self._forgetting):
            if task is not None:
                task.cancel()
                await asyncio.wait({task}, timeout=CANCEL_S)
        await self._drop_client()


class _Follow:
    """One attempt's task, followed from here: its start, its moves, its end.  The events
    are taken as they come (`event` and `moved`, from the executor's topic), without a task
    of their own: a move costs the daemon its `MoveRecord` and the daemon's own `on_move`."""

    def __init__(
        self,
        executor: DaskExecutor,
        spec: GameSpec,
        future: Future[tuple[GameRecord, str]],
        need: dict[str, float],
        on_move: OnMove,
        on_start: OnStart,
        on_log: OnLog,
    ) -> None:
        self.executor = executor
        self.future = future
        self.need = need
        self.on_move = on_move
        self.on_start = on_start
        self.on_log = on_log
        opening = spec.opening or START
        self.ply = len(opening.moves)  # the moves on the board: the book's, then those seen
        self.first = opening.board().turn  # the side to move in the start position
        self.run_id: str | None = None
        self.host: str | None = None
        self.address: str | None = None
        self.started = 0.0  # monotonic time of the start event
        self.submitted = time.monotonic()
        self.waiting_logged = False
        self.starting: asyncio.Future[None] | None = None  # `on_start`, once the game runs
        self.lost: asyncio.Future[HostFault] = asyncio.get_running_loop().create_future()

    async def run(self) -> GameRecord:
        result = asyncio.ensure_future(self._result())
        try:
            while not result.done():
                waiting: set[asyncio.Future[Any]] = {result, self.lost}
                await asyncio.wait(waiting, timeout=WORKERS_S)
                if self.lost.done():
                    raise self.lost.result()
                self._check_host()
            record, log = result.result()
            if self.starting is not None:
                await self.starting
        finally:
            result.cancel()
        for move in record.moves[self.ply :]:  # any the events lacked
            self._next(move)
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

    def _next(self, move: MoveRecord) -> None:
        """The attempt's next move (found legal on its host)."""
        self.ply += 1
        self.on_move(move, self.ply, self.first if self.ply % 2 else not self.first)

    def moved(self, move: MoveEvent) -> None:
        """One move of this attempt's task: taken when it is the next of this run."""
        if move.run == self.run_id and move.ply == self.ply + 1:
            self.on_log(move.log)
            self._next(move.record())

    def event(self, message: dict[str, Any]) -> None:
        """An event of this attempt's task other than its moves: its start."""
        kind, run = message.get("kind"), message.get("run")
        if kind == "start":
            if self.run_id is None:
                self.run_id, self.host = run, str(message.get("host"))
                self.address, self.started = str(message.get("at")), time.monotonic()
                cpus = message.get("cpus")
                pinned = (str(cpus[0]), str(cpus[1])) if cpus else None
                self.starting = asyncio.ensure_future(self.on_start(self.host, pinned))
            elif run != self.run_id and not self.lost.done():  # Dask started it again
                self.lost.set_result(
                    HostFault(
                        self.host,
                        "the game host was lost (the game was started again elsewhere)",
                        lost=True,
                    )
                )

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
