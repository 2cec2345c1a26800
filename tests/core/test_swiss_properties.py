"""Properties of the Swiss pairing over random events (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from orchestrator.core.event.model import Player, Rules, Tournament
from orchestrator.core.event.simulation import Simulation, simulate
from orchestrator.core.event.state_json import validate
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.swiss import replay
from tests.support.reference_swiss import reference_pair


@st.composite
def events(draw: st.DrawFn, min_players: int = 2, max_players: int = 60) -> Simulation:
    n = draw(st.integers(min_players, max_players), label="players")
    fmt = draw(st.sampled_from(["single", "double"]))
    schedule = draw(st.sampled_from(["legs", "pairs"]))
    rounds = draw(st.integers(1, n + 2), label="rounds")  # up to more rounds than players
    start = Tournament(
        tuple(Player(f"P{i}", i) for i in range(1, n + 1)),
        rules=Rules(format=fmt, schedule=schedule),
    )
    return simulate(
        start,
        rounds,
        rng_seed=draw(st.integers(0, 2**32)),
        draw_rate=draw(st.sampled_from([0.0, 0.3, 0.6, 1.0])),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events())
def test_swiss_invariants(sim: Simulation) -> None:
    t = sim.tournament
    validate(t)  # each non-BYE player in exactly one pair per round, results, BYEs
    names = [p.name for p in t.players]
    wgd = dict.fromkeys(names, 0)
    byes = dict.fromkeys(names, 0)
    history: list[set[frozenset[str]]] = []
    previous_dropped = 0
    for rnd, dropped in zip(t.rounds, sim.dropped, strict=True):
        assert dropped >= previous_dropped  # removals are permanent
        previous_dropped = dropped
        kept = set().union(*history[dropped:])
        pairs = {frozenset((g.white, g.black)) for g in rnd.games}
        assert not pairs & kept, "rematch inside the encounter history"
        if rnd.bye is not None:
            assert byes[rnd.bye] == min(byes.values()), "second BYE while someone has none"
            byes[rnd.bye] += 1
        for g in rnd.games:
            wgd[g.white] += 1
            wgd[g.black] -= 1
        if t.rules.format == "single":
            assert max(abs(v) for v in wgd.values()) <= 2
        else:
            assert set(wgd.values()) == {0}
        history.append(pairs)


@settings(max_examples=40, deadline=None)
@given(events(max_players=40))
def test_same_input_same_output_and_resume(sim: Simulation) -> None:
    """Pairing from stored results repeats exactly what was paired, removals included."""
    t = sim.tournament
    for played in range(len(t.rounds)):
        prefix = replace(t, rounds=t.rounds[:played])
        again = pair_next(prefix)
        assert again == pair_next(prefix)
        assert [(g.white, g.black) for g in again.games] == [
            (g.white, g.black) for g in t.rounds[played].games
        ]
        assert again.dropped_rounds == sim.dropped[played]
        assert replay(replace(t, rounds=t.rounds[: played + 1])).dropped == sim.dropped[played]


@settings(max_examples=40, deadline=None)
@given(events(max_players=11))
def test_matches_literal_reference(sim: Simulation) -> None:
    """Every round equals the rule text read literally (networkx blossom per candidate)."""
    t = sim.tournament
    for played in range(len(t.rounds)):
        prefix = replace(t, rounds=t.rounds[:played])
        assert pair_next(prefix) == reference_pair(prefix)
