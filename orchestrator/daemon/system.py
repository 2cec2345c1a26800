"""The daemon's ties to the operating system: systemd's notify socket and the web process."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from orchestrator.config.model import ConfigError
from orchestrator.engines.adapter import ENGINE_PIDS, die_with_parent
from orchestrator.engines.procfs import children
from orchestrator.executor import HELPER_PIDS
from orchestrator.logs import log_file, log_level


def notify(message: str) -> None:
    """Send `message` (READY=1, WATCHDOG=1, STOPPING=1) to systemd, if it is listening."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    # never block the event loop on systemd: a full socket buffer drops the message
    flags = socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, flags) as sock:
        sock.connect(address)
        sock.sendall(message.encode())


def watchdog_interval() -> float | None:
    """Half the watchdog period systemd asks for, in seconds, or None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and int(pid) != os.getpid()):
        return None
    return int(usec) / 2_000_000


#: the web and kibitz processes this daemon started: its own children, never swept
WEB_PIDS: set[int] = set()


def own_children() -> frozenset[int]:
    """The children this process started itself and reaps itself: engines, web processes,
    the scheduler and workers of a local Dask cluster."""
    return frozenset(ENGINE_PIDS | WEB_PIDS | HELPER_PIDS)


class WebProcess:
    """The web view of `run --http` (`orchestrator serve`) and of `season run --http`
    (`orchestrator season serve`), served by a process of its own.

    It never shares an event loop, or the GIL, with the clocks of running games, and it runs
    at a lower CPU priority (nice 10) than the daemon and the engines.  The daemon binds the
    socket itself, so a bad address fails (a `ConfigError`) before the event starts, and
    hands it over; the server dies with the daemon (parent-death signal), and `stop` ends it.
    """

    NICE = 10

    def __init__(self, serve: Sequence[str], host: str, port: int) -> None:
        self.serve = list(serve)  # the command's words: ["serve", "--db", "event.sqlite"]
        try:
            self.socket = socket.create_server((host, port), reuse_port=False)
        except OSError as exc:
            raise ConfigError(f"--http: cannot listen on {host}:{port}: {exc.strerror}") from None
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def of_event(cls, database: Path, host: str, port: int) -> WebProcess:
        return cls(["serve", "--db", str(database)], host, port)

    def start(self) -> None:
        fd = self.socket.fileno()
        command = [sys.executable, "-m", "orchestrator", *self.serve, *_logging_to()]
        self.process = subprocess.Popen(
            [*command, "--fd", str(fd), "--parent", str(os.getpid())],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
        )
        self.socket.close()  # the child has it
        WEB_PIDS.add(self.process.pid)

    def stop(self) -> None:
        stop_child(self.process)


def _logging_to() -> list[str]:
    """A child's `--log-file` and `--log-level`: the daemon's (a file, where it logs to one:
    never the standard output that `run --output` keeps for its games)."""
    path = log_file()
    level = ["--log-level", log_level()]
    return level if path is None else ["--log-file", str(path), *level]


def stop_child(process: subprocess.Popen[bytes] | None) -> None:
    """End a child process of the daemon: SIGTERM, then SIGKILL after 5 s."""
    if process is None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class KibitzProcess:
    """The kibitzers (`orchestrator kibitz`), in a process of their own at the lowest CPU
    priority: it reads the database and writes the kibitzer files, and dies with the daemon.
    The daemon starts it again (after `RESTART_S`) if it ended by itself.

    It says on a pipe when its kibitzers run (`ready`): the daemon starts no game before
    that, or before `READY_S` have passed, so that kibitzers follow every game from its
    first position."""

    RESTART_S = 5.0
    #: the longest the first game waits for the kibitzers (then the event goes on)
    READY_S = 30.0

    def __init__(self, database: Path) -> None:
        self.database = database
        self.process: subprocess.Popen[bytes] | None = None
        self._ready: int | None = None  # the pipe's reading end, until `ready` reads it

    def start(self) -> None:
        self._close_ready()
        read, write = os.pipe()
        command = [sys.executable, "-m", "orchestrator", "kibitz", "--db", str(self.database)]
        command += _logging_to()
        try:
            self.process = subprocess.Popen(
                [*command, "--parent", str(os.getpid()), "--ready-fd", str(write)],
                stdin=subprocess.DEVNULL,
                pass_fds=(write,),
            )
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        self._ready = read
        WEB_PIDS.add(self.process.pid)

    async def ready(self) -> bool:
        """Wait until the process says its kibitzers run (the caller bounds the wait);
        False when it ended without saying so."""
        fd = self._ready
        if fd is None:
            return False
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await readable
            return os.read(fd, 64).startswith(b"ready")
        finally:
            loop.remove_reader(fd)
            self._close_ready()

    def _close_ready(self) -> None:
        if self._ready is not None:
            os.close(self._ready)
            self._ready = None

    def ended(self) -> int | None:
        """Its exit status if it ended by itself (None while it runs)."""
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        self._close_ready()
        stop_child(self.process)


def become_child(parent: int) -> None:
    """In a process the daemon `parent` started (`serve`, `kibitz`): die with the daemon."""
    die_with_parent()
    if os.getppid() != parent:  # the daemon died before the death signal was armed
        raise SystemExit(0)


def become_web_child(parent: int) -> None:
    """In `serve --parent PID`: die with the daemon, and yield the CPU to it and its engines."""
    become_child(parent)
    os.nice(WebProcess.NICE)


#: the event loops whose pool of threads for blocking work `fixed_threads` has set: its size
_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = weakref.WeakKeyDictionary()


def fixed_threads(loop: asyncio.AbstractEventLoop) -> int:
    """Give `loop` its pool of threads for blocking work (`asyncio.to_thread`: file writes,
    fsyncs, the standings' files), every thread started now; how many.  (BLAS starts no
    thread of its own: see `orchestrator/__init__.py`.)  asyncio's own pool
    starts a thread whenever all of its threads are busy, up to its limit, so that a daemon's
    thread count would creep up over a month as rare bursts come; this one's stays the same
    from the event's start.  Once per loop (a season's events share it); `asyncio.run` shuts
    it down at the end.

    >>> loop = asyncio.new_event_loop()
    >>> fixed_threads(loop) == fixed_threads(loop) == min(32, (os.cpu_count() or 1) + 4)
    True
    >>> loop.close()
    """
    size = _POOLS.get(loop)
    if size is None:
        size = min(32, (os.cpu_count() or 1) + 4)  # asyncio's own limit
        pool = ThreadPoolExecutor(size, thread_name_prefix="orchestrator-io")
        started = threading.Barrier(size + 1)
        for _ in range(size):  # each waits for all: the pool starts a thread for every one
            pool.submit(started.wait)
        started.wait()
        loop.set_default_executor(pool)
        _POOLS[loop] = size
    return size


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Set what is alive when an event starts aside from the garbage collector while it
    plays (`gc.freeze`), and give it back after (`gc.unfreeze`).

    The daemon's heap is mostly what it loaded before its first game: its modules, numpy,
    scipy and networkx, the config and the openings, about 120,000 objects the collector
    tracks.  Each of Python's full collections walked them all, 70-90 ms of CPU, on the
    loop, for nothing: they live as long as the daemon.  Frozen, a full collection walks
    what the games made (about 10,000 objects).  Garbage left before the freeze is
    collected first; an object frozen that becomes garbage later is freed by its reference
    count as ever, and only a cycle of such objects waits for the unfreeze.

    >>> with frozen_heap():
    ...     gc.get_freeze_count() > 0
    True
    >>> gc.get_freeze_count()
    0
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def trim_memory() -> bool:
    """Give the C allocator's free memory back to the system (glibc's `malloc_trim`, which
    also releases the free pages inside its arenas); whether it could (False off glibc).

    Each round's end reads the whole event (its standings, its next pairing) and lets it go
    again; glibc keeps what was freed, in every thread's arena, and a month of round ends
    would show as a daemon that grows.  Dask does the same for its workers' memory
    ("Memory not released back to the OS" in its documentation).

    >>> trim_memory() in (True, False)
    True
    """
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, where the C library is glibc."""
    if sys.platform != "linux":
        return None
    try:
        trim: Callable[[int], int] | None = getattr(ctypes.CDLL("libc.so.6"), "malloc_trim", None)
        return trim
    except OSError:  # another C library (musl has no libc.so.6)
        return None


_MALLOC_TRIM = _malloc_trim()


_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Linux: processes that escape an engine's process group (a child that calls setsid)
    become the daemon's children when their parent dies, so `sweep_orphans` can end them."""
    if sys.platform != "linux":
        return False
    return int(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)) == 0


def sweep_orphans(own: set[int] | frozenset[int] = frozenset()) -> int:
    """Kill and reap what the daemon adopted as the subreaper of its engines; how many.

    - Processes that escaped an engine's process group into a session of their own
      (`setsid`) and became the daemon's children when their parent died: killed, reaped.
    - An engine's helpers, killed with its process group after their parent died: zombies
      now the daemon's, reaped.

    The daemon's own children are never touched: they stay in its session and are alive, or
    are in `own` (the engines asyncio reaps, the web process).
    """
    swept = 0
    session = os.getsid(0)
    for _ in range(8):  # an orphan's own children become ours when it dies: a few passes
        found = []
        for p in children():
            if p.pid in own:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if p.state == "Z" or os.getsid(p.pid) != session:
                    found.append(p.pid)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            swept += 1
    return swept
