"""The web view over HTTP (aiohttp's test client): every route, downloads equal to pgn_out/,
and the safety cases."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config.model import ConfigError
from orchestrator.web.app import make_app
from orchestrator.web.push import HUB
from orchestrator.web.server import capped
from tests.support.daemon import event_config, run_daemon
from tests.support.processes import serving

EVIL = "<script>alert(1)</script>"
PLAYERS = [EVIL, 'Quote"Engine', "E03", "E04", "E05"]


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("web")
    config = event_config(folder, players=PLAYERS, rounds=2)
    text = config.read_text().replace('name = "Quote"Engine"', "name = 'Quote\"Engine'")
    text = text.replace('"--name", "Quote"Engine"', '"--name", \'Quote"Engine\'')
    config.write_text(text)
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr
    return folder


@pytest.fixture
async def client(event: Path) -> AsyncIterator[TestClient[object, object]]:
    async with TestClient(TestServer(make_app(event / "event.sqlite"))) as c:
        yield c


PAGES = ["/", "/standings", "/crosstable", "/schedule", "/rounds", "/rounds/1", "/games/1"]


@pytest.mark.parametrize("path", PAGES)
async def test_pages_escape_every_name(client: TestClient[object, object], path: str) -> None:
    r = await client.get(path)
    assert r.status == 200 and r.content_type == "text/html"
    text = await r.text()
    assert EVIL not in text
    assert 'Quote"Engine' not in text
    if path in ("/standings", "/crosstable"):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


@pytest.mark.parametrize("path", ["/games/1/board.svg", "/games/1/eval.svg", "/progress.svg"])
async def test_svg(client: TestClient[object, object], path: str) -> None:
    r = await client.get(path)
    assert r.status == 200 and r.content_type == "image/svg+xml"
    text = await r.text()
    assert text.startswith("<svg") and EVIL not in text


async def test_api_values_equal_the_database(
    client: TestClient[object, object], event: Path
) -> None:
    """Read the database with sqlite3 itself, not through the code the API shares."""
    with sqlite3.connect(event / "event.sqlite") as db:
        games = db.execute(
            "SELECT id, number, white, black, status, result, termination, plies FROM games "
            "WHERE round = 2 ORDER BY number"
        ).fetchall()
        results = db.execute("SELECT white, black, result FROM games").fetchall()
        byes = db.execute("SELECT bye FROM rounds WHERE bye IS NOT NULL").fetchall()
        moves = db.execute(
            "SELECT san, clock_ms, time_ms FROM moves WHERE attempt = "
            "(SELECT MAX(id) FROM attempts WHERE game = 3) AND book = 0 ORDER BY ply"
        ).fetchall()
    api_round = await (await client.get("/api/rounds/2")).json()
    keys = ("id", "number", "white", "black", "status", "result", "termination", "plies")
    assert [tuple(g[k] for k in keys) for g in api_round["games"]] == games
    points: dict[str, float] = {}
    for white, black, result in results:
        w = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
        points[white] = points.get(white, 0.0) + w
        points[black] = points.get(black, 0.0) + 1 - w
    for (bye,) in byes:
        points[bye] += 2  # a double round: a win for each game
    standings = (await (await client.get("/api/standings")).json())["standings"]
    assert {line["name"]: line["score"] for line in standings} == points
    game = await (await client.get("/api/games/3")).json()
    listed = [(m["san"], m["clock_ms"], m["time_ms"]) for m in game["moves"] if not m["book"]]
    assert listed == moves and moves


async def test_api_has_the_cli_json_shapes(client: TestClient[object, object], event: Path) -> None:
    db = str(event / "event.sqlite")
    for route, command in (
        ("/api/standings", ["standings", "--db", db, "--json"]),
        ("/api/rounds/2", ["pairings", "--db", db, "--round", "2", "--json"]),
        ("/api/overview", ["status", "--db", db, "--json"]),
    ):
        r = await client.get(route)
        assert r.status == 200 and r.content_type == "application/json"
        cli = await asyncio.to_thread(CliRunner().invoke, app, command)  # it runs its own loop
        assert await r.json() == json.loads(cli.stdout)
    game = await (await client.get("/api/games/1")).json()
    assert game["status"] == "finished" and game["moves"] and "fen" in game
    assert (await client.get("/healthz")).status == 200


async def test_downloads_equal_pgn_out(client: TestClient[object, object], event: Path) -> None:
    folder = event / "pgn" / "Daemon_Test"
    cases = [
        ("/download/event.pgn", folder / "Daemon_Test.pgn", "Daemon_Test.pgn"),
        ("/download/rounds/2.pgn", folder / "round-02.pgn", "round-02.pgn"),
    ]
    for route, path, name in cases:
        r = await client.get(route)
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("application/x-chess-pgn")
        assert r.headers["Content-Disposition"] == f'attachment; filename="{name}"'
        assert await r.read() == path.read_bytes()
    one = await client.get("/download/games/1.pgn")
    assert one.status == 200 and "attachment" in one.headers["Content-Disposition"]
    assert (await one.read()).decode() in (folder / "round-01.pgn").read_text()
    z = await client.get("/download/archive.zip")
    assert z.headers["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(await z.read())) as archive:
        assert sorted(archive.namelist()) == sorted(p.name for p in folder.glob("*.pgn"))
        for info in archive.infolist():
            assert archive.read(info) == (folder / info.filename).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/../event.toml",
        "/download/../event.sqlite",
        "/download/%2e%2e/event.sqlite",
        "/download/%2E%2E%2Fevent.toml",
        "/download//etc/passwd",
        "/%2Fetc%2Fpasswd",
        "/download/event.pgn/../../event.toml",
        "/games/999",
        "/games/abc",
        "/rounds/99",
        "/api/games/0",
        "/download/games/999.pgn",
        "/static/../../etc/passwd",
    ],
)
async def test_anything_outside_the_routes_is_404(
    client: TestClient[object, object], path: str
) -> None:
    r = await client.get(path, allow_redirects=False)
    assert r.status == 404
    assert "[Event" not in await r.text()


async def test_no_endpoint_changes_anything(client: TestClient[object, object]) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        r = await client.request(method, "/api/standings")
        assert r.status == 405


async def test_missing_database_is_reported(tmp_path: Path) -> None:
    async with TestClient(TestServer(make_app(tmp_path / "none.sqlite"))) as c:
        r = await c.get("/healthz")
        assert r.status == 503 and (await r.json())["ok"] is False
        assert (await c.get("/")).status == 503


def test_serve_binds_loopback_by_default() -> None:
    import inspect

    from orchestrator.cli.web import parse_address, serve

    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"
    assert parse_address(":8080") == ("127.0.0.1", 8080)


async def test_healthz_is_503_for_an_unfinished_event_without_a_daemon() -> None:
    from orchestrator.event.sample import sample_database

    async with TestClient(TestServer(make_app(await asyncio.to_thread(sample_database)))) as c:
        r = await c.get("/healthz")
        assert r.status == 503
        assert (await r.json())["error"] == "no daemon runs this unfinished event"
        log = await c.get("/log")
        assert log.status == 200 and "nothing yet" in await log.text()


@pytest.mark.parametrize(
    "path", ["/games/" + "9" * 5000, "/rounds/" + "1" * 40, "/api/games/" + "7" * 19]
)
async def test_huge_ids_are_not_found(client: TestClient[object, object], path: str) -> None:
    assert (await client.get(path)).status == 404


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def damaged_copy(source: Path, target: Path) -> Path:
    """A copy of a database with its interior pages overwritten (its header intact)."""
    with sqlite3.connect(source) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(source.read_bytes())
    for offset in range(4096 * 2, min(len(data), 4096 * 8), 7):
        data[offset] = (data[offset] * 31 + 7) % 256
    target.write_bytes(bytes(data))
    return target


async def test_a_damaged_database_is_503_without_leaks(event: Path, tmp_path: Path) -> None:
    import threading

    damaged = damaged_copy(event / "event.sqlite", tmp_path / "damaged.sqlite")
    async with TestClient(TestServer(make_app(damaged))) as c:
        hub = c.server.app[HUB]

        async def settled() -> tuple[int, int]:
            """The lowest counts seen over four seconds while the live reader waits between
            its tries (its connection, and thread, come and go every two seconds, and take
            their time to end on a loaded machine); a leak stays in every sample."""
            lowest: tuple[int, int] | None = None
            for _ in range(80):
                if not hub.reading:
                    now = threading.active_count(), open_descriptors()
                    lowest = (
                        now if lowest is None else (min(lowest[0], now[0]), min(lowest[1], now[1]))
                    )
                await asyncio.sleep(0.05)
            assert lowest is not None, "the live reader never paused"
            return lowest

        for path in ("/healthz", "/", "/api/standings"):  # warm up
            await c.get(path)
        threads, fds = await settled()
        for i in range(500):
            r = await c.get(("/healthz", "/", "/api/standings", "/games/1")[i % 4])
            assert r.status == 503, (i, r.status)
            await r.read()
        after_threads, after_fds = await settled()
        # a leak adds hundreds over 500 requests; asyncio's default executor may start one
        # more worker thread on a loaded machine (its pool is bounded)
        assert after_threads <= threads + 1
        assert after_fds <= fds + 2
    cli = await asyncio.to_thread(CliRunner().invoke, app, ["status", "--db", str(damaged)])
    assert cli.exit_code == 2 and "the database cannot be read" in cli.stderr
    assert "Traceback" not in cli.output


@pytest.mark.parametrize("path", ["/", "/api/overview", "/nowhere", "/download/event.pgn"])
async def test_security_headers(client: TestClient[object, object], path: str) -> None:
    r = await client.get(path)
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    policy = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


async def test_pages_carry_no_script_of_their_own(client: TestClient[object, object]) -> None:
    for path in PAGES:
        text = await (await client.get(path)).text()
        assert text.count("<script") == 1 and "<script src='static/app.js' defer>" in text
    script = await client.get("/static/app.js")
    assert script.status == 200 and script.content_type == "text/javascript"
    assert "EventSource('api/live" in await script.text()


async def test_schedule_and_crosstable_api(client: TestClient[object, object]) -> None:
    schedule = await (await client.get("/api/schedule")).json()
    assert all(g["status"] == "finished" and g["result"] for g in schedule["games"])
    assert schedule["coming_rounds"] == []
    cross = await (await client.get("/api/crosstable")).json()
    assert sorted(cross["Order"]) == sorted(PLAYERS)
    page = await (await client.get("/crosstable")).text()
    first = schedule["games"][0]["id"]
    assert f"href='games/{first}'" in page


async def test_live_pushes_moves_and_game_changes(event: Path, tmp_path: Path) -> None:
    """A move committed by another connection (the daemon) reaches a connected browser as
    a `move` event; a game that starts, as a `game` event."""
    import shutil

    from orchestrator.core.game.openings import START
    from orchestrator.store.database import _opening

    db = tmp_path / "live.sqlite"
    shutil.copy(event / "event.sqlite", db)
    async with TestClient(TestServer(make_app(db))) as c:
        response = await c.get("/api/live")
        assert response.status == 200 and response.content_type == "text/event-stream"
        await asyncio.sleep(0.5)  # the reader has taken its first look
        with sqlite3.connect(db) as conn:
            game, opening = conn.execute("SELECT id, opening FROM games LIMIT 1").fetchone()
            board = (_opening(opening) or START).after_book()
            move = next(iter(board.legal_moves))
            conn.execute("UPDATE games SET status = 'running' WHERE id = ?", (game,))
            attempt = conn.execute(
                "INSERT INTO attempts (game, status, started_at) VALUES (?, 'running', 'now')",
                (game,),
            ).lastrowid
            conn.execute(
                "INSERT INTO moves (attempt, ply, uci, san, book, score_cp, depth, time_ms, "
                "clock_ms, pv) VALUES (?, ?, ?, ?, 0, 31, 9, 100, 9000, ?)",
                (attempt, len(board.move_stack) + 1, move.uci(), board.san(move), move.uci()),
            )
        events: dict[str, dict[str, object]] = {}
        async with asyncio.timeout(10):
            while len(events) < 2:
                line = (await response.content.readline()).decode()
                if line.startswith("event: "):
                    kind = line.split()[1]
                elif line.startswith("data: "):
                    events[kind] = json.loads(line[6:])
        assert events["move"]["game"] == game and events["move"]["san"] == board.san(move)
        assert events["move"]["pv"] == [board.san(move)]
        assert events["game"]["game"] == game and events["game"]["status"] == "running"
        response.close()


async def _serve_capped(app: web.Application, cap: int) -> tuple[asyncio.Server, int]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    assert runner.server is not None
    loop = asyncio.get_running_loop()
    server = await loop.create_server(capped(runner.server, cap), "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


async def _get(port: int, path: str = "/") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


async def test_idle_connections_make_room_for_readers() -> None:
    """Past three quarters of the cap, a new connection closes the oldest idle one."""

    async def ok(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", ok)
    server, port = await _serve_capped(app, cap=20)
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(60)]
    try:
        assert (await _get(port)).startswith(b"HTTP/1.1 200")
        ends = [asyncio.create_task(reader.read()) for reader, _ in idle]
        await asyncio.wait(ends, timeout=2)
        closed = sum(end.done() and end.result() == b"" for end in ends)
        assert closed >= 60 - 15, closed  # the server holds at most 3/4 of its cap
        for end in ends:
            end.cancel()
    finally:
        for _, writer in idle:
            writer.close()
        server.close()


async def test_busy_connections_are_capped() -> None:
    """At the cap with every connection busy, a new one is refused at once, not queued."""
    release = asyncio.Event()

    async def slow(_: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", slow)
    server, port = await _serve_capped(app, cap=8)
    busy = [asyncio.create_task(_get(port)) for _ in range(8)]
    try:
        await asyncio.sleep(0.5)
        try:
            answer = await _get(port)
        except ConnectionError:  # a reset
            answer = b""
        assert answer == b"", answer
        release.set()
        assert all(r.startswith(b"HTTP/1.1 200") for r in await asyncio.gather(*busy))
        assert (await _get(port)).startswith(b"HTTP/1.1 200")
    finally:
        release.set()
        server.close()


def test_serve_on_a_damaged_database_answers_503_and_stops_on_sigterm(
    event: Path, tmp_path: Path
) -> None:
    import signal
    import time
    import urllib.error
    import urllib.request

    damaged = damaged_copy(event / "event.sqlite", tmp_path / "damaged.sqlite")
    with serving(damaged) as (server, port):
        status = None
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
            except urllib.error.HTTPError as error:
                status = error.code
                break
            except OSError:
                time.sleep(0.1)
        assert status == 503
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "Traceback" not in out + err


def test_a_malformed_request_is_one_line_in_the_serve_log(event: Path) -> None:
    """The client gets its 400, and the log one line naming the fault, not a traceback."""
    import signal
    import socket
    import time

    with serving(event / "event.sqlite") as (server, port):
        answers = []
        deadline = time.monotonic() + 60
        while len(answers) < 3 and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                    conn.sendall(b"GET / HTTP/9\r\n\r\n")
                    answers.append(conn.recv(200))
            except OSError:
                time.sleep(0.1)
        assert len(answers) == 3 and all(
            b" 400 Bad Request" in a.split(b"\r\n")[0] for a in answers
        ), answers
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert "Traceback" not in out + err
    faults = [json.loads(line) for line in out.splitlines() if "Error handling request" in line]
    assert len(faults) == 3, out + err
    for fault in faults:
        assert (fault["event"], fault["level"], fault["logger"]) == (
            "library_log",
            "warning",
            "aiohttp.server",
        )
        assert "400, message: Bad status line" in fault["message"]


async def test_a_long_match_s_schedule_is_bounded(tmp_path: Path) -> None:
    """A match of the most games an event may plan (100,000: 50,000 rounds of a game pair):
    `/api/schedule` lists the next 100 rounds and counts the rest, at once (it built every
    round to come, 770 MB in 10 s for a match of 10^21 games, before the bound)."""
    import tomllib
    from datetime import UTC, datetime

    from orchestrator.config.load import parse
    from orchestrator.event.read import load_view, schedule_data
    from orchestrator.event.resume import create_or_resume
    from orchestrator.store.database import Store

    text = """
[tournament]
system = "match"
system_options = { games = 100000, shared = true }
database = "long.sqlite"
[[engine]]
name = "A"
command = "a"
[[engine]]
name = "B"
command = "b"
"""
    config = parse(tomllib.loads(text), tmp_path / "long.toml")
    store = await Store.open(config.tournament.database)
    try:
        await create_or_resume(config, store)
    finally:
        await store.close()
    view = await load_view(config.tournament.database)
    data = schedule_data(view, datetime.now(UTC))
    assert [r["round"] for r in data["coming_rounds"]] == list(range(1, 101))
    assert data["later_rounds"] == 50_000 - 100 and data["earlier_games"] == 0
    longer = text.replace("games = 100000", "games = 100002")
    with pytest.raises(ConfigError, match="would play 100,002 games"):
        parse(tomllib.loads(longer), tmp_path / "long.toml")
