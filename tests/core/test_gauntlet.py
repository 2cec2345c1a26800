"""Gauntlets and head-to-head matches: who meets whom, how often, and in which rounds."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.event.model import Options, Player, Rules, StateError, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.pairing import lookup, pair_next


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 24), st.data(), st.integers(1, 2), st.sampled_from(["single", "double"]))
def test_each_gauntlet_engine_meets_every_other_engine_once_a_cycle(
    players: int, data: st.DataObject, cycles: int, fmt: str
) -> None:
    gauntlets = data.draw(st.integers(1, players - 1))
    rules = Rules(
        system="gauntlet",
        system_options=Options({"gauntlets": gauntlets}),
        cycles=cycles,
        format=fmt,  # type: ignore[arg-type]
    )
    start = Tournament(tuple(Player(f"P{i:02d}", i) for i in range(1, players + 1)), rules=rules)
    planned = rules.planned_rounds(players)
    t = simulate(start, planned).tournament
    assert len(t.rounds) == planned
    met: Counter[frozenset[str]] = Counter()
    for rnd in t.rounds:
        assert rnd.games, "an empty round"
        pairs = {frozenset((g.white, g.black)) for g in rnd.games}
        names = [name for pair in pairs for name in pair]
        assert len(names) == len(set(names))  # no engine in two pairs of a round
        met.update(frozenset((g.white, g.black)) for g in rnd.games)
    top = {f"P{i:02d}" for i in range(1, gauntlets + 1)}
    expected = {
        frozenset((a, b))
        for a in top
        for b in (f"P{i:02d}" for i in range(1, players + 1))
        if a != b
    }
    assert set(met) == expected  # the others never meet each other
    per_pair = cycles * (2 if fmt == "double" else 1)
    assert set(met.values()) == {per_pair}
    assert sum(met.values()) == start.games_planned()


def test_a_match_alternates_who_has_white_first_and_stops_at_its_games() -> None:
    rules = Rules(system="match", system_options=Options({"games": 6}))
    start = Tournament((Player("A", 1), Player("B", 2)), rules=rules)
    t = simulate(start, 3).tournament
    assert [[(g.white, g.black) for g in r.games] for r in t.rounds] == [
        [("A", "B"), ("B", "A")],
        [("B", "A"), ("A", "B")],
        [("A", "B"), ("B", "A")],
    ]
    assert lookup("match").most(2, 1, rules.system_options) == 3
    with pytest.raises(StateError, match="all 6 games of the match are played"):
        pair_next(t)
