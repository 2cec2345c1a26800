"""A full disk pauses the event and loses nothing: the database filled through SQLite's
`max_page_count`, the PGN archive and the database through a file-size limit
(`RLIMIT_FSIZE`) set on the running daemon.  Each event is played to its end once space is
back, and its games are an uninterrupted event's, game for game."""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiohttp.test_utils import TestClient, TestServer

from orchestrator.daemon import loop
from tests.support.daemon import event_config, finished_count, run_daemon, run_in_process
from tests.support.fake_executor import FakeExecutor

#: what an event's games must be, whatever happened on the way
GAMES = (
    "SELECT round, number, white, black, result, termination, plies, status FROM games "
    "ORDER BY round, number"
)


def games(db: Path) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute(GAMES).fetchall()


def logged(logs: list[MutableMapping[str, Any]], event: str) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry.get("event") == event]


async def test_a_full_database_pauses_the_event_and_it_goes_on_once_space_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.daemon.loop import Daemon
    from orchestrator.daemon.run import validate
    from orchestrator.event.resume import create_or_resume
    from orchestrator.store.database import Store
    from orchestrator.store.lock import DatabaseLock
    from orchestrator.web.app import make_app

    straight = tmp_path / "straight"
    straight.mkdir()
    await run_in_process(event_config(straight, rounds=3))
    expected = games(straight / "event.sqlite")

    monkeypatch.setattr(loop, "SPACE_CHECK_S", 0.3)
    folder = tmp_path / "full"
    folder.mkdir()
    config = event_config(folder, rounds=3)
    db = folder / "event.sqlite"
    loaded, openings = await validate(config, start_engines=False)
    lock = DatabaseLock(db)
    lock.acquire()
    store = await Store.open(db)
    full = asyncio.Event()

    async def fill(played: int) -> None:
        if played == 5:  # the database may not grow from now on
            (pages,) = await (await store.db.execute("PRAGMA page_count")).fetchone()  # type: ignore[misc]
            await store.db.execute(f"PRAGMA max_page_count = {pages}")
            full.set()

    try:
        event = await create_or_resume(loaded, store)
        executor = FakeExecutor(before_result=fill)
        daemon = Daemon(loaded, event, store, openings, executor=executor)
        with structlog.testing.capture_logs() as logs:
            task = asyncio.create_task(daemon.run())
            await asyncio.wait_for(full.wait(), 60)
            for _ in range(600):  # until a write finds the database full
                if logged(logs, "disk_full") or task.done():
                    break
                await asyncio.sleep(0.1)
            assert logged(logs, "disk_full"), "the database never filled"
            assert not task.done()
            (paused,) = logged(logs, "disk_full")
            assert paused["full"].startswith("the database: database or disk is full")
            assert paused["free_bytes"] > 0
            # paused: no game starts or ends, and /healthz says why
            finished = finished_count(db)
            await asyncio.sleep(1.5)
            assert finished_count(db) == finished and not logged(logs, "disk_space_back")
            async with TestClient(TestServer(make_app(db))) as client:
                response = await client.get("/healthz")
                body = await response.json()
            assert response.status == 503, body
            assert body["disk_full"].startswith("the database") and body["disk_free_bytes"] > 0
            # space comes back: the event goes on by itself, to its end
            await store.db.execute("PRAGMA max_page_count = 1073741823")
            await asyncio.wait_for(task, 120)
        assert logged(logs, "disk_space_back")
        assert logged(logs, "tournament_finished")
    finally:
        await store.close()
        lock.release()
    assert games(db) == expected
    async with TestClient(TestServer(make_app(db))) as client:
        assert (await client.get("/healthz")).status == 200


def test_a_file_size_limit_on_the_running_daemon_pauses_it_until_lifted(tmp_path: Path) -> None:
    """A limit of the size the PGN archive has when it is set: the archive cannot grow, nor
    the database, nor the probe's file.  The daemon waits (a `disk_full` line), plays no game
    meanwhile, and finishes the event once the limit is lifted."""
    straight = tmp_path / "straight"
    straight.mkdir()
    reference = run_daemon(event_config(straight, rounds=3))
    assert reference.returncode == 0, reference.stderr[-3000:]

    folder = tmp_path / "limited"
    folder.mkdir()
    config = event_config(folder, rounds=3, delay_ms=5)
    db = folder / "event.sqlite"
    archive = folder / "pgn" / "Daemon_Test" / "Daemon_Test.pgn"
    # its log through a pipe: a file would be held to the limit too
    daemon = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=folder,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(daemon.stdout or ()), daemon=True)
    reader.start()

    def events() -> list[str]:
        return [json.loads(line)["event"] for line in list(lines) if line.startswith("{")]

    try:
        deadline = time.monotonic() + 120
        while finished_count(db) < 4 and daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemon.poll() is None, "".join(lines)[-3000:]
        limit = archive.stat().st_size
        # the soft limit alone: lifting it again needs no privilege
        unlimited = resource.RLIM_INFINITY
        resource.prlimit(daemon.pid, resource.RLIMIT_FSIZE, (limit, unlimited))
        while "disk_full" not in events() and daemon.poll() is None:
            assert time.monotonic() < deadline, "".join(lines)[-3000:]
            time.sleep(0.1)
        assert "disk_full" in events(), "".join(lines)[-3000:]
        assert archive.stat().st_size <= limit  # the archive never went past the limit
        finished = finished_count(db)
        time.sleep(2)
        assert finished_count(db) == finished and daemon.poll() is None
        resource.prlimit(daemon.pid, resource.RLIMIT_FSIZE, (unlimited, unlimited))
        assert daemon.wait(timeout=180) == 0, "".join(lines)[-3000:]
    finally:
        daemon.kill()
        daemon.wait()
        reader.join(timeout=10)
    assert "disk_space_back" in events() and "tournament_finished" in events(), events()[-10:]
    assert games(db) == games(straight / "event.sqlite")
    # the archive is whole again: every game, as `export` writes it
    with_pgn = straight / "pgn" / "Daemon_Test" / "Daemon_Test.pgn"
    assert archive.read_text().count("[Event ") == with_pgn.read_text().count("[Event ")


def test_a_file_size_limit_at_the_start_is_the_machine_s_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """`ulimit -f 120; orchestrator run f.toml`: the new database cannot grow past 120 kB.
    It was "not an orchestrator database" (exit 2) and the file was left behind; it is a
    limit of the machine (exit 1) that names itself, and the database it made is removed."""
    config = event_config(tmp_path)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (120 * 1024, 120 * 1024))

    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", str(config)], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=limited,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert out.stderr.count("\n") == 1 and "ulimit -f" in out.stderr, out.stderr
    assert "a limit of this machine" in out.stderr
    assert not list(tmp_path.glob("event.sqlite*"))
