"""Gauntlets and head-to-head matches: who meets whom, how often, and in which rounds."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.event.model import (
    Game,
    Options,
    Player,
    Result,
    Rules,
    StateError,
    Tournament,
)
from orchestrator.core.event.simulation import simulate
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.round import pair_next


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
    assert lookup("match").most(2, 1, rules.system_options) is None  # a tie goes on
    assert lookup("match").ends_itself


@pytest.mark.parametrize(
    ("options", "colours"),
    [
        ({"reverse": True}, [("B", "A"), ("A", "B"), ("A", "B"), ("B", "A")]),
        ({"swap": False}, [("A", "B")] * 4),
        ({"swap": False, "reverse": True}, [("B", "A")] * 4),
    ],
)
def test_a_match_s_colours_follow_swap_and_reverse(
    options: dict[str, Any], colours: list[tuple[str, str]]
) -> None:
    """fastchess's `-noswap` (the first engine White in every game) and cutechess's and
    fastchess's `-reverse` (the second engine White first)."""
    rules = Rules(system="match", system_options=Options({"games": 4, **options}))
    start = Tournament((Player("A", 1), Player("B", 2)), rules=rules)
    t = simulate(start, 2).tournament
    assert [(g.white, g.black) for r in t.rounds for g in r.games] == colours


@pytest.mark.parametrize("fmt", ["single", "double"])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_gauntlet_s_colours_follow_swap_and_reverse(fmt: str, reverse: bool) -> None:
    """With `swap = false` the gauntlet engines have White in every game (of two gauntlet
    engines, the higher seed), in both legs and every cycle; `reverse` turns every game's
    colours round.  With `swap` (the default), each engine meets each opponent with both
    colours equally often over two cycles."""
    players = tuple(Player(f"P{i}", i) for i in range(1, 6))
    gauntlet = {"P1", "P2"}

    def played(swap: bool) -> list[Game]:
        options = Options({"gauntlets": 2, "swap": swap, "reverse": reverse})
        rules = Rules(system="gauntlet", system_options=options, cycles=2, format=fmt)  # type: ignore[arg-type]
        start = Tournament(players, rules=rules)
        t = simulate(start, rules.planned_rounds(len(players))).tournament
        return [g for r in t.rounds for g in r.games]

    games = played(swap=False)
    assert games and len(games) == (2 if fmt == "double" else 1) * 2 * 7
    for g in games:
        lead = min((g.white, g.black), key=lambda n: int(n[1:]))
        assert lead in gauntlet
        assert (g.black if reverse else g.white) == lead, g
    colours = Counter((g.white, g.black) for g in played(swap=True))
    assert all(colours[(w, b)] == colours[(b, w)] for w, b in colours)


def play(options: dict[str, Any], results: list[Result]) -> tuple[Tournament, list[Game]]:
    """A match of A (seed 1) and B fed `results` game by game; the games it asked for."""
    rules = Rules(system="match", system_options=Options(options))
    t = Tournament((Player("A", 1), Player("B", 2)), rules=rules)
    asked: list[Game] = []
    pending = list(results)
    while not (pairing := pair_next(t)).finished:
        assert len(pending) >= len(pairing.games), "the match asked for more games"
        asked += pairing.games
        played = [pending.pop(0) for _ in pairing.games]
        t = Tournament(t.players, (*t.rounds, pairing.as_round(tuple(played))), rules)
    assert not pending, "the match ended before its games"
    return t, asked


def test_a_tied_match_goes_to_its_tiebreak_matches_the_last_repeating() -> None:
    """TCEC's Superfinal: a rapid match, then blitz matches until one is won; each scored
    on its own, at its own time control, a game pair at a time."""
    options = {
        "games": 4,
        "tiebreaks": [{"games": 4, "tc": "1500+10"}, {"games": 2, "tc": "300+2"}],
    }
    draw: Result = "1/2-1/2"
    white_wins: Result = "1-0"
    black_wins: Result = "0-1"
    results = [draw] * 4  # regulation (pairs 1-2): 2-2
    results += [white_wins, white_wins, draw, draw]  # rapid (pairs 3-4): each wins once
    results += [draw, draw]  # blitz 1 (pair 5): 1-1
    results += [black_wins, draw]  # blitz 2 (pair 6, B White first): A 1.5 - 0.5
    t, asked = play(options, results)
    assert [(g.stage, g.number, g.tc) for g in asked] == [(None, None, None)] * 4 + [
        (2, 1, "1500+10"), (2, 2, "1500+10"), (2, 3, "1500+10"), (2, 4, "1500+10"),
        (3, 1, "300+2"), (3, 2, "300+2"),
        (4, 1, "300+2"), (4, 2, "300+2"),
    ]  # fmt: skip
    final = pair_next(t)
    assert final.finished and final.places == (("1", "A"), ("2", "B"))
    # every pair: one opening, colours reversed, the first White alternating
    assert [(g.white, g.black) for g in asked[::2]] == [
        ("A", "B"), ("B", "A"), ("A", "B"), ("B", "A"), ("A", "B"), ("B", "A")
    ]  # fmt: skip


def test_a_tie_without_tiebreaks_goes_on_in_game_pairs_at_the_event_s_time_control() -> None:
    results: list[Result] = ["1/2-1/2"] * 4 + ["0-1", "1/2-1/2"]
    t, asked = play({"games": 2}, results)
    assert [(g.stage, g.tc) for g in asked[2:]] == [(2, None)] * 2 + [(3, None)] * 2
    assert pair_next(t).places == (("1", "B"), ("2", "A"))  # B won the second pair as Black


def test_a_shared_match_ends_tied_when_the_config_asks_for_it() -> None:
    t, _ = play({"games": 2, "shared": True}, ["1-0", "1-0"])
    assert pair_next(t).places == (("1-2", "A"), ("1-2", "B"))
    with pytest.raises(StateError, match="shared: a shared result breaks no tie"):
        Rules(
            system="match",
            system_options=Options({"games": 2, "shared": True, "tiebreaks": [{"games": 2}]}),
        )


def test_a_match_under_sprt_ends_at_its_verdict_or_its_games() -> None:
    """A wins every game pair 2-0: the LLR of elo0 = 0 against elo1 = 5 (normalized, over
    the pentanomial counts) rises with each pair until it crosses its upper bound; the
    match then ends, A first, and the verdict (H1) is reported.  Without a verdict the
    match ends at `games`, its places by points."""
    import msgspec

    from orchestrator.core.event.model import Round
    from orchestrator.core.pairing.gauntlet import (
        MatchOptions,
        TiebreakMatch,
        match_state,
        pair_match,
    )
    from orchestrator.core.stats.sprt import Sprt
    from orchestrator.event.export import head_to_head, head_to_head_text

    players = (Player("A", 1), Player("B", 2))
    options = MatchOptions(1000, sprt=Sprt(elo0=0, elo1=5))
    rounds: list[Round] = []
    llrs = []
    while True:
        t = Tournament(
            players,
            tuple(rounds),
            Rules(system="match", system_options={"games": 1000, "sprt": {"elo0": 0, "elo1": 5}}),
        )
        state = match_state(t, options)
        assert state.sprt is not None
        llrs.append(state.sprt.llr)
        draft = pair_match(t, options)
        if draft.places:
            break
        (pair,) = draft.units
        rounds.append(
            Round(
                len(rounds) + 1,
                tuple(
                    msgspec.structs.replace(g, result="1-0" if g.white == "A" else "0-1")
                    for g in pair
                ),
            )
        )
        assert len(rounds) < 500
    assert llrs == sorted(llrs) and state.sprt.verdict == "H1"
    assert llrs[-2] < state.sprt.upper <= llrs[-1]
    assert draft.places == (("1", "A"), ("2", "B"))
    data = head_to_head(t)
    assert data["sprt"]["verdict"] == "H1" and data["winner"] == "A"  # type: ignore[typeddict-item]
    assert data["penta"] == [0, 0, 0, 0, len(rounds)] and data["model"] == "pentanomial"
    # all draws: no verdict within 4 games; the match ends at them, shared
    drawn = tuple(Round(n, (Game("A", "B", "1/2-1/2"), Game("B", "A", "1/2-1/2"))) for n in (1, 2))
    capped = MatchOptions(4, sprt=Sprt(elo0=0, elo1=5))
    state = match_state(Tournament(players, drawn), capped)
    assert state.sprt is not None and state.sprt.verdict is None
    assert state.places == (("1-2", "A"), ("1-2", "B"))
    # ... and says so: not "running"
    sprt = {"elo0": 0, "elo1": 5}
    rules = Rules(system="match", system_options=Options({"games": 4, "sprt": sprt}))
    ended = head_to_head(Tournament(players, drawn, rules))
    assert ended["sprt"] == {**ended["sprt"], "verdict": None, "over": True}  # type: ignore[typeddict-item]
    assert "SPRT: LLR" in head_to_head_text(ended)
    assert "no verdict: its games ran out" in head_to_head_text(ended)
    going = head_to_head(Tournament(players, drawn[:1], rules))
    assert "running" in head_to_head_text(going)
    with pytest.raises(ValueError, match="sprt"):
        MatchOptions(4, tiebreaks=(TiebreakMatch(2),), sprt=Sprt(elo0=0, elo1=5))


@pytest.mark.parametrize("fmt", ["double", "single"])
def test_a_gauntlet_under_sprt_ends_once_its_test_has_a_verdict(fmt: str) -> None:
    """A, the gauntlet engine, wins every game against B, C and D.  Its test (elo0 = 0,
    elo1 = 100) over its games against the field, pentanomial in double rounds and
    trinomial in single ones, crosses its upper bound long before the 20 cycles are
    played; the gauntlet then ends, its places by points."""
    import msgspec

    from orchestrator.core.event.model import Round
    from orchestrator.core.pairing.gauntlet import GauntletOptions, gauntlet_tests
    from orchestrator.core.stats.sprt import Sprt

    players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    sprt = {"elo0": 0, "elo1": 100}
    rules = Rules(
        system="gauntlet", format=fmt, cycles=20, system_options={"gauntlets": 1, "sprt": sprt}
    )
    options = GauntletOptions(sprt=Sprt(elo0=0, elo1=100))
    rounds: list[Round] = []
    llrs = []
    while True:
        t = Tournament(players, tuple(rounds), rules)
        pairing = pair_next(t)
        if pairing.finished:
            break
        won = tuple(
            msgspec.structs.replace(g, result="1-0" if g.white == "A" else "0-1")
            for g in pairing.games
        )
        rounds.append(Round(pairing.round, won))
        llrs.append(gauntlet_tests(Tournament(players, tuple(rounds), rules), options)["A"].llr)
        assert len(rounds) < 60, "the test never ended the gauntlet"
    test = gauntlet_tests(t, options)["A"]
    assert test.verdict == "H1" and llrs == sorted(llrs)
    assert llrs[-2] < test.upper <= llrs[-1]  # it ended at the first round past the bound
    assert pairing.places[0] == ("1", "A")
