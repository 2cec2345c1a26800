"""The event's state in SQLite (aiosqlite): every change one committed transaction.

Round paired, game started, move played, game finished, round finished: each is written and
committed before the daemon takes its next step, so a kill at any moment loses nothing that
had finished.  WAL mode lets the status commands and the web view read while the daemon
writes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import aiosqlite

from orchestrator.core.errors import OrchestratorError
from orchestrator.core.gamerecord import Fault, GameRecord, MoveRecord
from orchestrator.core.model import Player, Result
from orchestrator.core.openings import Opening
from orchestrator.store.schema import MIGRATIONS, VERSION


class StoreError(OrchestratorError):
    """The database cannot be used (newer schema, not an orchestrator database, ...)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class EventRow:
    name: str
    settings: str  # JSON, as the event layer wrote it
    created_at: str
    finished_at: str | None


@dataclass(frozen=True)
class NewGame:
    """A game of a newly paired round."""

    number: int  # place in the round's playing order, from 1
    pair: int  # the event-wide pair index
    white: str
    black: str
    opening: Opening | None


@dataclass(frozen=True)
class GameRow:
    id: int
    round: int
    number: int
    pair: int
    white: str
    black: str
    opening: Opening | None
    status: str
    result: Result | None
    termination: str | None
    reason: str | None
    plies: int | None
    started_at: str | None
    ended_at: str | None
    fault: Fault | None
    pgn: str | None


@dataclass(frozen=True)
class RoundRow:
    number: int
    bye: str | None
    dropped_rounds: int
    paired_at: str
    finished_at: str | None
    games: tuple[GameRow, ...]


def _opening(text: str | None) -> Opening | None:
    if not text:
        return None
    data = json.loads(text)
    return Opening(data["name"], data["fen"], tuple(data["moves"]))


def _opening_json(opening: Opening | None) -> str | None:
    if opening is None:
        return None
    return json.dumps({"name": opening.name, "fen": opening.fen, "moves": opening.moves})


def _fault(text: str | None) -> Fault | None:
    if not text:
        return None
    data = json.loads(text)
    return Fault(data["engine"], data["kind"], data["detail"], tuple(data["last_output"]))


def _fault_json(fault: Fault | None) -> str | None:
    if fault is None:
        return None
    return json.dumps(
        {
            "engine": fault.engine,
            "kind": fault.kind,
            "detail": fault.detail,
            "last_output": list(fault.output),
        }
    )


def _game(row: aiosqlite.Row) -> GameRow:
    plain = {f.name: row[f.name] for f in fields(GameRow)}
    plain["opening"] = _opening(row["opening"])
    plain["fault"] = _fault(row["fault"])
    return GameRow(**plain)


class Store:
    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._writing = asyncio.Lock()  # one transaction at a time on this connection

    @classmethod
    async def open(cls, path: Path, *, readonly: bool = False) -> Store:
        if readonly and not await asyncio.to_thread(path.is_file):
            raise StoreError(f"{path}: no such database")
        uri = f"file:{path}?mode=ro" if readonly else str(path)
        db = await aiosqlite.connect(uri, uri=readonly, isolation_level=None)
        db.row_factory = aiosqlite.Row
        store = cls(db, path)
        try:
            await db.execute("PRAGMA busy_timeout = 10000")
            await db.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                await db.execute("PRAGMA journal_mode = WAL")
                await db.execute("PRAGMA synchronous = NORMAL")
            await store._migrate(readonly)
        except aiosqlite.DatabaseError as exc:
            await db.close()
            raise StoreError(f"{path}: not an orchestrator database ({exc})") from None
        except BaseException:
            await db.close()
            raise
        return store

    async def close(self) -> None:
        await self.db.close()

    async def _migrate(self, readonly: bool) -> None:
        version = await self._scalar("PRAGMA user_version")
        if version > VERSION:
            raise StoreError(
                f"{self.path}: schema version {version} is newer than this orchestrator ({VERSION})"
            )
        if readonly:
            if version < VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version}; run the daemon to upgrade"
                )
            return
        for number in range(version, VERSION):
            # executescript commits whatever is open, so the migration carries its own
            # transaction: the schema change and the version bump land together
            await self.db.executescript(
                f"BEGIN IMMEDIATE;\n{MIGRATIONS[number]}\n"
                f"PRAGMA user_version = {number + 1};\nCOMMIT;"
            )

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        async with self._writing:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
            await self.db.execute("COMMIT")

    async def _scalar(self, sql: str, *args: Any) -> Any:
        async with self.db.execute(sql, args) as cur:
            row = await cur.fetchone()
        return None if row is None else row[0]

    # the event ---------------------------------------------------------------------------

    async def event(self) -> EventRow | None:
        """The stored event, or None for a new database."""
        sql = "SELECT name, config, created_at, finished_at FROM event"
        async with self.db.execute(sql) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        return EventRow(row["name"], row["config"], row["created_at"], row["finished_at"])

    async def create_event(self, name: str, settings: str, players: Sequence[Player]) -> None:
        async with self.transaction():
            await self.db.execute(
                "INSERT INTO event (id, name, config, created_at) VALUES (1, ?, ?, ?)",
                (name, settings, now()),
            )
            await self.db.executemany(
                "INSERT INTO players (name, seed) VALUES (?, ?)",
                [(p.name, p.seed) for p in players],
            )

    async def update_settings(self, settings: str) -> None:
        async with self.transaction():
            await self.db.execute("UPDATE event SET config = ?", (settings,))

    async def finish_event(self) -> None:
        async with self.transaction():
            await self.db.execute(
                "UPDATE event SET finished_at = ? WHERE finished_at IS NULL", (now(),)
            )

    async def players(self) -> list[Player]:
        async with self.db.execute("SELECT name, seed FROM players ORDER BY seed") as cur:
            return [Player(r["name"], r["seed"]) async for r in cur]

    # rounds and games --------------------------------------------------------------------

    async def add_round(
        self, number: int, bye: str | None, dropped_rounds: int, games: Sequence[NewGame]
    ) -> None:
        """Store a paired round and its games in playing order (one transaction)."""
        async with self.transaction():
            await self.db.execute(
                "INSERT INTO rounds (number, bye, dropped_rounds, paired_at) VALUES (?, ?, ?, ?)",
                (number, bye, dropped_rounds, now()),
            )
            await self.db.executemany(
                "INSERT INTO games (round, number, pair, white, black, opening) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (number, g.number, g.pair, g.white, g.black, _opening_json(g.opening))
                    for g in games
                ],
            )

    async def rounds(self, number: int | None = None) -> list[RoundRow]:
        """Every round with its games, or only round `number` (a list of at most one)."""
        where, args = ("WHERE round = ?", (number,)) if number is not None else ("", ())
        async with self.db.execute(
            f"SELECT * FROM games {where} ORDER BY round, number", args
        ) as cur:
            games = [_game(r) async for r in cur]
        where = "WHERE number = ?" if number is not None else ""
        async with self.db.execute(f"SELECT * FROM rounds {where} ORDER BY number", args) as cur:
            rounds = [r async for r in cur]
        return [
            RoundRow(
                r["number"],
                r["bye"],
                r["dropped_rounds"],
                r["paired_at"],
                r["finished_at"],
                tuple(g for g in games if g.round == r["number"]),
            )
            for r in rounds
        ]

    async def pairs_so_far(self) -> int:
        return cast(int, await self._scalar("SELECT COALESCE(MAX(pair) + 1, 0) FROM games"))

    async def abort_running(self) -> int:
        """After a crash: interrupted attempts become 'aborted', their games 'pending'."""
        async with self.transaction():
            cur = await self.db.execute(
                "UPDATE attempts SET status = 'aborted', ended_at = ? WHERE status = 'running'",
                (now(),),
            )
            await self.db.execute(
                "UPDATE games SET status = 'pending', started_at = NULL WHERE status = 'running'"
            )
        return cur.rowcount

    async def start_attempt(self, game: int) -> int:
        async with self.transaction():
            started = now()
            await self.db.execute(
                "UPDATE games SET status = 'running', started_at = ? WHERE id = ?", (started, game)
            )
            cur = await self.db.execute(
                "INSERT INTO attempts (game, status, started_at) VALUES (?, 'running', ?)",
                (game, started),
            )
        return cast(int, cur.lastrowid)

    async def add_move(self, attempt: int, ply: int, move: MoveRecord) -> None:
        """One move: a single INSERT, committed on its own (one call to SQLite's thread)."""
        score = move.score
        async with self._writing:
            await self.db.execute(
                "INSERT INTO moves (attempt, ply, uci, san, book, score_cp, score_mate, depth, "
                "seldepth, nodes, time_ms, clock_ms, reported_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt,
                    ply,
                    move.uci,
                    move.san,
                    int(move.book),
                    score.score() if score else None,
                    score.mate() if score else None,
                    move.depth,
                    move.seldepth,
                    move.nodes,
                    move.time_ms,
                    move.clock_ms,
                    move.reported_ms,
                ),
            )

    async def finish_game(self, game: int, attempt: int, record: GameRecord, pgn: str) -> None:
        async with self.transaction():
            await self.db.execute(
                "UPDATE games SET status = 'finished', result = ?, termination = ?, reason = ?, "
                "plies = ?, started_at = ?, ended_at = ?, fault = ?, pgn = ? WHERE id = ?",
                (
                    record.result,
                    record.termination,
                    record.reason,
                    record.plies,
                    record.started_at.isoformat(timespec="milliseconds"),
                    record.ended_at.isoformat(timespec="milliseconds"),
                    _fault_json(record.fault),
                    pgn,
                    game,
                ),
            )
            await self.db.execute(
                "UPDATE attempts SET status = 'finished', ended_at = ? WHERE id = ?",
                (now(), attempt),
            )

    async def abort_attempt(self, game: int, attempt: int) -> None:
        async with self.transaction():
            await self.db.execute(
                "UPDATE attempts SET status = 'aborted', ended_at = ? WHERE id = ?",
                (now(), attempt),
            )
            await self.db.execute(
                "UPDATE games SET status = 'pending', started_at = NULL WHERE id = ?", (game,)
            )

    async def finish_round(self, number: int) -> None:
        async with self.transaction():
            await self.db.execute(
                "UPDATE rounds SET finished_at = ? WHERE number = ? AND finished_at IS NULL",
                (now(), number),
            )

    async def live_moves(self, game: int) -> list[dict[str, Any]]:
        """The moves of a game's current (running) or last attempt."""
        sql = (
            "SELECT m.* FROM moves m WHERE m.attempt = "
            "(SELECT MAX(id) FROM attempts WHERE game = ?) ORDER BY m.ply"
        )
        async with self.db.execute(sql, (game,)) as cur:
            return [dict(r) async for r in cur]
