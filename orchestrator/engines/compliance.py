"""`check --compliance CMD`: does an engine speak UCI as a tournament needs it to?

The steps, in order, each named when it fails (fastchess's `--compliance` runs the same
kind of steps): the engine starts; `uci` gets `id name`, `id author` and `uciok`, and each
`option` line it declares is one python-chess reads; `isready` gets `readyok`, also after
`ucinewgame`; then searches from `position startpos`, a FEN with Black to move, and
`position startpos moves ...`, under each `go` form a runner sends (both clocks, with
increments, `movetime`, `depth`, `nodes`, and `infinite` ended by `stop`): each answers a
legal `bestmove` and, where it searched on a clock, an `info` line with a score; last,
`quit` ends the process with exit code 0.  The first step that fails ends the check.

The exchange is the engine's raw lines, read with a deadline: a step that waits for a line
that never comes fails after `STEP_S` seconds, naming what it waited for.  The engine runs
in a process group of its own, killed at the end whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import chess

__all__ = ["STEP_S", "Step", "compliance"]

#: how long a step waits for the line it needs
STEP_S = 10.0
#: the engine lines kept for a failure's report
TAIL = 8
#: a FEN with Black to move (fastchess's)
BLACK_TO_MOVE = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


@dataclass(frozen=True)
class Step:
    """One step of the check: its name, whether it passed, and why not."""

    name: str
    ok: bool
    detail: str = ""


class _Failed(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Engine:
    """The engine's process, spoken to a line at a time."""

    def __init__(self, process: asyncio.subprocess.Process, wait_s: float) -> None:
        self.process = process
        self.wait_s = wait_s
        self.tail: deque[str] = deque(maxlen=TAIL)

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((line + "\n").encode())
        except (BrokenPipeError, ConnectionResetError):
            raise _Failed("the engine closed its input") from None

    async def until(self, done: Callable[[str], bool], waited: str) -> list[str]:
        """The lines up to the first that `done` accepts (included)."""
        assert self.process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + self.wait_s
        while True:
            left = deadline - time.monotonic()
            try:
                raw = await asyncio.wait_for(self.process.stdout.readline(), max(0.0, left))
            except TimeoutError:
                raise _Failed(f"no {waited} within {self.wait_s:g}s") from None
            except ValueError:  # a line past the stream's limit
                raise _Failed(f"a line longer than the reader's limit before {waited}") from None
            if not raw:
                raise _Failed(f"the engine exited before {waited}")
            line = raw.decode(errors="replace").rstrip("\r\n")
            self.tail.append(line)
            lines.append(line)
            if done(line):
                return lines


def _first(word: str) -> Callable[[str], bool]:
    return lambda line: line.split(" ", 1)[0] == word


def _options(lines: list[str]) -> None:
    """Every `option` line reads as UCI defines it (`_option_fields`)."""
    for line in lines:
        if line.split(" ", 1)[0] != "option":
            continue
        try:
            kind = _option_fields(line)[1]
        except (ValueError, IndexError, KeyError) as exc:
            raise _Failed(f"cannot read {line!r}: {exc}") from None
        if kind not in ("check", "spin", "combo", "button", "string"):
            raise _Failed(f"{line!r}: unknown type {kind!r}")


def _option_fields(
    line: str,
) -> tuple[str, str, str | int | bool | None, int | None, int | None, list[str]]:
    """The fields of an `option` line, as UCI defines them: a name up to ` type `, then
    `default`, `min`, `max` and `var` values; a spin's numbers are integers with its
    default between them, a combo's default one of its vars, a check's true or false."""
    words = line.split(" ")
    keys = {"name", "type", "default", "min", "max", "var"}
    fields: dict[str, list[str]] = {}
    current = None
    for word in words[1:]:
        if word in keys and not (current == "name" and word not in ("type",)):
            current = word
            fields.setdefault(word, [])
            if word == "var":
                fields["var"].append("")
            continue
        if current is None:
            raise ValueError(f"{word!r} before the option's name")
        if current == "var":
            fields["var"][-1] = (fields["var"][-1] + " " + word).strip()
        else:
            fields[current].append(word)
    name = " ".join(fields.get("name", []))
    kind = " ".join(fields.get("type", []))
    if not name:
        raise ValueError("no name")
    if not kind:
        raise ValueError("no type")
    text = " ".join(fields.get("default", []))
    default: str | int | bool | None = text if "default" in fields else None
    low = high = None
    if kind == "spin":
        low, high = int(fields["min"][0]), int(fields["max"][0])
        value = int(text)
        if not low <= value <= high:
            raise ValueError(f"default {value} outside {low}..{high}")
        default = value
    elif kind == "check":
        if text not in ("true", "false"):
            raise ValueError(f"a check's default is true or false, not {text!r}")
        default = text == "true"
    elif kind == "combo" and text not in fields.get("var", []):
        raise ValueError(f"default {text!r} is none of its vars")
    return name, kind, default, low, high, fields.get("var", [])


async def compliance(
    command: tuple[str, ...],
    *,
    wait_s: float = STEP_S,
    on_step: Callable[[Step], None] | None = None,
) -> list[Step]:
    """Run the check on the engine `command` starts: each step in turn until one fails.

    >>> import sys
    >>> steps = asyncio.run(compliance((sys.executable, "-c", "print('id name X')")))
    >>> [(s.name, s.ok) for s in steps][-1]
    ('uci: id name, id author, uciok', False)
    """
    steps: list[Step] = []

    def passed(name: str, detail: str = "") -> None:
        steps.append(Step(name, True, detail))
        if on_step is not None:
            on_step(steps[-1])

    name = "start the engine"
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        steps.append(Step(name, False, f"cannot run {command[0]!r}: {exc.strerror or exc}"))
        if on_step is not None:
            on_step(steps[-1])
        return steps
    engine = _Engine(process, wait_s)
    passed(name)
    try:
        for name, step in _steps(engine):
            await step()
            passed(name)
    except _Failed as failed:
        last = "; its last lines: " + " | ".join(engine.tail) if engine.tail else ""
        steps.append(Step(name, False, failed.detail + last))
        if on_step is not None:
            on_step(steps[-1])
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
    return steps


def _steps(engine: _Engine) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    """The steps after the start, each a name and what it does."""

    async def handshake() -> None:
        engine.send("uci")
        lines = await engine.until(lambda line: line == "uciok", "uciok")
        for field in ("id name", "id author"):
            if not any(line.startswith(field + " ") for line in lines):
                raise _Failed(f"no {field!r} line before uciok")
        _options(lines)

    async def ready() -> None:
        engine.send("isready")
        await engine.until(lambda line: line == "readyok", "readyok")

    async def new_game() -> None:
        engine.send("ucinewgame")
        await ready()

    def search(
        position: str, go: str, *, scored: bool, stop_after: float | None = None
    ) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            board = _board(position)
            engine.send(position)
            engine.send(go)
            if stop_after is not None:
                await asyncio.sleep(stop_after)
                engine.send("stop")
            lines = await engine.until(_first("bestmove"), "bestmove")
            words = lines[-1].split()
            if len(words) < 2:
                raise _Failed(f"{lines[-1]!r} names no move")
            try:
                board.parse_uci(words[1])
            except ValueError:
                raise _Failed(f"{words[1]!r} is not a legal move in {board.fen()}") from None
            infos = [line for line in lines if line.split(" ", 1)[0] == "info"]
            if scored and not any(" score cp " in i or " score mate " in i for i in infos):
                raise _Failed("no info line with a score (cp or mate) before bestmove")

        return run

    async def quit_cleanly() -> None:
        engine.send("quit")
        try:
            code = await asyncio.wait_for(engine.process.wait(), engine.wait_s)
        except TimeoutError:
            raise _Failed(f"still running {engine.wait_s:g}s after quit") from None
        if code != 0:
            raise _Failed(f"exit code {code}")

    start = "position startpos"
    black = f"position fen {BLACK_TO_MOVE}"
    moves = "position startpos moves e2e4 e7e5"
    return [
        ("uci: id name, id author, uciok", handshake),
        ("isready: readyok", ready),
        ("ucinewgame, then isready: readyok", new_game),
        ("position startpos, go wtime btime: a legal bestmove and a score",
         search(start, "go wtime 1000 btime 1000", scored=True)),
        ("position fen (Black to move), go wtime btime: a legal bestmove and a score",
         search(black, "go wtime 1000 btime 1000", scored=True)),
        ("position startpos moves, go wtime winc btime binc: a legal bestmove and a score",
         search(moves, "go wtime 1000 winc 100 btime 1000 binc 100", scored=True)),
        ("go movetime: a legal bestmove", search(start, "go movetime 100", scored=False)),
        ("go depth: a legal bestmove", search(start, "go depth 3", scored=False)),
        ("go nodes: a legal bestmove", search(start, "go nodes 1000", scored=False)),
        ("go infinite, then stop: a legal bestmove",
         search(start, "go infinite", scored=False, stop_after=0.1)),
        ("quit: the process exits with code 0", quit_cleanly),
    ]  # fmt: skip


def _board(position: str) -> chess.Board:
    """The board a `position` line sets up."""
    words = position.split()
    if words[1] == "startpos":
        board, rest = chess.Board(), words[2:]
    else:
        board, rest = chess.Board(" ".join(words[2:8])), words[8:]
    for uci in rest[1:] if rest and rest[0] == "moves" else ():
        board.push_uci(uci)
    return board
