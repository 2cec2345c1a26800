"""Offline tools: `pair` (the next round of a state) and `simulate` (a whole random event)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import app, fail, user_errors
from orchestrator.core.pairing.registry import names

if TYPE_CHECKING:
    from orchestrator.core.event.model import Tournament
    from orchestrator.core.event.simulation import Simulation
    from orchestrator.core.game.openings import Variant


def read_state(source: str) -> Tournament:
    """A tournament state from a path, or from stdin for '-'."""
    from orchestrator.core.event import state_json
    from orchestrator.core.event.model import StateError

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
    """Print the next round of a tournament state as JSON (docs/state-json.md)."""
    from orchestrator.core.event import state_json
    from orchestrator.core.pairing.round import pair_next

    current = read_state(state)
    try:
        pairing = pair_next(current)
    except ValueError as exc:  # e.g. a finished round robin
        raise fail(f"{state}: {exc}") from None
    typer.echo(json.dumps(state_json.encode_pairing(pairing)))


class SchemaOf(StrEnum):
    config = "config"
    state = "state"
    season = "season"


@app.command()
@user_errors
def schema(
    of: Annotated[
        SchemaOf,
        typer.Argument(
            metavar="config|state|season",
            help="engines.toml, the tournament-state JSON, or season.toml.",
        ),
    ],
) -> None:
    """Print the JSON Schema of engines.toml, the tournament-state JSON or season.toml (for
    editors)."""
    if of is SchemaOf.config:
        from orchestrator.config.load import schema as config_schema

        typer.echo(json.dumps(config_schema(), indent=1))
    elif of is SchemaOf.season:
        from orchestrator.config.season import schema as season_schema

        typer.echo(json.dumps(season_schema(), indent=1))
    else:
        from orchestrator.core.event.state_json import schema as state_schema

        typer.echo(json.dumps(state_schema(), indent=1))


#: rounds a simulation of an event that ends itself may take at most (a knockout's tiebreak
#: pairs are capped, so it ends well before)
UNTIL_OVER = 100_000


class FormatOpt(StrEnum):
    single = "single"
    double = "double"


class VariantOpt(StrEnum):
    standard = "standard"
    chess960 = "chess960"
    dfrc = "dfrc"


class ScheduleOpt(StrEnum):
    legs = "legs"
    pairs = "pairs"


def start_positions(sim: Simulation, variant: Variant, seed: int) -> list[list[str]]:
    """The start position of every simulated game, drawn as the daemon draws them from the
    seed (`OpeningChoice`): both games of a pair share one."""
    from orchestrator.core.game.openings import draw_position
    from orchestrator.event.state import pair_numbers

    out, first = [], 0
    for rnd, openings in zip(sim.tournament.rounds[-len(sim.dropped) :], sim.openings, strict=True):
        keys = list(openings) or pair_numbers(rnd.games, first)
        first = max([first - 1, *keys]) + 1
        out.append([draw_position(variant, seed, key).name.split()[-1].lstrip("#") for key in keys])
    return out


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
        str | None,
        typer.Option(metavar="SYSTEM", help="The pairing system: " + " | ".join(names())),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random results.")] = 1,
    variant: Annotated[
        VariantOpt,
        typer.Option(help="standard | chess960 | dfrc: each game's start position ('start')."),
    ] = VariantOpt.standard,
    draw_rate: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of draws.")] = 0.6,
    table: Annotated[bool, typer.Option("--table", help="Print a readable summary.")] = False,
) -> None:
    """Play a whole event with seeded random results; print the final state JSON."""
    import msgspec

    from orchestrator.config.load import load
    from orchestrator.config.model import Config
    from orchestrator.core.event import state_json
    from orchestrator.core.event.model import Options, Player, StateError, Tournament
    from orchestrator.core.event.simulation import simulate as run_simulation
    from orchestrator.core.event.standings import TCEC_ORDER, Tiebreak
    from orchestrator.core.pairing.registry import lookup
    from orchestrator.event.export import (
        bracket_data,
        bracket_text,
        head_to_head,
        head_to_head_text,
        standings_table,
        team_table,
    )
    from orchestrator.event.settings import EventSettings
    from orchestrator.event.state import seeded_players, tournament

    if system is not None:
        try:
            lookup(system)
        except StateError as exc:
            raise fail(f"--system: {exc}") from None
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
    rules = start.rules
    if system is not None and system != rules.system:
        rules = msgspec.structs.replace(rules, system=system, system_options=Options(), phases=())
    rules = msgspec.structs.replace(
        rules,
        format=fmt.value if fmt else rules.format,
        schedule=schedule.value if schedule else rules.schedule,
    )
    start = msgspec.structs.replace(start, rules=rules)
    paired_by = lookup(rules.system)
    if paired_by.teams and not start.teams:
        raise fail(
            f"{paired_by.noun} needs teams: start --from a state or engines.toml that has them"
        )
    if start.teams and not paired_by.teams:
        raise fail(f"the teams of {source} play a team Swiss, not {rules.system}")
    size = start.entrants()
    if config is not None and system is None:
        default = config.total_rounds()
    else:
        default = max(
            len(start.rounds), paired_by.planned(size, rules.cycles, rules.system_options)
        )
    total = rounds or default
    if paired_by.ends_itself and not rounds:
        total = len(start.rounds) + UNTIL_OVER  # played until its pairing says it is over
    most = paired_by.most(size, rules.cycles, rules.system_options)
    if most is not None and total > most:
        raise fail(f"{paired_by.noun} of {size} players has only {most} rounds")
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
        if variant is not VariantOpt.standard:  # only the start positions: pairing is the same
            starts = start_positions(sim, variant.value, seed)
            for i, names in enumerate(starts):
                for game, name in zip(out["rounds"][played + i]["games"], names, strict=True):
                    game["start"] = name
        typer.echo(json.dumps(out, indent=1))
        return
    final = sim.tournament
    typer.echo(
        f"{len(final.players)} players, {len(final.rounds)} rounds, {final.rules.system}, "
        f"{final.rules.format}"
        + (f" ({final.rules.schedule})" if final.rules.format == "double" else "")
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
    if final.rules.system == "knockout":
        typer.echo(bracket_text(bracket_data(final)))
    elif final.rules.system == "match":
        typer.echo(head_to_head_text(head_to_head(final)))
    typer.echo(standings_table(final, order), nl=False)
