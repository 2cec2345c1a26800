"""Commands that read the database (also while the daemon runs): status, standings,
pairings, export.  Each takes `--db PATH` or finds the database through `--config`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import app, fail, user_errors

if TYPE_CHECKING:
    from orchestrator.event.api import OverviewJSON
    from orchestrator.event.read import EventView

DbOpt = Annotated[Path | None, typer.Option("--db", help="The event's SQLite database.")]
ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Config whose database to read.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def database(db: Path | None, config: Path) -> Path:
    """The database of `--db`, or of the config's `database`."""
    from orchestrator.config.load import load

    return db if db is not None else load(config).tournament.database


def view(db: Path | None, config: Path, *, pgn: bool = False) -> EventView:
    import asyncio

    from orchestrator.event.read import load_view

    return asyncio.run(load_view(database(db, config), pgn=pgn))


@app.command()
@user_errors
def standings(
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
    as_json: JsonOpt = False,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="Only cutechess's result table (-resultformat): a format (default, wide, "
            "per-color, term, draws, ...) or tokens (Rank,Name,Elo,Error,W,L,D,wW,bW,...).",
        ),
    ] = None,
) -> None:
    """The standings with tiebreaks, and the crosstable."""
    from orchestrator.event import read
    from orchestrator.event.columns import table, tokens
    from orchestrator.event.export import standings_text

    try:
        chosen = tokens(columns) if columns is not None else None
    except ValueError as exc:
        raise fail(f"--columns: {exc}") from None
    event = view(db, config)
    if chosen is not None:
        rows = read.result_records(event)
        if as_json:
            values = [r.values(i) for i, r in enumerate(rows, 1)]
            typer.echo(json.dumps([{t: v[t] for t in chosen} for v in values], indent=1))
        else:
            typer.echo(table(chosen, rows), nl=False)
        return
    if as_json:
        typer.echo(json.dumps(read.standings_json(event), indent=1))
        return
    rounds = len(event.tournament.rounds)
    state = " (provisional: a round is being played)" if event.provisional else ""
    typer.echo(f"{event.name}: standings after {rounds} complete round(s){state}\n")
    text = standings_text(
        event.standings_tournament(),
        event.settings.tiebreaks,
        read.standings_notes(event),
        event.settings.anchor,
        read.ending_tally(event),
    )
    typer.echo(text, nl=False)


@app.command()
@user_errors
def pairings(
    round_number: Annotated[
        int | None, typer.Option("--round", help="Round (default: the last).")
    ] = None,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
    as_json: JsonOpt = False,
) -> None:
    """A round's games in playing order, with results."""
    from orchestrator.event import read

    event = view(db, config)
    if not event.rounds:
        raise fail("no round has been paired yet")
    chosen = [r for r in event.rounds if round_number is None or r.number == round_number]
    if not chosen:
        raise fail(f"no round {round_number} (rounds paired: {len(event.rounds)})")
    r = chosen[-1]
    if as_json:
        typer.echo(json.dumps(read.round_json(event, r), indent=1))
        return
    typer.echo(f"Round {r.number}" + (f" (BYE: {r.bye})" if r.bye else ""))
    games = {g.id: g for g in r.games}
    for m in read.matches_json(event, r):  # a team Swiss: match by match
        score = f"{m['points1']:g}-{m['points2']:g}" + ("" if m["result"] else " so far")
        typer.echo(f"  {m['team1']} - {m['team2']}  {score}")
        for g in (games[i] for i in m["games"]):
            board = read.game_summary(event, g).get("board")
            typer.echo(
                f"{g.number:3d}. board {board}: {g.white} - {g.black}  {g.result or g.status}"
            )
    if not event.tournament.teams:
        for g in r.games:
            typer.echo(f"{g.number:3d}. {g.white} - {g.black}  {g.result or g.status}")


@app.command()
@user_errors
def export(
    round_number: Annotated[int | None, typer.Option("--round", help="Only this round.")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here.")] = None,
    as_json: JsonOpt = False,
    logs: Annotated[
        Path | None,
        typer.Option(
            "--logs", help="Write the games' engine logs into this folder instead of PGN."
        ),
    ] = None,
    epd: Annotated[
        bool, typer.Option("--epd", help="Each game's final position as EPD, with its id.")
    ] = False,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
) -> None:
    """The finished games as PGN (the whole event, or one round), in round and playing order;
    with --epd their final positions, with --logs their engine logs."""
    from orchestrator.event.export import event_pgn, final_epd, round_pgn

    if sum((epd, as_json, logs is not None)) > 1:
        raise fail("export: give one of --epd, --json and --logs")

    path = database(db, config)
    event = view(path, config, pgn=logs is None)
    rounds = [r for r in event.rounds if round_number is None or r.number == round_number]
    if round_number is not None and not rounds:
        raise fail(f"no round {round_number}")
    if logs is not None:
        from orchestrator.event.export import export_logs
        from orchestrator.store.logs import logs_folder

        try:
            written = export_logs(logs_folder(path), rounds, logs, event.name)
        except OSError as exc:
            raise fail(f"--logs: {logs}: {exc.strerror or exc}") from None
        typer.echo(f"{len(written)} engine log(s) written to {logs}")
        return
    if as_json:
        from orchestrator.event.read import exported

        text = json.dumps(exported(event, rounds), indent=1) + "\n"
    elif epd:
        text = final_epd(rounds)
    else:
        text = round_pgn(rounds[0]) if round_number is not None else event_pgn(rounds)
    if output:
        output.write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)


@app.command()
@user_errors
def status(
    db: DbOpt = None, config: ConfigOpt = Path("engines.toml"), as_json: JsonOpt = False
) -> None:
    """The round, the games running (move number, clocks) and the top of the standings."""
    import asyncio

    from orchestrator.core.game.endings import summary
    from orchestrator.event import read

    async def overview() -> OverviewJSON:
        async with read.reading(database(db, config)) as (loaded, store):
            return await read.overview_json(loaded, store)

    data = asyncio.run(overview())
    if as_json:
        typer.echo(json.dumps(data, indent=1))
        return
    state = "finished" if data["finished"] else f"round {data['round']} of {data['rounds']}"
    variant = "" if data["variant"] == "standard" else f" ({data['variant']})"
    typer.echo(f"{data['event']}{variant}: {state}, {data['games_finished']} games finished")
    daemon = data["daemon"]
    if daemon["running"]:
        typer.echo(
            f"  daemon: running (pid {daemon['pid']})" + ("; paused" if data["paused"] else "")
        )
    else:
        seen = f", last seen {daemon['last_seen']}" if daemon["last_seen"] else ""
        paused = "; paused" if data["paused"] else ""
        typer.echo(f"  daemon: not running{seen}{paused}")
    if data["games_interrupted"]:
        listed = ", ".join(str(g) for g in data["games_interrupted"])
        typer.echo(f"  interrupted (replayed when a daemon starts): games {listed}")
    for g in data["games_running"]:
        clocks = " / ".join(
            "-" if ms is None else f"{ms / 1000:.1f}s" for ms in g["clock_ms"].values()
        )
        typer.echo(
            f"  playing {g['round']}.{g['number']} {g['white']} - {g['black']}: ply {g['plies']}"
            + (f" ({g['last']})" if g["last"] else "")
            + f", clocks {clocks}"
        )
    for line in data["top"]:
        typer.echo(f"  {line['place']:>5}  {line['name']}  {line['score']:g}")
    ended = summary(data["endings"])
    if ended:
        typer.echo(f"  endings: {ended}")
