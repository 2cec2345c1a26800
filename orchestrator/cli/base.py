"""The typer app and the error handling every command shares."""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

from orchestrator.core.errors import DaemonFault, OrchestratorError


def usage_error(error: typer.TyperException) -> NoReturn:
    """A mistake in a command line (an unknown option, a missing argument, a value of the
    wrong kind) as every error is: one line on stderr, naming the command and where its help
    is, and exit code 2; never click's framed box.  (A group called without a command shows
    its help, as before.)"""
    code = int(getattr(error, "exit_code", 2))
    if type(error).__name__ == "NoArgsIsHelpError":
        error.show()  # type: ignore[attr-defined]
        sys.exit(code)
    shown = error.format_message() if hasattr(error, "format_message") else str(error)
    message = " ".join(str(shown).split()).removesuffix(".")
    context = getattr(error, "ctx", None)
    path = context.command_path if context is not None else "orchestrator"
    named = path.removeprefix("orchestrator").strip()
    where = f"{named}: " if named else ""
    typer.echo(f"orchestrator: error: {where}{one_line(message)} (see {path} --help)", err=True)
    sys.exit(code)


def _one_line(run: Callable[..., Any], standalone_mode: bool, **given: Any) -> Any:
    """Run a click command's `main` (`run`) with its usage errors as one line."""
    if not standalone_mode:
        return run(standalone_mode=False, **given)
    try:
        code = run(standalone_mode=False, **given)
    except typer.TyperException as exc:  # click's own errors (its ClickException)
        usage_error(exc)
    except typer.Abort:
        typer.echo("orchestrator: aborted", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


class _OneLine:
    """A click command (or group) whose usage errors are one line (`usage_error`)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        return _one_line(
            super().main,  # type: ignore[misc]
            standalone_mode, args=args, prog_name=prog_name, complete_var=complete_var,
            windows_expand_args=windows_expand_args, **extra,
        )  # fmt: skip


class OneLineGroup(_OneLine, TyperGroup):
    """A group of commands (`orchestrator`, `orchestrator season`) with one-line usage
    errors."""


class OneLineCommand(_OneLine, TyperCommand):
    """One command run alone (`one_command`) with one-line usage errors."""


app = typer.Typer(
    cls=OneLineGroup,
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
            single.command(name, help=info.help, cls=OneLineCommand)(callback)
            _every_command()
            return typer.main.get_command(single)
    for group in app.registered_groups:  # a group of commands (`season`)
        if group.name == name and group.typer_instance is not None:
            _every_command()
            return typer.main.get_command(group.typer_instance)
    raise LookupError(f"no command {name!r}")


P = ParamSpec("P")
R = TypeVar("R")


def one_line(text: str) -> str:
    """`text` on one line: a control character (a newline in an event's or an engine's
    name) is shown escaped, as Python writes it.

    >>> one_line('[[event]] "League\\n2": duplicate event name')
    '[[event]] "League\\\\n2": duplicate event name'
    """
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def fail(message: str, code: int = 2) -> typer.Exit:
    """An error a person can act on: one line on stderr, `orchestrator: error: ...`, and
    the exit `code` to raise."""
    typer.echo(f"orchestrator: error: {one_line(message)}", err=True)
    return typer.Exit(code)


#: `--log-file PATH`: the log appended to a file (`run`, `match`, `season run`)
LogFileOpt = Annotated[
    Path | None,
    typer.Option(help="Append the log (JSON lines) to this file instead of standard output."),
]


class LogLevel(StrEnum):
    """`--log-level`: the least level logged (`orchestrator/logs.py: LEVELS`)."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


#: `--log-level`: `run`, `match`, `season run`, `serve`, `season serve`
LogLevelOpt = Annotated[
    LogLevel,
    typer.Option(
        help="The least level logged; debug adds the libraries' own lines (python-chess's "
        "handshakes with the engines among them; every engine line is in its game's log)."
    ),
]


def log_target(path: Path | None) -> Path | None:
    """`--log-file`, checked before anything runs: a file in a folder that exists."""
    if path is not None and path.is_dir():
        raise fail(f"--log-file: {path} is a folder: name a file in it")
    if path is not None and not path.parent.is_dir():
        raise fail(f"--log-file: no such folder {str(path.parent)!r}")
    return path


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
