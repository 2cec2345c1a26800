"""`orchestrator serve`: the read-only web view of an event's database."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import (
    LogFileOpt,
    LogLevel,
    LogLevelOpt,
    ParentOpt,
    app,
    as_child,
    fail,
    log_target,
    user_errors,
)

if TYPE_CHECKING:  # aiohttp is loaded by the commands that serve
    from aiohttp import web


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty for 127.0.0.1)."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise fail(f"--http: expected HOST:PORT, not {text!r}")
    return host or "127.0.0.1", int(port)


HostOpt = Annotated[str, typer.Option(help="Address to bind (loopback unless told).")]
PortOpt = Annotated[int, typer.Option(min=1, max=65535)]
#: the listening socket `run --http` or `season run --http` bound and handed over
FdOpt = Annotated[int | None, typer.Option(hidden=True, help="Serve on this listening socket.")]


def serve_view(
    make: Callable[[], web.Application],
    *,
    host: str,
    port: int,
    fd: int | None,
    parent: int | None,
    log_file: Path | None = None,
    log_level: str = "info",
    **about: str,
) -> None:
    """Serve the web view `make` builds until stopped; the `serving` log line carries `about`
    (what is served).  A daemon's child (`parent`) has tied itself to it already
    (`become_web_child`); alone, it yields the CPU to engines and their clocks the same."""
    import asyncio

    import structlog

    from orchestrator.daemon.system import WebProcess
    from orchestrator.logs import configure, limit_server_errors
    from orchestrator.web.server import connection_cap, serve_until_stopped

    if parent is None:
        os.nice(WebProcess.NICE)  # beside a daemon, engines and their clocks come first
    configure(file=log_file, level=log_level)
    limit_server_errors()
    log = structlog.get_logger()
    listening = None if fd is None else socket.socket(fileno=fd)

    def started(address: str) -> None:
        log.info("serving", **about, address=address, max_connections=connection_cap())

    asyncio.run(
        serve_until_stopped(make(), sock=listening, host=host, port=port, on_started=started)
    )


@app.command()
@user_errors
def serve(
    db: Annotated[Path, typer.Option("--db", help="The event's SQLite database.")],
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8080,
    fd: FdOpt = None,
    parent: ParentOpt = None,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Serve the web view of DB: overview, standings, crosstable, games, PGN downloads."""
    from orchestrator.daemon.system import become_web_child
    from orchestrator.web.app import make_app

    target = log_target(log_file)
    as_child(db, parent, become_web_child)
    serve_view(
        lambda: make_app(db), host=host, port=port, fd=fd, parent=parent, log_file=target,
        log_level=log_level.value,
        database=str(db),
    )  # fmt: skip
