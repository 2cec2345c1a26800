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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import chess
import msgspec
import structlog

from orchestrator.config.model import Config
from orchestrator.core.errors import DaemonFault
from orchestrator.core.event.model import Tournament
from orchestrator.core.event.standings import standings
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import GameRecord, MoveRecord, score_text
from orchestrator.core.pairing import lookup, pair_next
from orchestrator.core.pairing.teams import board_tags, team_standings
from orchestrator.daemon.outputs import PgnFiles, TcecFiles, remove_leftovers, write_standings
from orchestrator.daemon.system import notify, own_children, sweep_orphans, watchdog_interval
from orchestrator.event import controls
from orchestrator.event.export import round_tag, slug
from orchestrator.event.read import STRIKES, view_of
from orchestrator.event.resume import StartedEvent
from orchestrator.event.state import OpeningChoice, new_games, tournament
from orchestrator.event.tcec_files import live_headers
from orchestrator.executor import Executor, HostFault, make_executor
from orchestrator.game.game import GameSpec
from orchestrator.game.pgn import elo_tags, to_pgn
from orchestrator.store.database import ControlRow, GameRow, RoundRow, Store
from orchestrator.store.logs import EngineLogs, logs_folder

log = structlog.get_logger()

TICK_S = 1.0  # the longest a control waits to be applied
HEARTBEAT_S = 3.0  # how often a running daemon says so in the database
PROGRESS_S = 60.0  # a game_progress line per game at most this often
BACKOFF_S = 5.0  # after a fault of the daemon's own (no descriptors, ...), wait this long


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
    ) -> None:
        self.config = config
        self.event = event
        self.store = store
        section = config.tournament
        self.openings = OpeningChoice(
            openings or (), section.random_seed, section.opening_order, section.variant
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
        self.tcec_files = None if live_dir is None else TcecFiles(live_dir, config.adjudication)
        self.engine_logs = EngineLogs(logs_folder(config.tournament.database))

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

    async def _tournament(self) -> Tournament:
        """The event as the core sees it, from what is stored now."""
        players = await self.store.players()  # withdrawals included
        return tournament(self.event.settings, players, await self.store.rounds())

    async def run(self) -> None:
        """Run the event until it ends or `request_stop` (the caller handles signals)."""
        structlog.contextvars.bind_contextvars(tournament=self.name)
        await self.store.heartbeat(os.getpid(), socket.gethostname(), starting=True)
        aborted = await self.store.abort_running()
        self.paused = await self.store.paused()
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
        background = [asyncio.create_task(self._heartbeat())]
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
        """The daemon is alive: `status` and the web view read it (every HEARTBEAT_S)."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            await self.store.heartbeat(os.getpid(), socket.gethostname())

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
        await self._write_outputs(None)
        running: dict[int, _Running] = {}
        try:
            while True:
                await self._apply_controls(running)
                if self.stopping.is_set() and not (self.drain and running):
                    return
                current = await self.store.last_round()
                unfinished = [g for g in current.games if g.status != "finished"] if current else []
                if unfinished or running:
                    waiting = time.monotonic() < self.backoff_until
                    if current is not None and not (
                        self.paused or waiting or self.stopping.is_set()
                    ):
                        self._start_games(current, unfinished, running)
                    await self._wait(running)
                    continue
                if current is not None and current.finished_at is None:
                    await self._finish_round(current)
                elif current is not None and total is not None and current.number >= total:
                    if await self._finish_event():
                        return
                elif self.paused:
                    await self._wait(running)
                elif not await self._pair() and await self._finish_event():
                    return
        finally:
            await self._stop_games([r.task for r in running.values()])
            running.clear()
            if self.tcec_files:
                await self.tcec_files.close()
            await self.engine_logs.close()

    def _start_games(
        self, rnd: RoundRow, unfinished: list[GameRow], running: dict[int, _Running]
    ) -> None:
        """Start games in playing order, `concurrency` at a time, never one engine in two
        games: the first game that cannot start yet holds back the ones after it."""
        busy = {name for r in running.values() for name in r.players}
        for game in unfinished:
            if game.id in running:
                continue
            players = {game.white, game.black}
            if len(running) >= self.config.tournament.concurrency or players & busy:
                return
            busy |= players
            task = asyncio.create_task(self._play(rnd, game), name=f"game-{game.id}")
            running[game.id] = _Running(task, (game.white, game.black))

    async def _wait(self, running: dict[int, _Running]) -> None:
        """Until a game ends, a stop is asked for, or a second has passed (controls)."""
        stop = asyncio.create_task(self.stopping.wait())
        waiting = {r.task for r in running.values()} | (set() if self.stopping.is_set() else {stop})
        try:
            if waiting:
                await asyncio.wait(waiting, timeout=TICK_S, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(TICK_S)
        finally:
            stop.cancel()
        for game, r in list(running.items()):
            if r.task.done():
                del running[game]
                if not r.task.cancelled() and (error := r.task.exception()) is not None:
                    raise error

    async def _stop_games(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel games (once each: a second cancel would cut the abort) and wait for them."""
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)

    # controls -------------------------------------------------------------------------------

    async def _apply_controls(self, running: dict[int, _Running]) -> None:
        """Apply the pending controls in order, each in one committed transaction."""
        for row in await self.store.controls(pending=True):
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
                await self._write_outputs(None, standings=True)

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
        await controls.request(self.store, asked, command, user="orchestrator")

    async def _pair(self) -> bool:
        """Pair and store the next round; False when the event's system says it is over."""
        tournament = await self._tournament()
        number = len(tournament.rounds) + 1
        playing = {p.name for p in tournament.players if p.plays_in(number)}
        fixed = controls.fixed_pairs(await self.store.controls(), number, playing)
        pairing = pair_next(msgspec.structs.replace(tournament, fixed=fixed))
        if pairing.finished:
            return False
        games = new_games(pairing, await self.store.pairs_so_far(), self.openings)
        await self.store.add_round(
            pairing.round,
            pairing.bye,
            pairing.dropped_rounds,
            games,
            team_bye=pairing.bye is not None and bool(tournament.teams),
        )
        log.info(
            "round_paired",
            round=pairing.round,
            games=len(pairing.games),
            bye=pairing.bye,
            dropped_rounds=pairing.dropped_rounds,
            fixed=len(fixed),
        )
        return True

    async def _finish_round(self, rnd: RoundRow) -> None:
        await self.store.finish_round(rnd.number)
        await self._write_outputs(rnd.number, standings=True)
        log.info("round_finished", round=rnd.number)

    async def _finish_event(self) -> bool:
        """Finish the event, unless a control came since the last look (it is applied
        first: it may reopen a round); whether it finished."""
        if await self.store.controls(pending=True):
            return False
        await self.store.finish_event()
        await self._write_outputs(None, standings=True)
        view = await view_of(self.store)
        final = view.standings_tournament()
        places = pair_next(final).places if lookup(final.rules.system).ends_itself else ()
        if places:  # a knockout is won by its final
            winner = [places[0][1]]
        elif final.teams:  # a team Swiss is won by a team
            teams = team_standings(final)
            winner = [line.name for line in teams if line.place == teams[0].place]
        else:
            table = standings(final, view.settings.tiebreaks)
            winner = [line.name for line in table if line.place == table[0].place]
        log.info("tournament_finished", rounds=len(view.rounds), winner=", ".join(winner))
        return True

    async def _write_outputs(self, changed: int | None, standings: bool = False) -> None:
        """The PGN files of round `changed` (every round if None) and of the event, and with
        `standings` (or at the start) the standings files."""
        await self.pgn_files.write(await self.store.rounds(changed), every=changed is None)
        view = None
        if standings or changed is None:
            view = await view_of(self.store)
            await asyncio.to_thread(write_standings, self.folder, view)
        if self.tcec_files:
            self.tcec_files.event(view or await view_of(self.store))

    # games --------------------------------------------------------------------------------

    async def _play(self, rnd: RoundRow, game: GameRow) -> None:
        settings = self.config.tournament
        spec = GameSpec(
            white=self.config.engine(game.white),
            black=self.config.engine(game.black),
            tc=TimeControl.parse(game.tc) if game.tc else settings.tc,
            opening=game.opening,
            adjudication=self.config.adjudication,
            timemargin_ms=settings.timemargin_ms,
            game_key=f"{self.name}:{game.id}",
            ponder=settings.ponder,
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
            await asyncio.shield(self.store.abort_game(game.id))
            log.info("game_aborted", **context)
            raise
        except DaemonFault as fault:  # ours, not the engines': try again a little later
            self._attempt_over(game.id, attempt)
            await self.store.abort_game(game.id)
            self.backoff_until = time.monotonic() + BACKOFF_S
            log.error("daemon_fault", **context, error=str(fault), retry_in_s=BACKOFF_S)
            return
        except HostFault as fault:  # the game host's, not the engines': play it again
            self._attempt_over(game.id, attempt)
            await self.store.abort_game(game.id)
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
        pgn = to_pgn(
            record,
            event=self.name,
            site=settings.site,
            round_tag=round_tag(rnd.number, game),
            options=(spec.white.options, spec.black.options),
            comments=settings.pgn_comments,
            rules=self.config.adjudication,
            tags=board_tags(self.event.settings.teams, game.white, game.black)
            | elo_tags(spec.white.rating, spec.black.rating),
        )
        # shielded: a stop that comes now does not undo a finished game
        await asyncio.shield(self.store.finish_game(game.id, attempt, record, pgn))
        if self.tcec_files:
            self.tcec_files.finish(game.id, record)
        engine_log = await self.engine_logs.finish(attempt)
        self._log_finished(record, context, engine_log)
        await self._sweep()
        await self._write_outputs(rnd.number)
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
        clocks: dict[bool, int | None] = {chess.WHITE: None, chess.BLACK: None}
        last_progress = time.monotonic()
        self.engine_logs.start(game.id, attempt)

        if self.tcec_files:
            started = datetime.now(UTC)
            headers = (
                live_headers(self.name, str(spec.tc), game, self.config.tournament.site, started)
                | board_tags(self.event.settings.teams, game.white, game.black)
                | elo_tags(spec.white.rating, spec.black.rating)
            )
            options = (dict(spec.white.options), dict(spec.black.options))
            self.tcec_files.start(
                game.id, headers, options, game.opening, self.engine_logs.path(game.id, attempt)
            )

        def on_log(text: str) -> None:
            self.engine_logs.append(attempt, text)

        async def on_move(move: MoveRecord, board: chess.Board) -> None:
            nonlocal last_progress
            await self.store.add_move(attempt, len(board.move_stack), move)
            if self.tcec_files:
                self.tcec_files.move(game.id, move)
            clocks[not board.turn] = move.clock_ms
            if time.monotonic() - last_progress >= PROGRESS_S:
                last_progress = time.monotonic()
                log.info(
                    "game_progress",
                    **context,
                    ply=len(board.move_stack),
                    white_clock_ms=clocks[chess.WHITE],
                    black_clock_ms=clocks[chess.BLACK],
                    score=None if move.score is None else score_text(move.score),
                    last=move.san,
                )

        async def on_start(host: str) -> None:
            await self.store.attempt_host(attempt, host)
            log.info("game_placed", **context, attempt=attempt, host=host)

        key = f"game-{slug(self.name)}-{game.id}-{attempt}"
        return await self.executor.play(
            spec, key=key, on_move=on_move, on_start=on_start, on_log=on_log
        )

    async def _sweep(self) -> None:
        """End the processes that escaped a finished game's engines (`setsid`)."""
        swept = await asyncio.to_thread(sweep_orphans, own_children())
        if swept:
            log.warning("orphans_killed", processes=swept)

    async def _game_index(self, rnd: RoundRow, game: GameRow) -> tuple[int, int]:
        """The game's place in the whole event, and the event's expected number of games."""
        earlier = await self.store.games_before(rnd.number)
        settings = self.event.settings
        return earlier + game.number, tournament(settings, self.event.players).games_planned()

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
