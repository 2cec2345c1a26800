"""The pairing systems: each a pure function from the event to the first leg of its next
round, registered by name (`registry.py`, where the built-in ones are listed);
`pair_next` pairs a round whatever its system."""

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
