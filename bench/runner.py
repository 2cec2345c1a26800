"""The runner's clocks and its own cost, with Stockfish (Debian's /usr/games/stockfish).

    .venv/bin/python bench/runner.py cpu [--games 40] [--repeat 3]
                                         [--executors local,processes]
    .venv/bin/python bench/runner.py timeloss [--games N] [--tc TC] [--concurrency 2] [--affinity]
    .venv/bin/python bench/runner.py latency [--games 8] [--clients 100] [--concurrency 2]
                                             [--affinity]

`cpu`: the daemon's own CPU per move in the steady state (from the 200th move on) against a
bare python-chess `play()` loop at the same concurrency, which runs beside it (a child process,
counting over the same stretch of time: this machine's CPU time for the same work drifts by a
third from one run to the next, more than the target).  The daemon
plays an event of Stockfish at nodes=1000 in this process (`orchestrator run`'s own code path:
SQLite writes, PGN files and logs included), one and two games at a time, with `reuse = true`
and without, with each executor; the bare loop plays Stockfish against itself through
python-chess's own `popen_uci` and `play()`.  Engines are separate processes, so this
process's CPU time (`time.process_time`, every thread) is the runner's alone (with
`processes`, the games' own work is the workers': the daemon's is what is left).  Targets: at
most 0.15 ms per move above the bare loop; with `processes`, at most 0.25 ms per move.

`timeloss`: Stockfish against itself through the runner, two games at a time, every loss on
time counted: 100 games at 1+0.01 and 40 games at 10+0.1.  Target: none.

`latency`: the time charged to an engine minus the search time it reports itself (the `time`
of Stockfish's last info line), over every move of a daemon playing two games at a time:
without web clients, and with `--clients` clients reading the web view of `run --http` all
along.  Target: p99 at most 5 ms.

`--affinity`: pinned cores (`affinity = true`), each game its slot of `core/cpus.py`'s plan
for this host; a 2-core host has room for one game at once (`--concurrency 1`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import aiohttp
import chess
import chess.engine

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.config.model import EngineConfig  # noqa: E402
from orchestrator.core.game.adjudication import Adjudication  # noqa: E402
from orchestrator.core.game.clock import TimeControl  # noqa: E402
from orchestrator.core.game.openings import Opening  # noqa: E402
from orchestrator.core.game.record import GameRecord  # noqa: E402
from orchestrator.game.game import GameSpec, play_game  # noqa: E402
from tests.support.processes import free_port  # noqa: E402

STOCKFISH = "/usr/games/stockfish"
OPENINGS = ["e4 e5", "d4 d5", "c4 e5", "Nf3 d5", "e4 c5", "d4 Nf6", "e4 e6", "e4 c6"]


def stockfish(name: str) -> EngineConfig:
    return EngineConfig(name=name, command=(STOCKFISH,), options={"Hash": 16, "Threads": 1})


def percentile(values: list[int], p: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))])


def event_toml(
    folder: Path, players: int, rounds: int, tc: str, concurrency: int = 2, affinity: bool = False
) -> Path:
    """An event of Stockfish copies (near-identical engines) with the bench's openings."""
    book = folder / "book.pgn"
    book.write_text("".join(f'[Event "{line}"]\n\n{line} *\n\n' for line in OPENINGS))
    engines = "".join(
        f'[[engine]]\nname = "SF-{i:02d}"\ncommand = "{STOCKFISH}"\n'
        "options = { Hash = 16, Threads = 1 }\n"
        for i in range(1, players + 1)
    )
    path = folder / "bench.toml"
    path.write_text(
        f'[tournament]\nname = "Bench"\nrounds = {rounds}\ntc = "{tc}"\n'
        f"concurrency = {concurrency}\naffinity = {str(affinity).lower()}\n"
        'openings = "book.pgn"\ntimemargin = 100\n'
        f'database = "{folder / "bench.sqlite"}"\npgn_dir = "{folder / "pgn"}"\n'
        f"{engines}"
    )
    return path


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """The daemon's log lines go to /dev/null (they are still rendered: a real cost)."""
    from orchestrator.logs import configure

    with Path(os.devnull).open("w") as devnull, contextlib.redirect_stdout(devnull):
        configure(json=True)
        yield


def moves_in(database: Path) -> list[tuple[int, int | None, int | None]]:
    """(time_ms, reported_ms, clock_ms) of every engine move of every finished attempt."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        return db.execute(
            "SELECT m.time_ms, m.reported_ms, m.clock_ms FROM moves m "
            "JOIN attempts a ON a.id = m.attempt WHERE a.status = 'finished' AND m.book = 0"
        ).fetchall()


# cpu ---------------------------------------------------------------------------------------

#: the steady state: CPU counted from this engine move on
STEADY_FROM = 200


class _Counter:
    """This process's CPU time at the `STEADY_FROM`-th move and at the last one."""

    def __init__(self, on_steady: Callable[[], None] = lambda: None) -> None:
        self.moves = 0
        self.first: float | None = None
        self.last = 0.0
        self.on_steady = on_steady

    def tick(self) -> None:
        self.moves += 1
        if self.moves == STEADY_FROM:
            self.first = time.process_time()
            self.on_steady()
        self.last = time.process_time()

    def ms_per_move(self) -> float:
        assert self.first is not None, "too few moves for a steady state"
        return 1000 * (self.last - self.first) / (self.moves - STEADY_FROM)


async def bare_games(concurrency: int, counter: _Counter, stop: asyncio.Event) -> None:
    """python-chess alone, game after game until `stop`: popen_uci, play() at nodes=1000 to
    the end (or 200 plies), quit."""
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            opening = Opening.from_san(OPENINGS[i % len(OPENINGS)])
            board = opening.after_book()
            _, white = await chess.engine.popen_uci(STOCKFISH)
            _, black = await chess.engine.popen_uci(STOCKFISH)
            try:
                for engine in (white, black):
                    await engine.configure({"Hash": 16, "Threads": 1})
                limit = chess.engine.Limit(nodes=1000)
                while not board.is_game_over() and board.ply() < 200 and not stop.is_set():
                    engine = white if board.turn == chess.WHITE else black
                    result = await engine.play(board, limit, info=chess.engine.INFO_SCORE)
                    assert result.move is not None
                    board.push(result.move)
                    counter.tick()
            finally:
                await white.quit()
                await black.quit()

    async def slot(first: int) -> None:
        i = first
        while not stop.is_set():
            await one(i)
            i += concurrency

    await asyncio.gather(*(slot(i) for i in range(concurrency)))


async def bare_beside(concurrency: int) -> None:
    """The bare loop as a child of `cpu`: it prints `ready` once warm (`STEADY_FROM` moves),
    counts from SIGUSR1 to SIGUSR2, then prints its CPU per move over that window and ends."""
    loop = asyncio.get_running_loop()
    counter, stop = _Counter(lambda: print("ready", flush=True)), asyncio.Event()
    window: list[tuple[float, int]] = []

    def mark() -> None:
        window.append((time.process_time(), counter.moves))
        if len(window) == 2:
            stop.set()

    loop.add_signal_handler(signal.SIGUSR1, mark)
    loop.add_signal_handler(signal.SIGUSR2, mark)
    await bare_games(concurrency, counter, stop)
    (cpu0, moves0), (cpu1, moves1) = window
    print(f"{1000 * (cpu1 - cpu0) / max(1, moves1 - moves0):.6f}", flush=True)


def daemon_cpu(
    games: int, concurrency: int, reuse: bool, executor: str, beside: subprocess.Popen[str]
) -> tuple[float, int]:
    """The daemon (`run_event`, in this process) on an event of Stockfish at nodes=1000: its
    CPU per move from the `STEADY_FROM`-th move on, and its moves.  `beside` (the bare loop)
    is signalled at the daemon's `STEADY_FROM`-th move and at its end, so both count over
    the same stretch of time."""
    from orchestrator.daemon import loop
    from orchestrator.daemon.run import run_event

    counter = _Counter(lambda: beside.send_signal(signal.SIGUSR1))
    counted = loop.Daemon.moved

    def moved(self: loop.Daemon, *args: object) -> None:
        counter.tick()
        counted(self, *args)  # type: ignore[arg-type]

    players = 10
    rounds = max(1, round(games / (players // 2) / 2))  # double rounds: players games each
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = event_toml(folder, players, rounds, "nodes=1000", concurrency)
        text = config.read_text()
        if reuse:
            text = text.replace('command = "', 'reuse = true\ncommand = "')
        config.write_text(text.replace("concurrency =", f'executor = "{executor}"\nconcurrency ='))
        loop.Daemon.moved = moved  # type: ignore[method-assign]
        try:
            with quiet_logs():
                code = asyncio.run(run_event(config, False, False, None))
        finally:
            loop.Daemon.moved = counted  # type: ignore[method-assign]
            beside.send_signal(signal.SIGUSR2)
        assert code == 0
    return counter.ms_per_move(), counter.moves


def cpu(games: int, executors: list[str], repeat: int) -> None:
    """One table: each case of the daemon with the bare loop at the same concurrency running
    beside it, in a process of its own, over the same stretch of time (this machine's CPU
    time per unit of work drifts by a third between runs, and is lower when both cores are
    busy: two loops measured one after the other differ by as much as the target).  Each case
    runs `repeat` times: the medians, and the median of the differences of each pair."""
    print(
        f"| case (Stockfish nodes=1000; CPU from move {STEADY_FROM} on; median of {repeat}) "
        "| moves | daemon ms/move | bare loop ms/move | daemon - bare |"
    )
    print("|---|---:|---:|---:|---:|")
    for concurrency in (1, 2):
        for executor in executors:
            for reuse in (True, False):
                daemon, bare, diffs, moves = [], [], [], 0
                for _ in range(repeat):
                    with subprocess.Popen(
                        [sys.executable, __file__, "bare", "--concurrency", str(concurrency)],
                        stdout=subprocess.PIPE,
                        text=True,
                    ) as beside:
                        assert beside.stdout is not None
                        assert beside.stdout.readline().strip() == "ready"
                        ms, moves = daemon_cpu(games, concurrency, reuse, executor, beside)
                        bare_ms = float(beside.stdout.readline())
                    daemon.append(ms)
                    bare.append(bare_ms)
                    diffs.append(ms - bare_ms)
                label = f"{executor}, {concurrency} at once, reuse = {str(reuse).lower()}"
                print(
                    f"| {label} | {moves} | {statistics.median(daemon):.3f} "
                    f"| {statistics.median(bare):.3f} | {statistics.median(diffs):+.3f} |",
                    flush=True,
                )


# timeloss -----------------------------------------------------------------------------------


async def play_many(
    games: int, concurrency: int, tc: str, affinity: bool
) -> tuple[list[GameRecord], float]:
    from orchestrator.core.cpus import TooFewCores, plan_slots
    from orchestrator.engines.affinity import read_cores

    rules = Adjudication()  # TCEC adjudication, as events play
    slots: asyncio.Queue[tuple[tuple[int, ...], tuple[int, ...]] | None] = asyncio.Queue()
    try:
        for slot in plan_slots(read_cores(), concurrency).slots if affinity else ():
            slots.put_nowait((slot.first, slot.second))
    except TooFewCores as exc:
        raise SystemExit(f"--affinity: {exc} (lower --concurrency)") from None
    for _ in range(0 if affinity else concurrency):
        slots.put_nowait(None)
    records: list[GameRecord] = []

    async def one(i: int) -> None:
        cpus = await slots.get()
        try:
            opening = Opening.from_san(OPENINGS[i % len(OPENINGS)])
            white, black = (stockfish("SF-1"), stockfish("SF-2"))[:: 1 if i % 2 == 0 else -1]
            spec = GameSpec(
                white, black, TimeControl.parse(tc), opening, rules, timemargin_ms=100, cpus=cpus
            )
            records.append(await play_game(spec))
        finally:
            slots.put_nowait(cpus)

    cpu0 = time.process_time()
    await asyncio.gather(*(one(i) for i in range(games)))
    return records, time.process_time() - cpu0


def timeloss(runs: list[tuple[int, str]], concurrency: int, affinity: bool) -> None:
    print(
        "| games | at once | affinity | tc | losses on time | faults | min clock left ms "
        "| runner CPU ms/move | median plies | minutes |"
    )
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    notes = []
    for games, tc in runs:
        started = time.perf_counter()
        records, cpu_s = asyncio.run(play_many(games, concurrency, tc, affinity))
        elapsed = time.perf_counter() - started
        forfeits = [r for r in records if r.termination == "time forfeit"]
        faults = [r for r in records if r.fault is not None]
        clocks = [m.clock_ms for r in records for m in r.moves if m.clock_ms is not None]
        moves = sum(1 for r in records for m in r.moves if not m.book)
        print(
            f"| {len(records)} | {concurrency} | {str(affinity).lower()} | {tc} "
            f"| {len(forfeits)} | {len(faults)} "
            f"| {min(clocks)} | {1000 * cpu_s / moves:.3f} "
            f"| {statistics.median(r.plies for r in records):.0f} | {elapsed / 60:.1f} |"
        )
        notes += [f"  {r.white}-{r.black}: {r.reason}" for r in forfeits + faults]
    print("\n".join(notes))


# latency ------------------------------------------------------------------------------------


async def web_clients(url: str, clients: int, stop: asyncio.Event) -> int:
    """`clients` readers, each fetching the overview and a game's JSON in a loop."""
    count = 0
    paths = ["/", "/api/overview", "/api/games/1", "/api/games/2", "/standings"]

    async def one(i: int, session: aiohttp.ClientSession) -> None:
        nonlocal count
        n = i
        while not stop.is_set():
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with session.get(url + paths[n % len(paths)]) as response:
                    await response.read()
                    count += 1
            n += 1
            await asyncio.sleep(0.05)

    timeout = aiohttp.ClientTimeout(total=10)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(*(one(i, session) for i in range(clients)))
    return count


async def run_event(config: Path, clients: int) -> int:
    """`orchestrator run` as a subprocess (with --http when there are clients)."""
    port = free_port()
    command = [sys.executable, "-m", "orchestrator", "run", str(config)]
    if clients:
        command += ["--http", f"127.0.0.1:{port}"]
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    stop = asyncio.Event()
    readers = None
    if clients:
        await asyncio.sleep(3)  # the daemon probes its engines first
        readers = asyncio.create_task(web_clients(f"http://127.0.0.1:{port}", clients, stop))
    await proc.wait()
    stop.set()
    requests = await readers if readers else 0
    if proc.returncode != 0:
        raise SystemExit(f"the daemon failed: {(await proc.stderr.read()).decode()[-500:]}")  # type: ignore[union-attr]
    return requests


def latency(games: int, clients: int, tc: str, concurrency: int, affinity: bool) -> None:
    pinned = ", pinned cores" if affinity else ""
    print(
        f"| daemon, {concurrency} at once{pinned} | moves | requests served "
        "| charged - reported ms: p50 | p99 | max | losses on time |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for readers in (0, clients):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            # 4 players, one double round per 4 games
            config = event_toml(folder, 4, max(1, games // 4), tc, concurrency, affinity)
            requests = asyncio.run(run_event(config, readers))
            moves = moves_in(folder / "bench.sqlite")
            with contextlib.closing(sqlite3.connect(folder / "bench.sqlite")) as db:
                (forfeits,) = db.execute(
                    "SELECT COUNT(*) FROM games WHERE termination = 'time forfeit'"
                ).fetchone()
        gaps = [t - r for t, r, _ in moves if r is not None]
        label = f"{readers} web clients on run --http" if readers else "no web clients"
        print(
            f"| {label} | {len(gaps)} | {requests} | {percentile(gaps, 50):.0f} "
            f"| {percentile(gaps, 99):.0f} | {max(gaps)} | {forfeits} |"
        )


def main() -> None:
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["cpu", "timeloss", "latency", "bare"])
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--executors", default="local,processes")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--tc", default=None)
    parser.add_argument("--affinity", action="store_true", help="pinned cores")
    args = parser.parse_args()
    if args.part == "cpu":
        cpu(args.games or 40, args.executors.split(","), args.repeat)
    elif args.part == "bare":  # the bare loop beside `cpu`'s daemon
        asyncio.run(bare_beside(args.concurrency))
    elif args.part == "timeloss":
        runs = [(100, "1+0.01"), (40, "10+0.1")]
        if args.tc or args.games:
            runs = [(args.games or 40, args.tc or "10+0.1")]
        timeloss(runs, args.concurrency, args.affinity)
    else:
        latency(args.games or 8, args.clients, args.tc or "5+0.05", args.concurrency, args.affinity)


if __name__ == "__main__":
    main()
