"""The daemon's own CPU per game as an event grows: what each game costs besides its moves.

    .venv/bin/python bench/pergame.py [--sizes 200,800,1600] [--nodes 1000]

A match of Stockfish against itself (Debian's /usr/games/stockfish, Hash 16, one thread,
engines reused) whose games end after one move each (`max_moves = 1`), so that a game is
almost all edges: its start (the engines' `ucinewgame`), its end (the result, the PGN, the
engine log, the standings), and the pairing of its round of two games.  `orchestrator run`
plays each size once; its own CPU is read from its zombie as `bench/hotpath.py` reads it
(everything it did, start-up included, nothing its engines did).  The table gives each
size's CPU, the CPU a game beyond the start-up (the CPU of a run of two games), and its
wall time.  A daemon whose CPU a game grows with the event reads more of it at every game
than the game needs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from hotpath import STOCKFISH, compiled, epd, match_config, own_cpu

ROOT = Path(__file__).resolve().parent.parent


def run(folder: Path, book: Path, games: int, nodes: int, name: str) -> tuple[float, float]:
    """CPU and wall seconds of `orchestrator run` on a match of `games` one-move games, in
    a folder of its own (`name`)."""
    place = folder / name
    place.mkdir()
    config = match_config(place, book, games, nodes, 1, "max_moves = 1\n")
    log = (place / "run.log").open("wb")
    process = subprocess.Popen(
        [str(ROOT / ".venv/bin/orchestrator"), "run", str(config)],
        cwd=place,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=compiled(folder),
    )
    try:
        return own_cpu(process)
    finally:
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,800,1600", help="games of each run (even)")
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    if not os.access(STOCKFISH, os.X_OK):
        print(f"no {STOCKFISH}: install Debian's stockfish (./tasks.sh setup)")
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        book = epd(folder)
        run(folder, book, 2, args.nodes, "compile")  # the bytecode compiled, untimed
        base, _ = run(folder, book, 2, args.nodes, "start")  # start-up and two games
        print(f"start-up and two games: {base:.2f} s of CPU")
        print()
        print("| games | CPU s | CPU ms/game (beyond the start-up) | wall s |")
        print("|---:|---:|---:|---:|")
        for games in sizes:
            cpu, wall = run(folder, book, games, args.nodes, f"games-{games}")
            per_game = 1000 * (cpu - base) / (games - 2)
            print(f"| {games} | {cpu:.2f} | {per_game:.2f} | {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
