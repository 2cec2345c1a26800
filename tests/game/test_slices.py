"""The kernel's time slices (`engines/slices.py`): an engine starts with the shortest slice,
all its threads and children inherit it, the daemon's thread returns to its own long one, and
a kibitzer (idle) is left alone.  Skipped where the kernel takes no slices (before 6.12)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config.model import EngineConfig
from orchestrator.engines.adapter import Engine
from orchestrator.engines.procfs import processes
from orchestrator.engines.slices import (
    DAEMON_SLICE_NS,
    ENGINE_SLICE_NS,
    runner_slice,
    set_slice,
    slice_of,
)
from tests.support.engines import scripted


def _kernel_takes_slices() -> bool:
    try:
        return set_slice(ENGINE_SLICE_NS) and slice_of() == ENGINE_SLICE_NS
    finally:
        set_slice(0)


pytestmark = pytest.mark.skipif(
    not _kernel_takes_slices(), reason="the kernel takes no slices (Linux 6.12 and later do)"
)


def process_slices(pid: int) -> dict[int, int | None]:
    """The slice of every thread of process `pid`."""
    tids = [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
    return {tid: slice_of(tid, pid) for tid in tids}


@pytest.fixture
def runner() -> Iterator[None]:
    """This thread as the daemon's main thread; back to the kernel's slice afterwards."""
    runner_slice()
    yield
    set_slice(0)


async def test_an_engine_starts_with_the_shortest_slice_and_the_daemon_keeps_its_own(
    runner: None,
) -> None:
    assert slice_of() == DAEMON_SLICE_NS
    seen_meanwhile: list[int | None] = []
    starting = True

    async def watch() -> None:  # what else the loop runs while the engine starts
        while starting:
            seen_meanwhile.append(slice_of())
            await asyncio.sleep(0)

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    engine = await Engine.start(scripted("Short"))
    starting = False
    await watcher
    # only the engine's fork ran at its slice: the loop's other work never did
    assert len(seen_meanwhile) > 1 and set(seen_meanwhile) == {DAEMON_SLICE_NS}
    try:
        assert set(process_slices(engine.transport.get_pid()).values()) == {ENGINE_SLICE_NS}
        assert slice_of() == DAEMON_SLICE_NS  # the loop's thread is back to its own
        # a thread the daemon starts afterwards inherits the daemon's slice, not the engine's
        seen: list[int | None] = []
        worker = threading.Thread(target=lambda: seen.append(slice_of()))
        worker.start()
        worker.join()
        assert seen == [DAEMON_SLICE_NS]
    finally:
        await engine.close()


async def test_a_wrapped_engine_s_children_inherit_the_short_slice(runner: None) -> None:
    # a shell that starts the engine as its child (`; exit $?` keeps the shell from exec'ing)
    line = " ".join(scripted("Wrapped").command)
    wrapped = EngineConfig(name="Wrapped", command=("/bin/sh", "-c", f"{line}; exit $?"))
    engine = await Engine.start(wrapped)
    try:
        children = [p.pid for p in processes() if p.parent == engine.transport.get_pid()]
        assert children
        for pid in [engine.transport.get_pid(), *children]:
            assert set(process_slices(pid).values()) == {ENGINE_SLICE_NS}
    finally:
        await engine.close()


async def test_a_kibitzer_keeps_the_slice_of_what_starts_it(runner: None) -> None:
    engine = await Engine.start(scripted("Idle"), idle=True)
    try:
        assert set(process_slices(engine.transport.get_pid()).values()) == {DAEMON_SLICE_NS}
    finally:
        await engine.close()
