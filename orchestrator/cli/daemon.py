"""`orchestrator run` and `orchestrator check`: validate everything, then run the event."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.app import app, fail, user_errors
from orchestrator.cli.web import parse_address
from orchestrator.config.load import check_files, load, read_openings
from orchestrator.config.model import Config, EngineConfig, dask_address
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.game.openings import Opening
from orchestrator.daemon.loop import Daemon
from orchestrator.daemon.system import WebProcess, sweep_orphans
from orchestrator.engines.probe import from_fen, probe
from orchestrator.event.open import open_event
from orchestrator.executor.cluster import DaskExecutor, security
from orchestrator.logs import configure
from orchestrator.store.database import Store
from orchestrator.store.lock import DatabaseLock

ConfigArg = Annotated[Path, typer.Argument(metavar="CONFIG", help="engines.toml")]


#: engines started at once by `check` and `run`: a field of 400 engines must not take 400
#: processes, their pipes and their watcher threads at the same moment
PROBES_AT_ONCE = 8


async def probe_all(config: Config, fen_reason: str | None) -> None:
    """Start, configure and close every engine of `config`, a few at a time; the first
    failure in config order is raised."""
    gate = asyncio.Semaphore(PROBES_AT_ONCE)

    async def one(engine: EngineConfig) -> None:
        async with gate:
            started = await probe(config, engine, fen_reason)
            await started.close()

    outcomes = await asyncio.gather(*(one(e) for e in config.engines), return_exceptions=True)
    for problem in outcomes:
        if isinstance(problem, BaseException):
            raise problem


async def validate(config_path: Path, start_engines: bool) -> tuple[Config, list[Opening] | None]:
    """Everything that can be checked before the database is touched.  With the workers of
    a Dask scheduler, engines start on the game hosts (`check` tries them there)."""
    config = load(config_path)
    check_files(config)
    openings = read_openings(config)
    if start_engines and not config.remote:
        await probe_all(config, from_fen(openings or ()))
    return config, openings


#: how long `check` waits for the game hosts of a Dask scheduler to try every engine
CHECK_ON_WORKERS_S = 120.0


async def check_on_workers(config: Config, openings: list[Opening] | None) -> list[str]:
    """Start every engine once on a game host that can run its games; the warnings."""
    address = dask_address(config.tournament.executor)
    assert address is not None
    executor = DaskExecutor(address, config.tournament.executor, security(config))
    try:
        await executor.connect()
    except (OSError, TimeoutError) as exc:
        raise fail(
            f"{config.path}: [tournament] executor: cannot reach {address}: {exc}", code=1
        ) from None
    try:
        workers = await executor.refresh_workers()
        if not workers:
            raise fail(
                f"{config.path}: [tournament] executor: no worker is connected to "
                f"{config.tournament.executor}",
                code=1,
            )
        return await asyncio.wait_for(
            executor.check(config, from_fen(openings or ())), CHECK_ON_WORKERS_S
        )
    except TimeoutError:
        raise fail(
            f"{config.path}: [tournament] executor: the workers of "
            f"{config.tournament.executor} did not try every engine within "
            f"{CHECK_ON_WORKERS_S:g} s",
            code=1,
        ) from None
    finally:
        await executor.close()


@app.command()
@user_errors
def check(config: ConfigArg) -> None:
    """Validate CONFIG and start each engine once (on the game hosts, for a Dask scheduler)."""
    loaded, openings = asyncio.run(validate(config, start_engines=True))
    suite = f", {len(openings)} openings" if openings else ""
    if loaded.remote:
        warnings = asyncio.run(check_on_workers(loaded, openings))
        for line in warnings:
            typer.echo(f"warning: {line}", err=True)
        where = f" on the workers of {loaded.tournament.executor}"
        tried = len(loaded.engines) - len(warnings)
        typer.echo(f"{config}: ok: {tried} engines started and configured{where}{suite}")
        if warnings:
            raise typer.Exit(1)
        return
    typer.echo(f"{config}: ok: {len(loaded.engines)} engines started and configured{suite}")


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


async def _run(config_path: Path, force: bool, drain: bool, http: str | None) -> int:
    """Run the event; SIGTERM, SIGINT and SIGHUP stop it cleanly at any moment."""
    loop = asyncio.get_running_loop()
    stop = _Stop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig.name)
    try:
        return await _run_event(config_path, force, drain, http, stop)
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
            # the shutdown is done and its exit status decided: a signal that comes while
            # the interpreter winds down (joining threads) must not turn it into a kill
            signal.signal(sig, signal.SIG_IGN)


async def _run_event(
    config_path: Path, force: bool, drain: bool, http: str | None, stop: _Stop
) -> int:
    config, openings = await validate(config_path, start_engines=True)
    await asyncio.to_thread(sweep_orphans)  # what the engines' first start left behind
    if stop.signal is not None:  # stopped while the config was checked: nothing to undo
        return 0
    lock = DatabaseLock(config.tournament.database)
    lock.acquire()
    try:
        store = await Store.open(config.tournament.database)
        try:
            event = await open_event(config, store, force=force)
            daemon = Daemon(config, event, store, openings, drain=drain)
            stop.attach(daemon)
            site = None
            if http:
                host, port = parse_address(http)
                try:
                    site = WebProcess(config.tournament.database, host, port)
                except OSError as exc:
                    raise fail(f"--http: cannot listen on {http}: {exc.strerror}") from None
                site.start()
            try:
                await daemon.run()
            finally:
                if site is not None:
                    await asyncio.to_thread(site.stop)
        finally:
            await store.close()
    finally:
        lock.release()
    return 0


@app.command()
@user_errors
def run(
    config: ConfigArg,
    force: Annotated[
        bool, typer.Option(help="Resume although settings that affect future games changed.")
    ] = False,
    drain: Annotated[
        bool, typer.Option(help="On SIGTERM/SIGINT let running games finish.")
    ] = False,
    http: Annotated[str | None, typer.Option(help="Also serve the web view at HOST:PORT.")] = None,
) -> None:
    """Run the event of CONFIG, or resume it, to its final standings."""
    configure()
    try:
        code = asyncio.run(_run(config, force, drain, http))
    except (typer.Exit, OrchestratorError):
        raise
    except Exception as exc:  # the event failed while running: one line, exit 1
        raise fail(f"the event failed: {type(exc).__name__}: {exc}", code=1) from None
    raise typer.Exit(code)
