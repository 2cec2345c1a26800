"""The moves a game host sends its daemon (`executor/wire.py`), and how the daemon takes them."""

from __future__ import annotations

import pickle
from typing import Any

import chess
import structlog
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core.game.record import Cp, Mate, MoveRecord
from orchestrator.executor.cluster import DaskExecutor
from orchestrator.executor.wire import MoveEvent, pack, unpack

#: a move with every field set to something other than its default
FULL = MoveRecord(
    "e7e8q", "e8=Q+", book=True, score=Cp(-35), depth=21, seldepth=30, nodes=123456,
    time_ms=987, clock_ms=54321, reported_ms=980, pv=("e7e8q", "g8h7"), nps=125000,
    tbhits=7, hashfull=512, ponder="g8h7",
)  # fmt: skip


def test_every_field_of_a_move_crosses_the_wire() -> None:
    defaults = MoveRecord("a2a3", "a3")
    for name in MoveRecord.__struct_fields__:  # a field added later must be set in FULL
        assert getattr(FULL, name) != getattr(defaults, name), name
    sent = [MoveEvent.of("game-x-1-1", "run", 7, "log\n", FULL)]
    (event,) = unpack(pack(sent))
    assert (event.key, event.run, event.ply, event.log) == ("game-x-1-1", "run", 7, "log\n")
    assert event.record() == FULL
    assert pickle.loads(pickle.dumps(FULL)) == FULL  # a game's result, as Dask pickles it


scores = st.one_of(
    st.none(),
    st.builds(Cp, st.integers(-100_000, 100_000)),
    st.builds(Mate, st.integers(-300, 300)),
)
optional = st.one_of(st.none(), st.integers(0, 2**62))


@given(
    score=scores,
    depth=optional,
    nodes=optional,
    clock=optional,
    pv=st.lists(st.sampled_from(["e2e4", "e7e5", "g1f3"]), max_size=40),
    log=st.text(max_size=200),
)
def test_a_move_comes_back_as_it_was_sent(
    score: Cp | Mate | None,
    depth: int | None,
    nodes: int | None,
    clock: int | None,
    pv: list[str],
    log: str,
) -> None:
    move = MoveRecord(
        "e2e4", "e4", score=score, depth=depth, nodes=nodes, clock_ms=clock, pv=tuple(pv)
    )
    (event,) = unpack(pack([MoveEvent.of("k", "r", 1, log, move)]))
    assert event.record() == move and event.log == log
    assert pickle.loads(pickle.dumps(move)) == move


def executor_following(key: str, seen: list[tuple[Any, ...]]) -> DaskExecutor:
    """An executor (never connected) that follows one attempt, `key`, started in run "r1"
    from the standard start position; its moves and logs go to `seen`."""
    from orchestrator.executor import cluster

    executor = DaskExecutor("tcp://127.0.0.1:1", "test")
    follow = object.__new__(cluster._Follow)
    follow.run_id, follow.ply, follow.first = "r1", 0, chess.WHITE
    follow.on_move = lambda move, ply, mover: seen.append((move.uci, ply, mover))
    follow.on_log = lambda text: seen.append(("log", text))
    executor.followed[key] = follow
    return executor


def test_the_daemon_takes_each_attempts_next_moves_in_order() -> None:
    seen: list[tuple[Any, ...]] = []
    executor = executor_following("game-1", seen)
    e4, e5 = MoveRecord("e2e4", "e4"), MoveRecord("e7e5", "e5")
    batch = [
        MoveEvent.of("game-1", "r1", 1, "a\n", e4),
        MoveEvent.of("game-1", "r1", 1, "again\n", e4),  # seen already
        MoveEvent.of("game-1", "r0", 2, "", e5),  # another run of the task
        MoveEvent.of("game-2", "r1", 2, "", e5),  # an attempt no longer followed
        MoveEvent.of("game-1", "r1", 2, "b\n", e5),
    ]
    executor._event((0.0, {"moves": pack(batch)}))
    assert seen == [
        ("log", "a\n"),
        ("e2e4", 1, chess.WHITE),
        ("log", "b\n"),
        ("e7e5", 2, chess.BLACK),
    ]


def test_an_unreadable_batch_is_logged_and_dropped() -> None:
    seen: list[tuple[Any, ...]] = []
    executor = executor_following("game-1", seen)
    with structlog.testing.capture_logs() as logs:
        executor._event((0.0, {"moves": b"\x93not ours"}))
    assert seen == []
    assert [e["event"] for e in logs] == ["host_moves_unreadable"]
