"""`orchestrator run` and `orchestrator check`: validate everything, then run the event
(`daemon/run.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.base import app, fail, user_errors
from orchestrator.cli.web import parse_address

ConfigArg = Annotated[Path, typer.Argument(metavar="CONFIG", help="engines.toml")]


@app.command()
@user_errors
def check(config: ConfigArg) -> None:
    """Validate CONFIG and start each engine once (on the game hosts, for a Dask scheduler)."""
    import asyncio

    from orchestrator.daemon.run import check_on_workers, validate

    loaded, openings = asyncio.run(validate(config, start_engines=True))
    suite = f", {len(openings)} openings" if openings else ""
    if loaded.tournament.affinity and not loaded.remote:
        from orchestrator.core.cpus import cpu_text
        from orchestrator.core.errors import OrchestratorError
        from orchestrator.engines.affinity import cpu_plan

        try:
            plan = cpu_plan(loaded)
        except OrchestratorError as exc:  # this host cannot pin the games: run refuses it
            typer.echo(f"orchestrator: error: {exc}", err=True)
            raise typer.Exit(1) from None
        assert plan is not None
        slots = "; ".join(f"{cpu_text(s.first)} | {cpu_text(s.second)}" for s in plan.slots)
        typer.echo(f"{config}: pinned cores: {slots}; spare: {cpu_text(plan.spare) or 'none'}")
    if loaded.remote:
        warnings, pinned = asyncio.run(check_on_workers(loaded, openings))
        for line in warnings:
            typer.echo(f"warning: {line}", err=True)
        for line in pinned:
            typer.echo(f"{config}: {line}")
        where = f" on the workers of {loaded.tournament.executor}"
        tried = len(loaded.engines) - len(warnings)
        typer.echo(f"{config}: ok: {tried} engines started and configured{where}{suite}")
        if warnings:
            raise typer.Exit(1)
        return
    typer.echo(f"{config}: ok: {len(loaded.engines)} engines started and configured{suite}")


@app.command()
@user_errors
def run(
    config: ConfigArg,
    force: Annotated[
        bool, typer.Option(help="Resume although settings that affect future games changed.")
    ] = False,
    drain: Annotated[
        bool, typer.Option(help="On SIGTERM/SIGINT let running games finish.")
    ] = False,
    http: Annotated[str | None, typer.Option(help="Also serve the web view at HOST:PORT.")] = None,
) -> None:
    """Run the event of CONFIG, or resume it, to its final standings."""
    import asyncio

    from orchestrator.core.errors import OrchestratorError
    from orchestrator.daemon.run import run_event
    from orchestrator.logs import configure

    address = parse_address(http) if http else None
    configure()
    try:
        code = asyncio.run(run_event(config, force, drain, address))
    except (typer.Exit, OrchestratorError):
        raise
    except Exception as exc:  # the event failed while running: one line, exit 1
        raise fail(f"the event failed: {type(exc).__name__}: {exc}", code=1) from None
    raise typer.Exit(code)
