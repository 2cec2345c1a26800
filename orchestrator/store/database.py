"""The event's state in SQLite (aiosqlite): every change one committed transaction.

Round paired, game started, move played, game finished, round finished: each is written and
committed before the daemon takes its next step, so a kill at any moment loses nothing that
had finished.  WAL mode lets the status commands and the web view read while the daemon
writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite
import msgspec

from orchestrator.core.errors import DaemonFault, OrchestratorError
from orchestrator.core.event.model import Player, Result
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import Fault, GameRecord, MoveRecord, score_from, score_parts
from orchestrator.store.schema import MIGRATIONS, VERSION

#: one statement of a change applied with a control: SQL and its parameters
Change = tuple[str, tuple[Any, ...]]


class StoreError(OrchestratorError):
    """The database cannot be used (newer schema, not an orchestrator database, ...)."""


#: the next pair index (`Store.pairs_so_far`): the last entry of the index on `pair`
_PAIRS_SO_FAR = "SELECT COALESCE(MAX(pair) + 1, 0) FROM games"
_INSERT_MOVE = (
    "INSERT INTO moves (attempt, ply, uci, san, book, score_cp, score_mate, depth, seldepth, "
    "nodes, time_ms, clock_ms, reported_ms, pv, nps, tbhits, hashfull, ponder) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _pgn_final_fen(pgn: str) -> str | None:
    """A game's last position, from its PGN.

    >>> _pgn_final_fen("1. e4 e5 *")
    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
    """
    import io

    import chess.pgn

    game = chess.pgn.read_game(io.StringIO(pgn))
    return None if game is None else game.end().board().fen()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


#: why a control is refused once the event is over
EVENT_FINISHED = "the event is finished"


@dataclass(frozen=True, slots=True)
class EventRow:
    name: str
    settings: str  # JSON, as the event layer wrote it
    created_at: str
    finished_at: str | None


@dataclass(frozen=True, slots=True)
class NewGame:
    """A game of a newly paired round."""

    number: int  # place in the round's playing order, from 1
    pair: int  # the event-wide pair index
    white: str
    black: str
    opening: Opening | None
    stage: int | None = None  # a knockout's: its stage, match (slot) and number in the match
    slot: int | None = None
    match_game: int | None = None
    tc: str | None = None  # its time control, where it is not the event's


class GameRow(msgspec.Struct, frozen=True):
    """A game as stored: made for every game at each read of the whole event, so a Struct
    (built in C: 0.15 µs for its 27 fields, where a frozen dataclass took 2.5 µs)."""

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
    forfeit: bool
    details: str | None  # PGN TerminationDetails: the ending in TCEC's words
    host: str | None  # the game host it ran on (None: in the daemon)
    stage: int | None  # a knockout's game: its stage, its match's slot in the stage ...
    slot: int | None
    match_game: int | None  # ... and its number in the match
    tc: str | None  # its time control where it is not the event's (a tiebreak pair's)
    rmobility: str | None  # its r-mobility result (G-score), once played
    white_ev: str | None  # each engine's last score, from White's side (TCEC's wv)
    black_ev: str | None
    final_fen: str | None  # its last position, once finished (TCEC's schedule FinalFen)

    @property
    def duration_s(self) -> float | None:
        """How long the game took, once it has ended."""
        if not (self.started_at and self.ended_at):
            return None
        ended = datetime.fromisoformat(self.ended_at)
        return (ended - datetime.fromisoformat(self.started_at)).total_seconds()


@dataclass(frozen=True, slots=True)
class AttemptRow:
    id: int
    game: int
    status: str  # running | finished | aborted
    started_at: str
    ended_at: str | None
    voided_at: str | None
    void_reason: str | None
    host: str | None  # the game host it ran on, once it started there


@dataclass(frozen=True, slots=True)
class ControlRow:
    id: int
    requested_at: str
    user: str
    command: str
    kind: str
    args: str  # JSON
    reason: str | None
    applied_at: str | None
    outcome: str | None


@dataclass(frozen=True, slots=True)
class EngineUpdateRow:
    id: int
    engine: str
    command: tuple[str, ...] | None
    options: dict[str, Any]
    control: int | None
    applied_at: str
    first_game: int | None


@dataclass(frozen=True, slots=True)
class DaemonRow:
    pid: int
    host: str
    started_at: str
    last_seen: str
    health: str | None = None  # JSON: `event/health.py`


@dataclass(frozen=True, slots=True)
class MoveRow:
    """A stored move: the game and attempt it was played in, its ply (1 = the first move
    from the start position, book moves included), and the move as it was recorded."""

    rowid: int
    game: int
    attempt: int
    ply: int
    move: MoveRecord


#: the columns `_move` reads, in its order
_MOVE_COLUMNS = (
    "m.rowid, a.game, m.attempt, m.ply, m.uci, m.san, m.book, m.score_cp, m.score_mate, "
    "m.depth, m.seldepth, m.nodes, m.time_ms, m.clock_ms, m.reported_ms, m.pv, m.nps, "
    "m.tbhits, m.hashfull, m.ponder"
)
_MOVES = f"SELECT {_MOVE_COLUMNS} FROM moves m JOIN attempts a ON a.id = m.attempt"


def _move(r: aiosqlite.Row) -> MoveRow:
    """A row of `_MOVES`, decoded: the one place where a stored move becomes a record."""
    (rowid, game, attempt, ply, uci, san, book, cp, mate, depth, seldepth, nodes, time_ms,
     clock_ms, reported_ms, pv, nps, tbhits, hashfull, ponder) = r  # fmt: skip
    score = score_from(cp, mate)
    move = MoveRecord(
        uci, san, bool(book), score, depth, seldepth, nodes, time_ms, clock_ms, reported_ms,
        tuple(pv.split()) if pv else (), nps, tbhits, hashfull, ponder,
    )  # fmt: skip
    return MoveRow(rowid, game, attempt, ply, move)


@dataclass(frozen=True, slots=True, weakref_slot=True)  # (`event.state._core_round`)
class RoundRow:
    number: int
    bye: str | None
    dropped_rounds: int
    paired_at: str
    finished_at: str | None
    games: tuple[GameRow, ...]


@functools.lru_cache(maxsize=4096)
def _opening(text: str | None) -> Opening | None:
    """A game's opening, from its column's JSON: the same text gives the same (immutable)
    `Opening`, parsed once (a whole event's read meets each of its openings many times).

    >>> _opening('{"name": "x", "fen": null, "moves": ["e2e4"]}') is _opening(
    ...     '{"name": "x", "fen": null, "moves": ["e2e4"]}')
    True
    """
    if not text:
        return None
    data = json.loads(text)
    return Opening(
        data["name"],
        data["fen"],
        tuple(data["moves"]),
        data.get("eco"),
        data.get("variation"),
        bool(data.get("chess960")),
        data.get("rules", "chess"),
    )


def _opening_json(opening: Opening | None) -> str | None:
    if opening is None:
        return None
    data: dict[str, object] = {"name": opening.name, "fen": opening.fen, "moves": opening.moves}
    if opening.eco:
        data["eco"] = opening.eco
    if opening.variation:
        data["variation"] = opening.variation
    if opening.chess960:
        data["chess960"] = True
    if opening.rules != "chess":
        data["rules"] = opening.rules
    return json.dumps(data)


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


_GAME_FIELDS = GameRow.__struct_fields__
_ATTEMPT_FIELDS = tuple(f.name for f in fields(AttemptRow))


_GAME_COLUMNS = ", ".join(_GAME_FIELDS)
_GAME_COLUMNS_NO_PGN = ", ".join("NULL AS pgn" if f == "pgn" else f for f in _GAME_FIELDS)
#: what a brief read leaves out (`Store.rounds`): what only a game's own page, the live
#: files and the PGN show; the standings, their tally and the pairings read none of it
_NOT_BRIEF = frozenset(
    {"opening", "started_at", "ended_at", "pgn", "host", "white_ev", "black_ev", "final_fen"}
)
_GAME_COLUMNS_BRIEF = ", ".join(f"NULL AS {f}" if f in _NOT_BRIEF else f for f in _GAME_FIELDS)
#: one round's columns and its games' (`Store._round`: a round read in one query)
_ROUND_COLUMNS = "r.number, r.bye, r.bye_team, r.dropped_rounds, r.paired_at, r.finished_at"
_ROUND_GAMES = ", ".join(f"g.{f}" for f in _GAME_FIELDS)
_ROUND_GAMES_NO_PGN = ", ".join("NULL" if f == "pgn" else f"g.{f}" for f in _GAME_FIELDS)
_OPENING, _FAULT, _FORFEIT = (_GAME_FIELDS.index(k) for k in ("opening", "fault", "forfeit"))


#: a game's columns whose texts repeat from game to game (the engines' names, its status, how
#: it ended): one string each, shared by every row, so that an event read whole (each round,
#: for its standings) costs the least memory
_SHARED = tuple(
    _GAME_FIELDS.index(k)
    for k in (
        "white",
        "black",
        "status",
        "result",
        "termination",
        "reason",
        "details",
        "host",
        "tc",
    )
)


def _game(row: aiosqlite.Row | tuple[Any, ...]) -> GameRow:
    """A row of `SELECT {_GAME_COLUMNS} FROM games` (by position: a row's names are slow)."""
    values = list(row)
    for k in _SHARED:
        if values[k] is not None:
            values[k] = sys.intern(values[k])
    values[_OPENING] = _opening(values[_OPENING])
    values[_FAULT] = _fault(values[_FAULT])
    values[_FORFEIT] = bool(values[_FORFEIT])
    return GameRow(*values)


def _game_values(g: NewGame) -> tuple[object, ...]:
    """A new game's columns after its round, in the order `add_round` inserts them."""
    return (g.number, g.pair, g.white, g.black, _opening_json(g.opening), g.stage, g.slot,
            g.match_game, g.tc)  # fmt: skip


T = TypeVar("T")
#: what runs in SQLite's thread with the connection (`Store._call`)
Work = Callable[[sqlite3.Connection], T]


def _in_connection(db: aiosqlite.Connection, work: Work[T]) -> T:
    """In SQLite's thread: `work` with `db`'s own connection."""
    return work(db._conn)  # the connection its thread owns


def _committed(work: Work[T], conn: sqlite3.Connection) -> T:
    """In SQLite's thread: `work` in one committed transaction, rolled back when it fails."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled it back itself (a full disk): the first error counts
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        raise
    return result


def _read(work: Work[T], conn: sqlite3.Connection) -> T:
    """In SQLite's thread: `work`'s queries in one read transaction (one state of the
    database, whatever another process commits meanwhile)."""
    conn.execute("BEGIN")
    try:
        return work(conn)
    finally:
        if conn.in_transaction:  # (SQLite may have ended it itself, on an error)
            conn.execute("COMMIT")


#: the games one query of a whole read (`Store.rounds`) takes: each page's raw rows become
#: `GameRow`s before the next is read, so that an event read whole is never held twice
#: (SQLite's rows, then ours: the read's peak was twice what it keeps)
GAMES_PAGE = 256


def _game_columns(pgn: bool, brief: bool) -> str:
    """The games' columns a read takes (`Store.rounds`): `brief`, or with PGN texts, or not."""
    return _GAME_COLUMNS_BRIEF if brief else _GAME_COLUMNS if pgn else _GAME_COLUMNS_NO_PGN


def _rounds(
    columns: str, db: sqlite3.Connection, kept: FinishedRounds | None = None
) -> list[RoundRow]:
    """In SQLite's thread: every round and its games' `columns` (`Store.rounds`).  With
    `kept`, the finished rounds it holds are not read again (`FinishedRounds`), and the
    finished rounds read are kept in it."""
    same = kept.reusable(db, columns) if kept is not None else {}
    rounds = db.execute(
        "SELECT number, bye, bye_team, dropped_rounds, paired_at, finished_at "
        "FROM rounds ORDER BY number"
    ).fetchall()
    reused: dict[int, RoundRow] = {}
    for number, bye, bye_team, dropped, paired_at, finished_at in rounds:
        held = same.get(number)
        if held is None or (held.bye, held.dropped_rounds, held.paired_at, held.finished_at) != (
            bye or bye_team,
            dropped,
            paired_at,
            finished_at,
        ):
            break  # this round is read, and every one after it
        reused[number] = held
    last = next(reversed(reused), 0)  # the last round reused
    games: list[GameRow] = []
    after = f"WHERE round > {int(last)}" if reused else ""
    cursor = db.execute(f"SELECT {columns} FROM games {after} ORDER BY round, number")
    while page := cursor.fetchmany(GAMES_PAGE):
        games.extend(_game(r) for r in page)
    by_round: dict[int, list[GameRow]] = {}
    for g in games:
        by_round.setdefault(g.round, []).append(g)
    out: list[RoundRow] = []
    for number, bye, bye_team, dropped, paired_at, finished_at in rounds:
        row = reused.get(number)
        if row is None:
            row = RoundRow(
                number,
                bye or bye_team,
                dropped,
                paired_at,
                finished_at,
                tuple(by_round.get(number, ())),
            )
            if kept is not None and finished_at is not None:
                kept.keep(columns, row)
        out.append(row)
    return out


class FinishedRounds:
    """The finished rounds a `Store` has read whole, with their games, so that the next
    read of the whole event (the daemon's, at every round's end) reads only the rounds
    after them: without it, a match of thousands of games read all of them again after
    every pair of games.  Only SQLite's thread uses it (a read's or a write's).

    A finished round is kept as read until anything may have changed it: another
    connection's commit (SQLite's ``PRAGMA data_version`` changes: a control, an offline
    command), or a write of this store's own that is not one of the daemon's steps that
    leave finished rounds alone (starting and finishing a game of the round in play,
    its moves, pairing a round, finishing one: `Store._write`'s `keeps_rounds`); and a
    kept round is read again when its row in ``rounds`` is not as it was.  Only `brief`
    reads are kept (the daemon's: a game's players, result and ending, about 500 bytes
    a game), never the PGN texts: an event's texts are never all in memory.

    >>> import sqlite3
    >>> db = sqlite3.connect(":memory:")
    >>> kept = FinishedRounds()
    >>> kept.reusable(db, _GAME_COLUMNS_BRIEF)  # the first read: none yet
    {}
    >>> kept.keep(_GAME_COLUMNS_BRIEF, RoundRow(1, None, 0, "p", "f", ()))
    >>> list(kept.reusable(db, _GAME_COLUMNS_BRIEF)), kept.reusable(db, _GAME_COLUMNS)
    ([1], {})
    >>> kept.forget()
    >>> kept.reusable(db, _GAME_COLUMNS_BRIEF)
    {}
    """

    def __init__(self) -> None:
        self._rounds: dict[str, dict[int, RoundRow]] = {}
        self._version: int | None = None

    def reusable(self, db: sqlite3.Connection, columns: str) -> dict[int, RoundRow]:
        """The rounds kept with `columns`, unless another connection has committed since
        they were read (then none: every one is forgotten)."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self.forget()
            self._version = version
        return self._rounds.get(columns, {})

    def keep(self, columns: str, row: RoundRow) -> None:
        if columns == _GAME_COLUMNS_BRIEF:  # (the daemon's reads: about 500 bytes a game)
            self._rounds.setdefault(columns, {})[row.number] = row

    def forget(self) -> None:
        self._rounds.clear()


def _round_of(number: int | None, pgn: bool, db: sqlite3.Connection) -> RoundRow | None:
    """In SQLite's thread: round `number` (None: the latest) and its games, in one query
    (with their PGN texts if `pgn`)."""
    which = "?" if number is not None else "(SELECT MAX(number) FROM rounds)"
    sql = (
        f"SELECT {_ROUND_COLUMNS}, {_ROUND_GAMES if pgn else _ROUND_GAMES_NO_PGN} "
        f"FROM rounds r LEFT JOIN games g ON g.round = r.number WHERE r.number = {which} "
        "ORDER BY g.number"
    )
    rows = db.execute(sql, () if number is None else (number,)).fetchall()
    if not rows:
        return None
    first = rows[0]
    return RoundRow(
        first[0],
        first[1] or first[2],
        first[3],
        first[4],
        first[5],
        tuple(_game(tuple(r)[6:]) for r in rows if r[6] is not None),
    )


_CONTROL_FIELDS = tuple(f.name for f in fields(ControlRow))


def _controls(pending: bool, db: sqlite3.Connection) -> list[ControlRow]:
    """In SQLite's thread: every control in order, or those not applied yet (`pending`)."""
    where = "WHERE applied_at IS NULL" if pending else ""
    sql = f"SELECT {', '.join(_CONTROL_FIELDS)} FROM controls {where} ORDER BY id"
    return [ControlRow(*r) for r in db.execute(sql)]


def _event(db: sqlite3.Connection) -> EventRow | None:
    row = db.execute("SELECT name, config, created_at, finished_at FROM event").fetchone()
    return None if row is None else EventRow(*row)


def _players(db: sqlite3.Connection) -> list[Player]:
    sql = "SELECT name, seed, withdrawn_after FROM players ORDER BY seed"
    return [Player(*r) for r in db.execute(sql)]


def _withdrawals(db: sqlite3.Connection) -> dict[str, tuple[int, str]]:
    sql = (
        "SELECT name, withdrawn_after, withdrawn_reason FROM players "
        "WHERE withdrawn_after IS NOT NULL"
    )
    return {r[0]: (r[1], r[2] or "") for r in db.execute(sql)}


def _paused(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT paused FROM event").fetchone()
    return bool(row and row[0])


def _open_attempts(db: sqlite3.Connection) -> list[AttemptRow]:
    sql = (
        f"SELECT {', '.join(_ATTEMPT_FIELDS)} FROM attempts WHERE status = 'running' OR "
        "voided_at IS NOT NULL OR game IN (SELECT id FROM games WHERE status != 'finished') "
        "ORDER BY id"
    )
    return [AttemptRow(*r) for r in db.execute(sql)]


def _daemon(db: sqlite3.Connection) -> DaemonRow | None:
    row = db.execute("SELECT pid, host, started_at, last_seen, health FROM daemon").fetchone()
    return None if row is None else DaemonRow(*row)


@dataclass(frozen=True, slots=True)
class Stored:
    """The whole event as one read found it (`Store.whole`)."""

    event: EventRow | None
    players: list[Player]
    rounds: list[RoundRow]
    attempts: list[AttemptRow]  # `Store.open_attempts`'s
    withdrawals: dict[str, tuple[int, str]]
    paused: bool
    daemon: DaemonRow | None
    controls: list[ControlRow]


class Store:
    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._writing = asyncio.Lock()  # one transaction at a time on this connection
        #: moves `queue_move` holds until they are written: rows of `_INSERT_MOVE`
        self._pending_moves: list[tuple[object, ...]] = []
        #: the finished rounds read whole, not read again (`FinishedRounds`)
        self._finished = FinishedRounds()

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
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
                sqlite3.SQLITE_IOERR,
                sqlite3.SQLITE_FULL,
            ):
                # the machine would not let it write (a full disk, a file size limit)
                raise DaemonFault(
                    f"{path}: the database cannot be written ({exc}): is the disk full, or the "
                    "size of a file limited (ulimit -f)?"
                ) from None
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
        await self.fill_final_fens()

    async def fill_final_fens(self) -> int:
        """The last position of every finished game stored before schema 9 kept it, found
        from its PGN (once: a game that has it is never read again); how many."""
        rows = await self._rows(
            "SELECT id, pgn FROM games WHERE status = 'finished' AND final_fen IS NULL "
            "AND pgn IS NOT NULL"
        )
        if not rows:
            return 0
        fens = await asyncio.to_thread(lambda: [(_pgn_final_fen(r[1]), r[0]) for r in rows])
        await self._write(
            lambda db: db.executemany("UPDATE games SET final_fen = ? WHERE id = ?", fens)
        )
        return len(fens)

    async def _call(self, work: Work[T]) -> T:
        """`work` run with the connection in SQLite's own thread: the statements of a write
        or a read, however many, cost one trip to that thread and back.  (A trip wakes two
        threads: statement by statement, a game's start and end took two dozen, each
        costing more than the statement.)  aiosqlite runs the calls it is given one at a
        time, in order; this gives it a function (its `Connection._execute`), which the
        pinned versions have and `tests/store` checks."""
        call: Callable[..., Awaitable[object]] = self.db._execute  # untyped in aiosqlite
        return cast(T, await call(_in_connection, self.db, work))

    async def _write(self, work: Work[T], *, keeps_rounds: bool = False) -> T:
        """`work` in one committed transaction (BEGIN IMMEDIATE to COMMIT; rolled back,
        nothing changed, when it fails), in one trip to SQLite's thread.  `keeps_rounds`:
        it leaves every finished round as it was (`FinishedRounds`); else the rounds kept
        are forgotten, once it has run (in SQLite's thread: no read comes between)."""
        async with self._writing:
            return await self._call(functools.partial(self._committed, work, keeps_rounds))

    def _committed(self, work: Work[T], keeps_rounds: bool, conn: sqlite3.Connection) -> T:
        """In SQLite's thread: `_committed`, then the kept rounds forgotten unless it
        `keeps_rounds`."""
        try:
            return _committed(work, conn)
        finally:
            if not keeps_rounds:
                self._finished.forget()

    async def probe_space(self, size: int = 64 << 10) -> None:
        """Whether the database may grow by `size` bytes: a table and a blob of that size
        are written and rolled back (nothing is kept); a `sqlite3.Error` when it may not
        (`space.disk_full`), as when it reaches its `max_page_count`."""

        def probe(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("CREATE TABLE space_probe (data BLOB)")
                db.execute("INSERT INTO space_probe VALUES (zeroblob(?))", (size,))
            finally:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")

        async with self._writing:
            await self._call(probe)

    async def _scalar(self, sql: str, *args: Any) -> Any:
        rows = await self._rows(sql, *args)
        return rows[0][0] if rows else None

    async def _rows(self, sql: str, *args: Any) -> list[aiosqlite.Row]:
        """Every row of one query, read in one call to SQLite's thread.  No statement of
        this connection stays open across an await: a write of this connection would find
        a read transaction it cannot upgrade while another connection writes, and fail at
        once (SQLITE_BUSY, without the busy timeout's wait)."""
        return list(await self.db.execute_fetchall(sql, args))

    # the event ---------------------------------------------------------------------------

    async def event(self) -> EventRow | None:
        """The stored event, or None for a new database."""
        return await self._call(_event)

    async def create_event(self, name: str, settings: str, players: Sequence[Player]) -> None:
        def create(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO event (id, name, config, created_at) VALUES (1, ?, ?, ?)",
                (name, settings, now()),
            )
            db.executemany(
                "INSERT INTO players (name, seed) VALUES (?, ?)",
                [(p.name, p.seed) for p in players],
            )

        await self._write(create)

    async def update_settings(self, settings: str) -> None:
        await self._write(lambda db: db.execute("UPDATE event SET config = ?", (settings,)))

    async def finish_event(self) -> None:
        """The event is over; a control that came after the daemon last looked is refused
        in the same transaction (`add_control` refuses any later one)."""

        def finish(db: sqlite3.Connection) -> None:
            at = now()
            db.execute("UPDATE event SET finished_at = ? WHERE finished_at IS NULL", (at,))
            db.execute(
                "UPDATE controls SET applied_at = ?, outcome = ? WHERE applied_at IS NULL",
                (at, f"refused: {EVENT_FINISHED}"),
            )

        await self._write(finish)

    async def players(self) -> list[Player]:
        """The players in seed order, withdrawn ones included."""
        return await self._call(_players)

    async def withdrawals(self) -> dict[str, tuple[int, str]]:
        """Withdrawn players: the round after which each withdrew, and why."""
        return await self._call(_withdrawals)

    async def paused(self) -> bool:
        return await self._call(_paused)

    async def whole(self, *, pgn: bool = False, brief: bool = False) -> Stored:
        """The whole event as a reader sees it (`event/read.py`), in one read transaction
        and one trip to SQLite's thread; the games read as `rounds` reads them."""
        columns = _game_columns(pgn, brief)

        def read(db: sqlite3.Connection) -> Stored:
            return Stored(
                _event(db),
                _players(db),
                _rounds(columns, db, self._finished),
                _open_attempts(db),
                _withdrawals(db),
                _paused(db),
                _daemon(db),
                _controls(False, db),
            )

        return await self._call(functools.partial(_read, read))

    # rounds and games --------------------------------------------------------------------

    async def add_round(
        self,
        number: int,
        bye: str | None,
        dropped_rounds: int,
        games: Sequence[NewGame],
        *,
        team_bye: bool = False,
    ) -> None:
        """Store a paired round and its games in playing order (one transaction); the BYE is
        a player's, or with `team_bye` a team's."""
        player, team = (None, bye) if team_bye else (bye, None)
        values = [(number, *_game_values(g)) for g in games]

        def add(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO rounds (number, bye, bye_team, dropped_rounds, paired_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (number, player, team, dropped_rounds, now()),
            )
            db.executemany(
                "INSERT INTO games (round, number, pair, white, black, opening, stage, slot, "
                "match_game, tc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        await self._write(add, keeps_rounds=True)

    async def rounds(
        self, number: int | None = None, *, pgn: bool = False, brief: bool = False
    ) -> list[RoundRow]:
        """Every round with its games, or only round `number` (a list of at most one).  A
        game's PGN text is read only with `pgn` (its `pgn` is None otherwise): the games'
        texts are most of an event's size, and most readers never need them.  `brief`
        leaves out more (`_NOT_BRIEF`: None), for the daemon's reads of the whole event at
        each round's end, which need a game's players, result and ending alone.  The whole
        event is read `GAMES_PAGE` games at a time, in one read transaction and one trip
        to SQLite's thread."""
        if number is not None:
            found = await self._round(number, pgn=pgn)
            return [] if found is None else [found]
        columns = _game_columns(pgn, brief)
        read = functools.partial(_rounds, columns, kept=self._finished)
        return await self._call(functools.partial(_read, read))

    async def round_numbers(self) -> list[int]:
        """The numbers of the rounds paired so far, in order (no game read)."""
        return [r[0] for r in await self._rows("SELECT number FROM rounds ORDER BY number")]

    async def last_round(self) -> RoundRow | None:
        """The latest paired round with its games (one round's rows, whatever the event's
        size), or None before the first."""
        return await self._round(None)

    async def _round(self, number: int | None, *, pgn: bool = False) -> RoundRow | None:
        """Round `number` (None: the latest) and its games, in one query."""
        return await self._call(functools.partial(_round_of, number, pgn))

    async def state(self) -> tuple[list[ControlRow], RoundRow | None]:
        """The controls waiting to be applied, and the latest round with its games: what the
        daemon looks at before each of its steps, in one read."""

        def read(db: sqlite3.Connection) -> tuple[list[ControlRow], RoundRow | None]:
            return _controls(True, db), _round_of(None, False, db)

        return await self._call(functools.partial(_read, read))

    async def games_before(self, number: int) -> int:
        """How many games the rounds before round `number` have."""
        return cast(int, await self._scalar("SELECT COUNT(*) FROM games WHERE round < ?", number))

    async def pairs_so_far(self) -> int:
        return cast(int, await self._scalar(_PAIRS_SO_FAR))

    async def abort_running(self) -> int:
        """After a crash: interrupted attempts become 'aborted', their games 'pending'."""

        def abort(db: sqlite3.Connection) -> int:
            cur = db.execute(
                "UPDATE attempts SET status = 'aborted', ended_at = ? WHERE status = 'running'",
                (now(),),
            )
            db.execute(
                "UPDATE games SET status = 'pending', started_at = NULL WHERE status = 'running'"
            )
            return cur.rowcount

        return await self._write(abort)

    async def start_attempt(self, game: int) -> int:
        """A new attempt at `game`; engine updates not yet used by a game are now used by
        this one (`first_game`)."""

        def start(db: sqlite3.Connection) -> int:
            started = now()
            db.execute(
                "UPDATE engine_updates SET first_game = ? WHERE first_game IS NULL AND engine IN "
                "(SELECT white FROM games WHERE id = ? UNION SELECT black FROM games WHERE id = ?)",
                (game, game, game),
            )
            db.execute(
                "UPDATE games SET status = 'running', started_at = ? WHERE id = ?", (started, game)
            )
            cur = db.execute(
                "INSERT INTO attempts (game, status, started_at) VALUES (?, 'running', ?)",
                (game, started),
            )
            return cast(int, cur.lastrowid)

        return await self._write(start, keeps_rounds=True)  # a game of the round in play

    def queue_move(self, attempt: int, ply: int, move: MoveRecord) -> None:
        """One move, kept until the next `flush_moves` (or its attempt's `finish_game` or
        `abort_game`) writes it: the moves of every running game go to SQLite together, in
        one transaction, not one call to SQLite's thread per move.  A move lost with a
        killed daemon belongs to a game that was still running: it is played again."""
        self._pending_moves.append(
            (
                attempt,
                ply,
                move.uci,
                move.san,
                int(move.book),
                *score_parts(move.score),
                move.depth,
                move.seldepth,
                move.nodes,
                move.time_ms,
                move.clock_ms,
                move.reported_ms,
                " ".join(move.pv) or None,
                move.nps,
                move.tbhits,
                move.hashfull,
                move.ponder,
            )
        )

    @property
    def moves_pending(self) -> int:
        """How many moves `queue_move` holds."""
        return len(self._pending_moves)

    async def flush_moves(self) -> int:
        """Write every move `queue_move` holds, in one transaction; how many.  When the
        transaction fails (a full disk), they are held for the next try."""
        if not self._pending_moves:
            return 0
        rows, self._pending_moves = self._pending_moves, []
        try:
            await self._write(lambda db: db.executemany(_INSERT_MOVE, rows), keeps_rounds=True)
        except BaseException:
            self._pending_moves[:0] = rows
            raise
        return len(rows)

    async def _write_with_moves(
        self,
        attempt: int | None,
        work: Callable[[list[tuple[object, ...]], sqlite3.Connection], None],
        *,
        keeps_rounds: bool = False,
    ) -> None:
        """`work` in one transaction with the held moves of `attempt`, taken once the
        transactions before it are over (a `flush_moves` that failed holds its moves again
        first), and held no longer: when it fails, the attempt is played again."""
        async with self._writing:
            moves = [r for r in self._pending_moves if r[0] == attempt]
            if moves:
                self._pending_moves = [r for r in self._pending_moves if r[0] != attempt]
            work_ = functools.partial(work, moves)
            await self._call(functools.partial(self._committed, work_, keeps_rounds))

    async def add_move(self, attempt: int, ply: int, move: MoveRecord) -> None:
        """One move, written at once (`queue_move` and `flush_moves` in one)."""
        self.queue_move(attempt, ply, move)
        await self.flush_moves()

    async def finish_game(self, game: int, attempt: int, record: GameRecord, pgn: str) -> None:
        """The game's result, PGN and the moves of `attempt` still held, in one transaction."""
        values = (
            record.result,
            record.termination,
            record.reason,
            record.details or None,
            record.plies,
            record.started_at.isoformat(timespec="milliseconds"),
            record.ended_at.isoformat(timespec="milliseconds"),
            _fault_json(record.fault),
            pgn,
            record.host,
            record.rmobility_result(),
            *record.last_evals(),
            record.last_fen(),
            game,
        )

        def finish(moves: list[tuple[object, ...]], db: sqlite3.Connection) -> None:
            db.executemany(_INSERT_MOVE, moves)
            db.execute(
                "UPDATE games SET status = 'finished', result = ?, termination = ?, reason = ?, "
                "details = ?, plies = ?, started_at = ?, ended_at = ?, fault = ?, pgn = ?, "
                "host = ?, rmobility = ?, white_ev = ?, black_ev = ?, final_fen = ? "
                "WHERE id = ?",
                values,
            )
            db.execute(
                "UPDATE attempts SET status = 'finished', ended_at = ? WHERE id = ?",
                (now(), attempt),
            )

        await self._write_with_moves(attempt, finish, keeps_rounds=True)  # a round in play

    async def attempt_host(self, attempt: int, host: str) -> None:
        """The game host an attempt runs on, once it has started there."""
        await self._write(
            lambda db: db.execute("UPDATE attempts SET host = ? WHERE id = ?", (host, attempt)),
            keeps_rounds=True,
        )

    async def finished_games(self) -> int:
        """How many games have a result."""
        return int(await self._scalar("SELECT COUNT(*) FROM games WHERE status = 'finished'"))

    async def game_pgn(self, game: int) -> str | None:
        """A finished game's PGN (None before it has finished)."""
        return cast(str | None, await self._scalar("SELECT pgn FROM games WHERE id = ?", game))

    async def game_host(self, game: int) -> str | None:
        """Where a game ran, or runs now: its host once finished, else its last attempt's."""
        return cast(
            str | None,
            await self._scalar(
                "SELECT COALESCE((SELECT host FROM games WHERE id = ?), (SELECT host FROM "
                "attempts WHERE game = ? ORDER BY id DESC LIMIT 1))",
                game,
                game,
            ),
        )

    async def abort_game(self, game: int, attempt: int | None = None) -> None:
        """The running attempt at `game`, if any, is aborted; the game is to play again.
        The moves of `attempt` still held are written with it (what the attempt played)."""

        def abort(moves: list[tuple[object, ...]], db: sqlite3.Connection) -> None:
            db.executemany(_INSERT_MOVE, moves)
            db.execute(
                "UPDATE attempts SET status = 'aborted', ended_at = ? "
                "WHERE game = ? AND status = 'running'",
                (now(), game),
            )
            db.execute(
                "UPDATE games SET status = 'pending', started_at = NULL "
                "WHERE id = ? AND status = 'running'",
                (game,),
            )

        await self._write_with_moves(attempt, abort)

    async def finish_round(self, number: int) -> None:
        await self._write(
            lambda db: db.execute(
                "UPDATE rounds SET finished_at = ? WHERE number = ? AND finished_at IS NULL",
                (now(), number),
            ),
            keeps_rounds=True,  # (a round not finished yet)
        )

    async def attempts(self, game: int | None = None) -> list[AttemptRow]:
        """Every attempt, or `game`'s, in order."""
        where, args = ("WHERE game = ?", (game,)) if game is not None else ("", ())
        sql = f"SELECT * FROM attempts {where} ORDER BY id"
        return [
            AttemptRow(*(r[name] for name in _ATTEMPT_FIELDS)) for r in await self._rows(sql, *args)
        ]

    async def open_attempts(self) -> list[AttemptRow]:
        """The attempts that still say something of the event's state, in order: those
        running, those voided, and every attempt of a game not finished.  (A finished game's
        other attempts are its history: `attempts(game)` reads them.)  An event read whole,
        each round, so holds a few rows, not two for every game ever played."""
        return await self._call(_open_attempts)

    async def moves(self, attempt: int) -> list[MoveRow]:
        """The moves of one attempt, in order."""
        return await self._moves(f"{_MOVES} WHERE m.attempt = ? ORDER BY m.ply", attempt)

    async def _moves(self, sql: str, *args: Any) -> list[MoveRow]:
        return [_move(r) for r in await self._rows(sql, *args)]

    # controls, liveness ----------------------------------------------------------------------

    async def add_control(
        self, user: str, command: str, kind: str, args: str, reason: str | None
    ) -> int | None:
        """Store a control for the daemon to apply (one committed transaction); None, and
        nothing stored, once the event has finished."""

        def add(db: sqlite3.Connection) -> int | None:
            cur = db.execute(
                "INSERT INTO controls (requested_at, user, command, kind, args, reason) "
                "SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                "(SELECT 1 FROM event WHERE finished_at IS NOT NULL)",
                (now(), user, command, kind, args, reason),
            )
            return cast(int, cur.lastrowid) if cur.rowcount == 1 else None

        return await self._write(add)

    async def controls(self, *, pending: bool = False) -> list[ControlRow]:
        """Every control in order, or those waiting to be applied (`pending`)."""
        return await self._call(functools.partial(_controls, pending))

    async def engine_updates(self) -> list[EngineUpdateRow]:
        return [
            EngineUpdateRow(
                r["id"],
                r["engine"],
                tuple(json.loads(r["command"])) if r["command"] else None,
                json.loads(r["options"]),
                r["control"],
                r["applied_at"],
                r["first_game"],
            )
            for r in await self._rows("SELECT * FROM engine_updates ORDER BY id")
        ]

    async def heartbeat(
        self, pid: int, host: str, *, starting: bool = False, health: str | None = None
    ) -> None:
        """The daemon is alive (`starting`: it has just started), with its `health` (JSON,
        `event/health.py`)."""
        stamp = now()
        async with self._writing:
            if starting:
                await self.db.execute(
                    "INSERT OR REPLACE INTO daemon (id, pid, host, started_at, last_seen, health) "
                    "VALUES (1, ?, ?, ?, ?, ?)",
                    (pid, host, stamp, stamp, health),
                )
            else:
                await self.db.execute(
                    "UPDATE daemon SET last_seen = ?, health = COALESCE(?, health)",
                    (stamp, health),
                )

    async def daemon(self) -> DaemonRow | None:
        return await self._call(_daemon)

    async def apply_control(self, control: int, outcome: str, changes: Sequence[Change]) -> None:
        """A control's changes and its outcome, in one committed transaction."""

        def apply(db: sqlite3.Connection) -> None:
            for sql, args in changes:
                db.execute(sql, args)
            db.execute(
                "UPDATE controls SET applied_at = ?, outcome = ? WHERE id = ?",
                (now(), outcome, control),
            )

        await self._write(apply)

    async def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's `PRAGMA data_version`)."""
        return int(await self._scalar("PRAGMA data_version"))

    async def moves_after(self, rowid: int, limit: int = 500) -> list[MoveRow]:
        """Moves stored after the move with `rowid` (oldest first)."""
        sql = f"{_MOVES} WHERE m.rowid > ? ORDER BY m.rowid LIMIT ?"
        return await self._moves(sql, rowid, limit)

    async def attempt_moves(self, attempt: int, before_rowid: int) -> list[MoveRow]:
        """An attempt's moves stored before the move with `before_rowid`."""
        sql = f"{_MOVES} WHERE m.attempt = ? AND m.rowid < ? ORDER BY m.ply"
        return await self._moves(sql, attempt, before_rowid)

    async def game_opening(self, game: int) -> Opening | None:
        rows = await self._rows("SELECT opening FROM games WHERE id = ?", game)
        return _opening(rows[0][0]) if rows else None

    async def last_move_rowid(self) -> int:
        return int(await self._scalar("SELECT COALESCE(MAX(rowid), 0) FROM moves"))

    async def game_states(self) -> list[tuple[int, int, str, str | None]]:
        """(id, round, status, result) of every game, and the rounds' finish as game -1."""
        rows = await self._rows(
            "SELECT id, round, status, result FROM games UNION ALL "
            "SELECT -number, number, COALESCE(finished_at, ''), NULL FROM rounds ORDER BY 1"
        )
        return [(int(r[0]), int(r[1]), str(r[2]), r[3]) for r in rows]

    async def current_moves(self, game: int) -> list[MoveRow]:
        """The moves of a game's current (running) or last attempt."""
        last = "(SELECT MAX(id) FROM attempts WHERE game = ?)"
        sql = f"{_MOVES} WHERE m.attempt = {last} ORDER BY m.ply"
        return await self._moves(sql, game)
