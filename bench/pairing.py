"""Time to pair one Swiss round, as `orchestrator pair` does it (replay of the stored rounds
included), for 50, 200 and 1000 players at early, middle and late rounds.

    .venv/bin/python bench/pairing.py [--repeat N] [--bakert-most N]

A second table times one round of each other system (round 11, after ten rounds of a
simulated TCEC Swiss) at the same sizes.  bakert's weighted Swiss is a maximum-weight
matching over all n(n-1)/2 pairs (networkx's blossom algorithm, cubic in n): past
`--bakert-most` players (default 200) it is not timed.  The team Swiss puts the players in
teams of five boards and times round 11 after ten team-Swiss rounds.

Targets: a 50-player round under 5 ms, a 1000-player round under 100 ms.
The events are simulated with seeded random results (60% draws, single rounds: the colour
condition makes single rounds the harder case); "exhausted" is a round of a 50-player event
played past the point where encounter-history rounds must be removed.
"""

from __future__ import annotations

import argparse
import statistics
import time

from msgspec.structs import replace

from orchestrator.core.event.model import Player, Rules, Team, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.pairing import pair_next

BOARDS = 5  # the team Swiss's boards per team: 50 players are 10 teams
CASES = [
    (50, "early", 2),
    (50, "middle", 11),
    (50, "late", 25),
    (50, "exhausted", 52),
    (200, "early", 2),
    (200, "middle", 11),
    (200, "late", 25),
    (1000, "early", 2),
    (1000, "middle", 11),
    (1000, "late", 25),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per case")
    parser.add_argument("--format", default="single", choices=["single", "double"])
    parser.add_argument("--bakert-most", type=int, default=200, help="largest bakert field")
    args = parser.parse_args()
    events: dict[int, Tournament] = {}
    print(f"| players | stage | round | dropped | median ms | max ms |  ({args.format} rounds)")
    print("|---:|---|---:|---:|---:|---:|")
    for players, stage, number in CASES:
        if players not in events:
            start = Tournament(
                tuple(Player(f"E{i:04d}", i) for i in range(1, players + 1)),
                rules=Rules(format=args.format),
            )
            most = max(n for p, _, n in CASES if p == players)
            events[players] = simulate(start, most - 1, rng_seed=1).tournament
        state = replace(events[players], rounds=events[players].rounds[: number - 1])
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            pairing = pair_next(state)
            times.append((time.perf_counter() - t0) * 1000)
        print(
            f"| {players} | {stage} | {number} | {pairing.dropped_rounds} "
            f"| {statistics.median(times):.2f} | {max(times):.2f} |"
        )
    other_systems(args)


def other_systems(args: argparse.Namespace) -> None:
    print()
    print("| system | players | round | median ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for players in (50, 200, 1000):
        start = Tournament(tuple(Player(f"E{i:04d}", i) for i in range(1, players + 1)))
        played = simulate(start, 10, rng_seed=1).tournament
        for system in ("olafsson", "koth", "factored", "quartile", "random", "bakert"):
            if system == "bakert" and players > args.bakert_most:
                print(f"| {system} | {players} | 11 | not timed | (over --bakert-most) |")
                continue
            state = replace(played, rules=Rules(system=system, format="single"))
            times = []
            for _ in range(args.repeat if players < 1000 else 3):
                t0 = time.perf_counter()
                pair_next(state)
                times.append((time.perf_counter() - t0) * 1000)
            print(
                f"| {system} | {players} | 11 | {statistics.median(times):.2f} | {max(times):.2f} |"
            )
        team_swiss(args, players)


def team_swiss(args: argparse.Namespace, players: int) -> None:
    """The team Swiss: the players in teams of BOARDS, round 11 after ten team-Swiss rounds
    (the reading of the stored board games into matches included)."""
    names = [f"E{i:04d}" for i in range(1, players + 1)]
    teams = tuple(
        Team(f"T{i // BOARDS + 1:03d}", tuple(names[i : i + BOARDS]))
        for i in range(0, players, BOARDS)
    )
    start = Tournament(
        tuple(Player(name, i) for i, name in enumerate(names, 1)),
        rules=Rules(system="team-swiss", format="single"),
        teams=teams,
    )
    state = simulate(start, 10, rng_seed=1).tournament
    times = []
    for _ in range(args.repeat if players < 1000 else 3):
        t0 = time.perf_counter()
        pair_next(state)
        times.append((time.perf_counter() - t0) * 1000)
    label = f"team-swiss ({len(teams)} teams of {BOARDS})"
    print(f"| {label} | {players} | 11 | {statistics.median(times):.2f} | {max(times):.2f} |")


if __name__ == "__main__":
    main()
