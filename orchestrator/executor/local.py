"""The "local" executor: games run inside the daemon's own process, as they always did.
With `affinity = true`, each running game takes one of the slots of pinned cores
(`core/cpus.py`) and gives it back when it ends."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from orchestrator.core.cpus import Slot
from orchestrator.core.game.record import GameRecord
from orchestrator.engines.pool import EnginePool
from orchestrator.executor.base import OnStart
from orchestrator.game.game import GameSpec, OnLog, OnMove, play_game


class LocalExecutor:
    """Games on the daemon's event loop; `reuse = true` engines stay between their games."""

    label = "local"

    def __init__(self, slots: Sequence[Slot] = ()) -> None:
        self.pool = EnginePool()
        self.slots: asyncio.Queue[Slot] | None = None
        if slots:
            self.slots = asyncio.Queue()
            for slot in slots:
                self.slots.put_nowait(slot)

    async def start(self) -> None:
        return None

    async def ready(self) -> None:
        return None

    async def play(
        self, spec: GameSpec, *, key: str, on_move: OnMove, on_start: OnStart, on_log: OnLog
    ) -> GameRecord:
        if self.slots is None:
            return await play_game(spec, pool=self.pool, on_move=on_move, on_log=on_log)
        slot = await self.slots.get()  # as many slots as games at once: never a wait
        try:
            pinned = dataclasses.replace(spec, cpus=(slot.first, slot.second))
            return await play_game(pinned, pool=self.pool, on_move=on_move, on_log=on_log)
        finally:
            self.slots.put_nowait(slot)

    async def close(self) -> None:
        await self.pool.close()
