"""The one entry point for "pair the next round", whatever the system."""

from __future__ import annotations

from orchestrator.core.model import Pairing, Tournament
from orchestrator.core.roundrobin import pair_round_robin
from orchestrator.core.swiss import pair_swiss


def pair_next(t: Tournament) -> Pairing:
    """The next round of `t` in playing order, by its system's rules."""
    if t.system == "round-robin":
        return pair_round_robin(t)
    return pair_swiss(t)
