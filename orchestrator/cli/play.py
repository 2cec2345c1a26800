"""`orchestrator play`: one game between two engines of a config, printed as PGN."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import app, fail, user_errors

if TYPE_CHECKING:
    from orchestrator.config.model import Config
    from orchestrator.game.game import GameSpec


async def _play(config: Config, spec: GameSpec) -> str:
    from orchestrator.engines.probe import from_fen, probe
    from orchestrator.game.game import play_game
    from orchestrator.game.pgn import to_pgn

    fen_reason = from_fen([spec.opening])
    for engine in {spec.white.name: spec.white, spec.black.name: spec.black}.values():
        await (await probe(config, engine, fen_reason)).close()
    record = await play_game(spec)
    section = config.tournament
    options = (spec.white.options, spec.black.options)
    return to_pgn(
        record,
        event=section.name,
        site=section.site,
        options=options,
        comments=section.pgn_comments,
        rules=config.adjudication,
    )


@app.command()
@user_errors
def play(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="engines.toml")],
    white: Annotated[str, typer.Option("--white", help="Engine name playing white.")],
    black: Annotated[str, typer.Option("--black", help="Engine name playing black.")],
    tc: Annotated[str | None, typer.Option(help="Time control (default: the config's).")] = None,
    fen: Annotated[
        str | None,
        typer.Option(help="Start from this position (a Chess960 config: also 518, 123-456)."),
    ] = None,
    moves: Annotated[str | None, typer.Option(help='Book moves first, e.g. "e4 e5".')] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the PGN here.")
    ] = None,
) -> None:
    """Play one game between two engines of CONFIG and print its PGN.

    Exit 0 whatever the game's result; 2 for a usage or config error.
    """
    import asyncio

    from orchestrator.config.load import check_files, load
    from orchestrator.core.game.clock import TimeControl
    from orchestrator.core.game.openings import Opening, OpeningError, parse_position
    from orchestrator.core.game.variants import is_960, rules_of
    from orchestrator.event.state import OpeningChoice
    from orchestrator.game.game import GameSpec

    config = load(config_path)
    spec_white, spec_black = config.engine(white), config.engine(black)
    check_files(config)
    time_control = TimeControl.parse(tc) if tc else config.tournament.tc
    variant = config.tournament.variant
    chess960, rules = is_960(variant), rules_of(variant)
    opening = OpeningChoice((), config.tournament.random_seed, variant=variant).for_pair(0)
    if fen and chess960 and fen.partition("-")[0].isdigit():
        try:
            opening = parse_position(fen, variant)
        except OpeningError as exc:
            raise fail(f"--fen: {exc}") from None
        fen = opening.fen
    if fen or moves:
        try:
            start = Opening("fen", fen, chess960=chess960, rules=rules)
            if fen:
                start.board()
            opening = Opening.from_san(moves, fen, chess960, rules) if moves else start
        except OpeningError as exc:
            raise fail(f"--moves: {exc}") from None
        except ValueError as exc:
            raise fail(f"--fen: {exc}") from None
    spec = GameSpec(
        white=spec_white,
        black=spec_black,
        tc=time_control,
        opening=opening,
        adjudication=config.adjudication,
        timemargin_ms=config.tournament.timemargin_ms,
        ponder=config.tournament.ponder,
        own_tc=tc is None,  # --tc: both sides' time control
    )
    pgn = asyncio.run(_play(config, spec))
    if output:
        output.write_text(pgn, encoding="utf-8")
    else:
        typer.echo(pgn, nl=False)
