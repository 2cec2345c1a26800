"""The runner's own CPU per move and its wall time, beside fastchess on the same games.

    .venv/bin/python bench/hotpath.py [--games 40] [--nodes 1000] [--rounds 2]
                                      [--fastchess PATH] [--concurrency 1]

Stockfish (Debian's /usr/games/stockfish, Hash 16, one thread) plays itself at a node limit,
each opening of a small EPD suite twice with colours swapped, no adjudication: fastchess
(built from Disservin/fastchess with `make`; `--fastchess`, else `$FASTCHESS`, else
`fastchess` on the PATH; without one the bench says so and stops) and `orchestrator run`
(engines reused, its SQLite, PGN and logs included) each play the same games.  The runs are
interleaved, fastchess, orchestrator, orchestrator, fastchess, ... so that the machine's drift
hits both.

The orchestrator runs as an installed package does, its modules' bytecode compiled once,
by an untimed run of two games before the others (into a pycache folder of the bench's own,
`PYTHONPYCACHEPREFIX`), not again at every start (as they would be where
`PYTHONDONTWRITEBYTECODE` is set).

A runner's own CPU is read from the kernel when its process has exited and not yet been
reaped (a zombie's `/proc/PID/stat` keeps its user and system time, without its children's):
everything the runner did, start-up included, and nothing its engines did.  Moves are counted
from each runner's PGN.  The table gives each run, then the medians and their ratio
(orchestrator / fastchess).  Target: CPU per move at most 2x, wall time at most 1.1x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
STOCKFISH = "/usr/games/stockfish"
OPENINGS = ["e4 e5", "d4 d5", "c4 e5", "Nf3 d5", "e4 c5", "d4 Nf6", "e4 e6", "e4 c6"]
TICK = os.sysconf("SC_CLK_TCK")


def epd(folder: Path) -> Path:
    """The openings as an EPD suite."""
    lines = []
    for line in OPENINGS:
        board = chess.Board()
        for san in line.split():
            board.push_san(san)
        lines.append(board.epd())
    path = folder / "openings.epd"
    path.write_text("\n".join(lines) + "\n")
    return path


def own_cpu(process: subprocess.Popen[bytes]) -> tuple[float, float]:
    """Wait for `process` to exit; its own CPU seconds (user + system, without its
    children's) read from its zombie, and the wall seconds it ran."""
    started = time.monotonic()
    stat = Path(f"/proc/{process.pid}/stat")
    cpu = 0.0
    while True:
        text = stat.read_text()
        fields = text[text.rindex(")") + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
        if fields[0] == "Z":
            break
        time.sleep(0.05)
    wall = time.monotonic() - started
    process.wait()
    if process.returncode:
        raise SystemExit(f"{process.args[0]} exited with {process.returncode}")
    return cpu, wall


def plies(pgn: Path) -> tuple[int, int]:
    """Games and moves (plies) in a PGN file."""
    games = moves = 0
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games += 1
            moves += len(list(game.mainline_moves()))
    return games, moves


def fastchess(path: str, folder: Path, book: Path, args: argparse.Namespace) -> dict[str, float]:
    pgn = folder / "fastchess.pgn"
    pgn.unlink(missing_ok=True)
    command = [path]
    for name in ("SF1", "SF2"):
        command += ["-engine", f"cmd={STOCKFISH}", f"name={name}"]
    command += [
        "-each", "proto=uci", "tc=inf", f"nodes={args.nodes}",
        "option.Hash=16", "option.Threads=1",
        "-openings", f"file={book}", "format=epd", "order=sequential",
        "-repeat", "-rounds", str(args.games // 2), "-games", "2",
        "-concurrency", str(args.concurrency),
        "-pgnout", f"file={pgn}",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    cpu, wall = own_cpu(process)
    games, moves = plies(pgn)
    return {"cpu": cpu, "wall": wall, "games": games, "moves": moves}


def compiled(folder: Path) -> dict[str, str]:
    """The environment of the orchestrator's runs: its bytecode kept in `folder`/pycache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


def match_config(
    place: Path, book: Path, games: int, nodes: int, concurrency: int, adjudication: str = ""
) -> Path:
    """The config of a match of Stockfish against itself in `place`: `games` games at
    `nodes`, the openings of `book` in order, no adjudication but `adjudication`'s lines."""
    engines = "\n".join(
        f'[[engine]]\nname = "{name}"\ncommand = "{STOCKFISH}"\nreuse = true\n'
        "options = { Hash = 16, Threads = 1 }\n"
        for name in ("SF1", "SF2")
    )
    config = place / "match.toml"
    config.write_text(
        "[tournament]\n"
        'name = "hot path"\nsystem = "match"\n'
        f"system_options = {{ games = {games}, shared = true }}\n"
        f'tc = "nodes={nodes}"\nconcurrency = {concurrency}\n'
        f'openings = "{book}"\nopening_order = "sequential"\n'
        'database = "match.sqlite"\npgn_dir = "pgn"\n\n'
        f"[adjudication]\nwin = false\ndraw = false\n{adjudication}\n" + engines
    )
    return config


def orchestrator(folder: Path, book: Path, args: argparse.Namespace, n: int) -> dict[str, float]:
    run = folder / f"run{n}"
    run.mkdir()
    config = match_config(run, book, args.games, args.nodes, args.concurrency)
    command = [str(ROOT / ".venv/bin/orchestrator"), "run", str(config)]
    log = (run / "run.log").open("wb")
    process = subprocess.Popen(
        command, cwd=run, stdout=log, stderr=subprocess.STDOUT, env=compiled(folder)
    )
    cpu, wall = own_cpu(process)
    log.close()
    games = moves = 0
    for pgn in sorted((run / "pgn").glob("*/*.pgn")):  # the event's file; not its rounds'
        if not pgn.name.startswith("round-"):
            counted = plies(pgn)
            games, moves = games + counted[0], moves + counted[1]
    return {"cpu": cpu, "wall": wall, "games": games, "moves": moves}


def interpreter() -> str:
    """The orchestrator's interpreter (`.venv`'s): its version and where it comes from (a
    build with profile-guided optimisation, as Debian's, spends less a move than a plain
    source build: docs/measurements.md)."""
    return subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-c", "import sys; print(sys.version, sys.base_prefix)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games per run (even)")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each runner")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--fastchess", default=os.environ.get("FASTCHESS"))
    args = parser.parse_args()
    path = args.fastchess or shutil.which("fastchess")
    if path is None or not os.access(path, os.X_OK):
        print("no fastchess: build it from Disservin/fastchess with `make`, pass --fastchess")
        return
    if not os.access(STOCKFISH, os.X_OK):
        print(f"no {STOCKFISH}: install Debian's stockfish (./tasks.sh setup)")
        return
    print(f"orchestrator on Python {interpreter()}\n")
    rows: dict[str, list[dict[str, float]]] = {"fastchess": [], "orchestrator": []}
    order = ["fastchess", "orchestrator", "orchestrator", "fastchess"] * args.rounds
    print("| run | runner | games | moves | CPU s | CPU ms/move | wall s |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        book = epd(folder)
        orchestrator(folder, book, argparse.Namespace(**{**vars(args), "games": 2}), 0)
        for n, runner in enumerate(order[: 2 * args.rounds], 1):
            if runner == "fastchess":
                figures = fastchess(path, folder, book, args)
            else:
                figures = orchestrator(folder, book, args, n)
            rows[runner].append(figures)
            print(
                f"| {n} | {runner} | {figures['games']:.0f} | {figures['moves']:.0f} "
                f"| {figures['cpu']:.2f} | {1000 * figures['cpu'] / figures['moves']:.3f} "
                f"| {figures['wall']:.1f} |",
                flush=True,
            )
    medians = {
        runner: (
            statistics.median(1000 * r["cpu"] / r["moves"] for r in runs),
            statistics.median(r["wall"] for r in runs),
        )
        for runner, runs in rows.items()
    }
    print()
    print("| runner | CPU ms/move (median) | wall s (median) |")
    print("|---|---:|---:|")
    for runner, (cpu, wall) in medians.items():
        print(f"| {runner} | {cpu:.3f} | {wall:.1f} |")
    cpu_ratio = medians["orchestrator"][0] / medians["fastchess"][0]
    wall_ratio = medians["orchestrator"][1] / medians["fastchess"][1]
    print(f"| ratio | {cpu_ratio:.2f}x (target <= 2x) | {wall_ratio:.2f}x (target <= 1.1x) |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
