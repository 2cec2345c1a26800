"""Controls are checked against what they would do to the event before they are stored, and
a stored control that can no longer apply is refused with its reason: the cases of the third
hardening round (issue 21), each of which once wedged an event or told the audit log
something untrue."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.event.controls import (
    Adjudicate,
    Control,
    ControlRefused,
    EngineUpdate,
    PairManual,
    Pause,
    Replay,
    Resume,
    Withdraw,
    plan,
    request,
)
from orchestrator.event.read import load_view
from orchestrator.event.sample import sample_database
from orchestrator.store.database import Store
from tests.support.daemon import event_config, run_in_process
from tests.support.fake_executor import FakeExecutor


async def ask(db: Path, *asked: Control) -> list[str]:
    """Request each control in turn: 'ok' or the one-line refusal."""
    store = await Store.open(db)
    try:
        out = []
        for control in asked:
            try:
                await request(store, control, ["test"], "td")
                out.append("ok")
            except ControlRefused as refused:
                out.append(str(refused))
        return out
    finally:
        await store.close()


async def apply_pending(db: Path) -> list[str]:
    """Apply the pending controls in order as the daemon does; their outcomes."""
    store = await Store.open(db)
    try:
        outcomes = []
        for row in await store.controls(pending=True):
            _, result = await plan(store, row)
            await store.apply_control(row.id, result.outcome, result.changes)
            outcomes.append(result.outcome)
        return outcomes
    finally:
        await store.close()


def test_withdrawals_that_would_leave_fewer_than_two_engines_are_refused() -> None:
    """Four engines, round 2 still to play: two withdrawals are accepted (the first still
    pending when the second is asked for), the third would leave one engine."""
    db = sample_database()
    reason = "gone"
    answers = asyncio.run(
        ask(
            db,
            Withdraw(engine="A", reason=reason),
            Withdraw(engine="B", reason=reason),
            Withdraw(engine="C", reason=reason),
        )
    )
    assert answers[:2] == ["ok", "ok"]
    assert asyncio.run(ask(db, Withdraw(engine="A", reason=reason))) == [
        "'A''s withdrawal is already asked for"
    ]
    assert answers[2] == (
        "withdrawing 'C' would leave 1 engine to play rounds 2 to 2 (with the withdrawals "
        "already asked for): an event needs two (the event could not go on)"
    )


def test_a_game_never_started_is_not_adjudicated() -> None:
    db = sample_database()  # game 1 played, game 2 not started
    (answer,) = asyncio.run(ask(db, Adjudicate(game=2, result="1-0", reason="crash")))
    assert answer.startswith("game 2 has not started: only a game being played, or played")


def test_ten_replays_of_one_game_void_it_once() -> None:
    """All ten are stored (the game was played when each was asked for); the first voids
    it, and each later one is refused when it comes to apply, with its reason."""
    db = sample_database()
    assert asyncio.run(ask(db, *[Replay(game=1, reason="bad book")] * 10)) == ["ok"] * 10
    outcomes = asyncio.run(apply_pending(db))
    assert outcomes[0].startswith("game 1 voided")
    assert all("nothing to replay" in o for o in outcomes[1:]), outcomes
    view = asyncio.run(load_view(db))
    assert sum(a.voided_at is not None for a in view.attempts) == 1


def test_a_second_pair_manual_of_a_round_says_what_it_replaces() -> None:
    db = sample_database()
    asked = [
        PairManual(round=2, pairs=(("A", "B"),), reason="tv"),
        PairManual(round=2, pairs=(("C", "A"),), reason="tv again"),
    ]
    assert asyncio.run(ask(db, *asked)) == ["ok", "ok"]
    first, second = asyncio.run(apply_pending(db))
    assert first == "round 2: A-B fixed; the system pairs the rest"
    assert second == "round 2: C-A fixed in place of A-B (control 1); the system pairs the rest"


def finished_event(folder: Path) -> Path:
    config = event_config(folder, players=["E1", "E2", "E3", "E4"], rounds=1)
    asyncio.run(run_in_process(config))
    return folder / "event.sqlite"


def test_a_finished_event_takes_no_more_controls(tmp_path: Path) -> None:
    """resume once stayed pending forever on a finished event, and engine-update was
    applied; now each is refused at once, like pause."""
    db = finished_event(tmp_path)
    answers = asyncio.run(
        ask(db, Pause(), Resume(), EngineUpdate(engine="E1", options={"Hash": 1}, reason="x"))
    )
    assert answers == ["the event 'Daemon Test' is finished"] * 3


Hook = Callable[[int], Awaitable[None]]


def giving(db: Path, at: int, *asked: Control) -> tuple[Hook, list[str]]:
    """A fake executor's hook that asks for `asked` before the result of game `at` (counted
    from 0); the answers go to the list."""
    answers: list[str] = []

    async def hook(played: int) -> None:
        if played == at and not answers:  # once (two games may both be at `at`)
            answers.append("asking")
            answers[:] = await ask(db, *asked)

    return hook, answers


def test_a_fixed_pair_whose_engine_withdraws_is_dropped(tmp_path: Path) -> None:
    """pair-manual of round 2 with E3-E4, then E4 withdraws: round 2 is paired without
    that pair (the event once stopped on every restart), and the withdrawal says so."""
    players = ["E1", "E2", "E3", "E4", "E5", "E6"]
    config = event_config(tmp_path, players=players, rounds=3, groups=1)
    db = tmp_path / "event.sqlite"
    hook, answers = giving(
        db,
        0,
        Pause(),
        PairManual(round=2, pairs=(("E3", "E4"),), reason="a grudge match"),
        Withdraw(engine="E4", reason="its author pulled it"),
        Resume(),
    )
    asyncio.run(run_in_process(config, FakeExecutor(before_result=hook)))
    assert answers == ["ok"] * 4
    view = asyncio.run(load_view(db))
    assert view.finished
    second = view.tournament.rounds[1]
    assert all("E4" not in (g.white, g.black) for g in second.games)
    outcomes = {c.kind: c.outcome for c in view.controls}
    assert outcomes["withdraw"].endswith("; its fixed pair E3-E4 of round 2 (control 2) is dropped")


def test_withdrawing_everyone_during_a_round_leaves_an_event_that_finishes(
    tmp_path: Path,
) -> None:
    """Six withdrawals asked for during round 4 of a 5-round event: the ones that would
    leave fewer than two engines are refused, and the event finishes."""
    players = [f"E{i}" for i in range(1, 7)]
    config = event_config(tmp_path, players=players, rounds=5, groups=1)
    db = tmp_path / "event.sqlite"
    games_before_round_4 = 3 * 2 * 3  # three double rounds of three pairs
    asked = [Withdraw(engine=p, reason="leaving") for p in players]
    hook, answers = giving(db, games_before_round_4, *asked)
    asyncio.run(run_in_process(config, FakeExecutor(before_result=hook)))
    assert answers[:4] == ["ok"] * 4
    assert all(a.startswith("withdrawing ") for a in answers[4:]), answers
    assert asyncio.run(ask(db, Withdraw(engine="E1", reason="twice"))) == [
        "the event 'Daemon Test' is finished"
    ]
    view = asyncio.run(load_view(db))
    assert view.finished and len(view.tournament.rounds) == 5


def test_engine_update_with_an_unbalanced_quote_is_one_line(tmp_path: Path) -> None:
    db = sample_database(tmp_path)
    result = CliRunner().invoke(
        app,
        ["engine-update", "A", "--command", "'unbalanced", "--reason", "x", "--db", str(db)],
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        'orchestrator: error: --command "\'unbalanced": No closing quotation'
    )


@pytest.mark.parametrize("kind", ["resume", "engine-update"])
def test_refusals_on_a_finished_event_are_one_line_from_the_cli(tmp_path: Path, kind: str) -> None:
    db = finished_event(tmp_path)
    args = [kind] if kind == "resume" else [kind, "E1", "--command", "/bin/false", "--reason", "x"]
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == "orchestrator: error: the event 'Daemon Test' is finished"


def test_a_withdrawn_engine_s_games_are_forfeited_in_tcec_s_words(tmp_path: Path) -> None:
    """The sample's round 1 has A's two games still to play: withdrawing A forfeits both,
    each ending as TCEC words it (TerminationDetails: the side that forfeits)."""
    db = sample_database()
    assert asyncio.run(ask(db, Withdraw(engine="A", reason="gone"))) == ["ok"]
    assert "A withdrawn" in asyncio.run(apply_pending(db))[0]
    view = asyncio.run(load_view(db))
    forfeited = [g for r in view.rounds for g in r.games if g.forfeit]
    assert {(g.white, g.black, g.result, g.details) for g in forfeited} == {
        ("B", "A", "1-0", "Black forfeits"),
        ("A", "B", "0-1", "White forfeits"),
    }
