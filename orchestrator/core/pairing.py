"""The one entry point for "pair the next round", whatever the system."""

from __future__ import annotations

from orchestrator.core.model import Pairing, System, Tournament
from orchestrator.core.roundrobin import pair_round_robin, total_rounds
from orchestrator.core.swiss import pair_swiss


def pair_next(tournament: Tournament) -> Pairing:
    """The next round of `tournament` in playing order, by its system's rules.

    >>> from orchestrator.core.model import Player
    >>> pairing = pair_next(Tournament(tuple(Player(n, s) for s, n in enumerate("ABCD", 1))))
    >>> [(g.white, g.black) for g in pairing.games]
    [('D', 'C'), ('B', 'A')]
    """
    if tournament.system == "round-robin":
        return pair_round_robin(tournament)
    return pair_swiss(tournament)


def default_rounds(system: System, players: int, cycles: int = 1) -> int:
    """How many rounds an event plays when none are set: the whole table of a round robin
    (`cycles` times), half the players for a Swiss (at least one).

    >>> default_rounds("swiss", 44), default_rounds("round-robin", 6, cycles=2)
    (22, 10)
    """
    if system == "round-robin":
        return total_rounds(players, cycles)
    return max(1, players // 2)
