"""Engines for games: started per game, or kept between an engine's games when configured."""

from __future__ import annotations

from orchestrator.config.model import EngineConfig
from orchestrator.engines.adapter import Engine
from orchestrator.engines.journal import Journal


class EnginePool:
    """Hands out engines for games; `reuse = true` engines stay running between their games.

    An engine is kept only after a game that ended without a fault on its side; the runner
    sends `ucinewgame` / `new` at the start of every game.
    """

    def __init__(self) -> None:
        self._idle: dict[str, Engine] = {}

    async def acquire(self, config: EngineConfig, journal: Journal | None = None) -> Engine:
        """An engine for a game, whose lines go to the game's `journal`."""
        engine = self._idle.pop(config.name, None)
        if engine is not None:
            if engine.alive and engine.config == config:
                engine.attach(journal)
                return engine
            await engine.close()
        return await Engine.start(config, journal)

    async def release(self, engine: Engine, healthy: bool) -> None:
        """The game is over for `engine`: kept for its next game, or closed (its `quit` is
        still in the game's log)."""
        if healthy and engine.config.reuse and engine.alive and engine.name not in self._idle:
            self._idle[engine.name] = engine
        else:
            await engine.close()
        engine.attach(None)

    async def close(self) -> None:
        idle, self._idle = list(self._idle.values()), {}
        for engine in idle:
            await engine.close()
