"""The daemon: pair a round, play its games in the playing order, record, repeat.

State lives in the database only: every loop iteration reads what is stored and takes the
next step, so a daemon started on a database killed at any moment simply continues.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import chess
import msgspec
import structlog

from orchestrator.config.load import read_book
from orchestrator.config.model import Config
from orchestrator.core.errors import DaemonFault
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import GameRecord, MoveRecord, score_text
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.teams import board_tags
from orchestrator.daemon.console import Console
from orchestrator.daemon.outputs import PgnFiles, TcecFiles, remove_leftovers, write_standings
from orchestrator.daemon.system import (
    notify,
    own_children,
    sweep_orphans,
    trim_memory,
    watchdog_interval,
)
from orchestrator.event import controls
from orchestrator.event.export import event_ratings, round_tag, slug
from orchestrator.event.health import Health, HostHealth, LoopLag
from orchestrator.event.health import encode as health_json
from orchestrator.event.read import STRIKES, final_places, view_of
from orchestrator.event.resume import StartedEvent
from orchestrator.event.state import OpeningChoice, new_games, tournament
from orchestrator.event.tcec_files import ArchiveMenu, live_headers
from orchestrator.executor import Executor, HostFault, LocalExecutor, make_executor
from orchestrator.game.game import GameSpec
from orchestrator.game.pgn import PgnSpec, elo_tags, side_tc
from orchestrator.store.database import ControlRow, GameRow, RoundRow, Store
from orchestrator.store.logs import EngineLogs, logs_folder
from orchestrator.store.space import disk_full, free_bytes, probe_file

log = structlog.get_logger()

TICK_S = 1.0  # the longest a control waits to be applied
HEARTBEAT_S = 3.0  # how often a running daemon says so in the database
PROGRESS_S = 60.0  # a game_progress line per game at most this often
#: how often the moves played are written (in one transaction): how late a reader (the web
#: view, `status`, the kibitzers) may see a move
MOVES_EVERY_S = 0.25
BACKOFF_S = 5.0  # after a fault of the daemon's own (no descriptors, ...), wait this long
SPACE_CHECK_S = 5.0  # while the disk is full, how often the daemon looks for space again
#: a round's end writes the standings files (and TCEC's event files) at most this often; a
#: round that ends sooner has them written once the time is up.  Each write reads the whole
#: event: a match's rounds of two games, each a second long, would cost its size squared
STANDINGS_EVERY_S = 2.0


@dataclass
class _Running:
    """A game being played: its task and its two engines."""

    task: asyncio.Task[None]
    players: tuple[str, str]


def _readable(rows: list[ControlRow]) -> list[controls.AnyControl]:
    """The stored controls that can be read (one that cannot is refused when applied)."""
    out = []
    for row in rows:
        with contextlib.suppress(controls.ControlRefused):
            out.append(controls.decode(row))
    return out


def _tenths(value: float | None) -> float | None:
    """A rating as a `ratings` line gives it, to a tenth.

    >>> _tenths(12.345), _tenths(None)
    (12.3, None)
    """
    return None if value is None else round(value, 1)


class Daemon:
    def __init__(
        self,
        config: Config,
        event: StartedEvent,
        store: Store,
        openings: list[Opening] | None,
        *,
        drain: bool = False,
        executor: Executor | None = None,
        console: Console | None = None,
        menu: ArchiveMenu | None = None,
    ) -> None:
        self.config = config
        self.event = event
        self.store = store
        self.console = console  # `run --output`: the games as fastchess or cutechess print them
        section = config.tournament
        self.openings = OpeningChoice(
            openings or (),
            section.random_seed,
            section.opening_order,
            section.variant,
            book=read_book(config),
            plies=section.opening_plies,
            start=section.opening_start,
            policy=section.opening_policy,
        )
        self.drain = drain
        self.stopping = asyncio.Event()
        self.executor = executor or make_executor(config)  # where the games run
        self.paused = False
        self.backoff_until = 0.0  # after a fault of the daemon's own, no game starts till then
        self.folder = config.tournament.pgn_dir / slug(config.tournament.name)
        self.name = config.tournament.name
        self.pgn_files = PgnFiles(self.folder, self.name)
        live_dir = config.tournament.live_dir
        self.tcec_files = (
            None if live_dir is None else TcecFiles(live_dir, config.adjudication, menu)
        )
        self.engine_logs = EngineLogs(logs_folder(config.tournament.database))
        #: what only the daemon knows of its health, written with each heartbeat
        self.health = Health()
        self.hosts_seen: set[str] = set()  # game hosts connected at some time
        #: the PGN and standings files missed a write (a full disk): all are written again
        self.outputs_stale = False
        #: when the places of games that ended rest till (`wait_ms`), monotonic
        self.resting: list[float] = []
        #: when the standings files were last written, and whether a round's end since waits
        #: for its write (`STANDINGS_EVERY_S`)
        self.standings_at = -STANDINGS_EVERY_S
        self.standings_due = False
        #: engines whose strikes called for a withdrawal the event could not take
        self.kept_on_strikes: set[str] = set()
        self.ratings_mark = 0  # finished games // rating_interval at the last `ratings` line
        self.ratings_lock = asyncio.Lock()  # one `ratings` line at a time (`_log_ratings`)
        #: the event's finished games, counted as they finish (None: read again, as after a
        #: control, which may replay games): only `ratings` lines are timed by it
        self.finished: int | None = None
        #: `_game_index`'s reads, kept until a control is applied: the games before each
        #: round, and the event's planned games (for the settings it was counted from)
        self.games_before: dict[int, int] = {}
        self.planned: tuple[object, int] | None = None

    # signals ------------------------------------------------------------------------------

    def request_stop(self, signame: str) -> None:
        if not self.stopping.is_set():
            log.info("shutdown_requested", signal=signame, drain=self.drain, tournament=self.name)
            notify("STOPPING=1")
        self.stopping.set()

    async def _watchdog(self, every: float) -> None:
        while True:
            notify("WATCHDOG=1")
            await asyncio.sleep(every)

    # the event ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Run the event until it ends or `request_stop` (the caller handles signals)."""
        structlog.contextvars.bind_contextvars(tournament=self.name)
        await self.store.heartbeat(
            os.getpid(), socket.gethostname(), starting=True, health=health_json(self.health)
        )
        aborted = await self.store.abort_running()
        self.paused = await self.store.paused()
        if interval := self.config.tournament.rating_interval:
            self.finished = await self.store.finished_games()
            self.ratings_mark = self.finished // interval
        for update in await self.store.engine_updates():
            self._update_engine(update.engine, update.command, update.options)
        settings = self.config.tournament
        log.info(
            "tournament_resumed" if self.event.resumed else "tournament_started",
            players=len(self.config.engines),
            rounds=self.event.settings.rounds,
            tc=str(settings.tc),
            concurrency=settings.concurrency,
            database=str(settings.database),
            aborted_games=aborted,
            paused=self.paused,
        )
        every = watchdog_interval()
        background = [
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._write_moves()),
            asyncio.create_task(self._lag()),
        ]
        if every:
            background.append(asyncio.create_task(self._watchdog(every)))
        try:
            if await self._start_executor():
                notify("READY=1")
                await self._rounds()
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            with contextlib.suppress(OSError, sqlite3.Error):
                await self.store.flush_moves()
            await self.executor.close()
            await self._sweep()

    async def _start_executor(self) -> bool:
        """Start where games run (a local Dask cluster takes a few seconds); False when a
        stop came first."""
        starting = asyncio.create_task(self.executor.start())
        stop = asyncio.create_task(self.stopping.wait())
        await asyncio.wait({starting, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            return False
        starting.result()
        return True

    async def _heartbeat(self) -> None:
        """The daemon is alive: `status`, `/healthz` and `/metrics` read it (every
        HEARTBEAT_S), with its health; and the processes that escaped finished games'
        engines are ended (`_sweep`)."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            self._where_games_run()
            with contextlib.suppress(OSError, sqlite3.Error):  # a full disk: `_rounds` waits
                await self.store.heartbeat(
                    os.getpid(), socket.gethostname(), health=health_json(self.health)
                )
            await self._sweep()

    async def _lag(self) -> None:
        """Sample the loop's lag (`Health.loop_lag`): how late a sleep of its own ends."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LoopLag.EVERY_S
            await asyncio.sleep(LoopLag.EVERY_S)
            self.health.loop_lag.observe(loop.time() - due)

    def _where_games_run(self) -> None:
        """The scheduler's connection and the game hosts, for `Health` (Dask executors)."""
        executor = self.executor
        if isinstance(executor, LocalExecutor):  # Dask is not even imported
            return
        from orchestrator.executor.cluster import DaskExecutor

        if not isinstance(executor, DaskExecutor):
            return
        self.health.scheduler = "connected" if executor.connected() else "unreachable"
        up = {str(w.get("name", address)) for address, w in executor.workers.items()}
        self.hosts_seen |= up
        busy = Counter(f.host for f in executor.followed.values() if f.host is not None)
        self.health.hosts = {
            host: HostHealth(up=host in up, games=busy[host]) for host in sorted(self.hosts_seen)
        }

    async def _rounds(self) -> None:
        """One tick at a time: apply pending controls, start the games that may start, wait
        for a game to end, a control, or a second; pair and finish rounds as they come."""
        settings = self.event.settings
        # a knockout ends when its final is decided (`_pair` finds it over), others by rounds
        total = None if lookup(settings.system).ends_itself else settings.rounds
        await asyncio.to_thread(remove_leftovers, self.folder)
        swept = await self.engine_logs.sweep()
        if swept:
            log.info("engine_logs_compressed", logs=swept, detail="left by an earlier daemon")
        await self._write_outputs(standings=True, pgn=True)
        running: dict[int, _Running] = {}
        try:
            while True:
                try:
                    if await self._tick(running, total):
                        return
                except Exception as exc:
                    if not disk_full(exc):
                        raise
                    await self._wait_for_space(exc, running)
                    if self.stopping.is_set():  # asked to stop while it waited
                        return
        finally:
            await self._stop_games([r.task for r in running.values()])
            running.clear()
            if self.tcec_files:
                await self.tcec_files.close()
            await self.engine_logs.close()

    async def _tick(self, running: dict[int, _Running], total: int | None) -> bool:
        """One step of `_rounds`; True when the daemon is done (the event is over, or a
        stop came)."""
        pending, current = await self.store.state()
        if pending:
            await self._apply_controls(running, pending)
            current = await self.store.last_round()
        if self.standings_due and (
            self.stopping.is_set() or time.monotonic() >= self.standings_at + STANDINGS_EVERY_S
        ):
            await self._write_outputs(standings=True)
        if self.stopping.is_set() and not (self.drain and running):
            return True
        unfinished = [g for g in current.games if g.status != "finished"] if current else []
        if unfinished or running:
            waiting = time.monotonic() < self.backoff_until
            if current is not None and not (self.paused or waiting or self.stopping.is_set()):
                self._start_games(current, unfinished, running)
            await self._wait(running)
        elif current is not None and current.finished_at is None:
            await self._finish_round(current)
        elif current is not None and total is not None and current.number >= total:
            return await self._finish_event()
        elif self.paused:
            await self._wait(running)
        elif not await self._pair():
            return await self._finish_event()
        return False

    async def _wait_for_space(self, error: Exception, running: dict[int, _Running]) -> None:
        """The disk is full (`error`): the games being played stop (each is played again,
        none is scored), the event waits, and it goes on once a probe finds space in the
        database and beside it (every SPACE_CHECK_S, or at once on `resume`)."""
        await self._stop_games([r.task for r in running.values()])
        running.clear()
        began = time.monotonic()
        what = f"{'the database' if isinstance(error, sqlite3.Error) else 'a file'}: {error}"
        self.health.disk_full = what
        where = self.config.tournament.database.parent
        self.health.disk_free = free_bytes(where)
        log.error(
            "disk_full",
            full=what,
            free_bytes=self.health.disk_free,
            detail="the event waits for space; the games in play are played again",
        )
        with contextlib.suppress(OSError, sqlite3.Error):  # `/healthz` says why, if it can
            await self.store.heartbeat(
                os.getpid(), socket.gethostname(), health=health_json(self.health)
            )
        looked = time.monotonic()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), TICK_S)
            if self.stopping.is_set():
                return
            resume = any(c.kind == "resume" for c in await self.store.controls(pending=True))
            if time.monotonic() - looked < SPACE_CHECK_S and not resume:
                continue
            looked = time.monotonic()
            self.health.disk_free = free_bytes(where)
            try:
                await self.store.probe_space()
                await asyncio.to_thread(probe_file, where)
                await self.store.abort_running()  # what was in play is played again
                await self.store.flush_moves()
            except Exception as exc:
                if not disk_full(exc):
                    raise
                continue
            break
        self.health.disk_full = None
        log.info(
            "disk_space_back",
            waited_s=round(time.monotonic() - began, 1),
            free_bytes=self.health.disk_free,
        )
        self.outputs_stale = True
        await self._write_outputs(standings=True)

    def _start_games(
        self, rnd: RoundRow, unfinished: list[GameRow], running: dict[int, _Running]
    ) -> None:
        """Start games in playing order, `concurrency` at a time, never one engine in two
        games: the first game that cannot start yet holds back the ones after it."""
        busy = {name for r in running.values() for name in r.players}
        now = time.monotonic()
        self.resting = [until for until in self.resting if until > now]
        for game in unfinished:
            if game.id in running:
                continue
            players = {game.white, game.black}
            taken = len(running) + len(self.resting)
            if taken >= self.config.tournament.concurrency or players & busy:
                return
            busy |= players
            task = asyncio.create_task(self._play(rnd, game), name=f"game-{game.id}")
            running[game.id] = _Running(task, (game.white, game.black))

    async def _wait(self, running: dict[int, _Running]) -> None:
        """Until a game ends, a stop is asked for, or a second has passed (controls)."""
        stop = asyncio.create_task(self.stopping.wait())
        waiting = {r.task for r in running.values()} | (set() if self.stopping.is_set() else {stop})
        # a place that rests (`wait_ms`) takes its next game as soon as its pause is over
        tick = min([TICK_S, *(until - time.monotonic() for until in self.resting)])
        try:
            if waiting:
                await asyncio.wait(
                    waiting, timeout=max(0.0, tick), return_when=asyncio.FIRST_COMPLETED
                )
            else:
                await asyncio.sleep(max(0.0, tick))
        finally:
            stop.cancel()
        pause = self.config.tournament.wait_ms / 1000
        for game, r in list(running.items()):
            if r.task.done():
                del running[game]
                if pause:
                    self.resting.append(time.monotonic() + pause)
                if not r.task.cancelled() and (error := r.task.exception()) is not None:
                    raise error

    async def _stop_games(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel games (once each: a second cancel would cut the abort) and wait for them."""
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)

    # controls -------------------------------------------------------------------------------

    async def _apply_controls(
        self, running: dict[int, _Running], pending: list[ControlRow]
    ) -> None:
        """Apply the `pending` controls in order, each in one committed transaction."""
        for row in pending:
            with contextlib.suppress(controls.ControlRefused):  # refused when planned
                stopped = controls.decode(row).ends({g: r.players for g, r in running.items()})
                await self._stop_games([running.pop(g).task for g in stopped])
            try:
                control, result = await controls.plan(self.store, row, self.config.tournament.site)
                await self.store.apply_control(row.id, result.outcome, result.changes)
            except (OSError, MemoryError, sqlite3.OperationalError):
                raise  # the daemon's own trouble (disk, memory, a locked database): it waits
            except Exception as exc:  # a control that cannot be applied must not stop the event
                log.error("control_failed", control=row.id, kind=row.kind, error=repr(exc))
                control = None
                result = controls.Plan([], f"refused: it failed: {type(exc).__name__}: {exc}")
                await self.store.apply_control(row.id, result.outcome, [])
            applied = control if not result.outcome.startswith("refused") else None
            self.games_before.clear()  # a control may add, drop or replay games
            self.finished = None
            match applied:
                case controls.Pause() | controls.Resume():
                    self.paused = isinstance(applied, controls.Pause)
                case controls.EngineUpdate():
                    self._update_engine(applied.engine, applied.command, applied.options)
            audit = {key: getattr(row, key) for key in ("kind", "user", "command", "reason")}
            log.info(
                "control_applied",
                control=row.id,
                **audit,
                requested_at=row.requested_at,
                outcome=result.outcome,
            )
            if applied is not None and applied.changes_results:
                await self._write_outputs(standings=True, pgn=True)

    def _update_engine(
        self, name: str, command: tuple[str, ...] | None, options: Mapping[str, object]
    ) -> None:
        """An engine update: its next games use the new command and options."""
        engines = tuple(
            msgspec.structs.replace(
                e,
                command=tuple(command) if command else e.command,
                options={**e.options, **options},
            )
            if e.name == name
            else e
            for e in self.config.engines
        )
        self.config = msgspec.structs.replace(self.config, engines=engines)

    async def _log_ratings(self) -> None:
        """Every `rating_interval` finished games: a `ratings` line, every engine's Elo
        fitted over the event's games (in a worker thread: the fit never holds the loop)."""
        every = self.config.tournament.rating_interval
        if not every:
            return
        async with self.ratings_lock:  # games that end together: their lines in order
            if self.finished is None:
                self.finished = await self.store.finished_games()
            games = self.finished
            if games // every <= self.ratings_mark:  # two games that end together: one line
                return
            self.ratings_mark = games // every
            view = await view_of(self.store, brief=True)  # (results alone: `FinishedRounds`)
            try:
                ratings = await asyncio.to_thread(
                    event_ratings, view.standings_tournament(), view.settings.anchor
                )
            except Exception as exc:  # a fit that fails costs its line, never the event
                log.error("ratings_failed", games=games, error=repr(exc))
                return
            log.info(
                "ratings",
                games=games,
                ratings=[
                    {
                        "engine": r["name"],
                        "elo": _tenths(r["elo"]),
                        "low": _tenths(r["elo_low"]),
                        "high": _tenths(r["elo_high"]),
                    }
                    for r in ratings
                ],
            )

    async def _withdraw_on_strikes(self, engine: str) -> None:
        """Withdraw `engine` once its strikes reach `strikes` (a control, like any other)."""
        if not self.event.settings.strikes:
            return
        view = await view_of(self.store)
        asked = controls.strike_request(view, engine)
        pending = await self.store.controls(pending=True)
        if asked is None or any(
            isinstance(c, controls.Withdraw) and c.engine == engine for c in _readable(pending)
        ):
            return
        command = ["strikes", "=", str(self.event.settings.strikes)]
        try:
            await controls.request(self.store, asked, command, user="orchestrator")
        except controls.ControlRefused as exc:
            # a withdrawal the event cannot take (it would leave fewer than two engines: a
            # match): no one is withdrawn, the engine's faults go on losing its games, and
            # the event ends as planned
            if engine not in self.kept_on_strikes:
                self.kept_on_strikes.add(engine)
                log.warning("strikes_not_withdrawn", engine=engine, detail=str(exc))

    async def _pair(self) -> bool:
        """Pair and store the next round; False when the event's system says it is over."""
        # the event as the core sees it, players (withdrawn ones included), rounds and
        # controls from one read: one trip to SQLite's thread, one state
        stored = await self.store.whole(brief=True)
        core = tournament(self.event.settings, stored.players, stored.rounds)
        number = len(core.rounds) + 1
        playing = {p.name for p in core.players if p.plays_in(number)}
        fixed = controls.fixed_pairs(stored.controls, number, playing)
        pairing = pair_next(msgspec.structs.replace(core, fixed=fixed))
        if pairing.finished:
            return False
        games = new_games(pairing, await self.store.pairs_so_far(), self.openings)
        await self.store.add_round(
            pairing.round,
            pairing.bye,
            pairing.dropped_rounds,
            games,
            team_bye=pairing.bye is not None and bool(core.teams),
        )
        log.info(
            "round_paired",
            round=pairing.round,
            games=len(pairing.games),
            bye=pairing.bye,
            dropped_rounds=pairing.dropped_rounds,
            fixed=len(fixed),
        )
        # the round's end and this pairing each read the whole event: what they freed goes
        # back to the system (`trim_memory`), not to a month-long high-water mark
        await asyncio.to_thread(trim_memory)
        return True

    async def _finish_round(self, rnd: RoundRow) -> None:
        await self.store.finish_round(rnd.number)
        standings = time.monotonic() >= self.standings_at + STANDINGS_EVERY_S
        self.standings_due = not standings
        await self._write_outputs(standings=standings, pgn=True, round_number=rnd.number)
        log.info("round_finished", round=rnd.number)

    async def _finish_event(self) -> bool:
        """Finish the event, unless a control came since the last look (it is applied
        first: it may reopen a round); whether it finished."""
        if await self.store.controls(pending=True):
            return False
        await self.store.finish_event()
        await self._write_outputs(standings=True)
        view = await view_of(self.store)
        places = final_places(view)  # a knockout's final, a match's games, a team Swiss's teams
        winner = [name for place, name in places if place == places[0][0]]
        log.info("tournament_finished", rounds=len(view.rounds), winner=", ".join(winner))
        if self.console is not None:
            self.console.done()
        return True

    async def _write_outputs(
        self,
        *,
        standings: bool = False,
        pgn: bool = False,
        round_number: int | None = None,
        game_pgn: str | None = None,
    ) -> None:
        """The live event files; with `standings` the standings files; with `pgn` the
        event's PGN file again from the round files, after `round_number`'s file (else
        every round's: at the start, after a control that changed results); with
        `game_pgn` a game of `round_number` that has just finished.

        These files give way to a full disk: a write that fails is logged once
        (`outputs_failed`) and the event goes on; every file is written again whole
        once a write succeeds.  The database holds all they show."""
        if self.outputs_stale:
            standings = pgn = True
            round_number = game_pgn = None
        try:
            await self._write_files(standings, pgn, round_number, game_pgn)
        except OSError as exc:
            if not self.outputs_stale:
                log.error("outputs_failed", folder=str(self.folder), error=str(exc))
            self.outputs_stale = True
        else:
            if self.outputs_stale:
                log.info("outputs_written", folder=str(self.folder))
            self.outputs_stale = False

    async def _write_files(
        self, standings: bool, pgn: bool, round_number: int | None, game_pgn: str | None
    ) -> None:
        if game_pgn is not None and round_number is not None:
            rnd = (await self.store.rounds(round_number, pgn=True))[0]
            await self.pgn_files.game_finished(rnd, game_pgn)
        elif pgn and round_number is not None:
            rnd = (await self.store.rounds(round_number, pgn=True))[0]
            await self.pgn_files.round_finished(rnd, await self.store.round_numbers())
        elif pgn:  # a round at a time: an event's texts are never all in memory at once
            numbers = await self.store.round_numbers()
            for number in numbers:
                await self.pgn_files.write_round((await self.store.rounds(number, pgn=True))[0])
            await self.pgn_files.rewrite_event(numbers)
        view = None
        if standings:  # the whole event, at each round's end: no more of it than they need
            view = await view_of(self.store, brief=self.tcec_files is None)
            await asyncio.to_thread(write_standings, self.folder, view)
            self.standings_at, self.standings_due = time.monotonic(), False
        if self.tcec_files:
            self.tcec_files.event(view or await view_of(self.store))

    # games --------------------------------------------------------------------------------

    async def _play(self, rnd: RoundRow, game: GameRow) -> None:
        settings = self.config.tournament
        white, black = self.config.engine(game.white), self.config.engine(game.black)
        pgn_spec = PgnSpec(
            event=self.name,
            site=settings.site,
            round_tag=round_tag(rnd.number, game),
            options=(white.options, black.options),
            comments=settings.pgn_comments,
            rules=self.config.adjudication,
            tags=board_tags(self.event.settings.teams, game.white, game.black)
            | elo_tags(white.rating, black.rating),
        )
        spec = GameSpec(
            white=white,
            black=black,
            tc=TimeControl.parse(game.tc) if game.tc else settings.tc,
            own_tc=not game.tc,  # a tiebreak game's time control is both sides'
            opening=game.opening,
            adjudication=self.config.adjudication,
            timemargin_ms=settings.timemargin_ms,
            game_key=f"{self.name}:{game.id}",
            ponder=settings.ponder,
            pgn=pgn_spec,
        )
        context = {
            "round": rnd.number,
            "game_id": game.id,
            "white": game.white,
            "black": game.black,
        }
        attempt: int | None = None
        try:
            await self.executor.ready()  # the scheduler is reachable: the game can be handed over
            # shielded: once asked for, the attempt is stored even if the game is cancelled
            # meanwhile, and aborted below like any other
            attempt = await asyncio.shield(self.store.start_attempt(game.id))
            record = await self._play_attempt(spec, rnd, game, attempt, context)
        except asyncio.CancelledError:
            self._attempt_over(game.id, attempt)
            await asyncio.shield(self.store.abort_game(game.id, attempt))
            log.info("game_aborted", **context)
            raise
        except DaemonFault as fault:  # ours, not the engines': try again a little later
            self._attempt_over(game.id, attempt)
            await self.store.abort_game(game.id, attempt)
            self.backoff_until = time.monotonic() + BACKOFF_S
            log.error("daemon_fault", **context, error=str(fault), retry_in_s=BACKOFF_S)
            return
        except HostFault as fault:  # the game host's, not the engines': play it again
            self._attempt_over(game.id, attempt)
            await self.store.abort_game(game.id, attempt)
            if fault.scheduler:  # `scheduler_unreachable` says why, once
                log.info("game_aborted", **context, host=fault.host, reason=fault.detail)
            elif fault.lost:
                log.warning("worker_lost", **context, host=fault.host, detail=fault.detail)
            else:  # an error on the host (orchestrator missing there, ...): not at once
                self.backoff_until = time.monotonic() + BACKOFF_S
                log.error(
                    "game_host_failed",
                    **context,
                    host=fault.host,
                    error=fault.detail,
                    retry_in_s=BACKOFF_S,
                )
            return
        # written where the game ran (a game host), or here
        pgn = record.pgn if record.pgn is not None else pgn_spec.render(record)
        # shielded: a stop that comes now does not undo a finished game
        await asyncio.shield(self.store.finish_game(game.id, attempt, record, pgn))
        if self.finished is not None:
            self.finished += 1
        engine_log = await self.engine_logs.finish(attempt)
        if self.tcec_files:  # its log is whole now: live.log shows its end
            self.tcec_files.finish(game.id, record)
        self._log_finished(record, context, engine_log)
        if self.console is not None:
            self.console.finished(game.id, game.pair, record)
        await self._write_outputs(round_number=rnd.number, game_pgn=pgn)
        await self._log_ratings()
        if record.fault is not None and record.fault.kind in STRIKES:
            await self._withdraw_on_strikes(record.fault.engine)

    async def _play_attempt(
        self,
        spec: GameSpec,
        rnd: RoundRow,
        game: GameRow,
        attempt: int,
        context: dict[str, Any],
    ) -> GameRecord:
        """Play one attempt at `game`: its moves stored as they come, progress logged."""
        index, total = await self._game_index(rnd, game)
        log.info(
            "game_started",
            **context,
            number=game.number,
            attempt=attempt,
            index=index,
            total=total,
            white_command=list(spec.white.command),
            black_command=list(spec.black.command),
        )
        if self.console is not None:
            self.console.started(game.id, game.pair, index, total, game.white, game.black)
        clocks: dict[bool, int | None] = {chess.WHITE: None, chess.BLACK: None}
        last_progress = time.monotonic()
        self.engine_logs.start(game.id, attempt)

        if self.tcec_files:
            started = datetime.now(UTC)
            headers = (
                live_headers(
                    self.name,
                    side_tc(str(spec.tc_of(chess.WHITE))),
                    game,
                    self.config.tournament.site,
                    started,
                    black_tc=side_tc(str(spec.tc_of(chess.BLACK))),
                )
                | board_tags(self.event.settings.teams, game.white, game.black)
                | elo_tags(spec.white.rating, spec.black.rating)
            )
            options = (dict(spec.white.options), dict(spec.black.options))
            self.tcec_files.start(
                game.id, headers, options, game.opening, self.engine_logs.path(game.id, attempt)
            )

        def on_log(text: str) -> None:
            self.engine_logs.append(attempt, text)

        def on_move(move: MoveRecord, ply: int, mover: chess.Color) -> None:
            nonlocal last_progress
            self.moved(attempt, game.id, ply, move)
            clocks[mover] = move.clock_ms
            if time.monotonic() - last_progress >= PROGRESS_S:
                last_progress = time.monotonic()
                log.info(
                    "game_progress",
                    **context,
                    ply=ply,
                    white_clock_ms=clocks[chess.WHITE],
                    black_clock_ms=clocks[chess.BLACK],
                    score=None if move.score is None else score_text(move.score),
                    last=move.san,
                )

        async def on_start(host: str, cpus: tuple[str, str] | None) -> None:
            await self.store.attempt_host(attempt, host)
            pinned = {} if cpus is None else {"cpus": list(cpus)}
            log.info("game_placed", **context, attempt=attempt, host=host, **pinned)

        key = f"game-{slug(self.name)}-{game.id}-{attempt}"
        return await self.executor.play(
            spec, key=key, on_move=on_move, on_start=on_start, on_log=on_log
        )

    def moved(self, attempt: int, game: int, ply: int, move: MoveRecord) -> None:
        """A move was played: held for the next batch of the store (`_write_moves`), and
        the live files follow it.  Nothing here waits: the games go on at once."""
        self.store.queue_move(attempt, ply, move)
        self.health.last_move_at = time.time()
        if self.tcec_files:
            self.tcec_files.move(game, move)

    async def _write_moves(self) -> None:
        """Every `MOVES_EVERY_S`: the moves played since, in one transaction.  A write that
        fails keeps them for the next try (a game's own end writes its moves with it)."""
        failing = False
        while True:
            await asyncio.sleep(MOVES_EVERY_S)
            try:
                await self.store.flush_moves()
            except (OSError, sqlite3.Error) as exc:
                if not failing:
                    log.error("moves_write_failed", error=str(exc), held=self.store.moves_pending)
                failing = True
            else:
                failing = False

    async def _sweep(self) -> None:
        """End the processes that escaped a finished game's engines (`setsid`)."""
        swept = await asyncio.to_thread(sweep_orphans, own_children())
        if swept:
            log.warning("orphans_killed", processes=swept)

    async def _game_index(self, rnd: RoundRow, game: GameRow) -> tuple[int, int]:
        """The game's place in the whole event, and the event's expected number of games
        (read once a round, and again after a control: they only number the logs' games)."""
        earlier = self.games_before.get(rnd.number)
        if earlier is None:
            earlier = self.games_before[rnd.number] = await self.store.games_before(rnd.number)
        settings = self.event.settings
        if self.planned is None or self.planned[0] is not settings:
            planned = tournament(settings, self.event.players).games_planned()
            self.planned = (settings, planned)
        return earlier + game.number, self.planned[1]

    def _attempt_over(self, game: int, attempt: int | None) -> None:
        """An attempt that did not finish: the live files leave it, its log is closed."""
        if self.tcec_files:
            self.tcec_files.finish(game)
        if attempt is not None:
            self.engine_logs.finish(attempt)

    def _log_finished(
        self, record: GameRecord, context: dict[str, object], engine_log: Path | None
    ) -> None:
        if record.host is not None:
            context = {**context, "host": record.host}
        if record.fault is not None:
            log.warning(
                "engine_fault",
                **context,
                engine=record.fault.engine,
                kind=record.fault.kind,
                detail=record.fault.detail,
                log=None if engine_log is None else str(engine_log),
            )
        log.info(
            "game_finished",
            **context,
            result=record.result,
            termination=record.termination,
            plies=record.plies,
            reason=record.reason,
        )
