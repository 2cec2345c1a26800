"""A kibitzer on a game host of its own: `requires = { kibitz = 1 }` in a `[[kibitzer]]`,
with a Dask executor ("dask://" or "tls://").

The kibitz process is a Dask client of the event's scheduler.  Each remote kibitzer is a
Dask actor, `KibitzHost`, placed by the scheduler on a worker that has the resources the
kibitzer `requires`.  Unlike a game, which reports its moves as events and is never waited
on, a kibitzer is asked: the kibitz process sends each new position (`analyse`) and takes
the engine's analysis of it a few times a second (`take`).  Nothing of a game waits on it,
and a poll every `POLL_S` is far more often than anyone reads an evaluation.

On the host, the actor keeps its engine on an event loop of its own, in a thread beside
Dask's, and the engine runs at the lowest CPU priority (`Engine.start(idle=True)`).  The
engine is killed when the kibitz process closes the actor, when the worker stops, and when
nobody has asked for its analysis for `LEASE_S` (the kibitz process died without a word): a
kibitzer never outlives its event.  Any failure (the engine's, the worker's, the
scheduler's) is an `EngineError` here, and the kibitzer is started again as a local one
would be (`kibitzer_restarted`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Coroutine
from typing import Any, TypeVar

import chess
import chess.engine
import msgspec
from distributed import Client, Future, get_worker

from orchestrator.config.model import ConfigError, KibitzerConfig, TournamentConfig, dask_address
from orchestrator.core.game.variants import new_board, rules_on
from orchestrator.engines.adapter import Engine, EngineFault
from orchestrator.executor.cluster import connect_client, security
from orchestrator.kibitz.analysis import analyse

__all__ = ["KibitzHost", "RemoteAnalyser", "RemoteHosts"]

POLL_S = 0.25  # how often the analysis is taken from the host
CALL_S = 10.0  # the longest one call to the host may take
PLACE_S = 60.0  # how long a host with the resources is waited for, per start
#: a host's engine is killed after this long without a call (its kibitz process is gone)
LEASE_S = float(os.environ.get("ORCHESTRATOR_KIBITZ_LEASE_S", "15"))

T = TypeVar("T")


def _where(host: str, pid: int) -> dict[str, object]:
    return {"host": host, "pid": pid}


class KibitzHost:
    """On a game host: one kibitzer's engine, and its analysis of the position asked last.

    Its methods run in the worker's actor thread; each hands its work to the host's own
    event loop, where the engine lives.
    """

    def __init__(self, config: bytes) -> None:
        self.config = msgspec.json.decode(config, type=KibitzerConfig)
        self.host = str(get_worker().name)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self._run, name=f"kibitzer-{self.config.name}", daemon=True
        )
        self.thread.start()
        self.engine: Engine | None = None
        self.seq = -1
        self.infos: list[chess.engine.InfoDict] = []
        self.complete = False
        self.error = ""
        self.task: asyncio.Task[None] | None = None
        self.touched = time.monotonic()

    def _run(self) -> None:
        self.loop.create_task(self._lease())
        self.loop.run_forever()

    def _on_loop(self, work: Coroutine[Any, Any, T], seconds: float = CALL_S) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(seconds)

    # what the kibitz process calls ---------------------------------------------------------

    def start(self) -> dict[str, object]:
        """Start the engine: where it runs (host, pid).  A RuntimeError naming the fault."""
        self.touched = time.monotonic()
        return self._on_loop(self._start(), self.config.startup_timeout + CALL_S)

    def analyse(
        self, seq: int, fen: str, moves: list[str], chess960: bool, rules: str = "chess"
    ) -> None:
        """Analyse the position `fen` + `moves` (a game by `rules`) from now on, without a
        limit."""
        self.touched = time.monotonic()
        self._on_loop(self._analyse(seq, fen, moves, chess960, rules))

    def take(self, seq: int) -> tuple[list[chess.engine.InfoDict], bool, str]:
        """The analysis of position `seq` since the last take: the infos, whether the engine
        stopped by itself, and its failure ("" while it works)."""
        self.touched = time.monotonic()
        return self._on_loop(self._take(seq))

    def close(self) -> None:
        """Kill the engine and end the host's loop."""
        with contextlib.suppress(Exception):
            self._on_loop(self._close())
        self.loop.call_soon_threadsafe(self.loop.stop)

    # on the host's loop ---------------------------------------------------------------------

    async def _start(self) -> dict[str, object]:
        try:
            self.engine = await Engine.start(self.config.engine(), idle=True)
        except EngineFault as fault:
            raise RuntimeError(f"{fault.kind}: {fault.detail} (on game host {self.host})") from None
        return _where(self.host, self.engine.pid)

    async def _analyse(
        self, seq: int, fen: str, moves: list[str], chess960: bool, rules: str
    ) -> None:
        await self._stop_analysis()
        board = new_board(fen, chess960, rules)
        for uci in moves:
            board.push_uci(uci)
        self.seq, self.infos, self.complete, self.error = seq, [], False, ""
        self.task = asyncio.create_task(self._follow(board))

    async def _follow(self, board: chess.Board) -> None:
        if self.engine is None:
            self.error = "the engine is not started"
            return
        try:
            async for info in analyse(self.engine, board):
                self.infos.append(info)  # to the list `take` left: it may swap it meanwhile
            self.complete = True
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, EngineFault) as exc:
            self.error = f"{exc} (on game host {self.host})"

    async def _take(self, seq: int) -> tuple[list[chess.engine.InfoDict], bool, str]:
        if seq != self.seq:
            return [], False, ""
        infos, self.infos = self.infos, []
        return infos, self.complete, self.error

    async def _stop_analysis(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _close(self) -> None:
        await self._stop_analysis()
        engine, self.engine = self.engine, None
        if engine is not None:
            await engine.close()

    async def _lease(self) -> None:
        """The kibitz process is gone when it stops taking: the engine dies then."""
        while True:
            await asyncio.sleep(1.0)
            if self.engine is not None and time.monotonic() - self.touched > LEASE_S:
                await self._close()


class RemoteAnalyser:
    """The kibitz process's side of a `KibitzHost` (an `Analyser`, see `kibitz/follow.py`)."""

    def __init__(self, client: Client, future: Future[Any], actor: Any) -> None:
        self.client = client
        self.future = future
        self.actor = actor
        self.where: dict[str, object] = {}
        self.seq = 0

    async def ask(self, method: str, *args: Any, seconds: float = CALL_S) -> Any:
        """Call `method` of the host's actor (an `EngineError` when that fails, or when it
        takes over `seconds`)."""
        with self.client.as_current():  # the actor finds its client through Dask's "current"
            try:
                work = getattr(self.actor, method)(*args)
            except Exception as exc:
                raise chess.engine.EngineError(f"its game host failed: {exc}") from None
        return await _call(work, seconds)

    async def infos(self, board: chess.Board) -> AsyncGenerator[chess.engine.InfoDict, None]:
        self.seq += 1
        root = board.root()
        moves = [m.uci() for m in board.move_stack]
        await self.ask("analyse", self.seq, root.fen(), moves, board.chess960, rules_on(board))
        while True:
            infos, complete, error = await self.ask("take", self.seq)
            for info in infos:
                yield info
            if error:
                raise chess.engine.EngineError(error)
            if complete:
                return
            await asyncio.sleep(POLL_S)

    async def close(self) -> None:
        with contextlib.suppress(chess.engine.EngineError):
            await self.ask("close")
        self.future.release()


async def _call(work: Awaitable[T], seconds: float) -> T:
    """One call to a host; any failure of the host, the network or the scheduler is an
    `EngineError` (the kibitzer is started again)."""
    try:
        return await asyncio.wait_for(work, seconds)
    except chess.engine.EngineError:
        raise
    except TimeoutError:
        raise chess.engine.EngineError(
            f"its game host did not answer within {seconds:g} s"
        ) from None
    except Exception as exc:
        raise chess.engine.EngineError(f"its game host failed: {exc}") from None


class RemoteHosts:
    """The kibitz process's connection to the event's Dask scheduler."""

    def __init__(self, section: TournamentConfig) -> None:
        address = dask_address(section.executor)
        if address is None:
            raise ConfigError(
                f"[tournament] executor: a kibitzer's requires needs a Dask scheduler, not "
                f"{section.executor!r}"
            )
        self.address = address
        self.security = security(section)
        self.client: Client | None = None

    async def _client(self) -> Client:
        if self.client is None or self.client.status != "running":
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.client.close(), CALL_S)
            self.client = None
            try:
                self.client = await connect_client(
                    self.address, self.security, "orchestrator-kibitz"
                )
            except (OSError, TimeoutError) as exc:
                raise chess.engine.EngineError(
                    f"cannot reach the scheduler {self.address}: {exc}"
                ) from None
        return self.client

    async def start(self, config: KibitzerConfig) -> RemoteAnalyser:
        """`config`'s engine started on a game host with the resources it requires."""
        client = await self._client()
        key = f"kibitzer-{config.name}-{uuid.uuid4().hex}"
        future = client.submit(
            KibitzHost,
            msgspec.json.encode(config),
            actor=True,
            resources=dict(config.requires),
            key=key,
            pure=False,
        )
        try:
            actor = await asyncio.wait_for(future, PLACE_S)
        except TimeoutError:
            future.release()
            shown = ", ".join(f"{k}={v:g}" for k, v in config.requires.items())
            raise chess.engine.EngineError(
                f"no game host with {shown} took it within {PLACE_S:g} s"
            ) from None
        except Exception as exc:
            future.release()
            raise chess.engine.EngineError(f"its game host failed: {exc}") from None
        analyser = RemoteAnalyser(client, future, actor)
        try:
            analyser.where = await analyser.ask("start", seconds=config.startup_timeout + CALL_S)
        except chess.engine.EngineError:
            await analyser.close()  # the host's loop ends with it
            raise
        return analyser

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), CALL_S)
