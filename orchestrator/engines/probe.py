"""Start an engine once to prove its config works: the `check` and `play` commands' test."""

from __future__ import annotations

from orchestrator.config.model import Config, ConfigError, EngineConfig
from orchestrator.engines.adapter import Engine, EngineFault


async def probe(config: Config, engine: EngineConfig) -> Engine:
    """Start, handshake and configure `engine`; a `ConfigError` naming it when that fails.

    The caller closes the returned engine.
    """
    try:
        return await Engine.start(engine)
    except EngineFault as fault:
        last = f" (last output: {fault.output[-1]!r})" if fault.output else ""
        raise ConfigError(
            f'{config.path}: [[engine]] "{engine.name}": {fault.detail}{last}'
        ) from None
