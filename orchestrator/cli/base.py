"""The typer app and the error handling every command shares."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer

from orchestrator.core.errors import DaemonFault, OrchestratorError

app = typer.Typer(
    name="orchestrator",
    help="Run computer-chess engine championships unattended (TCEC Swiss rules).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def version_text() -> str:
    """What `orchestrator --version` prints: the installed package's version, and
    python-chess's (which speaks to the engines).

    >>> version_text().startswith("orchestrator ")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("orchestrator")
    except PackageNotFoundError:  # run from a source tree that was never installed
        ours = "(not installed)"
    return f"orchestrator {ours} (python-chess {version('chess')})"


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(version_text())
        raise typer.Exit(0)


@app.callback()
def _every_command(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """Run computer-chess engine championships unattended (TCEC Swiss rules)."""
    # python-chess warns about odd engine output; the runner records faults itself
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)


def one_command(name: str) -> Callable[..., Any]:
    """The click command of `name` alone (its module imported): what typer makes of it,
    after what every command does first."""
    for info in app.registered_commands:
        callback = info.callback
        if callback is not None and (info.name or callback.__name__.replace("_", "-")) == name:
            single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
            single.command(name, help=info.help)(callback)
            _every_command()
            return typer.main.get_command(single)
    for group in app.registered_groups:  # a group of commands (`season`)
        if group.name == name and group.typer_instance is not None:
            _every_command()
            return typer.main.get_command(group.typer_instance)
    raise LookupError(f"no command {name!r}")


P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"orchestrator: error: {message}", err=True)
    return typer.Exit(code)


#: `--parent PID`: the daemon that started this process (`serve`, `kibitz`)
ParentOpt = Annotated[
    int | None, typer.Option(hidden=True, help="The daemon that started this process.")
]


def as_child(db: Path, parent: int | None, become: Callable[[int], None]) -> None:
    """A process the daemon `parent` starts on its database `db` (`serve --parent`,
    `kibitz`): `db` must be there, and the process ties itself to the daemon (`become`)."""
    if not db.is_file():
        raise fail(f"{db}: no such database")
    if parent is not None:
        become(parent)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """The one place where the errors a person can act on (`OrchestratorError`) become one
    clear line on stderr and their exit code (2); so does a limit of the machine reached
    (`DaemonFault`, exit code 1)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except OrchestratorError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except sqlite3.DatabaseError as exc:  # a damaged or locked database file
            raise fail(f"the database cannot be used: {exc}") from None
        except DaemonFault as exc:  # this machine's limits, not a fault of the engine or input
            raise fail(f"{exc} (a limit of this machine, not a fault of the engine)", 1) from None

    return wrapper
