"""Time to pair one Swiss round, as `orchestrator pair` does it (replay of the stored rounds
included), for 50, 200 and 1000 players at early, middle and late rounds.

    .venv/bin/python bench/pairing.py [--repeat N] [--bakert-most N]

A second table times one round of each other system (round 11, after ten rounds of a
simulated TCEC Swiss) at the same sizes.  The team Swiss puts the players in teams of five
boards and times round 11 after ten team-Swiss rounds; the gauntlet, the knockout (4 games a
match in every stage) and the 100-game match time round 11 after ten rounds of their own.

A third table times the weighted systems (Ólafsson, bakert: maximum-weight matchings,
`core/pairing/weighted.py`) at rounds 2, 11 and 25 of the same events, and checks their
total weight against networkx's blossom on the same graphs: bakert's whole round, and every
score group Ólafsson matches, up to `--networkx-most` vertices (default 200; networkx takes
about 8 s at 200, a minute at 400).  The "bakert's own" rows pair bakert rounds after bakert
rounds, where players soon meet someone twice and the field's twin classes break up.

Targets: a Swiss round of 50 players under 5 ms, of 1000 players under 100 ms; a weighted
round of 1000 players under 2 s.
The events are simulated with seeded random results (60% draws, single rounds: the colour
condition makes single rounds the harder case); "exhausted" is a round of a 50-player event
played past the point where encounter-history rounds must be removed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterable

import networkx as nx
from msgspec.structs import replace

from orchestrator.core.event.model import Options, Player, Rules, Team, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.pairing import bakert, olafsson, weighted
from orchestrator.core.pairing.bakert import BakertOptions
from orchestrator.core.pairing.ranked import seeded
from orchestrator.core.pairing.round import pair_next

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
    parser.add_argument(
        "--networkx-most", type=int, default=200, help="largest graph checked against networkx"
    )
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
    weighted_systems(args)


def other_systems(args: argparse.Namespace) -> None:
    print()
    print("| system | players | round | median ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for players in (50, 200, 1000):
        start = Tournament(tuple(Player(f"E{i:04d}", i) for i in range(1, players + 1)))
        played = simulate(start, 10, rng_seed=1).tournament
        for system in ("olafsson", "koth", "factored", "quartile", "random", "bakert"):
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
        own_history(args, players, "gauntlet (4 gauntlets)", {"gauntlets": 4})
        own_history(args, players, "knockout (4 games a stage)", {"stage_games": None})
    own_history(args, 2, "match (100 games)", {"games": 100})


def own_history(
    args: argparse.Namespace, players: int, label: str, options: dict[str, object]
) -> None:
    """A system whose rounds are its own (knockout, gauntlet, match): round 11 after ten
    rounds of it (for the knockout, the replay of its bracket included)."""
    system = label.split(maxsplit=1)[0]
    if system == "knockout":
        stages = max(1, (players - 1).bit_length())
        options = {"stage_games": [4] * stages}
    rules = Rules(system=system, system_options=Options(options), format="single")
    start = Tournament(tuple(Player(f"E{i:04d}", i) for i in range(1, players + 1)), rules=rules)
    state = simulate(start, 10, rng_seed=1).tournament
    times = []
    for _ in range(args.repeat if players < 1000 else 3):
        t0 = time.perf_counter()
        pair_next(state)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"| {label} | {players} | 11 | {statistics.median(times):.2f} | {max(times):.2f} |")


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


class Checked:
    """Every weighted matching made while pairing, checked against networkx's total weight
    where the graph has at most `most` vertices."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.equal = self.differ = self.skipped = 0
        self.original = weighted.max_weight_matching

    def check(
        self, size: int, edges: Iterable[tuple[int, int, int]], *, max_cardinality: bool = False
    ) -> list[tuple[int, int]]:
        listed = list(edges)
        pairs = self.original(size, listed, max_cardinality=max_cardinality)
        if size > self.most:
            self.skipped += 1
            return pairs
        self.tally(size, listed, pairs, max_cardinality)
        return pairs

    def tally(
        self, size: int, edges: list[tuple[int, int, int]], pairs: list[tuple[int, int]], most: bool
    ) -> None:
        graph = nx.Graph()
        graph.add_nodes_from(range(size))
        graph.add_weighted_edges_from(edges)
        theirs = nx.max_weight_matching(graph, maxcardinality=most)
        weight = {(min(i, j), max(i, j)): w for i, j, w in edges}
        ours = (len(pairs), sum(weight[p] for p in pairs))
        best = (len(theirs), sum(weight[min(a, b), max(a, b)] for a, b in theirs))
        if ours == best:
            self.equal += 1
        else:
            self.differ += 1

    def shown(self) -> str:
        if not self.equal + self.differ:
            return "not run (over --networkx-most)"
        text = f"{self.equal} of {self.equal + self.differ} equal"
        return text + (f", {self.skipped} larger not run" if self.skipped else "")


def weighted_systems(args: argparse.Namespace) -> None:
    print()
    print("| system | history | players | round | ms | total weight against networkx |")
    print("|---|---|---:|---:|---:|---|")
    for players in (50, 200, 1000):
        start = Tournament(tuple(Player(f"E{i:04d}", i) for i in range(1, players + 1)))
        swiss = simulate(start, 24, rng_seed=1).tournament
        own = simulate(
            replace(start, rules=Rules(system="bakert", format="single")), 10, rng_seed=1
        )
        for system, history, played in (
            ("olafsson", "TCEC Swiss", swiss),
            ("bakert", "TCEC Swiss", swiss),
            ("bakert", "bakert's own", own.tournament),
        ):
            for number in (2, 11, 25):
                if number > len(played.rounds) + 1:
                    continue
                state = replace(
                    played,
                    rounds=played.rounds[: number - 1],
                    rules=Rules(system=system, format="single"),
                )
                t0 = time.perf_counter()
                pair_next(state)
                ms = (time.perf_counter() - t0) * 1000
                checked = check_weights(system, state, args.networkx_most)
                print(f"| {system} | {history} | {players} | {number} | {ms:.0f} | {checked} |")


def check_weights(system: str, state: Tournament, most: int) -> str:
    """Pair `state` again with every matching checked against networkx."""
    checked = Checked(most)
    if system == "olafsson":
        olafsson.max_weight_matching = checked.check
        try:
            pair_next(state)
        finally:
            olafsson.max_weight_matching = checked.original
        return checked.shown()
    field = bakert.entries(state, BakertOptions().points)
    if len(field) > most:
        return checked.shown()
    listed = bakert.weights(field)
    ints = weighted.exact([w for _, _, w in listed])
    edges = [(i, j, w) for (i, j, _), w in zip(listed, ints, strict=True)]
    chosen = bakert.best_matching(field, seeded(1, len(state.rounds) + 1))
    checked.tally(len(field), edges, chosen, True)
    return checked.shown()


if __name__ == "__main__":
    main()
