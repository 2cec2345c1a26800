"""Many games at once: the clock's error, the daemon's cost and its loop's lag, beside fastchess.

    .venv/bin/python bench/scale.py [--sizes 16,64,128] [--executors local,processes]
                                    [--think 200-470] [--moves 20] [--fastchess PATH]
    .venv/bin/python bench/scale.py --soak [--executors local,processes] [--engines 46] [--trace]

For each size N and executor, `orchestrator run`'s own code (`daemon/run.py`, SQLite, PGN
files, logs) plays a Swiss of 2N scripted engines (tests/support/scripted_engine.py, kept
between games with `reuse = true`), N games at once, two rounds at 120+1, each game a draw
after `--moves` moves a side.  Each engine thinks for a time drawn from `--think` (ms, by
the position) and reports what it measured itself in `info time`, from reading `go` to
writing its move.  Each run is a process of its own (`--one`), so that its peak RSS is its
own; the daemon's loop lag is sampled every 10 ms by a task on its loop.

The columns: engine moves; the time charged minus the time reported (ms: p50 / p99 / max);
losses on time; the daemon's own CPU per move (from the first game's start to the last
game's end; with `processes`, the games' CPU is the workers'); the daemon's peak RSS; the
loop's lag (ms: p99 / max).

With `--fastchess PATH` (a fastchess built from Disservin/fastchess with `make`), fastchess
plays the same engines at each size in the same run (two engines, N games at once, 2N
games), and its row shows the latency it writes per move (`-pgnout latency=true`: its
elapsed time minus the engine's reported time).

`--soak`: a month of an engine tester's run, shortened: a round robin of `--engines` (46)
reused scripted engines that answer at once, 4 cycles of single rounds, 4 games at once, each
game a draw after 10 moves a side (4,140 games).  After game 400 and 200 games before the
last (while the daemon still runs: its engines, threads and files open) it prints the RSS of
the daemon (this process) and, with `processes`, of the Dask scheduler; the daemon's file
descriptors and threads, each the fewest of thirty samples over three seconds (what stays
open: a game's engine log is open while it plays, the event's PGN while a game is appended;
the games' logs are left out); and the database's size per game.  With
`--trace`, a JSON line on stderr every 200 games says where the daemon's memory is: its
RSS by kind of mapping (the C heap, other anonymous memory, files), Python's small-object
allocator (its arenas and blocks), glibc's arenas (held, free inside, mmapped chunks), the
allocated blocks and the objects the garbage collector tracks (and the largest of them;
those the daemon froze when the event started are counted apart, as `gc_frozen`), its
descriptors by kind, and its threads by name.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.paths import SCRIPTED  # noqa: E402

TC = "120+1"
LAG_S = float(os.environ.get("LAG_S", "0.01"))  # how often the loop's lag is sampled


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))])


def think_args(think: str) -> list[str]:
    low, _, high = think.partition("-")
    spread = int(high or low) - int(low)
    return ["--delay", low, "--jitter", str(spread)]


def event(folder: Path, size: int, executor: str, think: str, moves: int) -> Path:
    """A Swiss of 2 * size scripted engines, size games at once, two rounds."""
    engines = "".join(
        f"""
[[engine]]
name = "S{i:03d}"
command = {json.dumps([sys.executable, str(SCRIPTED), "--name", f"S{i:03d}", "--seed", str(i),
                       *think_args(think)])}
reuse = true
"""
        for i in range(2 * size)
    )  # fmt: skip
    path = folder / "scale.toml"
    path.write_text(
        f"""
[tournament]
name = "Scale"
rounds = 2
tc = "{TC}"
concurrency = {size}
concurrency_cap = {max(64, size)}
executor = "{executor}"
database = "{folder / "scale.sqlite"}"
pgn_dir = "{folder / "pgn"}"

[adjudication]
win = false
draw = false
max_moves = {moves}
{engines}"""
    )
    return path


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def measure(executor: str, size: int, think: str, moves: int) -> dict[str, Any]:
    """Play one configuration in this process; its figures."""
    from orchestrator.logs import configure

    samples: list[tuple[float, float]] = []  # (wall time, this process's CPU time)
    lags: list[float] = []

    async def watch() -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(LAG_S)
            lags.append((loop.time() - before - LAG_S) * 1000)
            samples.append((time.time(), time.process_time()))

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = event(folder, size, executor, think, moves)
        with Path(os.devnull).open("w") as devnull, contextlib.redirect_stdout(devnull):
            configure(json=True)
            code = asyncio.run(watched(config, watch()))
        if code != 0:
            raise SystemExit(f"the daemon exited {code}")
        with contextlib.closing(sqlite3.connect(folder / "scale.sqlite")) as db:
            gaps = [
                float(t - r)
                for t, r in db.execute(
                    "SELECT m.time_ms, m.reported_ms FROM moves m JOIN attempts a "
                    "ON a.id = m.attempt WHERE a.status = 'finished' AND m.book = 0 "
                    "AND m.reported_ms IS NOT NULL"
                )
            ]
            (forfeits,) = db.execute(
                "SELECT COUNT(*) FROM games WHERE termination = 'time forfeit'"
            ).fetchone()
            first, last = db.execute("SELECT MIN(started_at), MAX(ended_at) FROM games").fetchone()
    start, end = _seconds(first), _seconds(last)
    inside = [cpu for at, cpu in samples if start <= at <= end]
    cpu = inside[-1] - inside[0] if len(inside) > 1 else float("nan")
    steady = [lag for (at, _), lag in zip(samples, lags, strict=True) if start <= at <= end]
    return {
        "runner": f"orchestrator, {executor}",
        "size": size,
        "moves": len(gaps),
        "p50": percentile(gaps, 50),
        "p99": percentile(gaps, 99),
        "max": max(gaps, default=float("nan")),
        "forfeits": forfeits,
        "cpu_ms": 1000 * cpu / max(1, len(gaps)),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "lag_p99": percentile(steady, 99),
        "lag_max": max(steady, default=float("nan")),
    }


def _status(pid: int, field: str) -> int:
    """A number of `/proc/PID/status` (VmRSS in kB, Threads), 0 for a process gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


async def watched(config: Path, watch: Coroutine[Any, Any, None]) -> int:
    """`orchestrator run`'s own code on `config` in this process, `watch` beside it."""
    from orchestrator.daemon.run import run_event

    watcher = asyncio.create_task(watch)
    try:
        return await run_event(config, False, False, None)
    finally:
        watcher.cancel()


def _malloc_info() -> dict[str, float]:
    """glibc's allocator (`malloc_info`): MB its arenas (the main one and the threads') hold
    from the system, MB free inside them, MB of the chunks mmapped on their own."""
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    with tempfile.NamedTemporaryFile(suffix=".xml") as out:
        fp = libc.fopen(out.name.encode(), b"w")
        libc.malloc_info(0, fp)
        libc.fclose(fp)
        text = Path(out.name).read_text()
    held = free = 0
    for body in re.findall(r'<heap nr="\d+">(.*?)</heap>', text, re.S):
        current = re.search(r'<system type="current" size="(\d+)"/>', body)
        rest = re.search(r'<total type="rest" count="\d+" size="(\d+)"/>', body)
        held += int(current.group(1)) if current else 0
        free += int(rest.group(1)) if rest else 0
    tail = text[text.rfind("</heap>") :]
    mmap = re.search(r'<total type="mmap" count="\d+" size="(\d+)"/>', tail)
    return {
        "arenas_mb": round(held / 2**20, 2),
        "free_mb": round(free / 2**20, 2),
        "mmapped_mb": round(int(mmap.group(1)) / 2**20, 2) if mmap else 0.0,
    }


def _pymalloc() -> dict[str, float]:
    """Python's small-object allocator: its arenas now and at most, and MB in its blocks."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    found: dict[str, float] = {}
    for key, name in (
        ("# arenas allocated current", "arenas"),
        ("# arenas highwater mark", "arenas_most"),
        ("# bytes in allocated blocks", "blocks_mb"),
        ("# bytes in available blocks", "free_mb"),
        ("# bytes lost to pool headers", "headers_mb"),
        ("Total", "total_mb"),
    ):
        for line in text.splitlines():
            if line.startswith(key):
                value = float(line.split("=")[-1].replace(",", "").strip())
                found[name] = round(value / 2**20, 2) if name.endswith("_mb") else value
                break
    return found


def _fds(logs: Path) -> int:
    """This process's open file descriptors, but the games' engine logs (one is open for
    each game being played, none between two games: they come and go with the games)."""
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            count += not fd.readlink().is_relative_to(logs)
    return count


def _fd_kinds(logs: Path) -> dict[str, int]:
    """This process's descriptors by what they are (`--trace`), the engine logs left out: a
    file by its name, a TCP socket by the port it is connected to, others by their kind."""
    ports: dict[str, str] = {}  # a socket's inode: its peer's port
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                cols = row.split()
                ports[cols[9]] = f"tcp to :{int(cols[2].rsplit(':', 1)[1], 16)}"
    kinds: dict[str, int] = {}
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = fd.readlink()
            if target.is_relative_to(logs):
                continue
            text = str(target)
            if text.startswith("socket:["):
                text = ports.get(text[8:-1], "socket")
            elif text.startswith("/"):
                text = target.name
            kinds[text] = kinds.get(text, 0) + 1
    return dict(sorted(kinds.items()))


def _rss_by_kind() -> dict[str, float]:
    """This process's RSS in MB by kind of mapping: the C heap, other anonymous memory, files."""
    kinds: dict[str, float] = {}
    kind = "anon"
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if not head:
            continue
        if "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 else ""
            kind = (
                "heap"
                if name == "[heap]"
                else "anon"
                if not name or name.startswith("[")
                else "file"
            )
        elif head[0] == "Rss:":
            kinds[kind] = kinds.get(kind, 0.0) + int(head[1]) / 1024
    return {k: round(v, 1) for k, v in kinds.items()}


def _largest(count: int = 5) -> list[str]:
    """The `count` largest containers the garbage collector tracks: type, length, KB, and
    where one says what it holds (a dict's first key)."""
    sized = sorted(
        ((sys.getsizeof(o), o) for o in gc.get_objects() if isinstance(o, (dict, list, set))),
        key=lambda pair: pair[0],
    )[-count:]
    out = []
    for size, o in reversed(sized):
        first = repr(next(iter(o), None))[:60] if isinstance(o, (dict, set)) else ""
        out.append(f"{type(o).__name__} len={len(o)} {size / 1024:.0f} KB {first}")
    return out


def soak(executor: str, engines: int, trace: bool = False) -> dict[str, Any]:
    """Play the soak event in this process; the figures after game 400 and at the end."""
    from orchestrator.executor import processes
    from orchestrator.logs import configure
    from orchestrator.store.logs import logs_folder

    marks: dict[str, dict[str, float]] = {}
    total = 4 * engines * (engines - 1) // 2  # 4 cycles of a round robin
    helpers: list[int] = []  # the scheduler first
    traced = [0]  # `trace`: a line on stderr every 200 games

    async def mark(label: str, db: Path, games: int) -> None:
        # descriptors come and go with the games (a game's engine log while it plays, the
        # event's PGN while a game is appended): what stays open is the fewest of thirty
        # samples over three seconds, the games' logs left out; so are the threads
        fds = threads = 1 << 30
        for _ in range(30):
            fds = min(fds, _fds(logs_folder(db)))
            threads = min(threads, _status(os.getpid(), "Threads"))
            await asyncio.sleep(0.1)
        size = sum(f.stat().st_size for f in db.parent.glob(db.name + "*") if f.is_file())
        marks[label] = {
            "games": games,
            "daemon_rss_mb": _status(os.getpid(), "VmRSS") / 1024,
            "scheduler_rss_mb": _status(helpers[0], "VmRSS") / 1024 if helpers else 0.0,
            "fds": fds,
            "threads": threads,
            "db_kb_per_game": size / 1024 / max(1, games),
        }
        if trace:
            marks[label]["memory"] = {
                "rss_mb_by_mapping": _rss_by_kind(),
                "pymalloc": _pymalloc(),
                "malloc": _malloc_info(),
                "python_blocks": sys.getallocatedblocks(),
                "gc_objects": len(gc.get_objects()),  # not those frozen at the start
                "gc_frozen": gc.get_freeze_count(),
                "largest": _largest(),
                "fds": _fd_kinds(logs_folder(db)),
            }
            marks[label]["thread_names"] = sorted(t.name for t in threading.enumerate())
            print(json.dumps({label: marks[label]}), file=sys.stderr, flush=True)

    async def watch(db: Path) -> None:
        while True:
            await asyncio.sleep(1)
            helpers[:] = sorted(processes.HELPER_PIDS)
            try:
                with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as c:
                    (games,) = c.execute(
                        "SELECT COUNT(*) FROM games WHERE status = 'finished'"
                    ).fetchone()
            except sqlite3.Error:
                continue
            if games >= 400 and "after 400" not in marks:
                await mark("after 400", db, games)
                traced[0] = games
            if trace and games >= traced[0] + 200:
                traced[0] = games
                await mark(f"after {games}", db, games)
            if games >= total - 200 and "at the end" not in marks:  # while it still runs
                await mark("at the end", db, games)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        names = [f"R{i:02d}" for i in range(engines)]
        blocks = "".join(
            f"""
[[engine]]
name = "{name}"
command = {json.dumps([sys.executable, str(SCRIPTED), "--name", name, "--seed", str(i)])}
reuse = true
"""
            for i, name in enumerate(names)
        )
        config = folder / "soak.toml"
        db = folder / "soak.sqlite"
        config.write_text(
            f"""
[tournament]
name = "Soak"
system = "round-robin"
format = "single"
cycles = 4
tc = "60+1"
concurrency = 4
executor = "{executor}"
database = "{db}"
pgn_dir = "{folder / "pgn"}"

[adjudication]
win = false
draw = false
max_moves = 10
{blocks}"""
        )
        with Path(os.devnull).open("w") as devnull, contextlib.redirect_stdout(devnull):
            configure(json=True)
            code = asyncio.run(watched(config, watch(db)))
        if code != 0:
            raise SystemExit(f"the daemon exited {code}")
    return {"runner": f"orchestrator, {executor}", "marks": marks}


def soak_table(executors: list[str], engines: int, trace: bool) -> None:
    print(
        "| executor | after game | daemon RSS MB | scheduler RSS MB | daemon fds "
        "| daemon threads | database KB/game |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for executor in executors:
        one = subprocess.run(
            [sys.executable, __file__, "--soak-one", executor, "--engines", str(engines),
             *(["--trace"] if trace else [])],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        for line in one.stderr.splitlines() if trace else ():  # not the daemon's own logs
            if line.startswith(('{"after ', '{"at the end"')):
                print(line, file=sys.stderr, flush=True)
        figures = json.loads(one.stdout.splitlines()[-1])
        for label in ("after 400", "at the end"):
            m = figures["marks"][label]
            print(
                f"| {executor} | {m['games']:.0f} | {m['daemon_rss_mb']:.1f} "
                f"| {m['scheduler_rss_mb']:.1f} | {m['fds']:.0f} | {m['threads']:.0f} "
                f"| {m['db_kb_per_game']:.1f} |",
                flush=True,
            )


def fastchess(path: str, size: int, think: str, moves: int) -> dict[str, Any]:
    """fastchess with two of the same scripted engines, size games at once, 2 * size games."""
    with tempfile.TemporaryDirectory() as tmp:
        pgn = Path(tmp) / "fastchess.pgn"
        command = [path]
        for i in range(2):
            args = " ".join(["--name", f"F{i}", "--seed", str(i), *think_args(think)])
            command += ["-engine", f"cmd={sys.executable}", f"args={SCRIPTED} {args}", f"name=F{i}"]
        command += [
            "-each", f"tc={TC}", "proto=uci",
            "-concurrency", str(size), "-force-concurrency",
            "-rounds", str(size), "-games", "2",
            "-maxmoves", str(moves),
            "-pgnout", f"file={pgn}", "latency=true",
        ]  # fmt: skip
        subprocess.run(  # in tmp: fastchess leaves its config.json where it runs
            command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp
        )
        text = pgn.read_text()
    latencies = [1000 * float(x) for x in re.findall(r"latency=(-?[\d.]+)s", text)]
    forfeits = len(re.findall(r'Termination "time forfeit"', text))
    return {
        "runner": "fastchess",
        "size": size,
        "moves": len(latencies),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "max": max(latencies, default=float("nan")),
        "forfeits": forfeits,
    }


def row(figures: dict[str, Any]) -> str:
    def cell(key: str, digits: int = 0) -> str:
        value = figures.get(key)
        return "-" if value is None else f"{value:.{digits}f}"

    return (
        f"| {figures['runner']} | {figures['size']} | {figures['moves']} "
        f"| {cell('p50')} / {cell('p99')} / {cell('max')} | {figures['forfeits']} "
        f"| {cell('cpu_ms', 3)} | {cell('rss_mb')} | {cell('lag_p99')} / {cell('lag_max')} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,128")
    parser.add_argument("--executors", default="local,processes")
    parser.add_argument("--think", default="200-470", help="ms, MIN-MAX")
    parser.add_argument("--moves", type=int, default=20, help="moves a side before a draw")
    parser.add_argument("--fastchess", default=None, help="a fastchess binary")
    parser.add_argument("--soak", action="store_true", help="4,140 short games (see above)")
    parser.add_argument("--engines", type=int, default=46, help="--soak: the round robin's")
    parser.add_argument("--one", nargs=2, metavar=("EXECUTOR", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--soak-one", help=argparse.SUPPRESS)
    parser.add_argument(
        "--trace", action="store_true", help="--soak: the daemon's memory every 200 games"
    )
    args = parser.parse_args()
    if args.soak_one:
        print(json.dumps(soak(args.soak_one, args.engines, args.trace)))
        return
    if args.soak:
        soak_table(args.executors.split(","), args.engines, args.trace)
        return
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.think, args.moves)))
        return
    print(
        "| runner | games at once | moves | charged - reported ms: p50 / p99 / max "
        "| losses on time | daemon CPU ms/move | daemon peak RSS MB | loop lag ms: p99 / max |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---|")
    for size in [int(s) for s in args.sizes.split(",")]:
        for executor in args.executors.split(","):
            one = subprocess.run(
                [sys.executable, __file__, "--one", executor, str(size), "--think", args.think,
                 "--moves", str(args.moves)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            print(row(json.loads(one.stdout.splitlines()[-1])), flush=True)
        if args.fastchess:
            print(row(fastchess(args.fastchess, size, args.think, args.moves)), flush=True)


if __name__ == "__main__":
    main()
