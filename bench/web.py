"""The live view under load, beside a playing event.

    .venv/bin/python bench/web.py [--clients 100] [--requests 2000] [--kibitzers]

1. A 46-player event of instant scripted engines plays 11 double rounds (506 games) to the
   end: the database of an event with 500 finished games.
2. The event is resumed with two more rounds (`--force`), its engines now thinking 20 ms a
   move at 2+0.05 in games of 60 moves, and served by `run --http`. While it plays:
   - `--clients` browsers follow `/api/live` (Server-Sent Events);
   - `--requests` page and API requests (20 at a time) are timed;
   - a watcher reads the new moves from the database every 5 ms: the delay from a move's
     commit to its arrival at each client is measured against the moment it first saw it.
   With `--kibitzers`, the resumed event also has `live_dir` and two kibitzers (Debian's
   Stockfish, one thread each, analysing without a limit at the lowest CPU priority).
3. The daemon is stopped; the games it finished meanwhile are checked for time losses.

Prints one table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.daemon import event_config  # noqa: E402  (the scripted test engines' event)
from tests.support.processes import free_port  # noqa: E402

STOCKFISH = "/usr/games/stockfish"
PAGES = ["/", "/standings", "/crosstable", "/schedule", "/api/overview", "/api/standings"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


async def watch(db: Path, seen: dict[tuple[int, int], float], stop: asyncio.Event) -> None:
    """When each move was first visible in the database (a reader polling every 5 ms)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    last = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM moves").fetchone()[0]
    while not stop.is_set():
        rows = conn.execute(
            "SELECT rowid, attempt, ply FROM moves WHERE rowid > ?", (last,)
        ).fetchall()
        now = time.monotonic()
        for rowid, attempt, ply in rows:
            seen.setdefault((attempt, ply), now)
            last = max(last, rowid)
        await asyncio.sleep(0.005)
    conn.close()


async def client(
    session: aiohttp.ClientSession, base: str, arrivals: list[tuple[int, int, float]]
) -> None:
    async with session.get(f"{base}/api/live", timeout=aiohttp.ClientTimeout(total=None)) as r:
        kind = ""
        async for raw in r.content:
            line = raw.decode()
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: ") and kind == "move":
                data = json.loads(line[6:])
                arrivals.append((data["attempt"], data["ply"], time.monotonic()))


async def requests(
    session: aiohttp.ClientSession, base: str, total: int, ids: list[int]
) -> list[float]:
    latencies: list[float] = []
    paths = PAGES + [f"/games/{i}" for i in ids[-20:]] + [f"/api/games/{i}" for i in ids[-20:]]
    queue: asyncio.Queue[str] = asyncio.Queue()
    for n in range(total):
        queue.put_nowait(paths[n % len(paths)])

    async def worker() -> None:
        while not queue.empty():
            path = queue.get_nowait()
            start = time.monotonic()
            async with session.get(base + path) as r:
                await r.read()
                if r.status != 200:
                    raise RuntimeError(f"{path}: {r.status}")
            latencies.append(time.monotonic() - start)

    await asyncio.gather(*(worker() for _ in range(20)))
    return latencies


async def measure(base: str, db: Path, clients: int, total: int) -> dict[str, float]:
    with sqlite3.connect(db) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM games ORDER BY id")]
    seen: dict[tuple[int, int], float] = {}
    arrivals: list[tuple[int, int, float]] = []
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        watcher = asyncio.create_task(watch(db, seen, stop))
        followers = [asyncio.create_task(client(session, base, arrivals)) for _ in range(clients)]
        await asyncio.sleep(2)
        started = time.monotonic()
        latencies = await requests(session, base, total, ids)
        took = time.monotonic() - started
        await asyncio.sleep(2)
        stop.set()
        for task in followers:
            task.cancel()
        await asyncio.gather(watcher, *followers, return_exceptions=True)
    delays = [at - seen[(a, p)] for a, p, at in arrivals if (a, p) in seen and at >= seen[(a, p)]]
    return {
        "requests": len(latencies),
        "requests_per_s": len(latencies) / took,
        "p50_ms": 1000 * percentile(latencies, 0.50),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "moves_pushed": len(arrivals),
        "moves_stored": len(seen),
        "push_p50_ms": 1000 * percentile(delays, 0.50),
        "push_p99_ms": 1000 * percentile(delays, 0.99),
        "push_max_ms": 1000 * max(delays, default=float("nan")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--kibitzers", action="store_true", help="with two Stockfish kibitzers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        names = [f"E{i:02d}" for i in range(1, 47)]
        config = event_config(folder, players=names, rounds=11, name="Bench", groups=6)
        first = subprocess.run(
            [sys.executable, "-m", "orchestrator", "run", str(config)],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        if first.returncode != 0:
            sys.exit(f"the first 11 rounds failed: {first.stderr[-2000:]}")
        db = folder / "event.sqlite"
        with sqlite3.connect(db) as conn:
            finished = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        text = event_config(
            folder,
            players=names,
            rounds=13,
            name="Bench",
            groups=6,
            delay_ms=20,
            adjudication="win = false\ndraw = false\nmax_moves = 60",
        ).read_text()
        text = text.replace('tc = "60+1"', 'tc = "2+0.05"')
        if args.kibitzers:
            text = text.replace("[tournament]\n", '[tournament]\nlive_dir = "live"\n', 1)
            text += "".join(
                f'\n[[kibitzer]]\nname = "Kib{i}"\ncommand = "{STOCKFISH}"\n'
                "options = { Threads = 1, Hash = 16 }\n"
                for i in (1, 2)
            )
        config.write_text(text)
        port = free_port()
        daemon = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "orchestrator",
                "run",
                str(config),
                "--force",
                "--http",
                f"127.0.0.1:{port}",
            ],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            if daemon.poll() is not None:
                sys.exit(f"the daemon stopped: {daemon.communicate()[1][-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        figures = asyncio.run(measure(base, db, args.clients, args.requests))
        daemon.send_signal(signal.SIGTERM)  # the games measured are those finished by now
        _, err = daemon.communicate(timeout=120)
        if daemon.returncode != 0:
            sys.exit(f"the last rounds failed: {err[-2000:]}")
        with sqlite3.connect(db) as conn:
            played, losses, faults = conn.execute(
                "SELECT COUNT(*), SUM(termination = 'time forfeit'), SUM(fault IS NOT NULL) "
                "FROM games WHERE round > 11 AND status = 'finished'"
            ).fetchone()
    print(f"event of {finished} finished games, then 2 more rounds at 2+0.05 while measured")
    kibitzers = ", two Stockfish kibitzers" if args.kibitzers else ""
    print(
        f"{args.clients} live clients, {figures['requests']:.0f} requests (20 at a time)"
        f"{kibitzers}\n"
    )
    print(
        "| requests/s | p50 ms | p99 ms | moves stored | pushed per client | push p50 ms "
        "| push p99 ms | push max ms | games | time losses | faults |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {figures['requests_per_s']:.0f} | {figures['p50_ms']:.1f} | {figures['p99_ms']:.1f} "
        f"| {figures['moves_stored']:.0f} | {figures['moves_pushed'] / args.clients:.0f} "
        f"| {figures['push_p50_ms']:.0f} "
        f"| {figures['push_p99_ms']:.0f} | {figures['push_max_ms']:.0f} | {played} "
        f"| {losses or 0} | {faults or 0} |"
    )


if __name__ == "__main__":
    main()
