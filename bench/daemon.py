"""The daemon on a full-size event: a 44-player, 11-round double Swiss (968 games) of
near-instant scripted test engines, run by `orchestrator run` as a subprocess.

    .venv/bin/python bench/daemon.py [--players 44] [--rounds 11] [--concurrency 1]

Prints the total time, the daemon's own time between one game's end and the next game's
start (from the timestamps the database holds), the database size and the daemon's peak
memory (VmHWM, polled from /proc while it runs).
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.daemon import event_config  # noqa: E402  (the scripted test engines' event)


def peak_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=44)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        names = [f"E{i:02d}" for i in range(1, args.players + 1)]
        path = event_config(
            folder,
            players=names,
            rounds=args.rounds,
            concurrency=args.concurrency,
            name="Bench",
            groups=6,
        )
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", str(path)],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, peak_kib(proc.pid) or 0)
            time.sleep(0.2)
        total = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"the daemon failed: {proc.stderr.read() if proc.stderr else ''}")
        db = folder / "event.sqlite"
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT started_at, ended_at, plies FROM games ORDER BY started_at"
            ).fetchall()
            moves = conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0]
        stamps = [(datetime.fromisoformat(s), datetime.fromisoformat(e)) for s, e, _ in rows]
        gaps = [
            (nxt[0] - prev[1]).total_seconds() * 1000
            for prev, nxt in itertools.pairwise(stamps)
            if nxt[0] >= prev[1]
        ]
        size = sum(p.stat().st_size for p in folder.glob("event.sqlite*"))
        print(
            "| players | rounds | games | moves | total s | ms per game "
            "| gap median ms | gap p95 ms | database MiB | daemon peak MiB |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        gaps.sort()
        print(
            f"| {args.players} | {args.rounds} | {len(rows)} | {moves} | {total:.1f} "
            f"| {1000 * total / len(rows):.0f} | {statistics.median(gaps):.1f} "
            f"| {gaps[int(0.95 * (len(gaps) - 1))]:.1f} | {size / 2**20:.2f} | {peak / 1024:.0f} |"
        )


if __name__ == "__main__":
    main()
