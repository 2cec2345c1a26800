"""cutechess-style time controls and the clock."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core.game.clock import Clock, TimeControl, TimeControlError


@pytest.mark.parametrize(
    ("text", "expected", "tag"),
    [
        ("300+3", TimeControl("clock", 300_000, 3_000), "300+3"),
        ("10+0.1", TimeControl("clock", 10_000, 100), "10+0.1"),
        ("40/60+0.5", TimeControl("clock", 60_000, 500, 40), "40/60+0.5"),
        ("40/5:00", TimeControl("clock", 300_000, 0, 40), "40/300"),
        ("st=2", TimeControl("movetime", limit=2_000), "2/move"),
        ("st=0.5", TimeControl("movetime", limit=500), "0.5/move"),
        ("nodes=1", TimeControl("nodes", limit=1), "-"),
        ("depth=12", TimeControl("depth", limit=12), "-"),
    ],
)
def test_parse(text: str, expected: TimeControl, tag: str) -> None:
    tc = TimeControl.parse(text)
    assert tc == expected
    assert tc.pgn_tag() == tag
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "0+1",
        "10+",
        "st=0",
        "nodes=x",
        "0/10",
        "-5+1",
        "st=inf",
        "st=nan",
        "99999999999999999999999+0",
        "10+99999999999",
        "nodes=" + "9" * 5000,
        "100000/10",
    ],
)
def test_bad(text: str) -> None:
    with pytest.raises(TimeControlError, match="bad time control"):
        TimeControl.parse(text)


def test_clock_increment_and_sessions() -> None:
    tc = TimeControl.parse("2/10+1")
    clock = Clock.start(tc)
    assert (clock.remaining_ms, clock.moves_to_go) == (10_000, 2)
    clock = clock.after_move(tc, 3_000)
    assert (clock.remaining_ms, clock.moves_to_go) == (8_000, 1)
    clock = clock.after_move(tc, 1_000)  # the session ends: a new base is added
    assert (clock.remaining_ms, clock.moves_to_go) == (18_000, 2)


def test_flag_falls_at_exactly_the_margin_plus_one_ms() -> None:
    clock = Clock(500)
    assert not clock.flags(500 + 100, margin_ms=100)
    assert clock.flags(500 + 101, margin_ms=100)
    assert not Clock(-80).flags(20, margin_ms=100)  # already inside the margin: 100 past
    assert Clock(-80).flags(21, margin_ms=100)


def test_the_increment_is_kept_inside_the_margin() -> None:
    """demo game 14: Stockfish at -11 ms moving in 1-17 ms at 5+0.05 must recover."""
    tc = TimeControl.parse("5+0.05")
    clock = Clock(-11)
    for used in [17, 1, 9, 12, 3]:
        assert not clock.flags(used, margin_ms=100)
        clock = clock.after_move(tc, used)
    assert clock.remaining_ms == -11 - (17 + 1 + 9 + 12 + 3) + 5 * 50 > 0
    assert clock.told_ms() == clock.remaining_ms


controls = st.builds(
    lambda base, inc, moves: TimeControl("clock", base, inc, moves),
    st.integers(1, 600_000),
    st.integers(0, 10_000),
    st.sampled_from([0, 1, 2, 10, 40]),
)


@given(controls, st.lists(st.integers(0, 20_000), max_size=120), st.integers(0, 5_000))
def test_clock_properties(tc: TimeControl, moves: list[int], margin: int) -> None:
    """Deducted, then the increment (and a session's base) added after every move that does
    not flag; a move flags exactly when it takes more than the time left plus the margin;
    an engine is never told a negative time."""
    clock = Clock.start(tc)
    for n, used in enumerate(moves, start=1):
        assert clock.told_ms() >= 0
        flagged = clock.flags(used, margin)
        assert flagged == (used > clock.remaining_ms + margin)
        if flagged:
            break
        after = clock.after_move(tc, used)
        session = tc.base_ms if tc.moves and n % tc.moves == 0 else 0
        assert after.remaining_ms == clock.remaining_ms - used + tc.inc_ms + session
        assert after.remaining_ms >= -margin + tc.inc_ms  # inside the margin: recovers
        if tc.moves:
            assert after.moves_to_go == tc.moves - n % tc.moves
        clock = after
