"""`orchestrator serve`: the read-only web view of an event's database."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.base import ParentOpt, app, as_child, fail, user_errors


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty for 127.0.0.1)."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise fail(f"--http: expected HOST:PORT, not {text!r}")
    return host or "127.0.0.1", int(port)


@app.command()
@user_errors
def serve(
    db: Annotated[Path, typer.Option("--db", help="The event's SQLite database.")],
    host: Annotated[
        str, typer.Option(help="Address to bind (loopback unless told).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8080,
    fd: Annotated[
        int | None, typer.Option(hidden=True, help="Serve on this listening socket.")
    ] = None,
    parent: ParentOpt = None,
) -> None:
    """Serve the web view of DB: overview, standings, crosstable, games, PGN downloads."""
    import asyncio

    import structlog

    from orchestrator.daemon.system import WebProcess, become_web_child
    from orchestrator.logs import configure, limit_server_errors
    from orchestrator.web.app import make_app
    from orchestrator.web.server import connection_cap, serve_until_stopped

    as_child(db, parent, become_web_child)
    if parent is None:
        os.nice(WebProcess.NICE)  # beside a daemon, engines and their clocks come first
    configure()
    limit_server_errors()
    log = structlog.get_logger()
    listening = None if fd is None else socket.socket(fileno=fd)  # `run --http` bound it

    def started(address: str) -> None:
        log.info("serving", database=str(db), address=address, max_connections=connection_cap())

    asyncio.run(
        serve_until_stopped(make_app(db), sock=listening, host=host, port=port, on_started=started)
    )
