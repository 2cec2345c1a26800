"""Engines for games: started per game, or kept between an engine's games when configured."""

from __future__ import annotations

from orchestrator.config.model import EngineConfig
from orchestrator.engines.adapter import Engine


class EnginePool:
    """Hands out engines for games; `reuse = true` engines stay running between their games.

    An engine is kept only after a game that ended without a fault on its side; the runner
    sends `ucinewgame` / `new` at the start of every game.
    """

    def __init__(self) -> None:
        self._idle: dict[str, Engine] = {}

    async def acquire(self, config: EngineConfig) -> Engine:
        engine = self._idle.pop(config.name, None)
        if engine is not None:
            if engine.alive and engine.config == config:
                return engine
            await engine.close()
        return await Engine.start(config)

    async def release(self, engine: Engine, healthy: bool) -> None:
        if healthy and engine.config.reuse and engine.alive and engine.name not in self._idle:
            self._idle[engine.name] = engine
        else:
            await engine.close()

    async def close(self) -> None:
        idle, self._idle = list(self._idle.values()), {}
        for engine in idle:
            await engine.close()
