"""Withdrawn players and forfeits in the pure core: every pairing system leaves a withdrawn
player out; a forfeit counts for the score but gives no colour and no encounter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.event import state_json
from orchestrator.core.event.model import Game, Player, Round, Rules, StateError, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.event.standings import standings
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.swiss import replay


def players(n: int, withdrawn: dict[str, int] | None = None) -> tuple[Player, ...]:
    withdrawn = withdrawn or {}
    names = [f"P{i}" for i in range(1, n + 1)]
    return tuple(Player(name, i, withdrawn.get(name)) for i, name in enumerate(names, 1))


@pytest.mark.parametrize("system", ["swiss", "round-robin"])
def test_a_withdrawn_player_is_never_paired_again(system: str) -> None:
    start = Tournament(players(6), rules=Rules(system=system, format="single"))
    played = simulate(start, 1, rng_seed=3).tournament
    later = Tournament(players(6, {"P2": 1}), played.rounds, start.rules)
    pairing = pair_next(later)
    names = {n for g in pairing.games for n in (g.white, g.black)}
    assert "P2" not in names and pairing.bye != "P2"
    if system == "swiss":
        assert pairing.bye is not None  # five players left: one has the BYE
        assert len(names) == 4


def test_a_forfeit_gives_points_but_no_colour_and_no_encounter() -> None:
    forfeit = Round(1, (Game("P1", "P2", "1-0", forfeit=True), Game("P3", "P4", "1-0")))
    t = Tournament(players(4, {"P2": 1}), (forfeit,))
    state = replay(t)
    assert state.score == [1.0, 0.0, 1.0, 0.0]
    assert state.wgd == [0, 0, 1, -1]  # only the played game gives colours
    assert (0, 1) not in state.last_met and (2, 3) in state.last_met
    lines = {line.name: line for line in standings(t)}
    assert lines["P1"].score == 1.0 and lines["P1"].black == 0 and lines["P2"].black == 0


@given(st.integers(4, 12), st.data())
@settings(max_examples=40, deadline=None)
def test_swiss_with_withdrawals_keeps_its_rules(n: int, data: st.DataObject) -> None:
    """Random withdrawals along a simulated event: no withdrawn player is ever paired or
    given the BYE after its round, and every round pairs all the others."""
    t = Tournament(players(n), rules=Rules(format=data.draw(st.sampled_from(["single", "double"]))))
    for number in range(1, n // 2 + 2):
        active = [p for p in t.players if p.plays_in(number)]
        if len(active) <= 2:
            break
        if data.draw(st.booleans()):
            leaving = data.draw(st.sampled_from(active)).name
            t = Tournament(
                tuple(
                    Player(p.name, p.seed, number - 1) if p.name == leaving else p
                    for p in t.players
                ),
                t.rounds,
                t.rules,
            )
            active = [p for p in active if p.name != leaving]
        pairing = pair_next(t)
        paired = [n for g in pairing.games for n in (g.white, g.black)]
        expected = {p.name for p in active} - {pairing.bye}
        assert set(paired) == expected and pairing.bye in {None, *{p.name for p in active}}
        t = Tournament(
            t.players, (*t.rounds, pairing.as_round(("1-0",) * len(pairing.games))), t.rules
        )
        state_json.validate(t)


def test_state_json_validation_of_withdrawals_and_forfeits() -> None:
    base = {
        "players": [
            {"name": "A", "seed": 1, "withdrawn_after": 1},
            {"name": "B", "seed": 2},
            {"name": "C", "seed": 3},
        ],
        "rounds": [
            {"games": [{"white": "A", "black": "B", "result": "0-1", "forfeit": True}], "bye": "C"},
            {"games": [{"white": "B", "black": "C", "result": "1-0"}], "bye": None},
        ],
    }
    t = state_json.decode(base)
    assert t.players[0].withdrawn_after == 1 and t.rounds[0].games[0].forfeit
    assert state_json.decode(json.loads(json.dumps(state_json.encode(t)))) == t
    bad = json.loads(json.dumps(base))
    bad["rounds"][1]["games"][0]["black"] = "A"
    with pytest.raises(StateError, match="'A' withdrew before this round"):
        state_json.decode(bad)
    bad = json.loads(json.dumps(base))
    bad["rounds"][0]["games"][0]["result"] = "1/2-1/2"
    with pytest.raises(StateError, match="a forfeit is won by one side"):
        state_json.decode(bad)
    bad = json.loads(json.dumps(base))
    bad["players"][0]["withdrawn_after"] = "soon"
    with pytest.raises(StateError, match="withdrawn_after: expected a round number, not 'soon'"):
        state_json.decode(bad)


def test_pair_and_simulate_honour_withdrawals() -> None:
    state = {
        "format": "double",
        "players": [{"name": f"P{i}", "seed": i} for i in range(1, 7)],
        "rounds": [],
    }
    state["players"][0]["withdrawn_after"] = 0
    run = subprocess.run(
        [sys.executable, "-m", "orchestrator", "pair", "-"],
        input=json.dumps(state),
        capture_output=True,
        text=True,
        check=True,
    )
    pairing = json.loads(run.stdout)
    assert pairing["bye"] is not None and all("P1" not in g.values() for g in pairing["games"])
    run = subprocess.run(
        [sys.executable, "-m", "orchestrator", "simulate", "--from", "-", "--rounds", "3"],
        input=json.dumps(state),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    rounds = json.loads(run.stdout)["rounds"]
    assert len(rounds) == 3
    assert all("P1" not in (g["white"], g["black"]) for r in rounds for g in r["games"])
    assert all(r["bye"] != "P1" for r in rounds)


def test_a_field_the_colour_condition_cannot_pair_waives_it() -> None:
    """P1-P4 each had White twice, against P5-P8, who then withdraw: no two of P1-P4 may
    meet under the colour condition (a white-games difference of 2 + 2), even with no
    history at all.  The round waives the condition rather than stopping the event, and
    keeps the whole history (no two of them have met)."""
    first = Round(1, tuple(Game(f"P{i}", f"P{i + 4}", "1/2-1/2") for i in range(1, 5)))
    second = Round(
        2, tuple(Game(f"P{w}", f"P{b}", "1/2-1/2") for w, b in ((1, 6), (2, 5), (3, 8), (4, 7)))
    )
    gone = {f"P{i}": 2 for i in range(5, 9)}  # withdrawn after round 2
    t = Tournament(players(8, gone), (first, second), Rules(format="single"))
    assert replay(t).wgd[:4] == [2, 2, 2, 2]
    pairing = pair_next(t)
    assert sorted(n for g in pairing.games for n in (g.white, g.black)) == ["P1", "P2", "P3", "P4"]
    assert pairing.dropped_rounds == 0 and pairing.bye is None
    assert pair_next(t) == pairing  # the same every time
