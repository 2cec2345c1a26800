"""A pair of engines' result with its uncertainty, as engine testers read it.

Two models of the same result:

- **trinomial**: each game is a win, a draw or a loss (1, 1/2, 0), independent of the others;
- **pentanomial**: games come in pairs that play one opening with both colours, and each pair
  scores 0, 1/2, 1, 3/2 or 2 points.  The two games of a pair are not independent (the opening
  favours one side), so the pair is the unit: its variance is smaller, and so are the errors.

For both, with the mean score per game `s` and the variance `v` of one unit's score per game:

- Elo = -400 log10(1/s - 1), the logistic difference that expects `s`;
- its 95 % error is half the Elo width of `s` +- 1.96 sqrt(v / units);
- normalised Elo, nElo = (s - 1/2) / sqrt(v) * 800 / ln 10 (per game pair: sqrt(2 v)), the
  difference in units of the result's own spread (fishtest's and fastchess's);
- LOS, the likelihood of superiority: the probability that the true score is above 1/2.

These are the formulas fastchess and fishtest use; `tests/core/test_stats.py` checks them
against fastchess's own test vectors.  (The standard library's normal distribution is enough
here: a pairing or a text table never waits for numpy or scipy to load.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from statistics import NormalDist
from typing import TypedDict

__all__ = [
    "PENTA_SCORES",
    "Z95",
    "Estimate",
    "Figures",
    "elo",
    "penta_counts",
    "pentanomial",
    "trinomial",
]

#: the half-width of a 95 % interval, in standard errors
Z95 = NormalDist().inv_cdf(0.975)
#: the score per game of a pair scoring 0, 1/2, 1, 3/2 and 2 points
PENTA_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
_NELO = 800.0 / math.log(10.0)


class Figures(TypedDict):
    """What a result says of two engines: Elo and its 95 % error, nElo and its error, LOS.
    A figure that a score of 0 or 1 (or no spread at all) leaves unbounded is None.  The
    JSON outputs carry them as they are (`event/api.py`)."""

    elo: float | None
    elo_error: float | None
    nelo: float | None
    nelo_error: float | None
    los: float | None


class Estimate(Figures):
    """A result with its uncertainty: its units (games, or game pairs), the mean score per
    game, and its figures."""

    units: int
    score: float


def elo(score: float) -> float | None:
    """The logistic Elo difference that expects `score` per game (None at 0 or 1).

    >>> round(elo(0.75), 1), elo(0.5), elo(1.0)
    (190.8, 0.0, None)
    """
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # no -0.0


def _estimate(values: Sequence[float], counts: Sequence[int], per_pair: bool) -> Estimate:
    units = int(sum(counts))
    if units == 0:
        return _unbounded(0, 0.5)
    p = [c / units for c in counts]
    score = sum(pi * x for pi, x in zip(p, values, strict=True))
    variance = sum(pi * (x - score) ** 2 for pi, x in zip(p, values, strict=True))
    spread = math.sqrt(variance / units)
    low, high = elo(score - Z95 * spread), elo(score + Z95 * spread)
    error = None if low is None or high is None else (high - low) / 2
    if variance <= 0.0:
        bounded = _unbounded(units, score)
        bounded["elo"], bounded["elo_error"] = elo(score), error
        return bounded
    sigma = math.sqrt(2.0 * variance if per_pair else variance)
    los = NormalDist().cdf((score - 0.5) / spread)
    return Estimate(
        units=units,
        score=score,
        elo=elo(score),
        elo_error=error,
        nelo=(score - 0.5) / sigma * _NELO,
        nelo_error=Z95 * spread / sigma * _NELO,
        los=los,
    )


def _unbounded(units: int, score: float) -> Estimate:
    """An estimate whose figures are all unbounded (None)."""
    return Estimate(
        units=units, score=score, elo=None, elo_error=None, nelo=None, nelo_error=None, los=None
    )


def trinomial(wins: int, draws: int, losses: int) -> Estimate:
    """The trinomial estimate of `wins`, `draws` and `losses` (the games are the units).

    >>> e = trinomial(19, 74, 7)  # TCEC Superfinal 21: Stockfish 56 - 44 Leela
    >>> round(e["elo"], 1), round(e["elo_error"], 1), round(e["los"], 4)
    (41.9, 34.4, 0.9923)
    >>> trinomial(0, 2, 0)["elo"], trinomial(3, 0, 0)["elo_error"]
    (0.0, None)
    """
    return _estimate((1.0, 0.5, 0.0), (wins, draws, losses), per_pair=False)


def pentanomial(counts: Sequence[int]) -> Estimate:
    """The pentanomial estimate of the game pairs that scored 0, 1/2, 1, 3/2 and 2 points
    (`counts`, in that order; the pairs are the units).

    >>> e = pentanomial((0, 2, 6, 2, 0))  # ten pairs, even
    >>> e["units"], e["score"], e["elo"], round(e["elo_error"], 1)
    (10, 0.5, 0.0, 69.0)
    """
    if len(counts) != len(PENTA_SCORES):
        raise ValueError(f"five counts are needed, one per pair score; got {len(counts)}")
    return _estimate(PENTA_SCORES, counts, per_pair=True)


def penta_counts(pair_points: Iterable[float]) -> tuple[int, int, int, int, int]:
    """How many game pairs scored 0, 1/2, 1, 3/2 and 2 points, from each pair's points.

    >>> penta_counts([2, 1.5, 1, 1, 0.5, 1])
    (0, 1, 3, 1, 1)
    """
    out = [0] * 5
    for points in pair_points:
        index = round(points * 2)
        if not 0 <= index <= 4 or index != points * 2:
            raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2 points, not {points}")
        out[index] += 1
    return (out[0], out[1], out[2], out[3], out[4])
