"""The store on its own: schema and migrations, and every read and write of the state."""

from __future__ import annotations

import gc
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator.core.event.model import Player
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import Cp, Fault, GameRecord, Mate, MoveRecord
from orchestrator.event import state
from orchestrator.event.settings import EventSettings
from orchestrator.event.state import tournament
from orchestrator.store import changes
from orchestrator.store.database import _PAIRS_SO_FAR, NewGame, Store, StoreError
from orchestrator.store.schema import MIGRATIONS, VERSION

PLAYERS = [Player("A", 1), Player("B", 2), Player("C", 3), Player("D", 4)]
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


async def new_store(tmp_path: Path) -> Store:
    store = await Store.open(tmp_path / "t.sqlite")
    await store.create_event("Test", '{"name": "Test"}', PLAYERS)
    italian = Opening("Italian", None, ("e2e4", "e7e5"))
    games = [
        NewGame(1, 0, "A", "B", italian),
        NewGame(2, 1, "C", "D", None),
        NewGame(3, 0, "B", "A", italian),
        NewGame(4, 1, "D", "C", None),
    ]
    await store.add_round(1, None, 0, games)
    return store


def record(white: str, black: str, fault: Fault | None = None) -> GameRecord:
    moves = (MoveRecord("e2e4", "e4", book=True), MoveRecord("d7d5", "d5", score=Mate(-3)))
    return GameRecord(
        white, black, "1-0", "normal", "White mates", moves, WHEN, WHEN, "10+0.1", fault=fault
    )


async def test_a_new_database_has_the_schema_and_the_event(tmp_path: Path) -> None:
    store = await new_store(tmp_path)
    try:
        event = await store.event()
        assert event is not None and (event.name, event.settings) == ("Test", '{"name": "Test"}')
        assert event.finished_at is None
        assert await store.players() == PLAYERS
        rounds = await store.rounds()
        assert [(g.number, g.pair, g.white, g.status) for g in rounds[0].games] == [
            (1, 0, "A", "pending"),
            (2, 1, "C", "pending"),
            (3, 0, "B", "pending"),
            (4, 1, "D", "pending"),
        ]
        assert rounds[0].games[0].opening == Opening("Italian", None, ("e2e4", "e7e5"))
        assert await store.pairs_so_far() == 2
        await store.update_settings('{"name": "Renamed"}')
        await store.finish_event()
        event = await store.event()
        assert event is not None and event.settings == '{"name": "Renamed"}'
        assert event.finished_at is not None
    finally:
        await store.close()
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == VERSION


async def test_attempts_moves_and_results(tmp_path: Path) -> None:
    store = await new_store(tmp_path)
    try:
        game = (await store.rounds())[0].games[1]
        first = await store.start_attempt(game.id)
        await store.add_move(first, 1, MoveRecord("e2e4", "e4", score=Cp(20), time_ms=5))
        assert (await store.rounds(1))[0].games[1].status == "running"
        await store.abort_game(game.id)
        assert (await store.rounds(1))[0].games[1].status == "pending"
        second = await store.start_attempt(game.id)
        move = MoveRecord("d2d4", "d4", score=Cp(35), depth=20, time_ms=120, reported_ms=118)
        await store.add_move(second, 1, move)
        live = [row.move for row in await store.current_moves(game.id)]
        assert live == [move]
        fault = Fault("D", "crash", "exit code 3", ("bestmove e7e5",))
        await store.finish_game(game.id, second, record("C", "D", fault), "[PGN]")
        stored = (await store.rounds(1, pgn=True))[0].games[1]
        assert (await store.rounds(1))[0].games[1].pgn is None  # texts only when asked
        assert await store.game_pgn(game.id) == "[PGN]"
        assert (stored.status, stored.result, stored.plies, stored.pgn) == (
            "finished",
            "1-0",
            2,
            "[PGN]",
        )
        assert stored.fault == fault
        await store.finish_round(1)
        assert (await store.rounds(1))[0].finished_at is not None
        assert await store.rounds(2) == []
    finally:
        await store.close()


async def test_abort_running_after_a_crash(tmp_path: Path) -> None:
    store = await new_store(tmp_path)
    try:
        games = (await store.rounds())[0].games
        for game in games[:2]:
            await store.start_attempt(game.id)
        assert await store.abort_running() == 2
        assert all(g.status == "pending" for g in (await store.rounds())[0].games)
    finally:
        await store.close()


async def test_a_mate_score_is_stored_as_a_mate(tmp_path: Path) -> None:
    store = await new_store(tmp_path)
    try:
        game = (await store.rounds())[0].games[0]
        attempt = await store.start_attempt(game.id)
        await store.add_move(attempt, 3, MoveRecord("g1f3", "Nf3", score=Mate(-3)))
        (row,) = await store.current_moves(game.id)
        assert row.move.score == Mate(-3) and row.ply == 3
    finally:
        await store.close()


async def test_migrating_a_version_1_database_keeps_its_moves(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
        db.execute("INSERT INTO event VALUES (1, 'Old', '{}', '2025-01-01', NULL)")
        db.execute("INSERT INTO players VALUES ('A', 1), ('B', 2)")
        db.execute("INSERT INTO rounds VALUES (1, NULL, 0, '2025-01-01', NULL)")
        db.execute(
            "INSERT INTO games (round, number, pair, white, black) VALUES (1, 1, 0, 'A', 'B')"
        )
        db.execute("INSERT INTO attempts VALUES (1, 1, 'running', '2025-01-01', NULL)")
        db.execute(
            "INSERT INTO moves VALUES (1, 1, 'e2e4', 'e4', 0, 10, NULL, 5, 7, 100, 50, 9000)"
        )
    with pytest.raises(StoreError, match="schema version 1; run the daemon to upgrade"):
        await Store.open(path, readonly=True)
    store = await Store.open(path)
    try:
        (row,) = await store.current_moves(1)
        assert (row.move.san, row.move.clock_ms, row.move.reported_ms) == ("e4", 9000, None)
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == VERSION


async def test_databases_the_store_refuses(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such database"):
        await Store.open(tmp_path / "missing.sqlite", readonly=True)
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version = {VERSION + 1}")
    with pytest.raises(StoreError, match="is newer than this orchestrator"):
        await Store.open(newer)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not an orchestrator database"):
        await Store.open(garbage)


def test_leftover_temporary_files_are_removed(tmp_path: Path) -> None:
    from orchestrator.daemon.outputs import remove_leftovers, write_atomic

    (tmp_path / ".round-01.pgn.abc123.tmp").write_text("half a file")
    write_atomic(tmp_path / "round-01.pgn", "whole\n")
    assert remove_leftovers(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["round-01.pgn"]
    assert remove_leftovers(tmp_path / "missing") == 0


async def test_an_event_read_whole_in_pages_is_every_round_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rounds()` reads the games a page at a time (in one read transaction): the same
    rounds as reading each round alone."""
    monkeypatch.setattr("orchestrator.store.database.GAMES_PAGE", 3)
    store = await new_store(tmp_path)
    try:
        for number in range(2, 5):  # 4 rounds of 4 games (5 for round 3): pages cut rounds
            extra = [NewGame(5, 2, "A", "D", None)] if number == 3 else []
            games = [NewGame(i, i - 1, "A", "B", None) for i in range(1, 5)] + extra
            await store.add_round(number, None, 0, games)
        whole = await store.rounds()
        assert [len(r.games) for r in whole] == [4, 4, 5, 4]
        assert whole == [(await store.rounds(n))[0] for n in range(1, 5)]
    finally:
        await store.close()


async def test_a_game_s_start_and_end_each_cost_one_trip_to_sqlite_s_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every statement of a write goes to SQLite's thread in one call (aiosqlite's
    `Connection._execute`, which `Store._call` relies on: a newer aiosqlite without it fails
    here, not in a daemon)."""
    store = await new_store(tmp_path)
    try:
        calls: list[object] = []
        execute = store.db._execute

        async def counted(fn: object, *args: object) -> object:
            calls.append(fn)
            return await execute(fn, *args)

        monkeypatch.setattr(store.db, "_execute", counted)
        game = (await store.rounds())[0].games[0]
        assert len(calls) == 1  # the whole event: one read
        attempt = await store.start_attempt(game.id)
        store.queue_move(attempt, 1, MoveRecord("d2d4", "d4", score=Cp(35), time_ms=120))
        await store.finish_game(game.id, attempt, record("A", "B"), "[PGN]")
        assert len(calls) == 3
        stored = (await store.rounds(1, pgn=True))[0].games[0]
        assert (stored.status, stored.pgn) == ("finished", "[PGN]")
        assert [row.move.uci for row in await store.moves(attempt)] == ["d2d4"]
    finally:
        await store.close()


async def test_a_write_that_fails_changes_nothing(tmp_path: Path) -> None:
    """A statement that fails rolls back the statements before it (one transaction), and
    the store goes on."""
    store = await new_store(tmp_path)
    try:
        game = (await store.rounds())[0].games[0]
        with pytest.raises(sqlite3.IntegrityError):
            await store.apply_control(
                99,
                "done",
                [
                    ("UPDATE games SET status = 'finished' WHERE id = ?", (game.id,)),
                    ("INSERT INTO players (name, seed) VALUES ('A', 9)", ()),  # A exists
                ],
            )
        assert (await store.rounds(1))[0].games[0].status == "pending"
        await store.finish_round(1)
        assert (await store.rounds(1))[0].finished_at is not None
    finally:
        await store.close()


async def test_finished_rounds_are_read_once_until_anything_may_change_them(
    tmp_path: Path,
) -> None:
    """A read of the whole event reads a finished round's games once (the daemon reads
    the event at every round's end: a match of thousands of games read them all again);
    it reads them again after a write that may change them (a control's) or another
    connection's commit, and whenever the round's own row changed.  Each read is what a
    fresh store reads."""
    store = await new_store(tmp_path)
    fresh = await Store.open(tmp_path / "t.sqlite", readonly=True)

    async def read() -> list[object]:
        whole = (await store.whole(brief=True)).rounds
        assert whole == (await fresh.whole(brief=True)).rounds
        assert await store.rounds(brief=True) == whole
        return list(whole)

    try:
        for game in (await store.rounds())[0].games:
            attempt = await store.start_attempt(game.id)
            await store.finish_game(game.id, attempt, record(game.white, game.black), "")
        await store.finish_round(1)
        await store.add_round(2, None, 0, [NewGame(1, 2, "A", "C", None)])
        first = await read()
        again = await read()
        assert again[0] is first[0]  # finished: kept
        assert again[1] is not first[1]  # in play: read again
        game = again[1].games[0]
        attempt = await store.start_attempt(game.id)  # the daemon's steps keep it
        await store.finish_game(game.id, attempt, record("A", "C"), "")
        await store.finish_round(2)
        kept = await read()
        assert kept[0] is first[0] and kept[1].games[0].status == "finished"
        # a control's write: every finished round read again
        one = first[0].games[0].id
        control = await store.add_control("orchestrator", "result", "result", "{}", "")
        assert control is not None
        await store.apply_control(
            control, "done", changes.game_result(one, "0-1", "adjudication", "Director")
        )
        after = await read()
        assert after[0] is not first[0] and after[0].games[0].result == "0-1"
        assert after[1] is not kept[1]
        # another connection's commit (an offline command)
        again = await read()
        assert again[0] is after[0]
        with sqlite3.connect(tmp_path / "t.sqlite") as other:
            other.execute("UPDATE games SET result = '1/2-1/2' WHERE id = ?", (one,))
        outside = await read()
        assert outside[0] is not after[0] and outside[0].games[0].result == "1/2-1/2"
        # a round reopened by another connection: its row is read again, and its games
        await read()
        with sqlite3.connect(tmp_path / "t.sqlite") as other:
            other.execute("UPDATE rounds SET finished_at = NULL WHERE number = 2")
        assert (await read())[1].finished_at is None
    finally:
        await fresh.close()
        await store.close()


async def test_a_kept_round_s_core_is_made_once_and_goes_with_it(tmp_path: Path) -> None:
    """The core of a finished round whose row the store keeps is made once (the daemon
    makes the event's core at every round's end); a round read again is made again, the
    same; and the core made goes when the row goes."""
    store = await new_store(tmp_path)
    fresh = await Store.open(tmp_path / "t.sqlite", readonly=True)
    settings = EventSettings(name="Test", players=("A", "B", "C", "D"), rounds=2)
    try:
        for game in (await store.rounds())[0].games:
            attempt = await store.start_attempt(game.id)
            await store.finish_game(game.id, attempt, record(game.white, game.black), "")
        await store.finish_round(1)
        rows = (await store.whole(brief=True)).rounds
        one = tournament(settings, PLAYERS, rows)
        two = tournament(settings, PLAYERS, (await store.whole(brief=True)).rounds)
        assert two.rounds[0] is one.rounds[0] and len(one.rounds[0].games) == 4
        other = tournament(settings, PLAYERS, (await fresh.whole(brief=True)).rounds)
        assert other.rounds[0] == one.rounds[0] and other.rounds[0] is not one.rounds[0]
        key = id(rows[0])
        assert key in state._made
        store._finished.forget()
        await store.event()  # (aiosqlite's thread holds its last call's result until the next)
        del rows, other
        gc.collect()
        assert key not in state._made
    finally:
        await fresh.close()
        await store.close()


async def test_the_next_pair_index_is_read_from_an_index(tmp_path: Path) -> None:
    """`pairs_so_far` (at every pairing) reads the pair index's last entry, not every game
    of the event (a match of thousands of games scanned them all at each pairing)."""
    store = await new_store(tmp_path)
    try:
        assert await store.pairs_so_far() == 2
        plan = await store._rows(f"EXPLAIN QUERY PLAN {_PAIRS_SO_FAR}")
        assert "USING COVERING INDEX games_pair" in " ".join(str(r[-1]) for r in plan)
    finally:
        await store.close()
