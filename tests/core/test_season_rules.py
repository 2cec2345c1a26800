"""A season's rules (`orchestrator/core/season.py`): a draw passes over an engine already in
the field, an engine renamed between events keeps its places, and who moves up and down
follows a director's decision of a tie."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.season import (
    Draw,
    SeasonEvent,
    Undecided,
    check_season,
    movers,
    next_memberships,
    resolve_field,
)

L2 = [("1", "A"), ("2", "B"), ("3", "C"), ("4", "D")]


def test_a_named_engine_that_a_draw_would_bring_is_passed_over() -> None:
    """`field = ["B", { top = 2, of = "League 2" }]`, B finishing second: the draw takes A
    and, passing over B, the third (C).  It stopped the season with a traceback before."""
    event = SeasonEvent("League 1", ("B", Draw("League 2", top=2)))
    assert resolve_field(event, {"League 2": L2}) == ("B", "A", "C")


def test_two_draws_that_would_bring_one_engine_take_it_once() -> None:
    """An engine that played both feeding events and won both is drawn by the first draw;
    the second takes its next place."""
    cup = [("1", "A"), ("2", "E"), ("3", "F")]
    event = SeasonEvent("Final", (Draw("League 2", top=1), Draw("Cup", top=1)))
    assert resolve_field(event, {"League 2": L2, "Cup": cup}) == ("A", "E")


def test_a_tie_after_the_passed_over_engine_still_waits_for_a_director() -> None:
    places = [("1", "A"), ("2-3", "B"), ("2-3", "C"), ("4", "D")]
    event = SeasonEvent("League 1", ("A", Draw("League 2", top=1)))
    with pytest.raises(Undecided, match="place 2-3, shared by B, C"):
        resolve_field(event, {"League 2": places})
    assert resolve_field(event, {"League 2": places}, {"League 2": ["C", "B"]}) == ("A", "C")


def test_a_draw_with_too_few_engines_left_is_named() -> None:
    event = SeasonEvent("League 1", ("A", "B", Draw("League 2", top=3)))
    with pytest.raises(ValueError, match="League 2 has only 2 engines that are not already"):
        resolve_field(event, {"League 2": L2})


@settings(max_examples=200, deadline=None)
@given(st.permutations("ABCDEFGH"), st.integers(0, 4), st.integers(1, 4))
def test_a_drawn_field_never_holds_an_engine_twice(order: list[str], named: int, top: int) -> None:
    places = [(str(i), name) for i, name in enumerate(order, 1)]
    event = SeasonEvent("L1", (*sorted(order)[:named], Draw("L2", top=top)))
    field = resolve_field(event, {"L2": places})
    assert len(field) == len(set(field)) == named + top
    drawn = [n for n in order if n not in field[:named]][:top]
    assert list(field[named:]) == drawn


def test_an_engine_renamed_keeps_its_places() -> None:
    """D became Dee (a new version) after League 2: its places are Dee's, and a decision
    named with either name orders the tie."""
    places = [("1", "D"), ("2-3", "B"), ("2-3", "C"), ("4", "A")]
    aliases = {"D": "Dee"}
    event = SeasonEvent("League 1", ("E", Draw("League 2", top=2)))
    field = resolve_field(event, {"League 2": places}, {"League 2": ["C", "B"]}, aliases)
    assert field == ("E", "Dee", "C")
    named = SeasonEvent("League 1", ("D", Draw("League 2", top=1)))  # the old name, named
    assert resolve_field(named, {"League 2": places}, {"League 2": ["C", "B"]}, aliases) == (
        "Dee",
        "C",
    )
    league = SeasonEvent("League 2", ("A", "B", "C", "D"), promote=1, relegate=1)
    assert next_memberships(
        [league], {"League 2": ["A", "B", "C", "D"]}, {"League 2": places}, {}, aliases
    ) == {"League 2": ["B", "C"]}
    check_season([league], ["A", "B", "C", "Dee"], aliases)  # the old name is known
    with pytest.raises(ValueError, match='no \\[\\[engine\\]\\] is named "D"'):
        check_season([league], ["A", "B", "C", "Dee"])


def test_who_moves_follows_a_director_s_decision() -> None:
    """`season status` showed the top `promote` of the places as stored, "up: A, B" where a
    director had decided D and C."""
    places = [("1-4", "A"), ("1-4", "B"), ("1-4", "C"), ("1-4", "D")]
    league = SeasonEvent("League 2", ("A", "B", "C", "D"), promote=2, relegate=1)
    with pytest.raises(Undecided):
        movers(league, places)
    assert movers(league, places, {"League 2": ["D", "C", "B", "A"]}) == (["D", "C"], ["A"])
