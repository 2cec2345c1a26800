"""The "local" executor: games run inside the daemon's own process, as they always did."""

from __future__ import annotations

from orchestrator.core.game.record import GameRecord
from orchestrator.engines.pool import EnginePool
from orchestrator.executor.base import OnStart
from orchestrator.game.game import GameSpec, OnLog, OnMove, play_game


class LocalExecutor:
    """Games on the daemon's event loop; `reuse = true` engines stay between their games."""

    label = "local"

    def __init__(self) -> None:
        self.pool = EnginePool()

    async def start(self) -> None:
        return None

    async def ready(self) -> None:
        return None

    async def play(
        self, spec: GameSpec, *, key: str, on_move: OnMove, on_start: OnStart, on_log: OnLog
    ) -> GameRecord:
        return await play_game(spec, pool=self.pool, on_move=on_move, on_log=on_log)

    async def close(self) -> None:
        await self.pool.close()
