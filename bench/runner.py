"""The game runner's own cost, and its clock keeping under load.

    .venv/bin/python bench/runner.py overhead [--games 6]
    .venv/bin/python bench/runner.py timeloss [--games 40] [--concurrency 2] [--tc 10+0.1]

`overhead`: Stockfish against itself at nodes=1 (near-instant moves), played by the runner and
by a bare python-chess `engine.play` loop over the same engines and positions.  The runner's
cost per move is the difference in this process's CPU time (the engines' CPU is their own).
Target: at most 0.3 ms of the runner's CPU per move.

`timeloss`: Stockfish against itself at 10+0.1, two games at once on this 2-core machine;
every loss on time is counted.  Target: none in 40 games.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time

import chess
import chess.engine

from orchestrator.config.model import EngineConfig
from orchestrator.core.adjudication import Adjudication
from orchestrator.core.openings import Opening
from orchestrator.core.timecontrol import TimeControl
from orchestrator.engines.adapter import Engine
from orchestrator.runner.game import GameSpec, play_game

STOCKFISH = "/usr/games/stockfish"
OPENINGS = ["e4 e5", "d4 d5", "c4 e5", "Nf3 d5", "e4 c5", "d4 Nf6", "e4 e6", "e4 c6"]


def stockfish(name: str) -> EngineConfig:
    return EngineConfig(name=name, command=(STOCKFISH,), options={"Hash": 16, "Threads": 1})


async def bare_game(opening: Opening, plies: int) -> int:
    """python-chess alone, engines started and quit as the runner does: `plies` moves."""
    white, black = await Engine.start(stockfish("A")), await Engine.start(stockfish("B"))
    try:
        board = opening.board()
        for uci in opening.moves:
            board.push_uci(uci)
        limit = chess.engine.Limit(nodes=1)
        for _ in range(plies):
            engine = white if board.turn == chess.WHITE else black
            result = await engine.protocol.play(board, limit, info=chess.engine.INFO_SCORE)
            assert result.move is not None
            board.push(result.move)
    finally:
        await white.close()
        await black.close()
    return plies


async def overhead(games: int) -> None:
    """Interleaved: a runner game, then a bare loop over the same opening and move count."""
    rules = Adjudication(win=None, draw=None, max_moves=60)
    totals = {"bare python-chess": [0, 0.0, 0.0], "orchestrator runner": [0, 0.0, 0.0]}
    for i in range(games):
        opening = Opening.from_san(OPENINGS[i % len(OPENINGS)])
        spec = GameSpec(
            stockfish("A"), stockfish("B"), TimeControl.parse("nodes=1"), opening, rules
        )
        cpu, wall = time.process_time(), time.perf_counter()
        record = await play_game(spec)
        moves = record.plies - len(opening.moves)
        runner = totals["orchestrator runner"]
        runner[0] += moves
        runner[1] += time.process_time() - cpu
        runner[2] += time.perf_counter() - wall
        cpu, wall = time.process_time(), time.perf_counter()
        await bare_game(opening, moves)
        bare = totals["bare python-chess"]
        bare[0] += moves
        bare[1] += time.process_time() - cpu
        bare[2] += time.perf_counter() - wall
    print("| loop | games | moves | CPU ms/move (this process) | wall ms/move |")
    print("|---|---:|---:|---:|---:|")
    per_move = {}
    for kind, (moves, cpu_s, wall_s) in totals.items():
        per_move[kind] = (1000 * cpu_s / moves, 1000 * wall_s / moves)
        print(f"| {kind} | {games} | {moves} | {per_move[kind][0]:.3f} | {per_move[kind][1]:.3f} |")
    (bc, bw), (rc, rw) = per_move["bare python-chess"], per_move["orchestrator runner"]
    print(f"| runner's own cost | | | {rc - bc:.3f} | {rw - bw:.3f} |")


async def timeloss(games: int, concurrency: int, tc: str) -> None:
    rules = Adjudication()  # TCEC adjudication, as events play
    sem = asyncio.Semaphore(concurrency)
    records = []

    async def one(i: int) -> None:
        async with sem:
            opening = Opening.from_san(OPENINGS[i % len(OPENINGS)])
            white, black = (stockfish("SF-1"), stockfish("SF-2"))[:: 1 if i % 2 == 0 else -1]
            spec = GameSpec(white, black, TimeControl.parse(tc), opening, rules, timemargin_ms=100)
            records.append(await play_game(spec))

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(games)))
    elapsed = time.perf_counter() - started
    forfeits = [r for r in records if r.termination == "time forfeit"]
    faults = [r for r in records if r.fault is not None]
    clocks = [m.clock_ms for r in records for m in r.moves if m.clock_ms is not None]
    print(
        "| games | at once | tc | losses on time | faults | min clock left ms "
        "| median plies | minutes |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    print(
        f"| {len(records)} | {concurrency} | {tc} | {len(forfeits)} | {len(faults)} "
        f"| {min(clocks)} | {statistics.median(r.plies for r in records):.0f} "
        f"| {elapsed / 60:.1f} |"
    )
    for r in forfeits + faults:
        print(f"  {r.white}-{r.black}: {r.reason}")


def main() -> None:
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["overhead", "timeloss"])
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--tc", default="10+0.1")
    args = parser.parse_args()
    if args.part == "overhead":
        asyncio.run(overhead(args.games or 16))
    else:
        asyncio.run(timeloss(args.games or 40, args.concurrency, args.tc))


if __name__ == "__main__":
    main()
