"""Games on several machines: a real Dask cluster of separate processes on 127.0.0.1, started
with `dask scheduler` and `dask worker` exactly as
the operators' guide (docs/operator.md) says."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from dask.utils import key_split
from distributed import Client
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config.load import load
from orchestrator.config.model import dask_address
from orchestrator.executor.cluster import CONNECT_S, DaskExecutor
from orchestrator.executor.processes import worker_slots
from orchestrator.executor.worker import IDLE_S
from orchestrator.web.app import make_app
from tests.support.cluster import UP_S, Cluster
from tests.support.daemon import event_config, run_daemon, start_daemon, stored_games
from tests.support.processes import engines_alive

PLAYERS = [f"E{i}" for i in range(1, 7)]


def two_workers(cluster: Cluster, second: str = "game=1") -> Cluster:
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.worker("host-b", second)
    cluster.wait_for({"host-a", "host-b"})
    return cluster


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of `sql`, read-only (never creating the database), or [] before it exists."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.Error:
        return []


def dask_event(
    cluster: Cluster, tmp_path: Path, players: int, rounds: int, delay_ms: int = 0
) -> Path:
    """The config of an event of scripted engines in tmp_path/event, played on `cluster`."""
    folder = tmp_path / "event"
    folder.mkdir()
    extra = f'executor = "{cluster.url}"'
    return event_config(
        folder, players=PLAYERS[:players], rounds=rounds, delay_ms=delay_ms, extra=extra
    )


def hosts(db: Path) -> list[tuple[str, str, str | None]]:
    """(white, black, host) of every finished game."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT white, black, host FROM games WHERE status = 'finished' ORDER BY id"
        ).fetchall()


def outcome(db: Path) -> list[tuple[Any, ...]]:
    """What must not depend on where games ran: pairings, results, moves."""
    return [g[:7] for g in stored_games(db)]


async def web_view(db: Path, *paths: str) -> list[str]:
    async with TestClient(TestServer(make_app(db))) as client:
        pages = []
        for path in paths:
            response = await client.get(path)
            assert response.status == 200, path
            pages.append(await response.text())
        return pages


def log_events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_swiss_on_two_workers_equals_the_same_swiss_played_locally(
    cluster: Cluster, tmp_path: Path
) -> None:
    two_workers(cluster)
    results = {}
    daemons = {}  # the three events play at the same time, each in a folder of its own
    for executor in ("local", cluster.url, "processes"):
        folder = tmp_path / executor.split(":")[0]
        folder.mkdir()
        config = event_config(folder, players=PLAYERS, rounds=3, extra=f'executor = "{executor}"')
        stale = folder / "event.sqlite.dask"  # what a daemon killed with SIGKILL leaves
        if executor == "processes":
            stale.mkdir()
            (stale / "scheduler.json").write_text('{"address": "tcp://127.0.0.1:1"}')
        daemons[executor] = (folder, stale, start_daemon(config))
    for executor, (folder, stale, daemon) in daemons.items():
        stdout, stderr = daemon.communicate(timeout=300)
        assert daemon.returncode == 0, stderr + stdout[-3000:]
        assert not stale.exists()  # cleared at the start, removed at the end
        results[executor.split(":")[0]] = outcome(folder / "event.sqlite")
        played = hosts(folder / "event.sqlite")
        assert len(played) == 18
        if executor == "local":
            assert {h for _, _, h in played} == {None}
        elif executor == "processes":
            # a worker process per core, at most one per game (`worker_slots`)
            names = {f"worker-{n}" for n in range(1, len(worker_slots(2, os.cpu_count() or 1)) + 1)}
            assert {h.rsplit("/", 1)[1] for _, _, h in played if h} == names
        else:
            assert {h for _, _, h in played} == {"host-a", "host-b"}  # both workers played
            pgn = (folder / "pgn" / "Daemon_Test" / "Daemon_Test.pgn").read_text()
            assert pgn.count('[GameHost "host-a"]') + pgn.count('[GameHost "host-b"]') == 18
            pairings = CliRunner().invoke(
                app, ["pairings", "--db", str(folder / "event.sqlite"), "--round", "1", "--json"]
            )
            assert {g["host"] for g in json.loads(pairings.stdout)["games"]} <= {
                "host-a",
                "host-b",
            }
            placed = [e for e in log_events(stdout) if e["event"] == "game_placed"]
            assert len(placed) == 18 and {e["host"] for e in placed} == {"host-a", "host-b"}
            first = played[0][2]
            page, api = asyncio.run(web_view(folder / "event.sqlite", "/games/1", "/api/games/1"))
            assert f"played on {first}" in page and json.loads(api)["host"] == first
            assert "<th>Host</th>" in asyncio.run(web_view(folder / "event.sqlite", "/rounds/1"))[0]
    assert results["local"] == results["dask"] == results["processes"]


def test_a_worker_killed_mid_game_costs_a_replay_and_nothing_else(
    cluster: Cluster, tmp_path: Path
) -> None:
    two_workers(cluster)
    config = dask_event(cluster, tmp_path, 4, 2, delay_ms=100)
    folder = config.parent
    db = folder / "event.sqlite"
    daemon = start_daemon(config)
    try:
        victim = None
        deadline = time.monotonic() + UP_S
        while victim is None and time.monotonic() < deadline:  # a game with moves on host-a
            rows = query(
                db,
                "SELECT a.game FROM attempts a JOIN moves m ON m.attempt = a.id "
                "WHERE a.status = 'running' AND a.host = 'host-a' LIMIT 1",
            )
            victim = rows[0][0] if rows else None
            time.sleep(0.05)
        assert victim is not None, "no game ran on host-a"
        cluster.kill("host-a")
        out, err = daemon.communicate(timeout=240)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err + out[-3000:]
    lost = [e for e in log_events(out) if e["event"] == "worker_lost"]
    assert [(e["game_id"], e["host"]) for e in lost] == [(victim, "host-a")]
    with sqlite3.connect(db) as conn:
        attempts = conn.execute(
            "SELECT status, host FROM attempts WHERE game = ? ORDER BY id", (victim,)
        ).fetchall()
        assert attempts == [("aborted", "host-a"), ("finished", "host-b")]
        assert conn.execute("SELECT host FROM games WHERE id = ?", (victim,)).fetchone() == (
            "host-b",
        )
        # no game twice: one finished attempt a game, and its moves once each
        assert conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT game) FROM attempts WHERE status = 'finished'"
        ).fetchone() == (8, 8)
        finished = conn.execute(
            "SELECT g.plies, COUNT(m.ply), COUNT(DISTINCT m.ply) FROM games g "
            "JOIN attempts a ON a.game = g.id AND a.status = 'finished' "
            "LEFT JOIN moves m ON m.attempt = a.id GROUP BY g.id"
        ).fetchall()
        assert all(plies == count == distinct for plies, count, distinct in finished)
    assert len(stored_games(db)) == 8
    deadline = time.monotonic() + IDLE_S + 15  # engines kept for reuse are closed when idle
    while engines_alive(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = engines_alive(str(folder))
    assert left == [], left  # none left on any worker


def test_a_required_resource_sends_games_only_to_the_worker_that_has_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    two_workers(cluster, second="game=1 gpu=1")
    config = dask_event(cluster, tmp_path, 4, 2)
    folder = config.parent
    text = config.read_text().replace('name = "E1"', 'name = "E1"\nrequires = { gpu = 1 }')
    config.write_text(text)
    assert load(config).engine("E1").requires == {"gpu": 1.0}
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 0, checked.output
    assert f"4 engines started and configured on the workers of {cluster.url}" in checked.stdout
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    played = hosts(folder / "event.sqlite")
    assert len(played) == 8
    with_e1 = {h for w, b, h in played if "E1" in (w, b)}
    assert with_e1 == {"host-b"}
    assert {h for w, b, h in played if "E1" not in (w, b)} <= {"host-a", "host-b"}


def test_a_requirement_no_worker_meets_waits_and_is_reported(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.wait_for({"host-a"})
    config = dask_event(cluster, tmp_path, 4, 1)
    folder = config.parent
    config.write_text(
        config.read_text().replace('name = "E4"', 'name = "E4"\nrequires = { gpu = 1 }')
    )
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 1
    assert checked.stderr.strip().splitlines() == [
        f'warning: {config}: [[engine]] "E4" requires game=1, gpu=1: no worker connected to '
        f"{cluster.url} has it, so its games will wait for one"
    ]
    daemon = start_daemon(config)
    try:
        # E4's games wait (in the playing order, they hold back the games after them)
        time.sleep(8)
        assert daemon.poll() is None
        db = folder / "event.sqlite"
        assert query(db, "SELECT COUNT(*) FROM games WHERE status = 'running'") == [(1,)]
        e4 = "SELECT status, host FROM games WHERE 'E4' IN (white, black)"
        assert [status for status, _ in query(db, e4)] != ["finished"] * 2
        assert query(
            db,
            "SELECT COUNT(*) FROM attempts WHERE host IS NOT NULL AND game IN "
            "(SELECT id FROM games WHERE 'E4' IN (white, black))",
        ) == [(0,)]
        cluster.worker("host-gpu", "game=1 gpu=1")
        out, err = daemon.communicate(timeout=240)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err + out[-3000:]
    events = log_events(out)
    assert any(e["event"] == "placement_waiting" for e in events)
    played = hosts(folder / "event.sqlite")
    assert {h for w, b, h in played if "E4" in (w, b)} == {"host-gpu"}


def unstartable_engine_event(cluster: Cluster, folder: Path) -> Path:
    """A scheduler with one worker, host-a, and a one-round event of two engines whose first
    runs a path that exists on no game host (not checked on this machine, but on the host)."""
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.wait_for({"host-a"})
    extra = f'executor = "{cluster.url}"'
    config = event_config(folder, players=PLAYERS[:2], rounds=1, extra=extra)
    config.write_text(
        config.read_text().replace(json.dumps(sys.executable), '"/nowhere/engine"', 1)
    )
    return config


def test_check_names_the_game_host_that_cannot_start_an_engine(
    cluster: Cluster, tmp_path: Path
) -> None:
    config = unstartable_engine_event(cluster, tmp_path)
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 2
    assert checked.stderr.count("\n") == 1
    assert '[[engine]] "E1"' in checked.stderr and "(on game host host-a)" in checked.stderr


def test_the_daemon_waits_for_an_unreachable_scheduler(tmp_path: Path) -> None:
    """No scheduler yet: the daemon says so once, keeps waiting, and plays when it is up."""
    folder = tmp_path / "event"
    folder.mkdir()
    late = Cluster(tmp_path)
    executor = late.url
    config = event_config(folder, players=PLAYERS[:2], rounds=1, extra=f'executor = "{executor}"')
    daemon = start_daemon(config)
    try:
        time.sleep(CONNECT_S + 3)
        assert daemon.poll() is None
        late.scheduler()
        late.worker("host-a")
        out, err = daemon.communicate(timeout=240)
    finally:
        late.stop()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err + out[-3000:]
    events = [e["event"] for e in log_events(out)]
    assert events.count("scheduler_unreachable") == 1
    assert events.count("scheduler_reconnected") == 1
    assert events.count("game_finished") == 2
    assert (folder / "event.sqlite").is_file()


def certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate authority, and a certificate for 127.0.0.1 signed by it (openssl)."""
    ca, ca_key = folder / "ca.pem", folder / "ca.key"
    cert, key, request = folder / "cert.pem", folder / "key.pem", folder / "cert.csr"
    san = folder / "san.cnf"
    san.write_text("subjectAltName=IP:127.0.0.1\n")
    for command in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
         "-days", "2", "-subj", "/CN=orchestrator test CA"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", request,
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", san],
    ):  # fmt: skip
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return ca, cert, key


def test_games_run_over_tls(cluster: Cluster, tmp_path: Path) -> None:
    ca, cert, key = certificates(tmp_path)
    cluster.use_tls(ca, cert, key)
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.wait_for({"host-a"})
    folder = tmp_path / "event"
    folder.mkdir()
    config = event_config(
        folder,
        players=PLAYERS[:2],
        rounds=1,
        extra=f'executor = "{cluster.address}"\n'
        f'tls_ca_file = "{ca}"\ntls_cert = "{cert}"\ntls_key = "{key}"',
    )
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    assert [h for _, _, h in hosts(folder / "event.sqlite")] == ["host-a", "host-a"]
    # without the certificates the scheduler is not reachable at all
    plain = cluster.address.replace("tls://", "dask://")
    config.write_text(
        config.read_text()
        .replace(f'executor = "{cluster.address}"', f'executor = "{plain}"')
        .replace(f'tls_ca_file = "{ca}"\ntls_cert = "{cert}"\ntls_key = "{key}"', "")
    )
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 1
    assert f"cannot reach {plain.replace('dask://', 'tcp://')}" in checked.stderr


def wait_for_moves(db: Path, daemon: subprocess.Popen[str]) -> None:
    """Until some running attempt has moves on a game host."""
    deadline = time.monotonic() + UP_S
    sql = (
        "SELECT COUNT(*) FROM attempts a JOIN moves m ON m.attempt = a.id "
        "WHERE a.status = 'running' AND a.host IS NOT NULL"
    )
    while time.monotonic() < deadline:
        assert daemon.poll() is None, daemon.communicate()
        if query(db, sql) not in ([], [(0,)]):
            return
        time.sleep(0.05)
    raise AssertionError("no moves")


def played_once(db: Path, games: int) -> None:
    """Every game finished once, from one attempt, with each of its moves stored once."""
    assert query(
        db, "SELECT COUNT(*), COUNT(DISTINCT game) FROM attempts WHERE status = 'finished'"
    ) == [(games, games)]
    finished = query(
        db,
        "SELECT g.plies, COUNT(m.ply), COUNT(DISTINCT m.ply) FROM games g "
        "JOIN attempts a ON a.game = g.id AND a.status = 'finished' "
        "LEFT JOIN moves m ON m.attempt = a.id GROUP BY g.id",
    )
    assert len(finished) == games
    assert all(plies == count == distinct for plies, count, distinct in finished)


def test_kill_nine_of_the_daemon_leaves_no_game_running_on_a_worker(
    cluster: Cluster, tmp_path: Path
) -> None:
    two_workers(cluster)
    config = dask_event(cluster, tmp_path, 4, 2, delay_ms=100)
    folder = config.parent
    db = folder / "event.sqlite"
    daemon = start_daemon(config)
    try:
        wait_for_moves(db, daemon)
        assert engines_alive(str(folder))
        daemon.kill()
        daemon.wait()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate()
    deadline = time.monotonic() + 15
    while engines_alive(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engines_alive(str(folder)) == []  # the scheduler saw the daemon go
    out = run_daemon(config)  # and the event resumes as after any kill -9
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    played_once(db, 8)
    assert len(query(db, "SELECT id FROM attempts WHERE status = 'aborted'")) >= 1


def test_a_scheduler_lost_mid_event_is_waited_for(cluster: Cluster, tmp_path: Path) -> None:
    two_workers(cluster)
    config = dask_event(cluster, tmp_path, 4, 2, delay_ms=100)
    folder = config.parent
    db = folder / "event.sqlite"
    daemon = start_daemon(config)
    try:
        wait_for_moves(db, daemon)
        for name in ("scheduler", "host-a", "host-b"):  # the scheduler's machine goes down
            cluster.kill(name)
        time.sleep(CONNECT_S + 3)
        assert daemon.poll() is None
        assert engines_alive(str(folder)) == []
        cluster.scheduler()  # and comes back, with its workers
        cluster.worker("host-a")
        cluster.worker("host-b")
        out, err = daemon.communicate(timeout=240)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate()
    assert daemon.returncode == 0, err + out[-3000:]
    events = [e["event"] for e in log_events(out)]
    assert events.count("scheduler_unreachable") == 1, events
    assert events.count("scheduler_reconnected") == 1
    played_once(db, 8)


def test_a_host_that_cannot_start_an_engine_forfeits_its_games_and_is_named(
    cluster: Cluster, tmp_path: Path
) -> None:
    config = unstartable_engine_event(cluster, tmp_path)
    out = run_daemon(config)  # `run` starts no engine here: they live on the game hosts
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    faults = [e for e in log_events(out.stdout) if e["event"] == "engine_fault"]
    assert [(e["engine"], e["kind"], e["host"]) for e in faults] == [
        ("E1", "startup", "host-a")
    ] * 2
    assert [h for _, _, h in hosts(tmp_path / "event.sqlite")] == ["host-a", "host-a"]
    assert {g[4] for g in stored_games(tmp_path / "event.sqlite")} == {"1-0", "0-1"}


def test_a_game_host_freezes_its_heap_at_its_first_game() -> None:
    """A worker process's heap, as it stands at its first game, is set aside from the
    garbage collector for good (the daemon's is, for an event)."""
    probe = (
        "import gc\n"
        "from orchestrator.executor.worker import _this_host\n"
        "before = gc.get_freeze_count()\n"
        "_this_host()\n"
        "print(before, gc.get_freeze_count())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    before, after = map(int, out.stdout.split())
    assert before == 0 and after > 10_000, (before, after)


def test_dask_forgets_the_task_keys_of_the_games_it_ran(cluster: Cluster) -> None:
    """Dask's scheduler and workers cache every task key they split (`dask.utils.key_split`),
    up to 100,000 each: a key per game played.  The daemon empties those caches every
    `FORGET_EVERY` attempts (`DaskExecutor._forget_keys`)."""
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.wait_for({"host-a"})
    cached = key_split.cache_info  # Dask's own function: a scheduler needs nothing of ours

    async def sizes(client: Client) -> list[int]:
        on_workers = await client.run(cached)
        return [(await client.run_on_scheduler(cached)).currsize] + [
            info.currsize for info in on_workers.values()
        ]

    async def run() -> tuple[list[int], list[int]]:
        address = dask_address(cluster.url)
        assert address is not None
        executor = DaskExecutor(address, cluster.url)
        await executor.connect()
        client = executor.client
        assert client is not None
        keys = [f"game-{i}-attempt-1" for i in range(20)]
        futures = [client.submit(abs, -i, key=key, pure=False) for i, key in enumerate(keys)]
        assert await client.gather(futures) == list(range(20))
        for future in futures:  # as the daemon does at an attempt's end
            future.release()
        before = await sizes(client)
        await executor._forget_keys(client)
        after = await sizes(client)
        await executor.close()
        return before, after

    before, after = asyncio.run(run())
    assert min(before) >= 20, before  # the scheduler's and the worker's: every key
    assert after == [0, 0], after


def test_dask_closes_the_pooled_connections_that_overlapping_calls_left(cluster: Cluster) -> None:
    """Dask's client keeps a pooled connection for every call that ever overlapped another
    (a descriptor each, for as long as the client lives); the executor's watch of the
    workers closes all but one of the idle ones, so a month leaves it one."""
    cluster.scheduler()
    cluster.worker("host-a")
    cluster.wait_for({"host-a"})

    async def run() -> tuple[int, int]:
        address = dask_address(cluster.url)
        assert address is not None
        executor = DaskExecutor(address, cluster.url)
        await executor.connect()  # not yet watching the workers
        client = executor.client
        assert client is not None
        pool: Any = client.rpc
        # six calls that each hold a connection for 0.3 s on the scheduler: all at once
        await asyncio.gather(*(client.run_on_scheduler(asyncio.sleep, 0.3) for _ in range(6)))
        overlapped = pool.open
        await executor.start()
        for _ in range(150):  # the watch reads the workers every second
            if pool.open <= 1:
                break
            await asyncio.sleep(0.2)
        after = pool.open
        pool._validate()  # Dask's own check: its limit counts what is open
        await executor.close()
        return overlapped, after

    overlapped, after = asyncio.run(run())
    assert overlapped >= 6, overlapped  # Dask's pool: one each, all kept
    assert after == 1, after  # the one the next call takes
