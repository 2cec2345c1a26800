"""What an executor is: where the daemon's games run (`executor`, docs/config.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from orchestrator.core.game.record import GameRecord
from orchestrator.game.game import GameSpec, OnLog, OnMove

#: the scheduler and worker processes this daemon started (`processes`): its own children,
#: never swept
HELPER_PIDS: set[int] = set()

#: called once a game runs on its host, with the host's name and, for pinned cores, the CPUs
#: of White's engine and of Black's there (as Linux lists them)
OnStart = Callable[[str, tuple[str, str] | None], Awaitable[None]]


class HostFault(Exception):
    """A game could not go on where it ran: its game host was lost (killed, powered off, cut
    off), the scheduler was lost, or the task failed on the host.  No engine is to blame:
    the attempt is aborted and the game played again from its opening."""

    def __init__(
        self, host: str | None, detail: str, *, lost: bool, scheduler: bool = False
    ) -> None:
        super().__init__(f"{host or 'game host'}: {detail}")
        self.host = host
        self.detail = detail
        self.lost = lost  # the host or the scheduler went away (not an error on the host)
        self.scheduler = scheduler  # the scheduler went away, not (only) the host


class Executor(Protocol):
    """Runs games somewhere and reports their moves back as they are played."""

    #: what the log and `check` call it: "local", "processes", the scheduler's address
    label: str

    async def start(self) -> None:
        """Set up (start local workers, connect to the scheduler); quick when there is
        nothing to do."""

    async def ready(self) -> None:
        """Wait until a game may be handed over (the scheduler is reachable)."""

    async def play(
        self, spec: GameSpec, *, key: str, on_move: OnMove, on_start: OnStart, on_log: OnLog
    ) -> GameRecord:
        """Play `spec` to its end; `on_move` sees every engine move in order, `on_log` the
        engines' log in chunks (each before its move's `on_move`, the last with the result),
        `on_start` the host once the game runs there.  `HostFault` when the host or the
        scheduler fails."""

    async def close(self) -> None:
        """Stop every game still running and release what `start` set up."""
