"""Offline tools: `pair` (the next round of a state) and `simulate` (a whole random event)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.app import app, fail, user_errors
from orchestrator.config.load import load
from orchestrator.config.model import Config
from orchestrator.core import state_json
from orchestrator.core.model import Player, StateError, Tournament
from orchestrator.core.pairing import default_rounds, pair_next
from orchestrator.core.roundrobin import total_rounds
from orchestrator.core.simulation import simulate as run_simulation
from orchestrator.core.standings import TCEC_ORDER, Tiebreak
from orchestrator.event.export import standings_table, team_table
from orchestrator.event.settings import EventSettings
from orchestrator.event.state import seeded_players, tournament


def read_state(source: str) -> Tournament:
    """A tournament state from a path, or from stdin for '-'."""
    if source == "-":
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise StateError("stdin: not UTF-8 text") from None
        where = "stdin"
    else:
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise StateError(f"{source}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise StateError(f"{source}: not UTF-8 text") from None
        where = source
    try:
        return state_json.loads(text)
    except StateError as exc:
        raise StateError(f"{where}: {exc}") from None


@app.command()
@user_errors
def pair(
    state: Annotated[str, typer.Argument(help="Tournament-state JSON file, or - for stdin.")],
) -> None:
    """Print the next round of a tournament state as JSON (SPEC.md section 2)."""
    current = read_state(state)
    try:
        pairing = pair_next(current)
    except ValueError as exc:  # e.g. a finished round robin
        raise fail(f"{state}: {exc}") from None
    typer.echo(json.dumps(state_json.encode_pairing(pairing)))


class FormatOpt(StrEnum):
    single = "single"
    double = "double"


class ScheduleOpt(StrEnum):
    legs = "legs"
    pairs = "pairs"


class SystemOpt(StrEnum):
    swiss = "swiss"
    round_robin = "round-robin"
    olafsson = "olafsson"
    bakert = "bakert"
    koth = "koth"
    factored = "factored"
    quartile = "quartile"
    random = "random"
    team_swiss = "team-swiss"


@app.command()
@user_errors
def simulate(
    players: Annotated[
        int | None, typer.Option("--players", "-n", min=2, help="Players named P01, P02, ...")
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option("--from", help="Start from a tournament-state JSON or an engines.toml."),
    ] = None,
    rounds: Annotated[
        int | None, typer.Option(min=1, help="Total rounds (default: the config's, or N/2).")
    ] = None,
    fmt: Annotated[FormatOpt | None, typer.Option("--format", help="single | double")] = None,
    schedule: Annotated[ScheduleOpt | None, typer.Option(help="legs | pairs")] = None,
    system: Annotated[
        SystemOpt | None,
        typer.Option(
            help="swiss | round-robin | olafsson | bakert | koth | factored | quartile | random"
            " | team-swiss"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random results.")] = 1,
    draw_rate: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of draws.")] = 0.6,
    table: Annotated[bool, typer.Option("--table", help="Print a readable summary.")] = False,
) -> None:
    """Play a whole event with seeded random results; print the final state JSON."""
    if (players is None) == (source is None):
        raise fail("give exactly one of --players N or --from STATE_OR_CONFIG")
    ratings: dict[str, float] = {}
    order: tuple[Tiebreak, ...] = TCEC_ORDER
    config: Config | None = None
    if source is not None and source.suffix == ".toml":
        config = load(source)
        seeded = seeded_players(config)
        start = tournament(EventSettings.of(config, tuple(p.name for p in seeded)), seeded)
        ratings = {e.name: e.rating for e in config.engines if e.rating is not None}
        order = config.tournament.tiebreaks
    elif source is not None:
        start = read_state(str(source))
    else:
        assert players is not None
        width = len(str(players))
        start = Tournament(tuple(Player(f"P{i:0{width}d}", i) for i in range(1, players + 1)))
    start = replace(
        start,
        format=fmt.value if fmt else start.format,
        schedule=schedule.value if schedule else start.schedule,
        system=system.value if system else start.system,
    )
    if start.system == "team-swiss" and not start.teams:
        raise fail("a team Swiss needs teams: start --from a state or engines.toml that has them")
    if start.teams and start.system != "team-swiss":
        raise fail(f"the teams of {source} play a team Swiss, not {start.system}")
    size = len(start.teams or start.players)
    if config is not None and system is None:
        default = config.total_rounds()
    else:
        default = max(len(start.rounds), default_rounds(start.system, size, start.cycles))
    total = rounds or default
    if start.system == "round-robin" and total > (most := total_rounds(size, start.cycles)):
        raise fail(f"a round robin of {size} players has only {most} rounds")
    if total < len(start.rounds):
        raise fail(f"--rounds {total} is fewer than the {len(start.rounds)} rounds already played")
    sim = run_simulation(
        start, total - len(start.rounds), rng_seed=seed, draw_rate=draw_rate, ratings=ratings
    )
    if not table:
        out = state_json.encode(sim.tournament)
        played = len(start.rounds)
        for i, dropped in enumerate(sim.dropped):
            out["rounds"][played + i]["dropped_rounds"] = dropped
        typer.echo(json.dumps(out, indent=1))
        return
    final = sim.tournament
    typer.echo(
        f"{len(final.players)} players, {len(final.rounds)} rounds, {final.system}, {final.format}"
        + (f" ({final.schedule})" if final.format == "double" else "")
        + f", {sum(len(r.games) for r in final.rounds)} games, seed {seed}"
    )
    first = sim.first_removal and sim.first_removal + len(start.rounds)  # a round number
    typer.echo(
        "Encounter history: "
        + (
            f"first removal when pairing round {first}; "
            f"{sim.dropped[-1]} round(s) removed by the end"
            if first
            else "no round had to be removed"
        )
    )
    typer.echo("")
    if final.teams:
        typer.echo(team_table(final))
    typer.echo(standings_table(final, order), nl=False)
