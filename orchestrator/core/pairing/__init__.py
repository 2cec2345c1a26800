"""The pairing systems: each a pure function from the event to the first leg of its next
round, registered by name (`registry.py`); `pair_next` pairs a round whatever its system.

Importing this package registers the built-in systems, in the order they are listed.
"""

from typing import Any

from orchestrator.core.pairing import bakert, olafsson, ranked, roundrobin, swiss, teams
from orchestrator.core.pairing.registry import (
    Draft,
    NoOptions,
    System,
    legs,
    lookup,
    names,
    register,
)
from orchestrator.core.pairing.round import first_leg, pair_next

_system: System[Any]
for _system in (
    swiss.SWISS,
    roundrobin.ROUND_ROBIN,
    olafsson.OLAFSSON,
    bakert.BAKERT,
    ranked.KOTH,
    ranked.FACTORED,
    ranked.QUARTILE,
    ranked.RANDOM,
    teams.TEAM_SWISS,
):
    register(_system)

__all__ = [
    "Draft",
    "NoOptions",
    "System",
    "first_leg",
    "legs",
    "lookup",
    "names",
    "pair_next",
    "register",
]
