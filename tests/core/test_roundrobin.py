"""Round robin by the Berger tables."""

from __future__ import annotations

from collections import Counter

import pytest

from orchestrator.core.event.model import Player, Rules, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.roundrobin import berger_round, total_rounds

RR = Rules(system="round-robin", format="single")

# FIDE's published Berger table for 8 players (white first)
FIDE_8 = [
    "1-8 2-7 3-6 4-5",
    "8-5 6-4 7-3 1-2",
    "2-8 3-1 4-7 5-6",
    "8-6 7-5 1-4 2-3",
    "3-8 4-2 5-1 6-7",
    "8-7 1-6 2-5 3-4",
    "4-8 5-3 6-2 7-1",
]


def test_berger_table_for_eight_is_fides() -> None:
    for r, row in enumerate(FIDE_8, start=1):
        expected = [tuple(int(x) for x in g.split("-")) for g in row.split()]
        assert berger_round(8, r) == expected


@pytest.mark.parametrize("n", range(2, 15))
@pytest.mark.parametrize("fmt", ["single", "double"])
def test_every_pair_meets_once_per_cycle(n: int, fmt: str) -> None:
    players = tuple(Player(f"P{i}", i) for i in range(1, n + 1))
    t = Tournament(players, rules=Rules(format=fmt, system="round-robin", cycles=2))  # type: ignore[arg-type]
    sim = simulate(t, total_rounds(n, 2))
    per_cycle = total_rounds(n, 1)
    for cycle in range(2):
        rounds = sim.tournament.rounds[cycle * per_cycle : (cycle + 1) * per_cycle]
        met = Counter(frozenset((g.white, g.black)) for r in rounds for g in r.games)
        assert len(met) == n * (n - 1) // 2
        assert set(met.values()) == {1 if fmt == "single" else 2}
        byes = [r.bye for r in rounds if r.bye]
        assert sorted(byes) == (sorted(p.name for p in players) if n % 2 else [])
    # the second cycle reverses every colour of the first
    first = sim.tournament.rounds[:per_cycle]
    second = sim.tournament.rounds[per_cycle:]
    for a, b in zip(first, second, strict=True):
        assert [(g.black, g.white) for g in a.games] == [(g.white, g.black) for g in b.games]


@pytest.mark.parametrize("n", [4, 5, 10])
def test_colours_balanced_in_a_cycle(n: int) -> None:
    players = tuple(Player(f"P{i}", i) for i in range(1, n + 1))
    sim = simulate(Tournament(players, rules=RR), total_rounds(n, 1))
    whites = Counter(g.white for r in sim.tournament.rounds for g in r.games)
    blacks = Counter(g.black for r in sim.tournament.rounds for g in r.games)
    for p in players:
        assert abs(whites[p.name] - blacks[p.name]) <= 1


def test_past_the_end_is_an_error() -> None:
    players = tuple(Player(f"P{i}", i) for i in range(1, 5))
    sim = simulate(Tournament(players, rules=RR), 3)
    with pytest.raises(ValueError, match="all 3 rounds"):
        pair_next(sim.tournament)
