"""`orchestrator season`: a whole season from one file (`config/season.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import (
    LogFileOpt,
    LogLevel,
    LogLevelOpt,
    OneLineGroup,
    ParentOpt,
    app,
    fail,
    log_target,
    user_errors,
)
from orchestrator.cli.web import FdOpt, HostOpt, PortOpt, serve_view

if TYPE_CHECKING:
    from orchestrator.config.season import Season

season_app = typer.Typer(
    cls=OneLineGroup,
    help="A season's events in order, fields drawn from earlier events' places.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(season_app, name="season")

SeasonArg = Annotated[Path, typer.Argument(metavar="SEASON", help="season.toml")]
ReasonOpt = Annotated[str, typer.Option(help="Why (kept in the season's store).")]
EventArg = Annotated[str, typer.Argument(help="The event (its name in SEASON).")]
EnginesArg = Annotated[
    list[str], typer.Argument(help="Engines, in order: best first (decide), or seeds (field).")
]


def _controlled(season: Path, command: str, reason: str) -> Season:
    """The season a director's control is given to, read; and the control's reason, which
    the season's store keeps: never blank."""
    from orchestrator.config.season import load_season

    loaded = load_season(season)
    if not reason.strip():
        raise fail(f"season {command}: --reason: say why (it is kept in the season's store)")
    return loaded


@season_app.command("check")
@user_errors
def check(season: SeasonArg) -> None:
    """Validate SEASON: its events' order, fields and files, each event's rules, and what the
    events still to play need on this machine (the programs of the engines that may play
    them)."""
    from orchestrator.config.season import load_season
    from orchestrator.event.season import check_season_machine

    loaded = load_season(season)
    check_season_machine(loaded)
    typer.echo(f"{season}: ok: {len(loaded.events)} events, {len(loaded.engines)} engines")


@season_app.command("run")
@user_errors
def run(
    season: SeasonArg,
    http: Annotated[
        str | None, typer.Option(help="Also serve the season's web view at HOST:PORT.")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(help="Resume an event although settings that affect future games changed."),
    ] = False,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Play SEASON's events in order, unattended; the same command resumes it."""
    import asyncio

    from orchestrator.cli.web import parse_address
    from orchestrator.config.season import load_season
    from orchestrator.daemon.season import run_season
    from orchestrator.logs import configure

    address = parse_address(http) if http else None
    loaded = load_season(season)
    configure(file=log_target(log_file), level=log_level.value)
    raise typer.Exit(asyncio.run(run_season(loaded, address, force=force)))


@season_app.command("decide")
@user_errors
def decide(season: SeasonArg, event: EventArg, engines: EnginesArg, reason: ReasonOpt) -> None:
    """Order engines that tied in EVENT's final places (the season never guesses)."""
    from orchestrator.event.season import season_store, stored

    loaded = _controlled(season, "decide", reason)
    loaded.event(event)
    if len(set(engines)) != len(engines):
        raise fail(f"{season}: season decide: name each tied engine once")
    if not stored(loaded):
        raise fail(f"{season}: [[event]] {event!r} has not finished: nothing to decide")
    with season_store(loaded) as store:
        row = store.events().get(event)
        if row is None or row.places is None:
            raise fail(f"{season}: [[event]] {event!r} has not finished: nothing to decide")
        places = {name: place for place, name in row.places}
        unknown = [n for n in engines if n not in places]
        if unknown:
            raise fail(f"{season}: {', '.join(unknown)} did not play {event!r}")
        if len({places[n] for n in engines}) != 1 or len(engines) < 2:
            raise fail(f"{season}: {', '.join(engines)} do not share a place in {event!r}")
    with season_store(loaded, write=True) as store:
        store.decide(event, engines, reason)
    typer.echo(f"{event}: {' > '.join(engines)}")


@season_app.command("status")
@user_errors
def status(season: SeasonArg) -> None:
    """Every event of SEASON: its state, field, leaders or winner, who moves up or down."""
    import asyncio

    from orchestrator.config.season import load_season
    from orchestrator.event.season import season_status

    now = asyncio.run(season_status(load_season(season)))
    held = f" (held before its next event: {now.held})" if now.held is not None else ""
    typer.echo(f"{now.name}{held}")
    for event in now.events:
        if event.state == "pending":
            sources = f" (after {', '.join(event.after)})" if event.after else ""
            typer.echo(f"  {event.name}: pending{sources}")
            if event.field_by_director:
                typer.echo(f"    field set by a director: {', '.join(event.field)}")
            continue
        typer.echo(f"  {event.name}: {event.state}; field {', '.join(event.field)}")
        top = ", ".join(f"{p} {n}" for p, n in event.places[:3])
        if top:
            typer.echo(f"    {'places' if event.state == 'finished' else 'leaders'}: {top}")
        if event.up:
            typer.echo(f"    up: {', '.join(event.up)}")
        if event.down:
            typer.echo(f"    down: {', '.join(event.down)}")
        if event.undecided:
            typer.echo(f"    undecided: {event.undecided}")


@season_app.command("serve")
@user_errors
def serve(
    season: SeasonArg,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8080,
    fd: FdOpt = None,
    parent: ParentOpt = None,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Serve SEASON's web view: its page, and every event's pages under the event's name."""
    from orchestrator.config.season import load_season
    from orchestrator.daemon.system import become_web_child
    from orchestrator.web.season import make_season_app

    loaded = load_season(season)
    target = log_target(log_file)
    if parent is not None:
        become_web_child(parent)
    serve_view(
        lambda: make_season_app(loaded),
        host=host,
        port=port,
        fd=fd,
        parent=parent,
        log_file=target,
        log_level=log_level.value,
        season=str(season),
    )


@season_app.command("next")
@user_errors
def next_season(
    season: SeasonArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="The next season's file.")],
) -> None:
    """Write the next season's file: each league's engines after promotion and relegation,
    the season's name one higher ("TCEC Season 21" after "TCEC Season 20")."""
    from orchestrator.config.season import load_season, season_toml
    from orchestrator.core.season import Undecided, next_memberships
    from orchestrator.daemon.outputs import write_atomic
    from orchestrator.event.season import season_store, stored

    loaded = load_season(season)
    if output.is_dir():
        raise fail(f"-o: {output} is a folder: name the next season's file")
    if not output.parent.is_dir():
        raise fail(f"-o: no such folder {str(output.parent)!r} for the next season's file")
    if output.resolve() == season.resolve():
        raise fail(f"-o: {output} is {season} itself: the next season needs a file of its own")
    moving = [e for e in loaded.events if e.promote or e.relegate]
    rows = {}
    decisions: dict[str, list[str]] = {}
    if stored(loaded):
        with season_store(loaded) as store:
            rows, decisions = store.events(), store.decisions()
    unfinished = [e.name for e in moving if rows.get(e.name) is None or rows[e.name].places is None]
    if unfinished:
        raise fail(f"{season}: {', '.join(unfinished)} not finished: the memberships wait")
    fields = {name: list(row.field) for name, row in rows.items()}
    places = {name: row.places or [] for name, row in rows.items()}
    try:
        members = next_memberships(moving, fields, places, decisions, loaded.aliases)
    except Undecided as exc:
        raise fail(f"{season}: {exc}") from None
    try:
        write_atomic(output, season_toml(loaded, members))
    except OSError as exc:
        raise fail(f"-o: cannot write {output}: {exc.strerror or exc}") from None
    typer.echo(f"{output}: {len(members)} leagues")


@season_app.command("hold")
@user_errors
def hold(season: SeasonArg, reason: ReasonOpt) -> None:
    """Hold SEASON before its next event (an event being played goes on to its end)."""
    from orchestrator.event.season import season_store

    loaded = _controlled(season, "hold", reason)
    with season_store(loaded, write=True) as store:
        store.control("hold", reason)
    typer.echo(f"{season}: held before its next event")


@season_app.command("release")
@user_errors
def release(season: SeasonArg, reason: ReasonOpt) -> None:
    """Release a hold: `season run` goes on with the next event."""
    from orchestrator.event.season import season_store, stored

    loaded = _controlled(season, "release", reason)
    held = None
    if stored(loaded):
        with season_store(loaded) as store:
            held = store.held()
    if held is None:
        raise fail(f"{season}: the season is not held")
    with season_store(loaded, write=True) as store:
        store.control("release", reason)
    typer.echo(f"{season}: released")


@season_app.command("field")
@user_errors
def field(season: SeasonArg, event: EventArg, engines: EnginesArg, reason: ReasonOpt) -> None:
    """Set EVENT's field by hand, before it starts, in place of the one its draws give."""
    from orchestrator.config.season import check_field
    from orchestrator.event.season import begun, season_store

    loaded = _controlled(season, "field", reason)
    check_field(loaded, loaded.event(event), tuple(engines))
    if event in begun(loaded):
        raise fail(f"{season}: [[event]] {event!r} has started: its field is fixed")
    with season_store(loaded, write=True) as store:
        store.control("field", reason, event, engines)
    typer.echo(f"{event}: {', '.join(engines)}")
