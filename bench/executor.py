"""Where games run: the same 44-player double Swiss of near-instant scripted engines, played
with `executor = "local"` (games in the daemon's process) and `executor = "processes"` (a
local Dask cluster the daemon starts, one worker process per game slot).

    .venv/bin/python bench/executor.py [--players 44] [--rounds 4] [--concurrency 2]
                                       [--moves 60]

For each executor it prints games per minute (from the first game's start to the last
game's end, as the database holds them), the gap between games (from a slot's game ending
to the next game starting, median and 95th percentile), and the daemon process's own CPU
time per engine move (user + system of the daemon's threads only, read from /proc while it
runs: engines, and the Dask scheduler and workers, are other processes).
"""

from __future__ import annotations

import argparse
import os
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

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """User + system time of the process `pid` itself (not its children)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def when(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def run(executor: str, args: argparse.Namespace, folder: Path) -> dict[str, float]:
    names = [f"E{i:02d}" for i in range(1, args.players + 1)]
    path = event_config(
        folder,
        players=names,
        rounds=args.rounds,
        concurrency=args.concurrency,
        name="Bench",
        groups=6,
        extra=f'executor = "{executor}"',
        adjudication=f"win = false\ndraw = false\nmax_moves = {args.moves}",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(path)],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    cpu = 0.0
    while proc.poll() is None:
        cpu = cpu_seconds(proc.pid) or cpu
        time.sleep(0.05)
    if proc.returncode != 0:
        raise SystemExit(
            f"{executor}: the daemon failed: {proc.stderr.read() if proc.stderr else ''}"
        )
    with sqlite3.connect(folder / "event.sqlite") as conn:
        spans = conn.execute(
            "SELECT started_at, ended_at FROM attempts WHERE status = 'finished' "
            "ORDER BY started_at"
        ).fetchall()
        moves = conn.execute("SELECT COUNT(*) FROM moves WHERE book = 0").fetchone()[0]
    starts = [when(s) for s, _ in spans]
    ends = sorted(when(e) for _, e in spans)
    gaps = []
    for start in starts[args.concurrency :]:  # each start after the first wave frees a slot
        before = [e for e in ends if e <= start]
        if before:
            gaps.append((start - before[-1]) * 1000)
    minutes = (max(ends) - min(starts)) / 60
    return {
        "games": len(spans),
        "games_per_min": len(spans) / minutes,
        "gap_p50_ms": statistics.median(gaps),
        "gap_p95_ms": statistics.quantiles(gaps, n=20)[-1],
        "moves": moves,
        "cpu_us_per_move": cpu / moves * 1e6,
        "cpu_s": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=44)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--moves", type=int, default=60, help="games end as draws after this")
    args = parser.parse_args()
    rows = []
    for executor in ("local", "processes"):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append((executor, run(executor, args, Path(tmp))))
    print(
        f"{args.players} players, {args.rounds} double rounds, concurrency {args.concurrency}, "
        f"scripted engines (instant moves), games drawn after {args.moves} moves"
    )
    print(
        f"{'executor':<10} {'games':>6} {'games/min':>10} {'gap p50 ms':>11} {'gap p95 ms':>11} "
        f"{'moves':>7} {'daemon CPU s':>13} {'daemon CPU us/move':>19}"
    )
    for executor, r in rows:
        print(
            f"{executor:<10} {r['games']:>6.0f} {r['games_per_min']:>10.1f} "
            f"{r['gap_p50_ms']:>11.1f} {r['gap_p95_ms']:>11.1f} {r['moves']:>7.0f} "
            f"{r['cpu_s']:>13.2f} {r['cpu_us_per_move']:>19.0f}"
        )


if __name__ == "__main__":
    main()
