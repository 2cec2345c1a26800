"""Hand-made cases for the rules the real events do not reach (docs/systems/swiss.md)."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.core.event.model import Game, Player, Round, Rules, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.core.event.state_json import decode
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.swiss import replay
from tests.support.reference_swiss import reference_pair


def players(n: int) -> tuple[Player, ...]:
    return tuple(Player(chr(ord("A") + i), i + 1) for i in range(n))


def state(
    n: int,
    rounds: list[list[tuple[str, str, str]]],
    byes: list[str | None] | None = None,
    **kw: Any,
) -> Tournament:
    byes = byes or [None] * len(rounds)
    return Tournament(
        players(n),
        tuple(
            Round(i + 1, tuple(Game(w, b, r) for w, b, r in games), byes[i])  # type: ignore[arg-type]
            for i, games in enumerate(rounds)
        ),
        **kw,
    )


def games(p: Any) -> list[tuple[str, str]]:
    return [(g.white, g.black) for g in p.games]


def test_first_round_is_seed2_against_seed1_worst_pair_first() -> None:
    p = pair_next(state(6, []))
    # first-of-pair (lower seed) has black in round 1; the worst pair plays first
    assert games(p) == [("F", "E"), ("D", "C"), ("B", "A")]
    assert p.bye is None and p.dropped_rounds == 0


def test_bye_goes_to_lowest_in_pairing_order_without_a_bye() -> None:
    first = pair_next(state(5, []))
    assert first.bye == "E"
    # B and D win; E has 1 point from its BYE; the lowest of those without a BYE is C
    t = state(5, [[("B", "A", "1-0"), ("D", "C", "1-0")]], ["E"])
    p = pair_next(t)
    assert p.bye == "C"
    assert "C" not in {n for g in p.games for n in (g.white, g.black)}


def test_bye_when_everyone_has_had_one_goes_to_lowest_with_fewest() -> None:
    t = Tournament(players(3))
    for _ in range(3):
        p = pair_next(t)
        g = p.games[0]
        t = Tournament(
            t.players, (*t.rounds, Round(p.round, (Game(g.white, g.black, "1-0"),), p.bye))
        )
    assert sorted(r.bye for r in t.rounds if r.bye) == ["A", "B", "C"]
    order = replay(t).pairing_order()
    p = pair_next(t)
    assert p.bye == t.players[order[-1]].name  # all have one BYE: the lowest in pairing order


def test_bye_scores_a_win_per_game_and_gives_no_colour() -> None:
    single = replay(state(3, [[("B", "A", "1/2-1/2")]], ["C"]))
    assert single.score[2] == 1.0 and single.wgd[2] == 0
    double = replay(
        state(3, [[("B", "A", "1-0"), ("A", "B", "1-0")]], ["C"], rules=Rules(format="double"))
    )
    assert double.score[2] == 2.0 and double.wgd[2] == 0


def test_colour_condition_skips_higher_ranked_partners() -> None:
    # A, B, C have WGD +2 and 2 points; D, E, F have WGD -2 and no points
    t = state(
        6,
        [
            [("A", "D", "1-0"), ("B", "E", "1-0"), ("C", "F", "1-0")],
            [("A", "E", "1-0"), ("B", "F", "1-0"), ("C", "D", "1-0")],
        ],
    )
    p = pair_next(t)
    # A may not meet B or C (|2 + 2| > 2) and has met D and E: A-F; then B-D, C-E.
    # The greater WGD takes black; the worst first-of-pair (C) plays first.
    assert games(p) == [("E", "C"), ("D", "B"), ("F", "A")]
    assert p.dropped_rounds == 0


def test_no_viable_pairing_removes_the_earliest_round() -> None:
    # A and B (WGD +2) cannot meet; both have met C and D: round 1 must go
    t = state(4, [[("A", "C", "1-0"), ("B", "D", "1-0")], [("A", "D", "1-0"), ("B", "C", "1-0")]])
    p = pair_next(t)
    assert p.dropped_rounds == 1
    assert games(p) == [("D", "B"), ("C", "A")]
    assert p == reference_pair(t)


PERMANENT = {  # 7 players; round 1 (with D-C) was removed when round 5 was paired
    "format": "single",
    "players": [{"name": c, "seed": i + 1} for i, c in enumerate("ABCDEFG")],
    "rounds": [
        {"games": [["F", "E", "1-0"], ["D", "C", "0-1"], ["B", "A", "1/2-1/2"]], "bye": "G"},
        {"games": [["D", "B", "0-1"], ["A", "G", "0-1"], ["C", "F", "0-1"]], "bye": "E"},
        {"games": [["E", "A", "1-0"], ["C", "B", "1/2-1/2"], ["G", "F", "1/2-1/2"]], "bye": "D"},
        {"games": [["E", "D", "1/2-1/2"], ["G", "C", "1/2-1/2"], ["B", "F", "0-1"]], "bye": "A"},
        {"games": [["A", "D", "1-0"], ["B", "G", "0-1"], ["F", "E", "0-1"]], "bye": "C"},
    ],
}


def permanent_state() -> Tournament:
    data = dict(PERMANENT)
    data["rounds"] = [
        {
            "round": i + 1,
            "bye": r["bye"],
            "games": [{"white": w, "black": b, "result": x} for w, b, x in r["games"]],
        }
        for i, r in enumerate(PERMANENT["rounds"])
    ]
    return decode(data)


def test_removals_are_permanent() -> None:
    t = permanent_state()
    assert replay(t).dropped == 1  # round 5 repeated F-E from round 1
    p = pair_next(t)
    # with the whole history a pairing without D-C would exist; the removal stands,
    # so the greedy takes D-C again
    assert p.dropped_rounds == 1
    assert ("D", "C") in games(p)
    state_now = replay(t)
    state_now.dropped = 0
    from orchestrator.core.pairing.swiss import pair_from

    if_forgotten = pair_from(state_now, "single")
    assert if_forgotten.dropped_rounds == 0
    assert ("D", "C") not in [(g.white, g.black) for g in if_forgotten.games()]
    assert p == reference_pair(t)


def test_2112_pattern_over_eight_rounds() -> None:
    """All draws: equal scores, so every equal-WGD pair is coloured by the 2112 pattern."""
    sim = simulate(Tournament(players(10)), 8, draw_rate=1.0)
    seen = set()
    for number in range(1, 9):
        before = replay(Tournament(sim.tournament.players, sim.tournament.rounds[: number - 1]))
        index = {n: i for i, n in enumerate(before.names)}
        pos = {player: i for i, player in enumerate(before.pairing_order())}
        for g in sim.tournament.rounds[number - 1].games:
            w, b = index[g.white], index[g.black]
            if before.wgd[w] == before.wgd[b]:
                first_is_white = pos[w] < pos[b]
                assert first_is_white == (number % 4 in (2, 3)), (number, g)
                seen.add(number)
    assert seen == set(range(1, 9))


@pytest.mark.parametrize(
    ("wgd", "score", "first_white"),
    [
        ((1, -1), (0, 0), False),
        ((-1, 1), (0, 0), True),
        ((0, 0), (2, 1), False),
        ((0, 0), (1, 2), True),
    ],
)
def test_colour_priority_wgd_then_score(
    wgd: tuple[int, int], score: tuple[float, float], first_white: bool
) -> None:
    from orchestrator.core.pairing.swiss import SwissState, _single_colours

    s = SwissState(["A", "B"], list(score), list(wgd), [0, 0])
    for number in range(1, 9):  # the pattern never overrides WGD or score
        white, _ = _single_colours(s, 0, 1, number)
        assert (white == 0) == first_white


@pytest.mark.parametrize("schedule", ["legs", "pairs"])
def test_double_round_colours_and_schedules(schedule: str) -> None:
    p = pair_next(Tournament(players(6), rules=Rules(format="double", schedule=schedule)))  # type: ignore[arg-type]
    first_leg = [("F", "E"), ("D", "C"), ("B", "A")]  # first-of-pair black in game 1
    second_leg = [(b, w) for w, b in first_leg]
    if schedule == "legs":
        assert games(p) == first_leg + second_leg
    else:
        assert games(p) == [g for pair in zip(first_leg, second_leg, strict=True) for g in pair]


def test_playing_order_is_worst_first_pair_first() -> None:
    t = state(6, [[("B", "A", "0-1"), ("D", "C", "1-0"), ("F", "E", "1/2-1/2")]])
    p = pair_next(t)
    order = replay(t).pairing_order()
    names = replay(t).names
    firsts = []
    for g in p.games:
        a, b = names.index(g.white), names.index(g.black)
        firsts.append(min(order.index(a), order.index(b)))
    assert firsts == sorted(firsts, reverse=True)
