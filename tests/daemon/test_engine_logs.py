"""Engine logs through the daemon: one compressed log per game beside the database, the
featured game's as `live.log`, served by the web view (linked from a fault's reason) and
written by `export --logs`."""

from __future__ import annotations

import asyncio
import gzip
import json
import sqlite3
import sys
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from orchestrator.store.logs import logs_folder
from orchestrator.web.app import make_app
from tests.support.daemon import cli, run_daemon
from tests.support.paths import SCRIPTED

PLAYERS = ["E01", "E02", "E03", "E04"]


def config(folder: Path) -> Path:
    engines = ""
    for i, name in enumerate(PLAYERS):
        crash = ', "--crash-at", "3"' if name == "E04" else ""
        engines += f"""
[[engine]]
name = "{name}"
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "--name", "{name}",
           "--seed", "{i}", "--tag", {json.dumps(str(folder))}{crash}]
rating = {3000 - 10 * i}
"""
    path = folder / "event.toml"
    path.write_text(
        f"""
[tournament]
name = "Logs"
rounds = 1
format = "double"
tc = "60+1"
concurrency = 2
database = "event.sqlite"
pgn_dir = "pgn"
live_dir = "live"

[adjudication]
max_moves = 10
{engines}"""
    )
    return path


async def served(db: Path, fault_log: str, first: int) -> None:
    async with TestClient(TestServer(make_app(db))) as client:
        page = await (await client.get("/rounds/1")).text()
        assert f"<a href='{fault_log}'>engine log</a>" in page
        response = await client.get(fault_log)
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/gzip"
        assert "attachment" in response.headers["Content-Disposition"]
        assert b"crashed: exit code 3" in gzip.decompress(await response.read())
        game = await (await client.get(f"/api/games/{first}")).json()
        assert game["log"] == f"/download/games/{first}.log"
        assert "engine log</a>" in await (await client.get(f"/games/{first}")).text()
        assert (await client.get("/download/games/999.log")).status == 404


def test_each_game_keeps_its_engine_log(tmp_path: Path) -> None:
    run = run_daemon(config(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    db = tmp_path / "event.sqlite"
    with sqlite3.connect(db) as conn:
        games = conn.execute(
            "SELECT g.id, g.white, g.black, g.fault IS NOT NULL, a.id FROM games g "
            "JOIN attempts a ON a.game = g.id AND a.status = 'finished' ORDER BY g.id"
        ).fetchall()
    assert len(games) == 4 and any(faulted for *_, faulted, _ in games)
    folder = logs_folder(db)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"game-{game}.attempt-{attempt}.log.gz" for game, *_, attempt in games
    )
    for game, white, black, faulted, attempt in games:
        text = gzip.decompress((folder / f"game-{game}.attempt-{attempt}.log.gz").read_bytes())
        log = text.decode()
        assert log.startswith(f"# {white} (White) - {black} (Black)")
        assert f">{white}: go " in log and f"<{black}: bestmove " in log
        assert ("crashed: exit code 3" in log) == faulted
    # the featured game's log in live_dir: the last one to be featured, to its end
    live = (tmp_path / "live" / "live.log").read_text()
    assert live.startswith("# ") and "quit" in live

    # the round's page links a faulted game's log from its reason; the file downloads
    rounds = cli("pairings", "--json", "--db", str(db))
    faulted = [g for g in rounds["games"] if g["fault_log"]]
    assert [g["id"] for g in faulted] == [game for game, *_, f, _ in games if f]
    asyncio.run(served(db, faulted[0]["fault_log"], games[0][0]))

    # export --logs writes one file a game, named by round, game and engines
    out = cli("export", "--logs", str(tmp_path / "logs"), "--db", str(db))
    assert out.strip() == f"4 engine log(s) written to {tmp_path / 'logs'}"
    names = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert len(names) == 4 and all(n.startswith("Logs-1.") and n.endswith(".log.gz") for n in names)
