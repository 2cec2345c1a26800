"""Commands that read the database (also while the daemon runs): status, standings,
pairings, export.  Each takes `--db PATH` or finds the database through `--config`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from orchestrator.cli.app import app, fail, user_errors
from orchestrator.config.load import load
from orchestrator.core.model import Game, Player, Round, Tournament
from orchestrator.core.standings import Tiebreak
from orchestrator.daemon.outputs import event_pgn, round_pgn
from orchestrator.reports import crosstable, standings_data, standings_table
from orchestrator.store.database import GameRow, RoundRow, Store, StoreError

DbOpt = Annotated[Path | None, typer.Option("--db", help="The event's SQLite database.")]
ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Config whose database to read.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


class EventView:
    """What the read commands need, loaded in one go."""

    def __init__(
        self, name: str, settings: dict[str, Any], players: list[Player], rounds: list[RoundRow]
    ) -> None:
        self.name, self.settings, self.rounds = name, settings, rounds
        self.tiebreaks = cast(tuple[Tiebreak, ...], tuple(settings.get("tiebreaks", ())))
        self.tournament = Tournament(
            tuple(players),
            tuple(
                Round(r.number, tuple(_game(g) for g in r.games), r.bye)
                for r in rounds
                if r.finished_at is not None or all(g.result for g in r.games)
            ),
            settings["format"],
            settings["schedule"],
            settings["system"],
            settings["cycles"],
        )


def _game(g: GameRow) -> Game:
    return Game(g.white, g.black, g.result)


async def load_view(db: Path) -> tuple[EventView, Store]:
    store = await Store.open(db, readonly=True)
    event = await store.event()
    if event is None:
        await store.close()
        raise StoreError(f"{db}: no event has been started in this database")
    return EventView(event[0], event[1], await store.players(), await store.rounds()), store


def database(db: Path | None, config: Path) -> Path:
    return db if db is not None else load(config).tournament.database


def view(db: Path | None, config: Path) -> EventView:
    async def read() -> EventView:
        loaded, store = await load_view(database(db, config))
        await store.close()
        return loaded

    try:
        return asyncio.run(read())
    except StoreError as exc:
        raise fail(str(exc)) from None


def standings_json(v: EventView) -> dict[str, Any]:
    return {
        "event": v.name,
        "rounds": len(v.tournament.rounds),
        "standings": standings_data(v.tournament, v.tiebreaks),
    }


def round_json(r: RoundRow) -> dict[str, Any]:
    return {
        "round": r.number,
        "bye": r.bye,
        "dropped_rounds": r.dropped_rounds,
        "finished": r.finished_at is not None,
        "games": [
            {
                "id": g.id,
                "number": g.number,
                "white": g.white,
                "black": g.black,
                "status": g.status,
                "result": g.result,
                "termination": g.termination,
                "reason": g.reason,
                "plies": g.plies,
                "opening": g.opening.name if g.opening else None,
            }
            for g in r.games
        ],
    }


@app.command()
@user_errors
def standings(
    db: DbOpt = None, config: ConfigOpt = Path("engines.toml"), as_json: JsonOpt = False
) -> None:
    """The standings with tiebreaks, and the crosstable."""
    v = view(db, config)
    if as_json:
        typer.echo(json.dumps(standings_json(v), indent=1))
        return
    typer.echo(f"{v.name}: standings after {len(v.tournament.rounds)} round(s)\n")
    typer.echo(standings_table(v.tournament, v.tiebreaks))
    typer.echo(crosstable(v.tournament, v.tiebreaks), nl=False)


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
    v = view(db, config)
    if not v.rounds:
        raise fail("no round has been paired yet")
    chosen = [r for r in v.rounds if round_number is None or r.number == round_number]
    if not chosen:
        raise fail(f"no round {round_number} (rounds paired: {len(v.rounds)})")
    r = chosen[-1]
    if as_json:
        typer.echo(json.dumps(round_json(r), indent=1))
        return
    typer.echo(f"Round {r.number}" + (f" (BYE: {r.bye})" if r.bye else ""))
    for g in r.games:
        typer.echo(f"{g.number:3d}. {g.white} - {g.black}  {g.result or g.status}")


@app.command()
@user_errors
def export(
    round_number: Annotated[int | None, typer.Option("--round", help="Only this round.")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here.")] = None,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
    as_json: JsonOpt = False,
) -> None:
    """The finished games as PGN (the whole event, or one round), in round and playing order."""
    v = view(db, config)
    rounds = [r for r in v.rounds if round_number is None or r.number == round_number]
    if round_number is not None and not rounds:
        raise fail(f"no round {round_number}")
    if as_json:
        text = (
            json.dumps(
                [
                    {
                        "round": g.round,
                        "number": g.number,
                        "white": g.white,
                        "black": g.black,
                        "result": g.result,
                        "pgn": g.pgn,
                    }
                    for r in rounds
                    for g in r.games
                    if g.status == "finished"
                ],
                indent=1,
            )
            + "\n"
        )
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

    async def read() -> dict[str, Any]:
        v, store = await load_view(database(db, config))
        try:
            running = []
            for r in v.rounds:
                for g in r.games:
                    if g.status != "running":
                        continue
                    moves = await store.live_moves(g.id)
                    clocks: dict[str, int | None] = {"white": None, "black": None}
                    for m in moves:
                        clocks["white" if m["ply"] % 2 == 1 else "black"] = m["clock_ms"]
                    running.append(
                        {
                            "round": r.number,
                            "number": g.number,
                            "white": g.white,
                            "black": g.black,
                            "plies": len(moves),
                            "last": moves[-1]["san"] if moves else None,
                            "clock_ms": clocks,
                        }
                    )
            total = v.settings.get("rounds")
            played = sum(1 for r in v.rounds for g in r.games if g.status == "finished")
            return {
                "event": v.name,
                "round": v.rounds[-1].number if v.rounds else 0,
                "rounds": total,
                "games_finished": played,
                "games_running": running,
                "finished": all(r.finished_at for r in v.rounds) and len(v.rounds) == total,
                "top": standings_data(v.tournament, v.tiebreaks)[:5],
            }
        finally:
            await store.close()

    try:
        data = asyncio.run(read())
    except StoreError as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(data, indent=1))
        return
    state = "finished" if data["finished"] else f"round {data['round']} of {data['rounds']}"
    typer.echo(f"{data['event']}: {state}, {data['games_finished']} games finished")
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
