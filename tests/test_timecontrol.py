"""cutechess-style time controls and the clock."""

from __future__ import annotations

import pytest

from orchestrator.core.timecontrol import Clock, TimeControl, TimeControlError


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


@pytest.mark.parametrize("text", ["", "abc", "0+1", "10+", "st=0", "nodes=x", "0/10", "-5+1"])
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
    flag = clock.after_move(tc, 20_000)
    assert flag.remaining_ms < 0  # no increment after the flag fell
