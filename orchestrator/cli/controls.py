"""Operator controls: pause, resume, adjudicate, replay, withdraw, engine-update,
pair-manual; and the
stored event as a tournament state (`state`) and its audit log (`log`).

Each control finds the database as the reading commands do, is checked against the stored
event (a bad one is one line and exit 2, with nothing changed), and is stored for the
daemon, which applies it within a second, or when it next starts.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orchestrator.cli.base import app, fail, user_errors
from orchestrator.cli.reading import ConfigOpt, DbOpt, JsonOpt, database

if TYPE_CHECKING:
    from orchestrator.event.controls import Control, EngineUpdate

Reason = Annotated[str | None, typer.Option(help="Why (kept in the audit log).")]
Needed = Annotated[str, typer.Option(help="Why (kept in the audit log).")]
GameArg = Annotated[int, typer.Argument(help="The game id of pairings --json.")]
EngineArg = Annotated[str, typer.Argument(help="The engine's name.")]


def _store(db: Path | None, config: Path) -> Path:
    from orchestrator.store.database import StoreError

    path = database(db, config)
    if not path.is_file():
        raise StoreError(f"{path}: no such database")
    return path


async def _ask(path: Path, asked: Control) -> int:
    from orchestrator.event.controls import request
    from orchestrator.store.database import Store

    store = await Store.open(path)
    try:
        return await request(store, asked)
    finally:
        await store.close()


def _submit(db: Path | None, config: Path, asked: Control) -> None:
    import asyncio

    path = _store(db, config)
    number = asyncio.run(_ask(path, asked))
    typer.echo(f"control {number} stored: a running daemon applies it within a second")


@app.command()
@user_errors
def pause(
    now: Annotated[bool, typer.Option("--now", help="Abort the running games too.")] = False,
    reason: Reason = None,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
) -> None:
    """No new game starts until `resume` (running games play on, unless --now)."""
    from orchestrator.event.controls import Pause

    _submit(db, config, Pause(now=now, reason=reason))


@app.command()
@user_errors
def resume(
    reason: Reason = None, db: DbOpt = None, config: ConfigOpt = Path("engines.toml")
) -> None:
    """Start games again after `pause`."""
    from orchestrator.event.controls import Resume

    _submit(db, config, Resume(reason=reason))


@app.command()
@user_errors
def adjudicate(
    game: GameArg,
    result: Annotated[str, typer.Argument(help="1-0, 0-1 or 1/2-1/2.")],
    reason: Needed,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
) -> None:
    """End a game with RESULT (a running game stops at once), or correct a finished one."""
    from orchestrator.event.controls import Adjudicate

    _submit(db, config, Adjudicate(game=game, result=result, reason=reason))


@app.command()
@user_errors
def replay(
    game: GameArg,
    reason: Needed,
    config: ConfigOpt = Path("engines.toml"),
    db: DbOpt = None,
) -> None:
    """Void a game and play it again from its opening."""
    from orchestrator.event.controls import Replay

    _submit(db, config, Replay(game=game, reason=reason))


@app.command()
@user_errors
def withdraw(
    engine: EngineArg,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
    *,
    reason: Needed,
) -> None:
    """Leave ENGINE out of every later pairing; its unplayed games are forfeited or
    cancelled (withdrawn_games)."""
    from orchestrator.event.controls import Withdraw

    _submit(db, config, Withdraw(engine=engine, reason=reason))


@app.command("pair-manual")
@user_errors
def pair_manual(
    round_number: Annotated[int, typer.Argument(metavar="ROUND", help="The round to pair.")],
    pairs: Annotated[list[str], typer.Argument(metavar="WHITE-BLACK...", help="Fixed pairs.")],
    config: ConfigOpt = Path("engines.toml"),
    db: DbOpt = None,
    *,
    reason: Needed,
) -> None:
    """Fix some or all pairs of ROUND (the next round, or the current one while none of
    its games has started); the event's system pairs the rest."""
    import asyncio

    from orchestrator.event.controls import PairManual, split_pair
    from orchestrator.event.read import load_view

    path = _store(db, config)
    view = asyncio.run(load_view(path))
    names = [p.name for p in view.tournament.by_seed()]
    fixed = tuple(split_pair(text, names) for text in pairs)
    _submit(db, config, PairManual(round=round_number, pairs=fixed, reason=reason))


def _option(text: str) -> tuple[str, Any]:
    from orchestrator.config.model import ConfigError

    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--option {text!r}: expected NAME=VALUE")
    for kind in (int, float):
        try:
            return name.strip(), kind(value)
        except ValueError:
            pass
    if value.lower() in ("true", "false"):
        return name.strip(), value.lower() == "true"
    return name.strip(), value


async def _probe(path: Path, update: EngineUpdate) -> None:
    """Check the update against the event, then start the updated engine once: a new binary
    or option is refused before it counts."""
    from orchestrator.config.model import EngineConfig
    from orchestrator.engines.adapter import Engine, EngineFault
    from orchestrator.engines.probe import event_board
    from orchestrator.event.controls import ControlRefused
    from orchestrator.event.read import view_of
    from orchestrator.store.database import Store

    store = await Store.open(path, readonly=True)
    try:
        view = await view_of(store)
        updates = await store.engine_updates()
    finally:
        await store.close()
    update.check(view)  # a finished event, an engine that withdrew: before anything starts
    name, command, options = update.engine, update.command, update.options
    stored = view.settings.engines.get(name)
    if stored is None:
        raise ControlRefused(f"no engine named {name!r}")
    current_command, current_options = stored.command, dict(stored.options)
    for earlier in updates:
        if earlier.engine == name:
            current_command = earlier.command or current_command
            current_options.update(earlier.options)
    engine = EngineConfig(
        name=name,
        command=tuple(command) if command else current_command,
        protocol=stored.protocol,
        options={**current_options, **options},
    )
    try:
        started = await Engine.start(engine)
    except EngineFault as fault:
        raise ControlRefused(f"{name}: the update does not start: {fault.detail}") from None
    await started.close()
    variant = view.settings.variant
    undeclared = started.undeclared(event_board(variant))
    if undeclared is not None:
        raise ControlRefused(f"{name}: the update: {undeclared}, and this is a {variant} event")


@app.command("engine-update")
@user_errors
def engine_update(
    engine: EngineArg,
    reason: Needed,
    command: Annotated[str | None, typer.Option(help="The new command line.")] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", help="NAME=VALUE (repeatable).")
    ] = None,
    db: DbOpt = None,
    config: ConfigOpt = Path("engines.toml"),
) -> None:
    """A new binary or new options for ENGINE from its next game on (started once first)."""
    import asyncio

    from orchestrator.event.controls import EngineUpdate

    options = dict(_option(text) for text in option or [])
    try:
        argv = shlex.split(command) if command else None
    except ValueError as exc:  # "No closing quotation"
        raise fail(f"--command {command!r}: {exc}") from None
    if argv is None and not options:
        raise fail("engine-update needs --command or --option")
    update = EngineUpdate(
        engine=engine, command=tuple(argv) if argv else None, options=options, reason=reason
    )
    asyncio.run(_probe(_store(db, config), update))
    _submit(db, config, update)


@app.command()
@user_errors
def state(db: DbOpt = None, config: ConfigOpt = Path("engines.toml")) -> None:
    """The stored event as tournament-state JSON (docs/state-json.md): its complete rounds,
    withdrawals and forfeits, for `pair` and `simulate --from`."""
    import asyncio

    from orchestrator.core.event import state_json
    from orchestrator.event.read import load_view

    view = asyncio.run(load_view(_store(db, config)))
    typer.echo(json.dumps(state_json.encode(view.tournament), indent=1))


@app.command("log")
@user_errors
def audit(
    as_json: JsonOpt = False, db: DbOpt = None, config: ConfigOpt = Path("engines.toml")
) -> None:
    """The audit log: controls, engine faults and strikes, withdrawals, engine updates."""
    import asyncio

    from orchestrator.event.audit import audit_log

    entries = asyncio.run(audit_log(_store(db, config)))
    if as_json:
        typer.echo(json.dumps(entries, indent=1))
        return
    for entry in entries:
        typer.echo(f"{entry['at']}  {entry['what']:<13} {entry['text']}")
