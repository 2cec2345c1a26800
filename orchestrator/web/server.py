"""Serving the web view: aiohttp's own server, with idle connections closed and their number
capped, so that no client can take the descriptors a server needs to answer the next one.

Near the cap, each new connection closes the oldest idle one; at the cap with none idle, a
new connection is closed as soon as it is accepted (the client sees a reset, never a hung
socket). An idle connection, also one that never sends a request, is closed after `IDLE_S`
seconds by aiohttp itself (`keepalive_timeout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import signal
import socket
import weakref
from collections.abc import Callable

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from orchestrator.core.errors import OrchestratorError

#: an idle connection (also one that never sends a request) is closed after this many s
IDLE_S = 15.0
#: at most this many connections at once, whatever the descriptor limit
MAX_CONNECTIONS = 512
#: descriptors kept for everything but connections: the database, logs, the listening socket
RESERVED_FDS = 64


def connection_cap(limit: int | None = None) -> int:
    """How many connections a server may hold under a descriptor limit (the process's own
    soft `RLIMIT_NOFILE` when not given): half of what is left after a reserve, at most
    `MAX_CONNECTIONS`, and never fewer than 1.

    >>> connection_cap(1024)
    480
    >>> connection_cap(65536)
    512
    >>> connection_cap(10)
    1
    """
    if limit is None:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(1, min(MAX_CONNECTIONS, (limit - RESERVED_FDS) // 2))


class _Refused(asyncio.Protocol):
    """A connection over the cap: closed at once, with a reset rather than a lingering FIN."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # RST: no TIME_WAIT, no half-open state
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00" * 2)
        assert isinstance(transport, asyncio.Transport)
        transport.abort()


def idle(handler: RequestHandler) -> bool:
    """Whether a connection is between requests (or has not sent a whole one yet).

    aiohttp keeps this in its handler's private state, which its own keep-alive timer reads;
    `tests/daemon/test_daemon_control.py` fails if an upgrade changes it.
    """
    return getattr(handler, "_current_request", None) is None and not getattr(
        handler, "_messages", True
    )


class _Counted(asyncio.Protocol):
    """aiohttp's handler of one connection, counted from its acceptance to its end."""

    def __init__(self, handler: RequestHandler, pool: weakref.WeakKeyDictionary[_Counted, None]):
        self.handler, self.pool, self.made = handler, pool, False
        pool[self] = None

    def open(self) -> bool:
        return not self.made or self.handler.transport is not None  # force_close clears it

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.made = True
        self.handler.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.pool.pop(self, None)
        self.handler.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.handler.data_received(data)

    def eof_received(self) -> None:
        self.handler.eof_received()

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()


def capped(server: web.Server, cap: int) -> Callable[[], asyncio.Protocol]:
    """A protocol factory for `loop.create_server` that serves with `server` and keeps its
    connections under `cap`.

    Past three quarters of the cap, each new connection closes the oldest idle one, so that a
    crowd of idle sockets cannot lock out the next reader. At the cap, with no idle connection
    to close, new connections are refused.
    """
    soft = max(1, cap * 3 // 4)
    pool: weakref.WeakKeyDictionary[_Counted, None] = weakref.WeakKeyDictionary()

    def factory() -> asyncio.Protocol:
        live = [c for c in pool if c.open()]  # oldest first
        if len(live) >= soft:
            oldest = next((c for c in live if c.made and idle(c.handler)), None)
            if oldest is not None:
                oldest.handler.force_close()
            elif len(live) >= cap:
                return _Refused()
        return _Counted(server(), pool)

    return factory


async def serve_until_stopped(
    app: web.Application,
    *,
    sock: socket.socket | None = None,
    host: str = "127.0.0.1",
    port: int = 8080,
    cap: int | None = None,
    on_started: Callable[[str], None] | None = None,
) -> None:
    """Serve `app` on `sock` (or HOST:PORT) until SIGTERM, SIGINT or SIGHUP, then shut down
    cleanly (the connections are closed, the app's cleanup runs)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=IDLE_S)
    await runner.setup()
    assert runner.server is not None
    factory = capped(runner.server, connection_cap() if cap is None else cap)
    try:
        if sock is None:
            listening = await loop.create_server(factory, host, port, backlog=128)
        else:
            listening = await loop.create_server(factory, sock=sock, backlog=128)
    except OSError as error:
        await runner.cleanup()
        raise OrchestratorError(
            f"serve: cannot listen on {host}:{port}: {error.strerror or error}"
        ) from None
    try:
        name = listening.sockets[0].getsockname()
        if on_started is not None:
            on_started(f"{name[0]}:{name[1]}")
        await stop.wait()
    finally:
        listening.close()
        await runner.cleanup()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(signum)
