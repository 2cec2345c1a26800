"""Start an engine once to prove its config works: the `check` and `play` commands' test."""

from __future__ import annotations

from collections.abc import Iterable

import chess

from orchestrator.config.model import Config, ConfigError, EngineConfig, KibitzerConfig
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.variants import is_960, new_board, rules_of
from orchestrator.engines.adapter import Engine, EngineFault


def from_fen(openings: Iterable[Opening | None]) -> str | None:
    """Why games will need XBoard's ``setboard``: the first opening that starts from a
    position other than the standard one, or None.

    >>> kpk = Opening("KPK", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    >>> from_fen([None, Opening("Ruy Lopez", None, ("e2e4",)), kpk])
    "opening 'KPK' starts from a FEN"
    """
    for opening in openings:
        if opening is not None and opening.fen not in (None, chess.STARTING_FEN):
            return f"opening {opening.name!r} starts from a FEN"
    return None


async def probe(config: Config, engine: EngineConfig, fen_reason: str | None = None) -> Engine:
    """Start, handshake and configure `engine`; a `ConfigError` naming it when that fails,
    when `fen_reason` says games start from a FEN and the engine cannot set one up, or when
    the event is Chess960 and the engine does not declare it.

    The caller closes the returned engine.
    """
    variant = config.tournament.variant
    if variant != "standard":
        fen_reason = fen_reason or f"a {variant} event starts every game from a FEN"
    try:
        started = await Engine.start(engine)
    except EngineFault as fault:
        last = f" (last output: {fault.output[-1]!r})" if fault.output else ""
        raise ConfigError(
            f'{config.path}: [[engine]] "{engine.name}": {fault.detail}{last}'
        ) from None
    undeclared = started.undeclared(event_board(variant))
    if undeclared is not None:
        await started.close()
        raise ConfigError(
            f'{config.path}: [[engine]] "{engine.name}": {undeclared}, so it cannot play a '
            f"{variant} event"
        )
    if fen_reason is not None and not started.has_setboard:
        await started.close()
        raise ConfigError(
            f'{config.path}: [[engine]] "{engine.name}": this XBoard engine has no setboard, '
            f"so it can only play games from the standard position ({fen_reason})"
        )
    return started


async def probe_kibitzer(
    path: object, kibitzer: KibitzerConfig, host: str | None = None, variant: str = "standard"
) -> None:
    """Start and close a kibitzer's engine; a `ConfigError` naming the kibitzer (and the game
    host it was tried on) when it cannot start, or does not declare the event's `variant`
    (it could not analyse a position of it)."""
    where = f" (on game host {host})" if host else ""
    try:
        started = await Engine.start(kibitzer.engine())  # a busy host must not fail it
    except EngineFault as fault:
        raise ConfigError(
            f'{path}: [[kibitzer]] "{kibitzer.name}": {fault.detail}{where}'
        ) from None
    try:
        undeclared = started.undeclared(event_board(variant))
    finally:
        await started.close()
    if undeclared is not None:
        raise ConfigError(
            f'{path}: [[kibitzer]] "{kibitzer.name}": {undeclared}{where}, so it cannot '
            f"analyse a {variant} event"
        )


def event_board(variant: str) -> chess.Board:
    """A board of the event's `variant`, for asking an engine whether it declares it.

    >>> event_board("crazyhouse").uci_variant, event_board("dfrc").chess960
    ('crazyhouse', True)
    """
    return new_board(chess960=is_960(variant), rules=rules_of(variant))
