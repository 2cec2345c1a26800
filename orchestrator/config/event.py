"""From a config to the empty tournament it describes: players seeded by its method."""

from __future__ import annotations

from orchestrator.config.model import Config
from orchestrator.core.model import Player, Tournament
from orchestrator.core.seeding import seed


def initial_tournament(config: Config) -> Tournament:
    t = config.tournament
    names = [e.name for e in config.engines]
    seeded = seed(
        names,
        t.seeding,
        ratings=[e.rating for e in config.engines],
        groups=config.groups(),
        rng_seed=t.random_seed,
    )
    return Tournament(
        players=tuple(Player(name, i + 1) for i, name in enumerate(seeded)),
        format=t.format,
        schedule=t.schedule,
        system=t.system,
        cycles=t.cycles,
    )
