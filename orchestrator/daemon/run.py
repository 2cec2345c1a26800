"""Start an event: validate everything before the database is touched (`check` and `run`
share it), then run the event with its signals, its database lock and its web process.

`orchestrator run` and `orchestrator check` call these; every mistake in the config is an
`OrchestratorError` (one line, exit 2), and an unreachable or silent scheduler one with exit
code 1.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from orchestrator.config.load import check_files, load, read_book, read_openings
from orchestrator.config.model import (
    Config,
    ConfigError,
    EngineConfig,
    KibitzerConfig,
    dask_address,
)
from orchestrator.core.cpus import cpu_text
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.console import Form, unreadable
from orchestrator.core.game.openings import Opening
from orchestrator.core.stats.ratings import load_fit
from orchestrator.daemon.console import Console
from orchestrator.daemon.loop import Daemon
from orchestrator.daemon.system import (
    KibitzProcess,
    WebProcess,
    fixed_threads,
    frozen_heap,
    sweep_orphans,
)
from orchestrator.engines.affinity import cpu_plan, pin, pin_threads
from orchestrator.engines.probe import from_fen, probe, probe_kibitzer
from orchestrator.engines.slices import runner_slice
from orchestrator.event.resume import create_or_resume
from orchestrator.event.tcec_files import ArchiveMenu
from orchestrator.store.database import Store
from orchestrator.store.lock import DatabaseLock

__all__ = ["CheckFailed", "EventFailed", "check_on_workers", "probe_all", "run_event", "validate"]

log = structlog.get_logger()


class CheckFailed(OrchestratorError):
    """The game hosts of a Dask scheduler could not be reached or did not answer."""

    exit_code = 1


class EventFailed(OrchestratorError):
    """The event failed while running (a config or input error is found before it starts)."""

    exit_code = 1


#: engines started at once by `check` and `run`: a field of 400 engines must not take 400
#: processes, their pipes and their watcher threads at the same moment
PROBES_AT_ONCE = 8


async def probe_all(config: Config, fen_reason: str | None, *, engines: bool = True) -> None:
    """Start, configure and close every engine of `config` (none with `engines=False`) and
    every kibitzer that runs here (not on a game host), a few at a time; the first failure
    in config order is raised."""
    gate = asyncio.Semaphore(PROBES_AT_ONCE)

    async def one(engine: EngineConfig) -> None:
        async with gate:
            started = await probe(config, engine, fen_reason)
            await started.close()

    async def kibitzer(k: KibitzerConfig) -> None:
        async with gate:
            await probe_kibitzer(config.path, k, variant=config.tournament.variant)

    outcomes = await asyncio.gather(
        *(one(e) for e in config.engines if engines),
        *(kibitzer(k) for k in config.kibitzers if not k.requires),
        return_exceptions=True,
    )
    for problem in outcomes:
        if isinstance(problem, BaseException):
            raise problem


async def validate(
    source: Path | Config, start_engines: bool, *, console: bool = False
) -> tuple[Config, list[Opening] | None]:
    """Everything that can be checked before the database is touched, of the config file
    `source` or a config made in memory (a season's event); with `console`, that the
    engines' names fit the console's lines (`run --output`).  With the workers of a Dask
    scheduler, engines start on the game hosts (`check` tries them there)."""
    config = source if isinstance(source, Config) else load(source)
    if console:  # its readers find each game's result by the engines' names
        for engine in config.engines:
            mark = unreadable(engine.name)
            if mark is not None:
                raise ConfigError(
                    f'{config.path}: [[engine]] "{engine.name}": with --output, a name may not '
                    f"hold {mark!r}: fishtest and OpenBench read the console's lines by it"
                )
    check_files(config)
    openings = read_openings(config)
    book = read_book(config)
    if book is not None:
        book.close()
    if start_engines:  # a remote event's engines are tried on its game hosts
        await probe_all(config, from_fen(openings or ()), engines=not config.remote)
    return config, openings


#: how long `check` waits for the game hosts of a Dask scheduler to try every engine
CHECK_ON_WORKERS_S = 120.0


async def check_on_workers(
    config: Config, openings: list[Opening] | None
) -> tuple[list[str], list[str]]:
    """Start every engine once on a game host that can run its games; the warnings, and
    with `affinity` each host's pinned cores (a `CheckFailed` for a host with too few)."""
    address = dask_address(config.tournament.executor)
    assert address is not None
    from orchestrator.executor.cluster import DaskExecutor, security

    executor = DaskExecutor(address, config.tournament.executor, security(config.tournament))
    try:
        await executor.connect()
    except (OSError, TimeoutError) as exc:
        raise CheckFailed(
            f"{config.path}: [tournament] executor: cannot reach {address}: {exc}"
        ) from None
    try:
        workers = await executor.refresh_workers()
        if not workers:
            raise CheckFailed(
                f"{config.path}: [tournament] executor: no worker is connected to "
                f"{config.tournament.executor}"
            )
        warnings = await asyncio.wait_for(
            executor.check(config, from_fen(openings or ())), CHECK_ON_WORKERS_S
        )
        threads = pin_threads(config)
        if threads is None:
            return warnings, []
        try:
            return warnings, await executor.host_plans(config, threads)
        except ConfigError as exc:  # as for this machine's cores: check says so, run waits
            raise CheckFailed(str(exc)) from None
    except TimeoutError:
        raise CheckFailed(
            f"{config.path}: [tournament] executor: the workers of "
            f"{config.tournament.executor} did not try every engine within "
            f"{CHECK_ON_WORKERS_S:g} s"
        ) from None
    finally:
        await executor.close()


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop:
    """The stop signals, caught from the first moment (while the config is checked) to the
    last (a second signal during the shutdown), and passed on to the daemon."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self.daemon: Daemon | None = None

    def __call__(self, name: str) -> None:
        self.signal = self.signal or name
        if self.daemon is not None:
            self.daemon.request_stop(name)

    def attach(self, daemon: Daemon) -> None:
        self.daemon = daemon
        if self.signal is not None:
            daemon.request_stop(self.signal)


async def run_event(
    source: Path | Config,
    force: bool,
    drain: bool,
    http: tuple[str, int] | None,
    output: Form | None = None,
    *,
    menu: ArchiveMenu | None = None,
    accepted: Callable[[], None] | None = None,
) -> int:
    """Run the event of the config file (or in-memory config) `source`; SIGTERM, SIGINT and
    SIGHUP stop it cleanly at any moment.  `output`: the games also as fastchess or
    cutechess print them, on standard output; `menu`: the season's events that TCEC's
    `gamelist.json` lists (`season run`), else this event; `accepted`: called once the
    database holds the event (made or resumed as the config describes it), before its first
    game: what a caller keeps only for an event that runs (a season's store, a match's
    config file), so that a refused event changes none of it."""
    runner_slice()  # before its threads start: the engines it starts come first (slices.py)
    loop = asyncio.get_running_loop()
    fixed_threads(loop)
    stop = _Stop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig.name)
    try:
        return await _run_event(source, force, drain, http, stop, output, menu, accepted)
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
            # the shutdown is done and its exit status decided: a signal that comes while
            # the interpreter winds down (joining threads) must not turn it into a kill
            signal.signal(sig, signal.SIG_IGN)


def _remove_database(database: Path) -> None:
    """A database this run made and could not use, with SQLite's files beside it."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)


async def _keep_running(kibitz: KibitzProcess) -> None:
    """Start the kibitz process again whenever it ends by itself."""
    while True:
        await asyncio.sleep(KibitzProcess.RESTART_S)
        status = kibitz.ended()
        if status is not None:
            log.warning("kibitz_process_ended", status=status, restart_in_s=0)
            kibitz.start()


async def _kibitzers_ready(kibitz: KibitzProcess, stop: _Stop) -> None:
    """Before the first game: wait until the kibitzers run (`KibitzProcess.ready`), or a stop."""
    started = time.monotonic()
    waiting = asyncio.ensure_future(kibitz.ready())
    deadline = started + KibitzProcess.READY_S
    while not waiting.done() and stop.signal is None and time.monotonic() < deadline:
        await asyncio.wait({waiting}, timeout=0.1)
    ready = waiting.done() and waiting.result()
    if not waiting.done():
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
    waited = round(time.monotonic() - started, 2)
    if ready:
        log.info("kibitzers_ready", waited_s=waited)
    elif stop.signal is None:
        log.warning("kibitzers_not_ready", waited_s=waited, detail="the games start without them")


async def _run_event(
    source: Path | Config,
    force: bool,
    drain: bool,
    http: tuple[str, int] | None,
    stop: _Stop,
    output: Form | None,
    menu: ArchiveMenu | None,
    accepted: Callable[[], None] | None,
) -> int:
    config, openings = await validate(source, start_engines=True, console=output is not None)
    plan = cpu_plan(config)  # too few cores for the pinned games: refused, nothing touched
    if plan is not None:
        if plan.spare:  # the daemon, and the web and kibitz processes it starts
            pin(os.getpid(), plan.spare)
        log.info(
            "cores_pinned",
            slots=[[cpu_text(s.first), cpu_text(s.second)] for s in plan.slots],
            spare=cpu_text(plan.spare),
        )
    await asyncio.to_thread(sweep_orphans)  # what the engines' first start left behind
    # the standings' ratings: what their fit needs, loaded before any game
    await asyncio.to_thread(load_fit, len(config.engines))
    if stop.signal is not None:  # stopped while the config was checked: nothing to undo
        return 0
    database = config.tournament.database
    fresh = not database.exists()
    lock = DatabaseLock(database)
    lock.acquire()
    try:
        try:
            store = await Store.open(database)
        except BaseException:
            if fresh:  # refused before it held anything: nothing is left behind
                _remove_database(database)
            raise
        try:
            try:
                event = await create_or_resume(config, store, force=force)
            except BaseException:
                if fresh:
                    await store.close()
                    _remove_database(database)
                raise
            if accepted is not None:
                accepted()
            console = None
            if output is not None:
                console = Console(output, config)
                await console.load(store)
            daemon = Daemon(config, event, store, openings, drain=drain, console=console, menu=menu)
            stop.attach(daemon)
            site = None
            if http:
                site = WebProcess.of_event(config.tournament.database, *http)
                site.start()
            kibitz = KibitzProcess(config.tournament.database) if config.kibitzers else None
            watch = None
            if kibitz is not None:
                kibitz.start()
                watch = asyncio.create_task(_keep_running(kibitz))
                await _kibitzers_ready(kibitz, stop)
            try:
                with frozen_heap():  # what the event loaded, out of the collector's way
                    await daemon.run()
            except OrchestratorError as exc:  # the event, once started, failed: exit 1
                raise EventFailed(f"the event failed: {exc}") from None
            finally:
                if watch is not None:
                    watch.cancel()
                    await asyncio.gather(watch, return_exceptions=True)
                if kibitz is not None:
                    await asyncio.to_thread(kibitz.stop)
                if site is not None:
                    await asyncio.to_thread(site.stop)
        finally:
            await store.close()
    finally:
        lock.release()
    return 0
