"""The adjudication state machine, ply by ply."""

from __future__ import annotations

from orchestrator.core.game.adjudication import (
    Adjudication,
    Adjudicator,
    DrawRule,
    WinRule,
    tablebase_verdict,
)
from orchestrator.core.game.record import Cp, Mate


def feed(adj: Adjudicator, plies: list[tuple[int | None, bool]], fullmove: int = 40) -> list[str]:
    """Feed (cp from the mover's view or None, zeroing) plies from white; the verdicts seen."""
    out = []
    for i, (cp, zeroing) in enumerate(plies):
        v = adj.after_ply(
            white_moved=i % 2 == 0,
            score=None if cp is None else Cp(cp),
            fullmove=fullmove + i // 2,
            zeroing=zeroing,
            moves_played=fullmove + i // 2,
        )
        out.append(v.result if v else "")
    return out


def test_win_needs_both_sides_to_agree_for_the_whole_window() -> None:
    adj = Adjudicator(Adjudication(win=WinRule(plies=4, score=10.0), draw=None))
    # white says +12, black says -12 (= +12 for white): win after 4 plies
    assert feed(adj, [(1200, False), (-1200, False)] * 2) == ["", "", "", "1-0"]
    adj = Adjudicator(Adjudication(win=WinRule(plies=4, score=10.0), draw=None))
    # black disagrees once: the streak restarts
    plies = [(1200, False), (-1200, False), (1200, False), (300, False)] + [
        (1200, False),
        (-1200, False),
    ] * 2
    assert feed(adj, plies)[-1] == "1-0" and "1-0" not in feed(
        Adjudicator(Adjudication(win=WinRule(plies=4, score=10.0), draw=None)), plies[:7]
    )


def test_mate_scores_count_for_the_win_rule() -> None:
    adj = Adjudicator(Adjudication(win=WinRule(plies=2, score=10.0), draw=None))
    v1 = adj.after_ply(
        white_moved=True, score=Mate(-5), fullmove=30, zeroing=False, moves_played=29
    )
    v2 = adj.after_ply(
        white_moved=False, score=Mate(4), fullmove=30, zeroing=False, moves_played=30
    )
    assert v1 is None and v2 is not None and v2.result == "0-1"


def test_draw_rule_waits_for_the_move_and_resets_on_captures_and_pawn_moves() -> None:
    rule = Adjudication(win=None, draw=DrawRule(from_move=35, plies=4, score=0.15))
    assert feed(Adjudicator(rule), [(0, False)] * 6, fullmove=30) == [""] * 6
    assert feed(Adjudicator(rule), [(0, False)] * 4, fullmove=35)[-1] == "1/2-1/2"
    assert "1/2-1/2" not in feed(
        Adjudicator(rule), [(0, False), (0, True), (0, False), (0, False)], 35
    )
    assert "1/2-1/2" not in feed(
        Adjudicator(rule), [(0, False), (20, False), (0, False), (0, False)], 35
    )
    assert "1/2-1/2" not in feed(
        Adjudicator(rule), [(0, False), (None, False), (0, False), (0, False)], 35
    )


def test_max_moves_and_rules_off() -> None:
    adj = Adjudicator(Adjudication(win=None, draw=None, max_moves=41))
    assert feed(adj, [(0, False)] * 4, fullmove=40) == ["", "", "1/2-1/2", "1/2-1/2"]
    assert feed(Adjudicator(Adjudication(None, None)), [(5000, False)] * 30) == [""] * 30


def test_tablebase_verdicts() -> None:
    assert tablebase_verdict(2, True).result == "1-0"
    assert tablebase_verdict(2, False).result == "0-1"
    assert tablebase_verdict(-2, True).result == "0-1"
    assert tablebase_verdict(1, True).result == "1/2-1/2"  # a cursed win is a draw
    assert tablebase_verdict(0, False).result == "1/2-1/2"
