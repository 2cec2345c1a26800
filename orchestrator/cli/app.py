"""The typer app and the error handling every command shares."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

import typer

from orchestrator.config.model import ConfigError
from orchestrator.core.model import StateError
from orchestrator.core.timecontrol import TimeControlError

app = typer.Typer(
    name="orchestrator",
    help="Run computer-chess engine championships unattended (TCEC Swiss rules).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _every_command() -> None:
    """Run computer-chess engine championships unattended (TCEC Swiss rules)."""
    # python-chess warns about odd engine output; the runner records faults itself
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)


P = ParamSpec("P")
R = TypeVar("R")

#: errors a person can act on: one line on stderr and exit code 2
USER_ERRORS: tuple[type[Exception], ...] = (ConfigError, StateError, TimeControlError)


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"orchestrator: error: {message}", err=True)
    return typer.Exit(code)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors a person can act on into one clear line and exit code 2."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except USER_ERRORS as exc:
            raise fail(str(exc)) from None

    return wrapper
