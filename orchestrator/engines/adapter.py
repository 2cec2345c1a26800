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
import os
import signal
import subprocess
import sys
from collections import deque
from typing import Any

import chess
import chess.engine

from orchestrator.config.model import EngineConfig
from orchestrator.core.gamerecord import FaultKind

QUIT_TIMEOUT = 1.0  # seconds an engine gets to quit before its process group is killed
REAP_TIMEOUT = 5.0
TAIL_LINES = 12


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the kernel kills the engine if the daemon dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class EngineFault(Exception):
    """An engine misbehaved; the game it plays is lost by it."""

    def __init__(self, engine: str, kind: FaultKind, detail: str, output: tuple[str, ...] = ()):
        super().__init__(f"{engine}: {kind}: {detail}")
        self.engine, self.kind, self.detail, self.output = engine, kind, detail, output


class _Tail:
    """Mixin for python-chess protocols: keeps the last lines an engine printed."""

    def __init__(self) -> None:
        super().__init__()
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)

    def line_received(self, line: str) -> None:
        self.tail.append(line)

    def error_line_received(self, line: str) -> None:
        self.tail.append(f"[stderr] {line}")


class _Uci(_Tail, chess.engine.UciProtocol):
    """python-chess's UCI protocol, remembering the engine's output."""


class _XBoard(_Tail, chess.engine.XBoardProtocol):
    """python-chess's XBoard protocol, remembering the engine's output."""


class Engine:
    """A started, initialised and configured engine process."""

    def __init__(
        self, config: EngineConfig, transport: asyncio.SubprocessTransport, protocol: Any
    ) -> None:
        self.config = config
        self.transport = transport
        self.protocol: chess.engine.Protocol = protocol
        self.pid: int = transport.get_pid()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def alive(self) -> bool:
        return not self.protocol.returncode.done()

    def output(self) -> tuple[str, ...]:
        return tuple(getattr(self.protocol, "tail", ()))

    def fault(self, kind: FaultKind, detail: str) -> EngineFault:
        return EngineFault(self.name, kind, detail, self.output())

    @classmethod
    async def start(cls, config: EngineConfig) -> Engine:
        """Start, handshake and configure; an `EngineFault` ("startup") on any failure."""
        protocol_class = _Uci if config.protocol == "uci" else _XBoard
        try:
            transport, protocol = await protocol_class.popen(
                list(config.command),
                setpgrp=True,
                cwd=str(config.workdir) if config.workdir else None,
                stderr=subprocess.PIPE,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            raise EngineFault(
                config.name, "startup", f"cannot run {config.command[0]!r}: {exc.strerror}"
            ) from None
        engine = cls(config, transport, protocol)
        try:
            async with asyncio.timeout(config.startup_timeout):
                await protocol.initialize()
            engine.check_options()
            if config.options:
                # python-chess takes no floats: a value such as 0.5 goes as the text "0.5"
                options = {
                    k: str(v) if isinstance(v, float) else v for k, v in config.options.items()
                }
                async with asyncio.timeout(config.startup_timeout):
                    await protocol.configure(options)
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
                    async with asyncio.timeout(QUIT_TIMEOUT):
                        await self.protocol.quit()
        finally:
            self.kill()
            with contextlib.suppress(TimeoutError):  # a cancellation still propagates
                async with asyncio.timeout(REAP_TIMEOUT):
                    await asyncio.shield(self.protocol.returncode)

    def kill(self) -> None:
        """Kill the whole process group at once (synchronous: safe on every path)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.transport.close()
