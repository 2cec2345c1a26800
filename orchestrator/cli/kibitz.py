"""`orchestrator kibitz`: the event's kibitzers, in a process of their own (the daemon starts
it when the config has `[[kibitzer]]` sections)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.base import (
    LogFileOpt,
    LogLevel,
    LogLevelOpt,
    ParentOpt,
    app,
    as_child,
    log_target,
    user_errors,
)


@app.command(hidden=True)
@user_errors
def kibitz(
    db: Annotated[Path, typer.Option("--db", help="The event's SQLite database.")],
    parent: ParentOpt = None,
    ready_fd: Annotated[
        int | None,
        typer.Option(hidden=True, help="A pipe to the daemon, closed once the kibitzers run."),
    ] = None,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Run the event's kibitzers on the featured game until stopped (SIGTERM)."""
    import asyncio
    import os
    import signal

    from orchestrator.daemon.system import become_child
    from orchestrator.engines.adapter import idle_priority
    from orchestrator.kibitz.follow import follow
    from orchestrator.logs import configure

    target = log_target(log_file)
    as_child(db, parent, become_child)
    idle_priority()
    configure(file=target, level=log_level.value)

    def ready() -> None:
        if ready_fd is not None:
            os.write(ready_fd, b"ready\n")
            os.close(ready_fd)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await follow(db, stop, ready)

    asyncio.run(main())
