"""No sequence of accepted controls wedges an event: random sequences of pause, resume,
withdraw, replay, adjudicate and pair-manual, given while a daemon plays, always end in a
finished event in which every round is what the pairing gives for the stored state before
it (its withdrawals and the director's fixed pairs included).

The daemon runs in this process; its games are played by the fake executor (many
examples) and by scripted engine processes (a few)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.core.pairing.round import pair_next
from orchestrator.event.controls import (
    Adjudicate,
    Control,
    ControlRefused,
    PairManual,
    Pause,
    Replay,
    Resume,
    Withdraw,
    fixed_pairs,
    request,
)
from orchestrator.event.read import EventView, load_view, view_of
from orchestrator.executor.base import Executor
from orchestrator.store.database import Store
from tests.support.daemon import event_config, finished_count, run_in_process
from tests.support.fake_executor import FakeExecutor

PLAYERS = ["E1", "E2", "E3", "E4", "E5", "E6"]
ROUNDS = 4

#: a control as drawn: its kind and raw arguments, made into a control against the event
Spec = tuple[str, int, int, str]


@dataclass
class Batch:
    """Controls given together once `at` games have finished."""

    at: int
    specs: list[Spec]


@dataclass
class Given:
    accepted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


SPECS = st.tuples(
    st.sampled_from(["pause", "resume", "withdraw", "replay", "adjudicate", "pair-manual"]),
    st.integers(0, 13),  # a game id (1 to 14 of 12), a player index, or a round offset
    st.integers(0, 13),  # a second player index
    st.sampled_from(["1-0", "0-1", "1/2-1/2"]),
)
BATCHES = st.lists(
    st.builds(Batch, st.integers(0, 14), st.lists(SPECS, min_size=1, max_size=5)),
    min_size=1,
    max_size=5,
)


def make(spec: Spec, view: EventView) -> Control:
    """The control a spec stands for, given the event as it is."""
    kind, a, b, result = spec
    players = PLAYERS
    if kind == "pause":
        return Pause()
    if kind == "resume":
        return Resume()
    if kind == "withdraw":
        return Withdraw(engine=players[a % len(players)], reason="property")
    if kind == "replay":
        return Replay(game=a + 1, reason="property")
    if kind == "adjudicate":
        return Adjudicate(game=a + 1, result=result, reason="property")
    number = (view.rounds[-1].number if view.rounds else 0) + a % 2  # this round or the next
    white, black = players[a % len(players)], players[b % len(players)]
    return PairManual(round=number, pairs=((white, black),), reason="property")


def rounds_started(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return bool(conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0])
    except sqlite3.Error:
        return False


async def drive(db: Path, batches: list[Batch], given: Given, done: asyncio.Event) -> None:
    """Give each batch once its games have finished (a batch that paused resumes at its
    end, so that the event can go on), until the event is over."""
    while not rounds_started(db):
        if done.is_set():
            return
        await asyncio.sleep(0.01)
    store = await Store.open(db)
    try:
        for batch in sorted(batches, key=lambda b: b.at):
            while finished_count(db) < batch.at:
                if done.is_set():
                    return
                await asyncio.sleep(0.01)
            paused = False
            for spec in batch.specs:
                control = make(spec, await view_of(store))
                try:
                    await request(store, control, ["property"], "property")
                except ControlRefused as refused:
                    given.refused.append(f"{control.kind}: {refused}")
                    continue
                given.accepted.append(repr(control))
                paused = {"pause": True, "resume": False}.get(control.kind, paused)
            if paused:
                try:
                    await request(store, Resume(), ["property"], "property")
                except ControlRefused as refused:  # the event finished meanwhile
                    given.refused.append(f"resume: {refused}")
    finally:
        await store.close()


async def play(config: Path, batches: list[Batch], executor: Executor | None) -> Given:
    given = Given()
    done = asyncio.Event()
    driver = asyncio.create_task(drive(config.parent / "event.sqlite", batches, given, done))
    try:
        await asyncio.wait_for(run_in_process(config, executor), timeout=240)
    finally:
        done.set()
        await driver
    return given


def check_event(db: Path, given: Given) -> None:
    view = asyncio.run(load_view(db))
    assert view.finished, given
    t = view.tournament
    assert len(t.rounds) == ROUNDS, given
    for rnd in t.rounds:
        number = rnd.number
        playing = {p.name for p in t.players if p.plays_in(number)}
        before = msgspec.structs.replace(
            t, rounds=t.rounds[: number - 1], fixed=fixed_pairs(view.controls, number, playing)
        )
        pairing = pair_next(before)
        assert [(g.white, g.black) for g in pairing.games] == [
            (g.white, g.black) for g in rnd.games
        ], (number, given)
        assert pairing.bye == rnd.bye, (number, given)
    pending = [c for c in view.controls if c.applied_at is None]
    assert not pending, pending  # every control was applied or refused with its reason


def config_for(folder: Path) -> Path:
    return event_config(folder, players=PLAYERS, rounds=ROUNDS, concurrency=2, groups=1)


def played(
    tmp_path_factory: object, name: str, batches: list[Batch], executor: Executor | None
) -> None:
    """Play an event in a new folder while `batches` are given, and check it."""
    folder = tmp_path_factory.mktemp(name)  # type: ignore[attr-defined]
    given = asyncio.run(play(config_for(folder), batches, executor))
    check_event(folder / "event.sqlite", given)


def slow_games(delay: float) -> Callable[[int], asyncio.Future[None]]:
    async def wait(_: int) -> None:
        await asyncio.sleep(delay)

    return wait  # type: ignore[return-value]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(BATCHES)
def test_random_controls_never_wedge_an_event(
    tmp_path_factory: object, batches: list[Batch]
) -> None:
    played(tmp_path_factory, "controls", batches, FakeExecutor(before_result=slow_games(0.02)))


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(BATCHES)
def test_random_controls_never_wedge_an_event_of_scripted_engines(
    tmp_path_factory: object, batches: list[Batch]
) -> None:
    played(tmp_path_factory, "controls-engines", batches, None)  # the config's: local
