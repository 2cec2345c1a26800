"""The sequential probability ratio test (SPRT) of engine testing: is the Elo difference at
least `elo1` (H1), or at most `elo0` (H0)?

The log-likelihood ratio (LLR) of the observed counts is the generalised one of fishtest and
fastchess: for each hypothesis, the distribution of results closest to the observed one
(maximum likelihood) among those whose expected score, or normalised Elo, is the
hypothesis's; the LLR is the observed counts' log-likelihood under the one of H1 minus
under the one of H0 (M. Van den Bergh, "Comparing the approximations for the generalized log
likelihood ratio of a multinomial distribution" and "Comments on normalized Elo").  The test
stops at H1 once the LLR reaches log((1 - beta) / alpha), at H0 once it falls to
log(beta / (1 - alpha)).

- `logistic`: the hypotheses are logistic Elo differences (an expected score per game);
- `normalized`: they are normalised Elo (nElo), the difference in units of the results'
  own spread, which does not depend on the draw rate.

The counts are trinomial (W/D/L) or pentanomial (game pairs); a count of 0 counts as 0.001,
as fishtest and fastchess regularise it, so that a distribution never loses a result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from orchestrator.core.stats.elo import PENTA_SCORES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BOUND", "Model", "Sprt", "SprtState", "llr"]

Model = Literal["normalized", "logistic"]
Verdict = Literal["H0", "H1"]
_NELO = 800.0 / math.log(10.0)
_TRI_SCORES = (0.0, 0.5, 1.0)
#: the largest bound (either sign) of each model: the closest distribution to the observed
#: one is found reliably within these (tested over every count), and a test of engines
#: further apart than that needs no SPRT
BOUND: dict[str, float] = {"normalized": 200.0, "logistic": 1000.0}


class SprtState(msgspec.Struct, frozen=True):
    """The test now: its LLR, its bounds, and its verdict (None while it goes on)."""

    llr: float
    lower: float
    upper: float
    verdict: Verdict | None


class Sprt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An SPRT as a config asks for it (`sprt = { elo0, elo1, alpha, beta, model }`).

    >>> test = Sprt(elo0=0, elo1=2)
    >>> round(test.lower, 3), round(test.upper, 3)
    (-2.944, 2.944)
    >>> test.state(wins=21404, draws=40708, losses=21184).verdict is None
    True
    >>> Sprt(elo0=0, elo1=float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: elo1 must be a number from -200 to 200 (normalized Elo), not inf
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        most = BOUND[self.model]
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if not -most <= value <= most:  # nan and the infinities too
                raise ValueError(
                    f"{name} must be a number from {-most:g} to {most:g} ({self.model} Elo), "
                    f"not {value:g}"
                )
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("alpha + beta must be below 1")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def state(
        self,
        *,
        wins: int = 0,
        draws: int = 0,
        losses: int = 0,
        penta: Sequence[int] | None = None,
    ) -> SprtState:
        """The test after these results: pentanomial counts when given, else W/D/L."""
        if penta is not None:
            value = llr(penta, self.elo0, self.elo1, self.model)
        else:
            value = llr((losses, draws, wins), self.elo0, self.elo1, self.model)
        verdict: Verdict | None = None
        if value >= self.upper:
            verdict = "H1"
        elif value <= self.lower:
            verdict = "H0"
        return SprtState(value, self.lower, self.upper, verdict)


def llr(counts: Sequence[int], elo0: float, elo1: float, model: Model = "normalized") -> float:
    """The generalised LLR of H1 (`elo1`) against H0 (`elo0`) given `counts`: three
    (losses, draws, wins) or five (game pairs scoring 0 to 2 points).

    >>> round(llr((36027, 68692, 36433), 0, 2), 2)  # fastchess's tests: sprt_test.cpp
    0.92
    >>> round(llr((365, 16618, 36229, 16974, 390), 0, 2), 2)
    2.25
    """
    import numpy as np  # here: loading numpy and scipy is for the tests that need them

    if len(counts) == 3:
        scores: Sequence[float] = _TRI_SCORES
    elif len(counts) == 5:
        scores = PENTA_SCORES
    else:
        raise ValueError(f"three or five counts are needed, not {len(counts)}")
    regular = np.array([c if c > 0 else 1e-3 for c in counts], dtype=float)
    total = float(regular.sum())
    observed = regular / total
    a = np.asarray(scores, dtype=float)
    if model == "logistic":
        p0 = _closest(observed, a - _expected(elo0))
        p1 = _closest(observed, a - _expected(elo1))
    else:
        pair = math.sqrt(2.0) if len(counts) == 5 else 1.0
        p0 = _normalized(a, observed, pair * elo0 / _NELO)
        p1 = _normalized(a, observed, pair * elo1 / _NELO)
    return total * float(observed @ (np.log(p1) - np.log(p0)))


def _expected(difference: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -difference / 400.0))


def _theta(observed: NDArray[np.float64], phi: NDArray[np.float64]) -> float:
    """The root of sum(observed * phi / (1 + theta * phi)) between its poles (scipy's
    Brent): the multiplier of the closest distribution with sum(p * phi) = 0."""
    from scipy.optimize import brentq

    low, high = -1.0 / float(phi.max()), -1.0 / float(phi.min())
    span = high - low
    return float(
        brentq(
            lambda t: float(observed @ (phi / (1.0 + t * phi))),
            low + 1e-12 * span,
            high - 1e-12 * span,
            xtol=1e-12,
        )
    )


def _closest(observed: NDArray[np.float64], phi: NDArray[np.float64]) -> NDArray[np.float64]:
    """The distribution closest to `observed` (maximum likelihood) with sum(p * phi) = 0:
    here, an expected score fixed (phi is each result's score minus it)."""
    return observed / (1.0 + _theta(observed, phi) * phi)


def _normalized(
    a: NDArray[np.float64], observed: NDArray[np.float64], t: float
) -> NDArray[np.float64]:
    """The distribution closest to `observed` whose (mean - 1/2) / sigma is `t`: a fixed
    point, each step the closest one under the constraint linearised at the last."""
    import numpy as np

    p = np.full_like(observed, 1.0 / len(observed))
    for _ in range(50):
        mu = float(p @ a)
        sigma = math.sqrt(float(p @ (a - mu) ** 2))
        phi = a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2)
        new = observed / (1.0 + _theta(observed, phi) * phi)
        done = float(np.abs(new - p).max()) < 1e-9
        p = new
        if done:
            break
    return p
