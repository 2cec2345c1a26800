"""The kernel's time slices (Linux 6.12 and later): an engine woken by its `go` preempts the runner.

Linux's fair scheduler (EEVDF) lets a woken task preempt the running one when its slice is
shorter (`PREEMPT_SHORT`); otherwise the woken task waits until the running one has used up
its slice, which on a kernel with a 250 Hz tick can be 4 ms.  The engine's clock runs from
the `go` line on, so that wait is charged to the engine.  So every engine is started with the
shortest slice there is (0.1 ms; its threads and children inherit it), and the daemon's own
threads take a long one (10 ms): an engine woken by its `go` preempts the daemon.
`bench/scale.py` measured it with 64 and 128 games at once on a 2-core machine: the time
charged minus the time reported, p99, went from 3 and 5 ms to 1 and 2 ms
(docs/measurements.md, "Clocks with many games at once").

Setting a slice needs no privilege (a fair task's `sched_runtime`, through
`sched_setattr(2)`): the policy and the nice value are kept.  Where the kernel or the
platform has no such thing, nothing changes and nothing fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import sys
import threading
from collections.abc import Coroutine, Generator, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

__all__ = [
    "DAEMON_SLICE_NS",
    "ENGINE_SLICE_NS",
    "engine_slice",
    "runner_slice",
    "set_slice",
    "slice_of",
    "spawned",
]

#: the kernel's shortest slice, for engines
ENGINE_SLICE_NS = 100_000
#: the daemon's threads, and the game hosts' (a game host's engines still take the short one)
DAEMON_SLICE_NS = 10_000_000

#: sched_setattr's system call number
_SYSCALL = {"x86_64": 314, "aarch64": 274}.get(platform.machine())
_KEEP_POLICY = 0x08  # SCHED_FLAG_KEEP_POLICY


class _Attr(ctypes.Structure):
    """`struct sched_attr`, its first version (48 bytes)."""

    _fields_ = (
        ("size", ctypes.c_uint32),
        ("policy", ctypes.c_uint32),
        ("flags", ctypes.c_uint64),
        ("nice", ctypes.c_int32),
        ("priority", ctypes.c_uint32),
        ("runtime", ctypes.c_uint64),
        ("deadline", ctypes.c_uint64),
        ("period", ctypes.c_uint64),
    )


T = TypeVar("T")

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" and _SYSCALL else None
#: the slice this process's threads return to after starting an engine (0: the kernel's)
_runner = {"ns": 0}


def set_slice(ns: int, tid: int = 0) -> bool:
    """Give thread `tid` (0: the calling one) a slice of `ns` nanoseconds (0: the kernel's
    default), keeping its policy and nice value; whether the kernel took it.  What it
    starts later inherits the slice.

    >>> import sys
    >>> set_slice(DAEMON_SLICE_NS) or sys.platform != "linux" or slice_of() == DAEMON_SLICE_NS
    True
    >>> _ = set_slice(0)
    """
    if _libc is None:
        return False
    try:
        nice = os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return False
    attr = _Attr(ctypes.sizeof(_Attr), 0, _KEEP_POLICY, nice, 0, ns, 0, 0)
    return int(_libc.syscall(_SYSCALL, tid, ctypes.byref(attr), 0)) == 0


def slice_of(tid: int = 0, pid: int | None = None) -> int | None:
    """Thread `tid`'s slice in nanoseconds (0: the calling thread; of process `pid`, this
    one by default), as `/proc` shows it (None where it does not).

    >>> import sys
    >>> sys.platform != "linux" or slice_of() is None or slice_of() > 0
    True
    """
    process = "self" if pid is None else str(pid)
    path = Path(f"/proc/{process}/task/{tid or threading.get_native_id()}/sched")
    try:
        with path.open() as sched:
            for line in sched:
                if line.startswith("se.slice"):
                    return int(line.split(":")[1])
    except (OSError, ValueError):
        pass
    return None


def runner_slice() -> None:
    """The long slice for the calling thread and what it starts from now on: a daemon's or a
    game host's main thread, before its other threads start."""
    if set_slice(DAEMON_SLICE_NS):
        _runner["ns"] = DAEMON_SLICE_NS


async def spawned(start: Coroutine[Any, Any, T]) -> T:
    """Await `start`, a coroutine whose first step forks an engine (asyncio starts a process
    before its first suspension), with the calling thread at the engine's slice during that
    step only: the engine inherits it, and whatever the loop runs while the start goes on
    (and any thread it starts) keeps the thread's own.

    >>> import asyncio
    >>> async def start() -> int | None:
    ...     return slice_of()
    >>> asyncio.run(spawned(start())) in (ENGINE_SLICE_NS, None) or sys.platform != "linux"
    True
    """
    return await _FirstStep(start)


class _FirstStep(Generic[T]):
    """An awaitable that runs `coro`'s first step inside `engine_slice`, the rest outside."""

    def __init__(self, coro: Coroutine[Any, Any, T]) -> None:
        self.coro = coro

    def __await__(self) -> Generator[Any, Any, T]:
        steps = self.coro.__await__()
        with engine_slice():
            try:
                item = next(steps)
            except StopIteration as done:
                return cast(T, done.value)
        while True:
            try:
                sent = yield item
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # a cancellation: into the coroutine
                try:
                    item = steps.throw(exc)
                except StopIteration as done:
                    return cast(T, done.value)
            else:
                try:
                    item = steps.send(sent)
                except StopIteration as done:
                    return cast(T, done.value)


@contextlib.contextmanager
def engine_slice() -> Iterator[None]:
    """Start an engine inside: the calling thread takes the short slice, so that the process
    it forks inherits it, and returns to its own afterwards.

    >>> with engine_slice():
    ...     pass
    """
    changed = set_slice(ENGINE_SLICE_NS)
    try:
        yield
    finally:
        if changed:
            set_slice(_runner["ns"])
