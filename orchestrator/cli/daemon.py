"""`orchestrator run` and `orchestrator check`: validate everything, then run the event
(`daemon/run.py`)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestrator.cli.base import (
    LogFileOpt,
    LogLevel,
    LogLevelOpt,
    app,
    fail,
    log_target,
    user_errors,
)
from orchestrator.cli.web import parse_address
from orchestrator.core.event.console import Form

if TYPE_CHECKING:
    from orchestrator.config.model import Config

ConfigArg = Annotated[Path, typer.Argument(metavar="CONFIG", help="engines.toml")]


class Output(StrEnum):
    """`run --output`: the console forms of `core/event/console.py`."""

    fastchess = "fastchess"
    cutechess = "cutechess"


OutputOpt = Annotated[
    Output | None,
    typer.Option(
        help="Print the games as fastchess or cutechess-cli does (for fishtest and "
        "OpenBench); the log then goes to --log-file (by default CONFIG.log)."
    ),
]


@app.command()
@user_errors
def check(
    config: Annotated[Path | None, typer.Argument(metavar="[CONFIG]", help="engines.toml")] = None,
    compliance: Annotated[
        str | None,
        typer.Option(
            metavar="CMD",
            help="Instead, run the UCI compliance check on the engine CMD starts (split as a "
            "shell would): each step named, exit 1 at the first that fails.",
        ),
    ] = None,
    proto: Annotated[str, typer.Option(help="The protocol --compliance checks (uci).")] = "uci",
) -> None:
    """Validate CONFIG and start each engine once (on the game hosts, for a Dask scheduler);
    or, with --compliance, check how an engine speaks UCI."""
    import asyncio

    if compliance is not None:
        _compliance(compliance, proto)
        return
    if config is None:
        raise fail("check: give CONFIG, or --compliance CMD")

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
            raise fail(str(exc), 1) from None
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
    output: OutputOpt = None,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Run the event of CONFIG, or resume it, to its final standings."""
    address = parse_address(http) if http else None
    target = log_file or _beside(config, output)
    _run(config, force, drain, address, output, target, log_level.value)


def _compliance(command: str, proto: str) -> None:
    """`check --compliance`: the steps as they pass, the failing one last (exit 1)."""
    import asyncio
    import shlex

    from orchestrator.engines.compliance import Step, compliance

    if proto != "uci":
        raise fail(f"--proto: the compliance check speaks UCI, not {proto!r}")
    try:
        words = tuple(shlex.split(command))
    except ValueError as exc:
        raise fail(f"--compliance: {command!r}: {exc}") from None
    if not words:
        raise fail("--compliance: give the engine's command")

    def shown(step: Step) -> None:
        if step.ok:
            typer.echo(f"ok      {step.name}")
        else:
            typer.echo(f"FAILED  {step.name}: {step.detail}")

    steps = asyncio.run(compliance(words, on_step=shown))
    if not steps[-1].ok:
        raise typer.Exit(1)
    typer.echo(f"{words[0]}: passed all {len(steps)} steps")


def _beside(config: Path, output: Output | None) -> Path | None:
    """Where the log goes by default: standard output, but with `--output` (whose readers,
    fishtest's worker among them, read standard output and error as one and count the words
    of endings in any line) to CONFIG.log."""
    return None if output is None else config.with_suffix(".log")


def _run(
    source: Path | Config,
    force: bool,
    drain: bool,
    address: tuple[str, int] | None,
    output: Output | None,
    log_file: Path | None,
    log_level: str,
    accepted: Callable[[], None] | None = None,
) -> None:
    import asyncio

    from orchestrator.core.errors import DaemonFault, OrchestratorError
    from orchestrator.daemon.run import run_event
    from orchestrator.logs import configure

    configure(file=log_target(log_file), level=log_level)
    form: Form | None = None if output is None else output.value
    try:
        code = asyncio.run(run_event(source, force, drain, address, form, accepted=accepted))
    except (typer.Exit, OrchestratorError, DaemonFault):
        raise
    except Exception as exc:  # the event failed while running: one line, exit 1
        raise fail(f"the event failed: {type(exc).__name__}: {exc}", code=1) from None
    raise typer.Exit(code)


@app.command()
@user_errors
def match(
    engines: Annotated[
        list[str],
        typer.Argument(
            metavar="ENGINE ENGINE",
            help="Each a command, an installed engine's name, or fastchess's -engine keys "
            '("name=SF cmd=stockfish tc=10+0.1 nodes=20000 option.Hash=64").',
        ),
    ],
    games: Annotated[int, typer.Option(help="Games, in pairs (an even number).")] = 2,
    tc: Annotated[str, typer.Option(help="Both engines' time control.")] = "10+0.1",
    concurrency: Annotated[int, typer.Option(help="Games at once.")] = 1,
    openings: Annotated[Path | None, typer.Option(help="An EPD or PGN suite.")] = None,
    db: Annotated[Path, typer.Option(help="The database (its config beside it).")] = Path(
        "match.sqlite"
    ),
    sprt: Annotated[
        str | None, typer.Option(help="A test, ELO0,ELO1: stop once the LLR crosses a bound.")
    ] = None,
    output: OutputOpt = None,
    force: Annotated[
        bool, typer.Option(help="Resume although the match's settings changed.")
    ] = False,
    log_file: LogFileOpt = None,
    log_level: LogLevelOpt = LogLevel.info,
) -> None:
    """Play a match of two engines without a config file, as fastchess's -quick does.

    The match's config is written beside the database (DB with .toml) once the match runs,
    and it is run as `run` runs a config: the same database and PGN, and the same command
    resumes it.  A refused command writes nothing.
    """
    import tomllib

    from orchestrator.config.load import parse
    from orchestrator.config.quick import MARK, engine_table, match_toml
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.core.game.clock import TimeControl
    from orchestrator.daemon.outputs import write_atomic

    if games < 2 or games % 2:
        raise fail(f"--games: a match is played in game pairs: an even number, not {games}")
    try:
        TimeControl.parse(tc)  # a bad one: one line, before anything is written
    except OrchestratorError as exc:
        raise fail(f"--tc: {exc}") from None
    test = None
    if sprt is not None:
        from orchestrator.core.stats.sprt import Sprt

        try:
            low, high = (float(x) for x in sprt.split(","))
        except ValueError:
            raise fail(f"--sprt: expected ELO0,ELO1 such as 0,5, not {sprt!r}") from None
        try:
            Sprt(elo0=low, elo1=high)
        except ValueError as exc:
            raise fail(f"--sprt: {exc}") from None
        test = (low, high)
    if openings is not None and not openings.is_file():
        raise fail(f"--openings: no such file {str(openings)!r}")
    config = db.with_name(db.stem + ".toml")
    if db.suffix == ".toml" or db.name.endswith(".log"):
        raise fail(f"--db: {db} would be the match's config or log: name a database (.sqlite)")
    if db.is_dir():
        raise fail(f"--db: {db} is a folder: name the match's database in it")
    if not db.parent.is_dir():
        raise fail(f"--db: no such folder {str(db.parent)!r} for the match's database")
    text = match_toml(
        [engine_table(e) for e in engines],
        games=games,
        tc=tc,
        concurrency=concurrency,
        database=db,
        openings=openings,
        sprt=test,
    )
    before = None
    if config.exists():
        before = config.read_text(errors="replace")
        if not before.startswith(MARK):
            raise fail(f"{config}: exists and is not a match's config: choose another --db")
        if before != text and db.exists() and not force:
            raise fail(
                f"{config}: the match in {db} was started by another command line: give the "
                "same one to resume it, --force to change what may change, or another --db"
            )
    loaded = parse(tomllib.loads(text), config)  # a bad engine or key: one line

    def accepted() -> None:
        """The database holds the match as this command line describes it."""
        if before != text:
            write_atomic(config, text)

    target = log_file or _beside(config, output)
    _run(loaded, force, False, None, output, target, log_level.value, accepted)
