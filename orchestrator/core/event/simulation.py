"""Play a whole event with random results from a seeded generator, every round really paired.

Directors use it to choose the number of rounds.  Results follow the Elo expectation of the
players' ratings (when there are none, ratings fall by 10 per seed) with a fixed draw rate.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

from orchestrator.core.event.model import Pairing, Result, Tournament
from orchestrator.core.pairing.round import pair_next


@dataclass(frozen=True)
class Simulation:
    tournament: Tournament
    dropped: tuple[int, ...]  # dropped_rounds reported when pairing each round
    #: each round's opening numbers, where its system numbers them (a knockout), else ()
    openings: tuple[tuple[int, ...], ...] = ()

    @property
    def first_removal(self) -> int | None:
        """The first round paired with a removed encounter-history round, if any.

        >>> Simulation(Tournament(()), (0, 0, 1, 2)).first_removal
        3
        """
        return next((i + 1 for i, d in enumerate(self.dropped) if d > 0), None)


def _result(rng: random.Random, white: float, black: float, draw_rate: float) -> Result:
    expected = 1.0 / (1.0 + 10 ** ((black - white) / 400.0))
    win = min(max(expected - draw_rate / 2, 0.0), 1.0 - draw_rate)
    x = rng.random()
    if x < draw_rate:
        return "1/2-1/2"
    return "1-0" if x < draw_rate + win else "0-1"


def simulate(
    start: Tournament,
    rounds: int,
    *,
    rng_seed: int = 1,
    draw_rate: float = 0.6,
    ratings: Mapping[str, float] | None = None,
) -> Simulation:
    """Play `rounds` more rounds of `start` with seeded random results, by the Elo
    expectation of `ratings` (by default, 10 points apart by seed), or fewer where the event
    ends itself first (a knockout's final is decided).

    >>> from orchestrator.core.event.model import Player
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    >>> from orchestrator.core.event.model import Rules
    >>> sim = simulate(Tournament(players, rules=Rules(format="double")), 3, rng_seed=7)
    >>> len(sim.tournament.rounds), sim.dropped
    (3, (0, 0, 0))
    >>> simulate(Tournament(players), 3, rng_seed=7) == simulate(Tournament(players), 3, rng_seed=7)
    True
    """
    if not 0.0 <= draw_rate <= 1.0:
        raise ValueError(f"the draw rate must be between 0 and 1, not {draw_rate}")
    rng = random.Random(rng_seed)
    rating = {p.name: 3600.0 - 10.0 * p.seed for p in start.players}
    rating.update(ratings or {})
    t = start
    dropped: list[int] = []
    openings: list[tuple[int, ...]] = []
    for _ in range(rounds):
        pairing: Pairing = pair_next(t)
        if pairing.finished:  # a system that ends itself (a knockout) is over
            break
        results = tuple(
            _result(rng, rating[g.white], rating[g.black], draw_rate) for g in pairing.games
        )
        t = msgspec.structs.replace(t, rounds=(*t.rounds, pairing.as_round(results)))
        dropped.append(pairing.dropped_rounds)
        openings.append(pairing.openings)
    return Simulation(t, tuple(dropped), tuple(openings))
