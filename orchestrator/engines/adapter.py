"""One running engine: python-chess's UCI or XBoard adapter, in a process group of its own.

Every engine is started with ``setpgrp`` so that an engine that will not quit, and anything
it spawned, dies with one ``killpg``; and with a parent-death signal, so that it dies with
the daemon even when the daemon is killed with SIGKILL.  `Engine.close` always ends in that
kill and waits for the process to be reaped, also when the task running it is cancelled.
The last lines the engine printed (stdout and stderr) are kept for fault reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import chess
import chess.engine
import structlog

from orchestrator.config.model import EngineConfig
from orchestrator.core.errors import DaemonFault
from orchestrator.core.game.record import Fault, FaultKind
from orchestrator.core.game.variants import rules_on
from orchestrator.engines.journal import LINE_KEPT, Journal
from orchestrator.engines.output import Record, StampedOutput, loop_turn, stamps
from orchestrator.engines.output import pair as output_pair
from orchestrator.engines.slices import spawned
from orchestrator.timeouts import timeout

QUIT_TIMEOUT = 1.0  # seconds an engine gets to quit before its process group is killed
REAP_TIMEOUT = 5.0
TAIL_LINES = 12
#: an engine line longer than this is garbage: the engine is stopped (memory stays bounded)
MAX_LINE = 1 << 20
#: a lean move's kept records are looked at once they hold this many bytes (else at the
#: record that may hold its answer): a flooding engine costs bounded memory
KEPT_BYTES = 1 << 16
#: UCI's answer to ``isready`` (`_Uci.new_game_ready`)
READY = "readyok"
#: the words of a UCI info line that end its PV (`pv` runs to the end of the line otherwise)
PV_ENDS = frozenset(
    {
        "depth",
        "seldepth",
        "time",
        "nodes",
        "multipv",
        "score",
        "currmove",
        "currmovenumber",
        "hashfull",
        "nps",
        "tbhits",
        "cpuload",
        "string",
        "refutation",
        "currline",
        "wdl",
        "sbhits",
    }
)
#: a PV longer than this is cut (an engine may print hundreds of moves)
PV_KEPT = 64
#: the words of a UCI info line followed by a whole number
INFO_NUMBERS = frozenset(
    {"depth", "seldepth", "nodes", "multipv", "currmovenumber", "hashfull", "nps", "tbhits"}
    | {"cpuload"}
)


def uci_info(line: str, turn: chess.Color) -> chess.engine.InfoDict:
    """What a move's record keeps of a UCI info line, searched with `turn` to move: the
    numbers, the time and the score (with its bound), as python-chess's own parse with
    ``INFO_BASIC | INFO_SCORE`` gives them, in one split of the line (a move's one parse:
    python-chess's tokenizer costs more than the rest of the move's reading).  A number
    that is not one is left out, as python-chess leaves it out.

    >>> uci_info("info depth 12 seldepth 15 time 40 nodes 9000 score cp 31 pv e2e4", True)
    {'depth': 12, 'seldepth': 15, 'time': 0.04, 'nodes': 9000, 'score': PovScore(Cp(+31), WHITE)}
    >>> uci_info("info depth x score mate -3 upperbound nps 10", False)
    {'upperbound': True, 'score': PovScore(Mate(-3), BLACK), 'nps': 10}
    """
    info: dict[str, object] = {}
    words = line.split()
    at, size = 1, len(words)
    while at < size:
        word = words[at]
        at += 1
        if word == "string":
            break
        if word in INFO_NUMBERS or word == "time":
            if at < size:
                number = words[at]
                at += 1
                try:  # noqa: SIM105 - a context manager per number costs more than its parse
                    info[word] = int(number) / 1000.0 if word == "time" else int(number)
                except ValueError:
                    pass
        elif word in ("currmove", "ebf", "wdl"):  # not kept, but their values are skipped
            at += 3 if word == "wdl" else 1
        elif word == "score" and at + 1 < size:
            kind, value = words[at], words[at + 1]
            at += 2
            if at < size and words[at] in ("lowerbound", "upperbound"):
                info[words[at]] = True
                at += 1
            try:
                if kind == "cp":
                    info["score"] = chess.engine.PovScore(chess.engine.Cp(int(value)), turn)
                elif kind == "mate":
                    info["score"] = chess.engine.PovScore(chess.engine.Mate(int(value)), turn)
            except ValueError:
                pass
    return cast(chess.engine.InfoDict, info)


def _lines(text: str) -> list[str]:
    """The lines of `text` (whole lines, each ending with its newline), without their
    newlines.

    >>> _lines("info depth 1\\ninfo depth 2\\n"), _lines("")
    (['info depth 1', 'info depth 2'], [])
    """
    lines = text.split("\n")
    lines.pop()  # the text ends with its last line's newline
    return lines


#: lines an engine prints before its first game's log takes them (its banner, handshake)
EARLY_LINES = 200
#: what an engine's stderr file (`[[engine]] stderr`) keeps of one game, in bytes
STDERR_KEPT = 1 << 20


class StderrFile:
    """An engine's stderr lines appended to its `stderr` file, each after the name of the
    game it played (`-` before its first): at most `STDERR_KEPT` bytes a game, the rest
    counted in a line of its own.  The file is opened at its first line; a file that cannot
    be written is the machine's trouble, logged once (`engine_stderr_failed`), never the
    engine's.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "sf.err"
    >>> out = StderrFile(path)
    >>> out.line("loading net")
    >>> out.start("Season:12")
    >>> out.line("info: hash full")
    >>> out.close()
    >>> print(path.read_text(), end="")
    -: loading net
    Season:12: info: hash full
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None
        self.game = "-"
        self.size = 0
        self.dropped = 0
        self.failed = False

    def start(self, game: str) -> None:
        """The engine's lines belong to `game` from now on."""
        self._count()
        self.game, self.size = game, 0

    def line(self, text: str) -> None:
        entry = f"{self.game}: {text}\n"
        if self.size + len(entry) > STDERR_KEPT:
            self.dropped += 1
            return
        self.size += len(entry)
        self._write(entry)

    def _count(self) -> None:
        if self.dropped:
            lines = "line" if self.dropped == 1 else "lines"
            self._write(f"{self.game}: [{self.dropped} more {lines} not kept]\n")
            self.dropped = 0

    def _write(self, text: str) -> None:
        if self.failed:
            return
        try:
            if self.handle is None:
                self.handle = self.path.open("a", encoding="utf-8", buffering=1)
            self.handle.write(text)
        except OSError as exc:
            self.failed = True
            structlog.get_logger().error(
                "engine_stderr_failed", path=str(self.path), error=exc.strerror or str(exc)
            )

    def close(self) -> None:
        self._count()
        if self.handle is not None:
            with contextlib.suppress(OSError):
                self.handle.close()
            self.handle = None


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the kernel kills the engine if the daemon dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


#: "normal" keeps kibitzers at the daemon's priority: for a machine whose spare CPU is never
#: idle (a shared test runner), where SCHED_IDLE would starve them altogether
KIBITZ_PRIORITY = "ORCHESTRATOR_KIBITZ_PRIORITY"


def idle_priority() -> None:
    """The lowest CPU priority there is (Linux SCHED_IDLE, and nice 19) for the calling
    thread, and what it starts: kibitzers run only on CPU time no one else wants (unless
    `ORCHESTRATOR_KIBITZ_PRIORITY=normal`)."""
    if os.environ.get(KIBITZ_PRIORITY) == "normal":
        return
    with contextlib.suppress(OSError):
        os.nice(19)
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _idle_child() -> None:  # pragma: no cover - runs in the child before exec
    die_with_parent()
    idle_priority()


#: util-linux's `setpriv`, which sets the parent-death signal and then runs the engine
SETPRIV = shutil.which("setpriv") if sys.platform == "linux" else None


def spawn_command(
    command: tuple[str, ...], workdir: Path | None, *, idle: bool = False
) -> tuple[list[str], Callable[[], None] | None]:
    """How to start an engine: its command line, and the function its child runs before
    `exec` (None: none).  A child that runs Python before `exec` makes Python `fork` the
    whole daemon (5 ms and more for a 100 MB process, on the loop); without one, it uses
    `vfork`.  So the parent-death signal is set by `setpriv --pdeathsig KILL` (util-linux)
    where it is installed and the engine's program can be found, which keeps the error of a
    missing program Python's own; otherwise, and for an idle kibitzer, in the child.

    >>> spawn_command(("/bin/sh", "-c", "true"), None)[0][-4:]
    ['--', '/bin/sh', '-c', 'true']
    >>> spawn_command(("no-such-engine",), None)
    (['no-such-engine'], <function die_with_parent at ...>)
    """
    program = command[0]
    if "/" in program:
        found = workdir / program if workdir and not program.startswith("/") else Path(program)
        runnable = os.access(found, os.X_OK) and found.is_file()
    else:
        runnable = shutil.which(program) is not None
    if idle or SETPRIV is None or not runnable:
        return list(command), _idle_child if idle else die_with_parent
    return [SETPRIV, "--pdeathsig", "KILL", "--", *command], None


#: errors of the daemon's own (no descriptors, no memory, no disk), never an engine's fault
DAEMON_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOSPC, errno.EAGAIN})


class EngineFault(Exception):
    """An engine misbehaved; the game it plays is lost by it.  It carries the `Fault` that
    the game record and the store keep.  It survives pickling (Dask carries it, or an error
    it caused, from a game host):

    >>> import pickle
    >>> pickle.loads(pickle.dumps(EngineFault("SF", "crash", "exit code 3"))).fault
    Fault(engine='SF', kind='crash', detail='exit code 3', output=())
    """

    def __init__(self, engine: str, kind: FaultKind, detail: str, output: tuple[str, ...] = ()):
        super().__init__(f"{engine}: {kind}: {detail}")
        self.fault = Fault(engine, kind, detail, output)

    def __reduce__(self) -> tuple[type[EngineFault], tuple[str, FaultKind, str, tuple[str, ...]]]:
        return type(self), (self.engine, self.kind, self.detail, self.output)

    @property
    def engine(self) -> str:
        return self.fault.engine

    @property
    def kind(self) -> FaultKind:
        return self.fault.kind

    @property
    def detail(self) -> str:
        return self.fault.detail

    @property
    def output(self) -> tuple[str, ...]:
        return self.fault.output


def _let_it_run() -> None:
    """Give up the CPU once, right after a line that starts an engine's clock.

    A write to a pipe wakes its reader with the kernel's hint that the writer will sleep
    soon, so Linux often queues the engine on the daemon's own CPU; but the daemon's loop
    goes on with other games' work, and the engine, its clock running, waits for it (1-2 %
    of moves waited 20-50 ms with 64 games at once, bench/stamps.py).  A yield lets it run
    at once, and costs nothing when no one else is waiting for this CPU.
    """
    if _YIELD is not None:
        _YIELD()


_YIELD = getattr(os, "sched_yield", None)


class _Pipe:
    """Mixin for python-chess's protocols: what the runner needs to see at the pipe.

    - The last lines the engine printed, for fault reports.
    - The clock stamps: `go_at` just before the line that starts the engine's clock is
      written to its stdin (inside python-chess's own `send_line`), `answered_at` when the
      engine wrote the line that stops it: the kernel's stamp of that write
      (`engines/output.py`), so that nothing the daemon does after the write, however busy
      its loop, lands on the engine's clock.
    - UCI: the last `info` line that carries a score, kept raw so that only that one line
      is parsed, once, after the move.  (XBoard engines print far less; python-chess parses
      their thinking lines as they come.)
    - Pondering (UCI): ``go ponder`` starts no clock; ``ponderhit`` does, so the engine is
      charged from the opponent's move to its ``bestmove``, never for the time it pondered.
      The lines of the ponder search are kept (after a hit they are the move's search); a
      ``go`` after a miss starts afresh, and the ``bestmove`` that answers the miss's
      ``stop`` stops no clock.
    """

    #: the first word of the lines that start and stop the engine's clock
    CLOCK_STARTS: frozenset[str] = frozenset()
    CLOCK_STOPS: frozenset[str] = frozenset()
    #: the first word of the lines written together with the line that follows them (UCI's
    #: `position`, with its `go`): the engine wakes once, with its whole command
    LEADS: frozenset[str] = frozenset()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.stop_words = tuple(word.encode() for word in cls.CLOCK_STOPS)

    #: `CLOCK_STOPS` as bytes: a write of the engine's that holds one may stop its clock
    #: (`engines/output.py` hands such a write on with its own stamp)
    stop_words: tuple[bytes, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self._tail_lines: deque[str] = deque(maxlen=TAIL_LINES)
        #: the lean moves' lines not yet in the tail (`tail` takes them when it is read or
        #: added to: a move's lines cost nothing more while no one reads it); the last
        #: moves' only, as many as the tail can hold
        self._tail_reads: list[list[str]] = []
        self.go_at: float | None = None
        self.answered_at: float | None = None
        #: how long the engine's last answered search took, go to answer (s)
        self.last_search_s = 0.0
        self.on_go: Callable[[], None] | None = None
        self.scored_line: str | None = None
        self.info_line: str | None = None
        self.pondering = False  # a `go ponder` search runs, on the opponent's time
        #: the scored and the last info line of the search that answered (a ponder search
        #: that starts at once reuses the two slots)
        self.answer_lines: tuple[str | None, str | None] | None = None
        self.overlong = False  # the engine printed a line longer than MAX_LINE
        #: the log of the game the engine plays (`attach`), and its name there
        self.journal: Journal | None = None
        self.label = "engine"
        #: the lines before a first game's log takes them: (time, sign, line)
        self.early: list[tuple[float, str, str]] | None = []
        #: the engine's stdout, stamped by the kernel (None: a pipe, stamped on reading)
        self.stdout: StampedOutput | None = None
        #: when the engine wrote the bytes now being received (`StampedOutput` sets it)
        self.arrived: float | None = None
        #: while a lean move is searched: its records, as read (`_Uci.play_lean`)
        self.kept: list[Record] | None = None
        self._lead: list[str] = []  # `LEADS` lines held for the next line
        #: the `info` lines are the runner's alone (`_Uci.arm`): python-chess is not given them
        self.own_info = False
        self._stdin_end: tuple[asyncio.WriteTransport, int] | None = None  # (`_stdin`)
        #: where its stderr lines go too (`[[engine]] stderr`)
        self.stderr_file: StderrFile | None = None

    def kept_read(self, received: float, size: int, answer: bool) -> None:
        """Records were kept (only a lean move keeps them: `_Uci.kept_read`)."""

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """python-chess's line splitter, handed one line at a time, with a bound: a line
        longer than `MAX_LINE` is never kept; the engine is killed, and the game is lost by
        a `garbage` fault.

        python-chess splits its buffer one line at a time, copying the rest of it each
        time: handed one megabyte of 200-byte lines, it copies 2.6 GB.  A flood of 20 MB
        so kept the loop for a minute, while the engine, its output unread, could not
        write its move.  Handed one line at a time, it copies each byte once.
        """
        raw = data if isinstance(data, bytes) else data.encode()
        start, size = 0, len(raw)
        while start < size and not self.overlong:
            end = raw.find(b"\n", start)
            stop = size if end < 0 else end + 1
            line = (size if end < 0 else end) - start + len(self.buffer[fd])  # type: ignore[attr-defined]
            if line > MAX_LINE:
                self.buffer[fd].clear()  # type: ignore[attr-defined]
                self._overlong()
                return
            super().pipe_data_received(fd, raw[start:stop])  # type: ignore[misc]
            start = stop

    def _overlong(self) -> None:
        """The engine printed a line longer than `MAX_LINE`: it is killed."""
        self.overlong = True
        self.tail.append(f"[a line of more than {MAX_LINE} bytes]")
        self.transport.kill()  # type: ignore[attr-defined]

    def arm(self, on_go: Callable[[], None] | None = None) -> None:
        """Forget the last move's stamps and lines (not those of a ponder search that runs:
        after a hit they are this move's); `on_go` is called when the clock starts."""
        self.go_at = self.answered_at = None
        self.answer_lines = None
        if not self.pondering:
            self.scored_line = self.info_line = None
        self.on_go = on_go

    def attach(self, journal: Journal | None) -> None:
        """Log the engine's lines to `journal` (None: no longer); the first attach takes the
        lines it printed before (its banner and handshake)."""
        self.journal = journal
        if journal is not None and self.early is not None:
            for at, sign, line in self.early:
                journal.line(at, sign, self.label, line)
            self.early = None

    def log(self, sign: str, line: str, at: float | None = None) -> None:
        """A line to the game's log: `>` written, `<` read, `!` stderr; `at` is when (now
        if None)."""
        at = time.monotonic() if at is None else at
        if self.journal is not None:
            self.journal.line(at, sign, self.label, line)
        elif self.early is not None and len(self.early) < EARLY_LINES:
            self.early.append((at, sign, line[: LINE_KEPT + 1]))

    def send_line(self, line: str) -> None:
        if self.stdout is not None and not self.stdout.reading:  # python-chess reads again
            self.stdout.resume()
        if line.partition(" ")[0] in self.LEADS:
            # held for the line that follows it at once (`go`): one write, one wake-up
            if not self._lead:
                asyncio.get_running_loop().call_soon(self._write_lead)
            self._lead.append(line)
            return
        lead, self._lead = self._lead, []
        self._write(lead, line)

    def _write(self, lead: list[str], line: str, *, waits: bool = False) -> None:
        """Write `lead` and `line` at once, `line` last: the line that may start the
        engine's clock is stamped right before the write.  `waits`: the writer waits for
        the engine's answer right after (`StampedOutput.wait_here`), giving up the CPU
        anyway: no yield (`_let_it_run`) first."""
        text = "\n".join([*lead, line]) if lead else line
        stdin = self._stdin()
        if stdin is not None:  # the clock's line: stamped and written with nothing between
            data = (text + "\n").encode()
            at = time.monotonic()
            try:
                written = os.write(stdin[1], data)
            except (BlockingIOError, InterruptedError):
                written = 0
            except OSError:  # the engine is gone: python-chess sees its end
                written = len(data)
            if written < len(data):
                stdin[0].write(data[written:])
            started = self._stamp(line, at)
        else:
            at = time.monotonic()  # before the write: the engine may start as the bytes land
            started = self._stamp(line, at)
            super().send_line(text)  # type: ignore[misc]
        if started:
            if not waits:
                _let_it_run()
            if self.on_go is not None:
                self.on_go()
        if self.journal is not None:  # the lines of one write: one entry
            self.journal.lines(at, ">", self.label, [*lead, line] if lead else [line])
            return
        for text in lead:
            self.log(">", text, at)
        self.log(">", line, at)

    def _stdin(self) -> tuple[asyncio.WriteTransport, int] | None:
        """The engine's stdin and its descriptor, when nothing waits to be written to it:
        the line that starts the clock then goes out in one `os.write` right after its
        stamp (a preemption between the two would be charged to the engine)."""
        found = self._stdin_end
        if found is None:
            transport = getattr(self, "transport", None)
            stdin = transport.get_pipe_transport(0) if transport is not None else None
            pipe = stdin.get_extra_info("pipe") if stdin is not None else None
            if stdin is None or pipe is None:
                return None
            found = self._stdin_end = (stdin, pipe.fileno())
        if found[0].is_closing() or found[0].get_write_buffer_size():
            return None
        return found

    def _write_lead(self) -> None:
        """The lines held for a line that did not come (none should: python-chess sends
        `go` right after `position`)."""
        lead, self._lead = self._lead, []
        transport = self.transport  # type: ignore[attr-defined]
        if lead and transport is not None and not transport.is_closing():
            at = time.monotonic()
            super().send_line("\n".join(lead))  # type: ignore[misc]
            for text in lead:
                self.log(">", text, at)

    def _stamp(self, line: str, at: float) -> bool:
        """The clock stamps of a line written to the engine at `at`; whether it started the
        engine's clock."""
        word = line.partition(" ")[0]
        if word == "go" and line.startswith("go ponder"):
            self.pondering = True  # no clock runs: the opponent is thinking
            self.scored_line = self.info_line = None
        elif self.go_at is None and word in self.CLOCK_STARTS:
            if word == "go":  # a search of its own: a ponder search's lines are not its
                self.scored_line = self.info_line = None
            self.pondering = False
            self.go_at = at
            return True
        return False

    def _line_received(self, line: str) -> None:
        word = self._seen(line, time.monotonic() if self.arrived is None else self.arrived)
        if not (self.own_info and word == "info"):
            super()._line_received(line)  # type: ignore[misc]

    def _seen(self, line: str, at: float) -> str:
        """A line the engine wrote at `at`: its clock stamp, the lines kept of its search,
        its tail and its log; its first word."""
        word = line.partition(" ")[0]
        if word in self.CLOCK_STOPS:
            self._stopped(at)
        elif (self.go_at is not None and self.answered_at is None) or self.pondering:
            self._thinking(word, line)
        self._keep([line], at)
        return word

    def _stopped(self, at: float) -> None:
        """A line that stops the clock, written at `at`: the answer's stamp, and the lines
        kept of its search."""
        if self.go_at is not None and self.answered_at is None:
            self.answered_at = at
            self.last_search_s = at - self.go_at
            self.answer_lines = (self.scored_line, self.info_line)
        else:  # the answer to the `stop` of a ponder search: no clock ran
            self.pondering = False

    def _keep(self, lines: list[str], at: float) -> None:
        """Lines the engine wrote at `at`, to its tail (for fault reports) and its log."""
        self._tail(lines)
        if self.journal is not None:
            self.journal.lines(at, "<", self.label, lines)
        else:
            for line in lines:
                self.log("<", line, at)

    @property
    def tail(self) -> deque[str]:
        """The engine's last lines (`TAIL_LINES`), for fault reports."""
        self._take_tail()
        return self._tail_lines

    def _take_tail(self) -> None:
        """The lean moves' lines not yet in the tail, to it."""
        reads = self._tail_reads
        if reads:
            last: list[str] = []
            for lines in reversed(reads):
                last[:0] = lines[-TAIL_LINES:]
                if len(last) >= TAIL_LINES:
                    break
            reads.clear()
            self._tail(last)

    def _tail(self, lines: list[str]) -> None:
        """The last of `lines` to the tail, each cut at `LINE_KEPT` characters."""
        tail, last = self.tail, lines[-TAIL_LINES:]
        if max(map(len, last), default=0) <= LINE_KEPT:
            tail.extend(last)
        else:
            tail.extend(
                line if len(line) <= LINE_KEPT else line[:LINE_KEPT] + "..." for line in last
            )

    def drain(self) -> None:
        """Take every line the engine has written so far (its deadline passed: an answer
        that was written in time, but not read yet, still counts)."""
        if self.stdout is not None:
            self.stdout.drain()

    def connection_lost(self, exc: Exception | None) -> None:
        """The process ended: what it wrote before it died is read first (a pipe's end is
        read before this; the socket's records are taken here)."""
        if self.stdout is not None:
            self.stdout.drain()
            self.stdout.close()
        super().connection_lost(exc)  # type: ignore[misc]

    def _thinking(self, word: str, line: str) -> None:
        """A line printed while thinking (overridden per protocol)."""

    def error_line_received(self, line: str) -> None:
        self.tail.append(f"[stderr] {line[:LINE_KEPT]}")
        self.log("!", line)
        if self.stderr_file is not None:
            self.stderr_file.line(line)

    def move_time_ms(self) -> int | None:
        """The last move's time, from the go line written to the answer written, in whole
        milliseconds cut down as cutechess and fastchess cut them; None when the engine
        never got a go line or never answered."""
        if self.go_at is None or self.answered_at is None:
            return None
        return max(0, int((self.answered_at - self.go_at) * 1000))


class _Lean(threading.local):
    """The lean moves of this thread's loop that wait for their answer on the loop: while
    one does, another is not waited for outside it (`StampedOutput.wait_here` would only
    hand the loop back at that one's first write)."""

    waiting = 0


_lean = _Lean()


class _Answer:
    """A lean move's answer: its `bestmove` line, or why it has none (a timeout, the
    engine's end); `settled` once either came.  Waited for outside the loop
    (`StampedOutput.wait_here`) it is read there, without a future; a future is made only
    for a wait on the loop (`wait`).  (Made once a move: no `__init__` of its own, its
    fields' defaults are the class's.)"""

    settled = False
    line = ""
    error: BaseException | None = None
    future: asyncio.Future[None] | None = None

    def settle(self, line: str = "", error: BaseException | None = None) -> None:
        """The answer came (`line`), or will not (`error`); the first one counts."""
        if self.settled:
            return
        self.settled, self.line, self.error = True, line, error
        if self.future is not None and not self.future.done():
            self.future.set_result(None)

    async def wait(self) -> None:
        """Until it is `settled`, on the loop."""
        if not self.settled:
            self.future = asyncio.get_running_loop().create_future()
            await self.future


#: the share of an engine's last search that a lean move waited for outside the loop naps
#: before it reads the engine's first writes (`StampedOutput.wait_here`): a search shorter
#: than this share of the one before it has its answer read that much later
NAP_SHARE = 0.5

#: `ponderhit` and `stop` are written no sooner than this after their `go ponder`; a
#: ponderhit's clock starts when it was due all the same.  Engines that read `go` in a
#: thread of their own may lose a line that arrives while that thread still reads it, and
#: then ponder for ever (Debian's Ethereal 12.00; fixed upstream in June 2021)
PONDER_SETTLE_S = 0.02


class _Uci(_Pipe, chess.engine.UciProtocol):
    """python-chess's UCI protocol with the runner's stamps, and three savings per move.

    - `position` is built incrementally while a game goes on, instead of from the root;
    - configured options are not re-checked on every move (they were sent once);
    - `info` lines are not parsed by python-chess as they arrive (the runner plays with
      ``INFO_NONE``); only the last one with a score is parsed, once, by `last_info`.
    """

    CLOCK_STARTS = frozenset({"go", "ponderhit"})
    CLOCK_STOPS = frozenset({"bestmove"})
    LEADS = frozenset({"position"})

    def __init__(self) -> None:
        super().__init__()
        # the game's board, how many of its moves the engine has been sent, the last one of
        # them, and the position line that sent them
        self._sent: tuple[chess.Board, int, chess.Move | None, str] | None = None
        self._position_line = ""
        self._ponder_at = 0.0  # when the last `go ponder` was written
        self._held: list[str] = []  # lines held back after a `go ponder`
        #: a lean move (`play_lean`): the future of its `bestmove` line; the records the
        #: engine wrote since its `go` (`kept`, `StampedOutput` adds them) and their bytes;
        #: the end of a line not ended yet
        self._answer: _Answer | None = None
        self._kept_size = 0
        self._partial = b""
        #: the lines `send_line` is asked to send are collected here instead (`play_lean`)
        self._capture: list[str] | None = None
        self._lean_game: object = None  # the game whose options the lean moves have set
        self._awaited = "bestmove"  # the first word of the line `_ask` waits for
        self._go_line: tuple[chess.engine.Limit | None, str] = (None, "")  # the last `go`

    async def play_lean(
        self, board: chess.Board, limit: chess.engine.Limit, deadline: float
    ) -> chess.engine.PlayResult:
        """The engine's move from `board` under `limit`, without pondering: what
        python-chess's ``play`` does for such a move, and no more; a `TimeoutError` when it
        has not answered `deadline` seconds after its clock started.

        The options ``play`` manages are set as it sets them (once a game); the `position`
        line goes on from the last one (`_position`), the `go` line is python-chess's (made
        again only for a new `limit`), and the two go out in one write, the clock's stamp
        right before it.  The engine's writes until its `bestmove` are kept as read
        (`kept`, filled by `StampedOutput`): only the write that may hold ``bestmove`` has
        them looked at (`_look`): split, logged, and the last scored line kept.
        python-chess sees none of them.  While no other lean move waits on the loop (one
        game at a time), the answer is waited for outside the loop until the loop has other
        work (`StampedOutput.wait_here`); the engine's records are then read by this move
        only, and what the engine wrote between two moves is read before the next `go`
        (python-chess's, as it would have been).  The bestmove is parsed against `board` (an
        `EngineError` when it is not legal); its ponder move as the engine named it, legal
        or not (whoever shows it stops at an illegal one, as at a PV's); the info is
        `last_info`'s.
        """
        if self.returncode.done():
            raise chess.engine.EngineTerminatedError("the engine process died")
        self._capture = []
        try:
            if self._lean_game is not self.game or self.game is None:  # once a game
                self._lean_game = self.game
                if "UCI_AnalyseMode" in self.options and "UCI_AnalyseMode" not in (
                    self.target_config
                ):
                    self._setoption("UCI_AnalyseMode", False)
                if "Ponder" in self.options:
                    self._setoption("Ponder", False)
                if "MultiPV" in self.options:
                    self._setoption("MultiPV", self.options["MultiPV"].default)
            self._position(board, keep=False)
            if self._go_line[0] is not limit:
                self._go(limit)
                self._go_line = (limit, self._capture.pop())
        finally:
            lines, self._capture = self._capture, None
        nap = NAP_SHARE * self.last_search_s
        line = await self._ask(lines, self._go_line[1], deadline, nap=nap)
        words = line.split()
        move = ponder = None
        if len(words) > 1 and words[1] not in ("(none)", "NULL"):
            try:  # as python-chess reads a bestmove (AnMon's capital letters included)
                move = board.parse_uci(words[1].lower())
            except ValueError as exc:
                raise chess.engine.EngineError(exc) from None
            if len(words) > 3 and words[2] == "ponder":  # as named, legal or not
                try:  # noqa: SIM105 - a context manager a move costs more than the parse
                    ponder = chess.Move.from_uci(words[3].lower())
                except ValueError:
                    pass
        return chess.engine.PlayResult(move, ponder)

    async def new_game_ready(self) -> None:
        """``ucinewgame`` (python-chess's, with the ``UCI_Opponent`` it sets) and
        ``isready`` in one write, answered by ``readyok``: read on the stamped socket as a
        lean move reads its ``bestmove`` (`_ask`), where python-chess's ``ping`` would make a
        command, and a class for it, and read each line on the loop.  (Where the engine's
        output is a pipe, python-chess's ``ping``.)  Its time limit is the caller's."""
        self._capture = []
        try:
            self._ucinewgame()
        finally:
            lead, self._capture = self._capture, None
        if self.stdout is None or self._answer is not None:
            for line in lead:
                self.send_line(line)
            await self.ping()
            return
        if self.returncode.done():
            raise chess.engine.EngineTerminatedError("the engine process died")
        await self._ask(lead, "isready", None, READY)

    async def _ask(
        self,
        lead: list[str],
        line: str,
        deadline: float | None,
        awaited: str = "bestmove",
        *,
        nap: float = 0.0,
    ) -> str:
        """Write `lead` and `line` together and wait for the engine's line whose first word
        is `awaited` (a move's ``bestmove``, within `deadline` seconds of its clock's start,
        else a `TimeoutError`; or ``readyok``); that line.  The engine's writes meanwhile
        are kept as read and looked at when one may hold it (`_look`); waited for outside
        the loop, not read in the first `nap` seconds (`StampedOutput.wait_here`)."""
        loop = self.loop  # python-chess's (asyncio's lookup makes a getpid call)
        output = self.stdout
        if output is not None and not output.reading:  # what it wrote since its last move
            output.drain()
        answer = self._answer = _Answer()
        self._awaited, self.stop_words = awaited, (awaited.encode(),)
        if self.buffer[1]:  # a line begun before this move
            self._partial = bytes(self.buffer[1])
            self.buffer[1].clear()
        self.kept, self._kept_size = [], 0
        due: asyncio.TimerHandle | None = None
        here = output is not None and not _lean.waiting  # the answer may be waited for here
        if output is not None and not here:
            output.resume()  # the loop reads it (a wait here may have left it unread)
        try:
            self._write(lead, line, waits=here)
            started = self.go_at if self.go_at is not None else loop.time()
            until = math.inf if deadline is None else started + deadline
            if not (here and output is not None and output.wait_here(until, answer, nap)):
                if deadline is not None and not answer.settled:
                    due = loop.call_at(until, self._expire)  # both monotonic
                _lean.waiting += 1
                try:  # (read here, but the loop had work by then: it goes first)
                    await (loop_turn() if answer.settled else answer.wait())
                finally:
                    _lean.waiting -= 1
            if answer.error is not None:
                raise answer.error
            return answer.line
        finally:
            if due is not None:
                due.cancel()
            self._answer = None
            self._end_lean()
            self._awaited, self.stop_words = "bestmove", type(self).stop_words

    def _expire(self) -> None:
        """A lean move's deadline: what the engine wrote in time counts (`drain`); without
        its answer, the move ends in a `TimeoutError`."""
        self.drain()
        if self._answer is not None:
            self._answer.settle(error=TimeoutError())

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd == 1 and self.kept is not None:  # a pipe, stamped on reading: looked at now
            raw = data if isinstance(data, bytes) else data.encode()
            self.kept.append((raw, []))
            self._look(time.monotonic() if self.arrived is None else self.arrived)
        else:
            super().pipe_data_received(fd, data)

    def kept_read(self, received: float, size: int, answer: bool) -> None:
        """Records were kept: looked at when they may hold the answer (``bestmove`` may be
        split between two writes of an engine that writes its lines in pieces, and a line
        left in pieces by the last look may end now), or when they come to `KEPT_BYTES` (an
        engine that floods)."""
        self._kept_size += size
        if answer or self._partial or self._kept_size >= KEPT_BYTES:
            self._look(received)

    def _look(self, received: float) -> None:
        """The kept records, each one's lines with its own stamp (read by `received`), as
        python-chess's protocol would have seen them: a line longer than `MAX_LINE` kills
        the engine; the first ``bestmove`` line that answers the `go` is the move's answer
        (its stamp stops the clock), and what the engine wrote after it goes on to
        python-chess's own reading.  The lines are logged, and the last scored and the last
        other info line kept, once for all of them (`_searched`).

        Records that each hold one whole line (as an engine that writes line by line
        writes them), the answer alone in the last, are read together: one join, one
        decode and one split for the move (`_look_each` reads the others one by one)."""
        records, kept = self.kept or [], self.kept is not None
        self.kept, self._kept_size = ([] if kept else None), 0
        if not records:
            return
        times = stamps(records, received)
        awaited = self._awaited
        # a `bestmove` answers the move's `go` once; `readyok` needs no clock
        seek = self._answer is not None and not (
            awaited in self.CLOCK_STOPS and self.answered_at is not None
        )
        datas = [data for data, _ in records]
        if self._partial or [data[-1:] for data in datas].count(b"\n") != len(datas):
            self._look_each(records, times, seek)
            return
        blob = b"".join(datas)
        if len(blob) > MAX_LINE or blob.count(b"\n") != len(datas):  # a record of many lines
            self._look_each(records, times, seek)
            return
        text = blob.decode(errors="replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        lines = _lines(text)  # a line a record
        if seek and awaited in text:
            last = lines[-1]
            if last.partition(" ")[0] != awaited or text.count(awaited) != 1:
                self._look_each(records, times, seek)  # not the last line alone
                return
            self._found(times, lines)
            return
        self._searched(times, lines)

    def _look_each(self, records: list[Record], times: list[float], seek: bool) -> None:
        """`_look`, a record at a time: records in pieces (a line split between writes, or
        a write of many lines), the answer with lines after it, an overlong line."""
        awaited = self._awaited
        line_times: list[float] = []  # each line's record's stamp
        lines: list[str] = []
        for index, (data, _) in enumerate(records):
            if self._partial or not data.endswith(b"\n"):  # a line in pieces
                if self._partial:
                    data, self._partial = self._partial + data, b""
                end = data.rfind(b"\n") + 1
                if end < len(data):
                    self._partial = bytes(data[end:])
                    if len(self._partial) > MAX_LINE:
                        self._searched(line_times, lines)
                        self._lean_overlong()
                        return
                    data = data[:end]
                if not data:
                    continue
            text = data.decode(errors="replace")
            if "\r" in text:
                text = text.replace("\r\n", "\n")
            if len(text) > MAX_LINE and max(map(len, text.split("\n"))) > MAX_LINE:
                self._searched(line_times, lines)
                self._lean_overlong()
                return
            at = times[index]
            own = _lines(text)
            if seek and awaited in text:
                for n, line in enumerate(own):
                    if line.partition(" ")[0] == awaited:  # the answer's line is the last
                        lines += own[: n + 1]
                        line_times += [at] * (n + 1)
                        self._found(line_times, lines)
                        rest = b""
                        if n + 1 < len(own):
                            rest = "".join([f"{after}\n" for after in own[n + 1 :]]).encode()
                        rest += self._partial  # the end of this record, before the next ones
                        self._partial = b""
                        if index + 1 < len(records):
                            rest += b"".join([d for d, _ in records[index + 1 :]])
                        self._hand_on(rest, at)
                        return
            lines += own
            line_times += [at] * len(own)
        self._searched(line_times, lines)

    def _found(self, times: list[float], lines: list[str]) -> None:
        """The answer came, the last of `lines`: the search's lines taken in (`_searched`),
        the answer's stamp stops the clock if it is a move's, and the wait is over."""
        self._searched(times, lines)
        if self._awaited in self.CLOCK_STOPS:
            self._stopped(times[-1])
        self._answered(lines[-1])

    def _answered(self, line: str) -> None:
        """The move's `bestmove` line came: the move is over; what follows is python-chess's."""
        answer, self._answer, self.kept = self._answer, None, None
        if answer is not None:
            answer.settle(line)

    def _lean_overlong(self) -> None:
        self.kept, self._partial = None, b""
        self._overlong()

    def _end_lean(self) -> None:
        """The lean move is over (answered, or not): what is kept is looked at, and from now
        on the engine's writes go to python-chess (and a line not ended yet)."""
        if self.kept is not None:
            self._look(time.monotonic())
            self.kept = None
        self._hand_on(b"", None)

    def _searched(self, times: list[float], lines: list[str]) -> None:
        """Lines of a search (the last may be its answer), each with its record's stamp:
        the last scored and the last other info line are kept (`_thinking`'s two; the last
        scored one is all a move's record needs, so the scan stops there), and the lines go
        to the tail and the log, in one entry."""
        scored = other = None
        for line in reversed(lines):
            if line.startswith("info") and line.partition(" ")[0] == "info":
                if " score " in line:
                    scored = line
                    break
                if other is None and not line.startswith("info string"):
                    other = line
        if scored is not None:
            self.scored_line = scored
        if other is not None:
            self.info_line = other
        if self.journal is None:
            for at, line in zip(times, lines, strict=True):
                self._keep([line], at)
            return
        reads = self._tail_reads
        reads.append(lines)
        if len(reads) > 1:  # the older moves' lines that the tail can no longer hold go
            kept = 0
            for back in range(len(reads) - 1, 0, -1):
                kept += len(reads[back])
                if kept >= TAIL_LINES:
                    del reads[:back]
                    break
        self.journal.stamped("<", self.label, times, lines)

    def _hand_on(self, rest: bytes, at: float | None) -> None:
        """What the engine wrote after its answer (and a line not ended yet), to python-chess."""
        data, self._partial = rest + self._partial, b""
        if data:
            arrived, self.arrived = self.arrived, at if at is not None else self.arrived
            try:
                _Pipe.pipe_data_received(self, 1, data)
            finally:
                self.arrived = arrived

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._answer is not None:
            self._answer.settle(error=chess.engine.EngineTerminatedError("the engine process died"))

    def arm(self, on_go: Callable[[], None] | None = None) -> None:
        """As `_Pipe.arm`; and from now on the engine is a player, whose `info` lines
        python-chess need not see: it plays with ``INFO_NONE`` (its parse of every line
        would find nothing wanted: 10 a move from Stockfish), and `last_info` parses the
        line that matters, once.  (A kibitzer's analysis reads them all; it is never armed.)"""
        super().arm(on_go)
        self.own_info = True

    def _thinking(self, word: str, line: str) -> None:
        if word == "info":
            if " score " in line:
                self.scored_line = line
            elif not line.startswith("info string"):
                self.info_line = line

    def last_info(self, board: chess.Board) -> tuple[chess.engine.InfoDict, tuple[str, ...]]:
        """The last move's info: its last scored line (else its last info line), parsed once
        (`uci_info`) for `board`, the position the engine searched; and its PV.

        The PV's moves are kept as the engine wrote them (UCI), not played out one by one
        (that would cost more than the rest of the move): whoever shows a PV in SAN stops at
        its first move that is not legal (`core.tcec.pv_san`)."""
        scored, last = self.answer_lines or (self.scored_line, self.info_line)
        line = scored or last
        if line is None:
            return {}, ()
        info = uci_info(line, board.turn)
        _, found, rest = line.partition(" pv ")
        pv: list[str] = []
        for word in rest.split() if found else ():
            if word in PV_ENDS or len(pv) >= PV_KEPT:
                break
            pv.append(word)
        return info, tuple(pv)

    def send_line(self, line: str) -> None:
        if line.startswith("position "):
            self._position_line = line
        if self._capture is not None:
            self._capture.append(line)
            return
        if self._held or (
            line in ("ponderhit", "stop")
            and time.monotonic() < self._ponder_at + PONDER_SETTLE_S
            and self.transport is not None
        ):
            started = line == "ponderhit" and self._stamp(line, time.monotonic())
            if started and self.on_go is not None:  # the clock starts now; the line follows
                self.on_go()
            if not self._held:
                due = self._ponder_at + PONDER_SETTLE_S - time.monotonic()
                asyncio.get_running_loop().call_later(max(0.0, due), self._write_held)
            self._held.append(line)
            return
        super().send_line(line)
        if line.startswith("go ponder"):
            self._ponder_at = time.monotonic()

    def _write_held(self) -> None:
        """Write the lines held back after a `go ponder`, in order."""
        held, self._held = self._held, []
        if self.transport is not None and not self.transport.is_closing():
            for line in held:
                if line == "ponderhit":
                    super(_Pipe, self).send_line(line)  # its clock started when it was due
                    self.log(">", line)
                else:
                    super().send_line(line)

    def _configure(self, options: chess.engine.ConfigMapping) -> None:
        if options:  # with none, python-chess re-checks every configured option: all sent
            super()._configure(options)

    def _position(self, board: chess.Board, *, keep: bool = True) -> None:
        """The `position` line, from the last one sent where the game only went on since
        (`keep`: python-chess keeps a copy of the board, for its own parse of info lines).

        The last move sent is found where it was, the same move, or an equal one: a board
        that takes moves back and plays them again (python-chess's `is_repetition` does, as
        the end by the rules asks it after a move) holds new moves of the same value."""
        sent, stack = self._sent, board.move_stack
        if (
            sent is not None
            and sent[0] is board
            and sent[1] <= len(stack)
            and (
                sent[1] == 0
                or (last := stack[sent[1] - 1]) is sent[2]  # (`is` costs less than `==`)
                or last == sent[2]
            )
        ):
            line, fresh = sent[3], stack[sent[1] :]
            if fresh:
                line += (" moves " if sent[1] == 0 else " ") + " ".join([m.uci() for m in fresh])
            self.send_line(line)
            if keep:
                self.board = board.copy(stack=False)
        else:
            super()._position(board)
            line = self._position_line
            if stack and " moves " not in line:  # python-chess sent no history: start over
                self._sent = None
                return
        self._sent = (board, len(stack), stack[-1] if stack else None, line)


class _XBoard(_Pipe, chess.engine.XBoardProtocol):
    """python-chess's XBoard protocol with the runner's stamps.

    python-chess insists on the ``setboard`` feature during the handshake, although only a
    game that starts from a FEN needs it: `features` answers that check with "declared",
    and `needs_setboard` then tells the truth.
    """

    CLOCK_STARTS = frozenset({"go"})
    CLOCK_STOPS = frozenset({"move", "resign", "1-0", "0-1", "1/2-1/2"})

    def __init__(self) -> None:
        super().__init__()
        self.features = _Features()

    def has_setboard(self) -> bool:
        return bool(dict.get(self.features, "setboard", 0))


class _Features(dict[str, str | int]):
    """XBoard features; ``setboard`` reads as declared to python-chess's handshake only."""

    def get(self, key: str, default: Any = None) -> Any:
        if key == "setboard":
            return 1
        return super().get(key, default)


#: the engine processes this process started and has not reaped yet (asyncio reaps them;
#: the daemon's sweep of adopted orphans must leave them alone)
ENGINE_PIDS: set[int] = set()


class Engine:
    """A started, initialised and configured engine process."""

    def __init__(
        self, config: EngineConfig, transport: asyncio.SubprocessTransport, protocol: Any
    ) -> None:
        self.config = config
        self.transport = transport
        self.protocol: _Uci | _XBoard = protocol
        self.pid: int = transport.get_pid()
        ENGINE_PIDS.add(self.pid)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def alive(self) -> bool:
        return not self.protocol.returncode.done()

    def undeclared(self, board: chess.Board) -> str | None:
        """Why the engine cannot play a game on `board`, when it does not declare the
        board's variant (None when it does): UCI's ``UCI_Chess960`` option or the variant among
        its ``UCI_Variant`` values; XBoard's ``variants`` feature (``fischerandom`` for
        Chess960)."""
        rules = rules_on(board)
        shown = "Chess960" if rules == "chess" else rules
        if isinstance(self.protocol, _XBoard):
            want = "fischerandom" if rules == "chess" else type(board).xboard_variant
            variants = str(dict.get(self.protocol.features, "variants", "")).split(",")
            declared = want in variants
            where = f"no {want} among its XBoard variants"
        elif rules == "chess":
            declared = "UCI_Chess960" in self.protocol.options
            where = "no UCI_Chess960 option"
        else:
            option = self.protocol.options.get("UCI_Variant")
            declared = option is not None and rules in (option.var or ())
            where = (
                f"no {rules} among its UCI_Variant values" if option else "no UCI_Variant option"
            )
        if (rules == "chess" and not board.chess960) or declared:
            return None
        return f"the engine does not declare {shown} ({where})"

    @property
    def has_setboard(self) -> bool:
        """Whether the engine can start a game from any position (UCI engines always can)."""
        return not isinstance(self.protocol, _XBoard) or self.protocol.has_setboard()

    def output(self) -> tuple[str, ...]:
        return tuple(self.protocol.tail)

    def move_info(
        self, board: chess.Board, played: chess.engine.PlayResult
    ) -> tuple[chess.engine.InfoDict, tuple[str, ...]]:
        """What the engine said about the move it just played from `board`, and its PV
        (UCI moves)."""
        if isinstance(self.protocol, _Uci):
            return self.protocol.last_info(board)
        return played.info, tuple(m.uci() for m in played.info.get("pv", ()))

    async def play(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        game: object,
        info: chess.engine.Info,
        ponder: bool,
        deadline: float,
    ) -> chess.engine.PlayResult:
        """The engine's move from `board`: a UCI engine that does not ponder plays its lean
        move (`_Uci.play_lean`); the others python-chess's ``play``.  A `TimeoutError` when
        it has not answered `deadline` seconds after the line that started its clock was
        written (an answer it wrote in time, not read yet, still counts)."""
        proto = self.protocol
        if isinstance(proto, _Uci) and not ponder:
            proto.arm()
            return await proto.play_lean(board, limit, deadline)
        loop = asyncio.get_running_loop()
        due: asyncio.TimerHandle | None = None
        try:
            # a timeout, not wait_for: in Python 3.11 wait_for can swallow a
            # cancellation that arrives as the move does, and the game would play on
            async with timeout(deadline) as timer:

                def expire() -> None:
                    proto.drain()
                    if proto.answered_at is None:
                        timer.reschedule(loop.time())

                def clock_started() -> None:
                    nonlocal due
                    timer.reschedule(None)
                    due = loop.call_at(loop.time() + deadline, expire)

                proto.arm(clock_started)
                return await proto.play(
                    board, limit, game=game, info=info, opponent=None, ponder=ponder
                )
        finally:
            proto.on_go = None
            if due is not None:
                due.cancel()

    def fault(self, kind: FaultKind, detail: str) -> EngineFault:
        return EngineFault(self.name, kind, detail, self.output())

    def attach(self, journal: Journal | None) -> None:
        """Log the engine's I/O to a game's `journal` from now on (None: stop)."""
        self.protocol.attach(journal)

    @classmethod
    async def start(
        cls, config: EngineConfig, journal: Journal | None = None, *, idle: bool = False
    ) -> Engine:
        """Start, handshake and configure; an `EngineFault` ("startup") on any failure.
        With a `journal`, the engine's lines go to it from its first one; `idle` runs it at
        the lowest CPU priority (a kibitzer), all its threads with it."""
        protocol_class = _Uci if config.protocol == "uci" else _XBoard
        try:
            ends = output_pair() if config.stdout == "socket" else None
        except OSError as exc:  # no descriptors left: the machine's trouble
            raise DaemonFault(f"cannot start {config.name}: {exc.strerror}") from None
        command, before_exec = spawn_command(config.command, config.workdir, idle=idle)
        try:
            start = protocol_class.popen(
                command,
                setpgrp=True,
                cwd=str(config.workdir) if config.workdir else None,
                stdout=subprocess.PIPE if ends is None else ends[1],
                stderr=subprocess.PIPE,
                preexec_fn=before_exec,
            )
            # an engine with the kernel's shortest slice (slices.py); a kibitzer runs idle
            started = await start if idle else await spawned(start)
            transport, protocol = cast(tuple[asyncio.SubprocessTransport, _Uci | _XBoard], started)
        except OSError as exc:
            for end in ends or ():
                end.close()
            if exc.errno in DAEMON_ERRNOS:  # the machine's trouble, not the engine's
                raise DaemonFault(f"cannot start {config.name}: {exc.strerror}") from None
            raise EngineFault(
                config.name, "startup", f"cannot run {config.command[0]!r}: {exc.strerror}"
            ) from None
        except BaseException:
            for end in ends or ():
                end.close()
            raise
        if ends is not None:  # before the loop runs again: nothing is read before this
            protocol.stdout = StampedOutput.attach(ends[0], ends[1], protocol)
        engine = cls(config, transport, protocol)
        protocol.label = config.name
        if config.stderr is not None:
            protocol.stderr_file = StderrFile(config.stderr)
        protocol.attach(journal)
        try:
            async with timeout(config.startup_timeout):
                await protocol.initialize()
            engine.check_options()
            if config.options:
                # python-chess takes no floats: a value such as 0.5 goes as the text "0.5"
                options = {
                    k: str(v) if isinstance(v, float) else v for k, v in config.options.items()
                }
                async with timeout(config.startup_timeout):
                    await protocol.configure(options)
            if config.init:  # its own lines (`init`), taken in before any game
                for line in config.init:
                    protocol.send_line(line)
                async with timeout(config.startup_timeout):
                    await protocol.ping()
        except TimeoutError:
            await engine.close()
            raise engine.fault(
                "startup", f"no {config.protocol} handshake within {config.startup_timeout:g}s"
            ) from None
        except (chess.engine.EngineError, EngineFault) as exc:
            await engine.close()
            if isinstance(exc, EngineFault):
                raise
            raise engine.fault("startup", str(exc) or type(exc).__name__) from None
        except BaseException:
            await engine.close()
            raise
        return engine

    async def new_game(
        self, key: object, board: chess.Board, opponent: EngineConfig | None = None
    ) -> None:
        """Make the engine ready for a new game from `board`'s starting position, before any
        clock runs: UCI ``ucinewgame`` (after ``UCI_Opponent`` and ``UCI_Variant``, where
        the engine declares them) then ``isready``; XBoard ``new`` (and ``setboard``) then
        ``ping``.  A startup fault when the engine is not ready within its
        `startup_timeout`, when it does not declare the game's variant, or when the game
        starts from a FEN and an XBoard engine has no ``setboard``.  `key` names the game, as
        python-chess's ``play(game=...)`` does.
        """
        proto, root = self.protocol, board.root()
        if proto.stderr_file is not None:
            proto.stderr_file.start(str(key))
        undeclared = self.undeclared(board)
        if undeclared is not None:
            raise self.fault("startup", undeclared)
        try:
            async with timeout(self.config.startup_timeout):
                if isinstance(proto, _Uci):
                    if opponent is not None:
                        rating = int(opponent.rating or 0) or None
                        them = chess.engine.Opponent(opponent.name, None, rating, True)
                        info = proto._opponent_configuration(opponent=them)
                        if info:
                            await proto.configure(info)
                    if "UCI_Variant" in proto.options:  # before ucinewgame, as cutechess
                        proto._setoption("UCI_Variant", rules_on(board))
                    proto.game = key
                    await proto.new_game_ready()
                else:
                    fen = root.fen() != chess.STARTING_FEN or type(root).xboard_variant != "normal"
                    if (fen or root.chess960) and not proto.has_setboard():
                        raise self.fault(
                            "startup",
                            "the game starts from a FEN and this XBoard engine has no setboard",
                        )
                    proto._new(root, key, {}, None)
                    await proto.ping()
        except TimeoutError:
            raise self.fault(
                "startup",
                f"not ready for a new game within {self.config.startup_timeout:g}s",
            ) from None
        except chess.engine.EngineTerminatedError:
            raise self.fault("crash", "the process died before the game") from None
        except chess.engine.EngineError as exc:
            raise self.fault("startup", str(exc) or type(exc).__name__) from None

    async def settle(self) -> bool:
        """End a ponder search the engine may still run after a game's last move (a ping
        cancels it: UCI ``stop``, XBoard ``easy``), so that it is idle for its next game or
        its ``quit``; False when it does not answer within its `startup_timeout`.
        """
        try:
            async with timeout(self.config.startup_timeout):
                await self.protocol.ping()
        except (TimeoutError, chess.engine.EngineError):
            return False
        return True

    def check_options(self) -> None:
        """Every configured option must be one the engine declares."""
        declared = self.protocol.options
        for name in self.config.options:
            if name not in declared:
                known = ", ".join(sorted(declared)) or "none"
                raise self.fault("startup", f"the engine has no option {name!r} (it has: {known})")

    async def close(self) -> None:
        """Ask the engine to quit, then kill its process group and reap it. Never raises."""
        try:
            if self.alive:
                with contextlib.suppress(Exception):
                    async with timeout(QUIT_TIMEOUT):
                        await self.protocol.quit()
        finally:
            self.kill()
            try:
                with contextlib.suppress(TimeoutError):  # a cancellation still propagates
                    async with timeout(REAP_TIMEOUT):
                        await asyncio.shield(self.protocol.returncode)
            finally:
                if self.protocol.stdout is not None:  # read at its end, or never again
                    self.protocol.stdout.close()
            if self.protocol.returncode.done():
                ENGINE_PIDS.discard(self.pid)
            if self.protocol.stderr_file is not None:
                self.protocol.stderr_file.close()

    def kill(self) -> None:
        """Kill the whole process group at once (synchronous: safe on every path)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.transport.close()
