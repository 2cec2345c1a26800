"""The daemon: pair a round, play its games in the playing order, record, repeat.

State lives in the database only: every loop iteration reads what is stored and takes the
next step, so a daemon started on a database killed at any moment simply continues.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import chess
import structlog

from orchestrator.config.model import Config
from orchestrator.core.gamerecord import GameRecord, MoveRecord
from orchestrator.core.model import Tournament
from orchestrator.core.openings import Opening
from orchestrator.core.pairing import pair_next
from orchestrator.daemon.outputs import PgnFiles, write_standings
from orchestrator.daemon.system import notify, watchdog_interval
from orchestrator.engines.pool import EnginePool
from orchestrator.event.export import slug
from orchestrator.event.open import OpenEvent
from orchestrator.event.state import OpeningChoice, new_games, tournament
from orchestrator.game.game import GameSpec, play_game
from orchestrator.game.pgn import to_pgn
from orchestrator.store.database import GameRow, RoundRow, Store

log = structlog.get_logger()


class Daemon:
    def __init__(
        self,
        config: Config,
        event: OpenEvent,
        store: Store,
        openings: list[Opening] | None,
        *,
        drain: bool = False,
    ) -> None:
        self.config = config
        self.event = event
        self.store = store
        self.openings = OpeningChoice(
            openings or (), config.tournament.random_seed, config.tournament.opening_order
        )
        self.drain = drain
        self.stopping = asyncio.Event()
        self.pool = EnginePool()
        self.folder = config.tournament.pgn_dir / slug(config.tournament.name)
        self.name = config.tournament.name
        self.pgn_files = PgnFiles(self.folder, self.name)

    # signals ------------------------------------------------------------------------------

    def request_stop(self, signame: str) -> None:
        if not self.stopping.is_set():
            log.info("shutdown_requested", signal=signame, drain=self.drain)
            notify("STOPPING=1")
        self.stopping.set()

    async def _watchdog(self, every: float) -> None:
        while True:
            notify("WATCHDOG=1")
            await asyncio.sleep(every)

    # the event ----------------------------------------------------------------------------

    async def _tournament(self) -> Tournament:
        """The event as the core sees it, from what is stored now."""
        return tournament(self.event.settings, self.event.players, await self.store.rounds())

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop, sig.name)
        structlog.contextvars.bind_contextvars(tournament=self.name)
        aborted = await self.store.abort_running()
        log.info(
            "tournament_resumed" if self.event.resumed else "tournament_started",
            players=len(self.config.engines),
            rounds=self.config.total_rounds(),
            aborted_games=aborted,
        )
        notify("READY=1")
        every = watchdog_interval()
        watchdog = asyncio.create_task(self._watchdog(every)) if every else None
        try:
            await self._rounds()
        finally:
            if watchdog:
                watchdog.cancel()
            await self.pool.close()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    async def _rounds(self) -> None:
        total = self.config.total_rounds()
        await self._write_outputs(None)
        while not self.stopping.is_set():
            rounds = await self.store.rounds()
            current = rounds[-1] if rounds else None
            if current is not None and any(g.status != "finished" for g in current.games):
                await self._play_round(current)
                continue
            if current is not None and current.finished_at is None:
                await self._finish_round(current)
                continue
            if len(rounds) >= total:
                await self._finish_event()
                return
            await self._pair()

    async def _pair(self) -> None:
        pairing = pair_next(await self._tournament())
        games = new_games(pairing, await self.store.pairs_so_far(), self.openings)
        await self.store.add_round(pairing.round, pairing.bye, pairing.dropped_rounds, games)
        log.info(
            "round_paired",
            round=pairing.round,
            games=len(pairing.games),
            bye=pairing.bye,
            dropped_rounds=pairing.dropped_rounds,
        )

    async def _finish_round(self, rnd: RoundRow) -> None:
        await self.store.finish_round(rnd.number)
        await self._write_outputs(rnd.number, standings=True)
        log.info("round_finished", round=rnd.number)

    async def _finish_event(self) -> None:
        await self.store.finish_event()
        await self._write_outputs(None, standings=True)
        log.info("tournament_finished", rounds=len(await self.store.rounds()))

    async def _write_outputs(self, changed: int | None, standings: bool = False) -> None:
        """The PGN files of round `changed` (every round if None) and of the event, and with
        `standings` (or at the start) the standings files."""
        await self.pgn_files.write(await self.store.rounds(changed))
        if standings or changed is None:
            await asyncio.to_thread(
                write_standings,
                self.folder,
                await self._tournament(),
                self.config.tournament.tiebreaks,
            )

    # games --------------------------------------------------------------------------------

    async def _play_round(self, rnd: RoundRow) -> None:
        """Start the round's unfinished games in playing order, `concurrency` at a time,
        never one engine in two games; return when they are done or the daemon stops."""
        limit = self.config.tournament.concurrency
        busy: set[str] = set()
        running: set[asyncio.Task[None]] = set()
        stop = asyncio.create_task(self.stopping.wait())
        try:
            for game in (g for g in rnd.games if g.status != "finished"):
                while len(running) >= limit or {game.white, game.black} & busy:
                    done, _ = await asyncio.wait(
                        {*running, stop}, return_when=asyncio.FIRST_COMPLETED
                    )
                    self._reap(done, running, busy)
                    if self.stopping.is_set():
                        break
                if self.stopping.is_set():
                    break
                busy |= {game.white, game.black}
                task = asyncio.create_task(self._play(rnd, game), name=f"game-{game.id}")
                task.players = (game.white, game.black)  # type: ignore[attr-defined]
                running.add(task)
            while running:
                if self.stopping.is_set() and not self.drain:
                    for task in running:  # once each: a second cancel would cut the abort
                        task.cancel()
                    await asyncio.gather(*running, return_exceptions=True)
                    running.clear()
                    break
                waiting = running if self.stopping.is_set() else {*running, stop}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                self._reap(done, running, busy)
        finally:
            stop.cancel()
            for task in running:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*running, return_exceptions=True)

    def _reap(
        self, done: set[asyncio.Task[Any]], running: set[asyncio.Task[None]], busy: set[str]
    ) -> None:
        for task in done:
            if task not in running:
                continue
            running.discard(task)
            busy.difference_update(task.players)  # type: ignore[attr-defined]
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _play(self, rnd: RoundRow, game: GameRow) -> None:
        settings = self.config.tournament
        spec = GameSpec(
            white=self.config.engine(game.white),
            black=self.config.engine(game.black),
            tc=settings.tc,
            opening=game.opening,
            adjudication=self.config.adjudication,
            timemargin_ms=settings.timemargin_ms,
            game_key=f"{self.name}:{game.id}",
        )
        context = {
            "round": rnd.number,
            "game_id": game.id,
            "white": game.white,
            "black": game.black,
        }
        attempt = await self.store.start_attempt(game.id)
        log.info("game_started", **context, number=game.number, attempt=attempt)

        async def on_move(move: MoveRecord, board: chess.Board) -> None:
            await self.store.add_move(attempt, len(board.move_stack), move)

        try:
            record = await play_game(spec, pool=self.pool, on_move=on_move)
        except asyncio.CancelledError:
            await asyncio.shield(self.store.abort_attempt(game.id, attempt))
            log.info("game_aborted", **context, attempt=attempt)
            raise
        pgn = to_pgn(
            record, event=self.name, site=settings.site, round_tag=f"{rnd.number}.{game.number}"
        )
        await self.store.finish_game(game.id, attempt, record, pgn)
        self._log_finished(record, context)
        await self._write_outputs(rnd.number)

    def _log_finished(self, record: GameRecord, context: dict[str, object]) -> None:
        if record.fault is not None:
            log.warning(
                "engine_fault",
                **context,
                engine=record.fault.engine,
                kind=record.fault.kind,
                detail=record.fault.detail,
            )
        log.info(
            "game_finished",
            **context,
            result=record.result,
            termination=record.termination,
            plies=record.plies,
            reason=record.reason,
        )
