"""Every engine's Elo in a field, fitted by maximum likelihood over all its games, as Ordo
and BayesElo do (without their priors), with 95 % intervals.

The model: an engine rated `a` scores 1 / (1 + 10^((b - a) / 400)) on average against one
rated `b`, a draw counting half a point.  The ratings that make the games played most likely
are found by scipy (L-BFGS-B, with the log-likelihood's own gradient); the ratings are
differences only, so they are shifted to the anchor: the field's mean at 0, or one engine at
a given rating.  The intervals come from the observed information (the log-likelihood's
Hessian at the fit) through the anchor's shift, so the anchor engine's own interval is 0
and the others are relative to it.  LOS against the engine ranked next uses both ratings'
variances and their covariance.

Ratings are finite only where no group of engines took every point from the rest: the
likelihood then has its maximum (Zermelo's condition).  So the fit rates the largest group of
engines in which each took points (a win or a draw) from each other through a chain of games,
a strongly connected component of that directed graph (networkx), on the games between them;
an engine outside it (one that won or lost every game, ...) is listed without a rating.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, TypedDict

from orchestrator.core.stats.elo import Z95, elo

if TYPE_CHECKING:  # numpy, scipy and networkx are loaded where a fit runs, not on import
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Rating", "RatingFigures", "fit_ratings", "unrated"]

_K = math.log(10.0) / 400.0
#: a bound on the fit (never reached inside a strongly connected component)
_BOUND = 4000.0


class RatingFigures(TypedDict):
    """An engine's fitted Elo with its 95 % interval (None: no finite rating), its
    performance, draw ratio, and the likelihood that it is stronger than the engine ranked
    next below it (None for the last, or without ratings).  The standings' JSON carries them
    (`event/api.py`)."""

    elo: float | None
    elo_low: float | None
    elo_high: float | None
    performance: float | None
    draw_ratio: float
    los_next: float | None


class Rating(RatingFigures):
    """An engine's games, points and figures."""

    name: str
    games: int
    points: float


def unrated(name: str, games: int, points: float, draw_ratio: float) -> Rating:
    """An engine's line without a fit: no Elo, no interval, no performance, no LOS.

    >>> unrated("A", 4, 2.5, 0.25)["elo"], unrated("A", 4, 2.5, 0.25)["draw_ratio"]
    (None, 0.25)
    """
    return {
        "name": name,
        "games": games,
        "points": points,
        "elo": None,
        "elo_low": None,
        "elo_high": None,
        "performance": None,
        "draw_ratio": draw_ratio,
        "los_next": None,
    }


def fit_ratings(
    games: Sequence[tuple[str, str, float]],
    names: Sequence[str] | None = None,
    anchor: tuple[str, float] | None = None,
) -> list[Rating]:
    """The ratings of the engines of `games` ((white, black, White's points) each), best
    first; `names` lists engines without games too; `anchor` fixes one engine's rating (by
    default the mean of the rated engines is 0).

    A 75 % score between two engines is 190.8 Elo, split around the mean:

    >>> two = fit_ratings([("A", "B", 1.0)] * 3 + [("A", "B", 0.0)])
    >>> [(r["name"], round(r["elo"], 1)) for r in two]
    [('A', 95.4), ('B', -95.4)]
    >>> one = fit_ratings([("A", "B", 1.0)] * 3 + [("A", "B", 0.0)], anchor=("B", 2000))
    >>> [(r["name"], round(r["elo"], 1), r["elo_low"] == r["elo_high"]) for r in one]
    [('A', 2190.8, False), ('B', 2000.0, True)]
    """
    everyone = sorted(set(names or ()) | {g[0] for g in games} | {g[1] for g in games})
    played = dict.fromkeys(everyone, 0)
    points = dict.fromkeys(everyone, 0.0)
    draws = dict.fromkeys(everyone, 0)
    for white, black, score in games:
        played[white] += 1
        played[black] += 1
        points[white] += score
        points[black] += 1.0 - score
        if score == 0.5:
            draws[white] += 1
            draws[black] += 1
    rated = _rateable(games)
    kept = [g for g in games if g[0] in rated and g[1] in rated]
    ratings, covariance = _fit(rated, kept, anchor)
    unbounded = set(everyone) - set(rated)
    index = {n: k for k, n in enumerate(rated)}
    out: list[Rating] = []
    for name in everyone:
        i = index.get(name)
        value = half = None
        if i is not None and name not in unbounded:
            value = float(ratings[i])
            half = Z95 * math.sqrt(max(0.0, float(covariance[i, i])))
        out.append(
            unrated(
                name,
                played[name],
                points[name],
                draws[name] / played[name] if played[name] else 0.0,
            )
            | {
                "elo": value,
                "elo_low": None if value is None or half is None else value - half,
                "elo_high": None if value is None or half is None else value + half,
                "performance": _performance(
                    name, games, ratings, index, points[name], played[name]
                ),
            }
        )
    out.sort(key=lambda r: (r["elo"] is None, -(r["elo"] or 0.0), -r["points"], r["name"]))
    return _with_los(out, index, covariance)


def load_fit(engines: int = 3) -> None:
    """Load what a fit of `engines` engines needs: numpy, and for more than two scipy and
    networkx (a third of a second of CPU, holding the interpreter; two engines' ratings
    need neither, `_fit`).  The daemon calls it before its first game, so that the first
    standings it writes do not stall its games.

    >>> load_fit()
    >>> import sys
    >>> all(name in sys.modules for name in ("numpy", "scipy.optimize", "networkx"))
    True
    """
    import numpy  # noqa: F401

    if engines > 2:
        import networkx  # noqa: F401
        import scipy.optimize  # noqa: F401


def _rateable(games: Sequence[tuple[str, str, float]]) -> list[str]:
    """The engines with finite ratings: the largest strongly connected component (the most
    games among equals, then the names) of "took points from".  Two engines are rated
    when each took points from the other (networkx is not needed for them).

    >>> _rateable([("A", "B", 1.0), ("B", "A", 0.5)]), _rateable([("A", "B", 1.0)])
    (['A', 'B'], [])
    """
    names = {g[0] for g in games} | {g[1] for g in games}
    if len(names) <= 2:
        took = {(w, b) for w, b, s in games if s > 0} | {(b, w) for w, b, s in games if s < 1}
        return sorted(names) if len(took) == 2 else []
    import networkx as nx

    graph: nx.DiGraph[str] = nx.DiGraph()
    size: dict[frozenset[str], int] = {}
    for white, black, score in games:
        graph.add_nodes_from((white, black))
        if score > 0:
            graph.add_edge(white, black)
        if score < 1:
            graph.add_edge(black, white)
    groups = [frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    if not groups:
        return []
    for group in groups:
        size[group] = sum(1 for w, b, _ in games if w in group and b in group)
    best = max(groups, key=lambda g: (len(g), size[g], sorted(g)))
    return sorted(best)


def _fit(
    rated: list[str],
    games: Sequence[tuple[str, str, float]],
    anchor: tuple[str, float] | None,
    *,
    closed: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The ratings of `rated` (in order) and their covariance, shifted to the anchor.

    Two engines have one difference, at which the expected score is the score: with
    `closed` it is that score's logit, no optimizer needed (scipy's finds the same).
    """
    import numpy as np

    n = len(rated)
    if n == 0:
        return np.zeros(0), np.zeros((0, 0))
    index = {name: i for i, name in enumerate(rated)}
    count = np.zeros((n, n))  # games between i and j
    score = np.zeros((n, n))  # i's points against j
    for white, black, points in games:
        i, j = index[white], index[black]
        count[i, j] += 1
        count[j, i] += 1
        score[i, j] += points
        score[j, i] += 1.0 - points

    def expected(r: NDArray[np.float64]) -> NDArray[np.float64]:
        result: NDArray[np.float64] = 1.0 / (1.0 + np.exp(-_K * (r[:, None] - r[None, :])))
        return result

    def loss(free: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        r = np.concatenate(([0.0], free))
        e = np.clip(expected(r), 1e-300, 1.0 - 1e-16)
        value = -float(np.sum(score * np.log(e)))  # each game from both sides: half each
        gradient = -_K * np.sum(score - count * e, axis=1)
        return value / 2.0 + 0.0, gradient[1:]

    if n == 2 and closed:
        share = score[1, 0] / count[1, 0]  # rated: each took points, 0 < share < 1
        difference = math.log(share / (1.0 - share)) / _K
        ratings = np.array([0.0, min(_BOUND, max(-_BOUND, difference))])
    elif n > 1:
        ratings = _optimized(loss, n)
    else:
        ratings = np.zeros(1)
    e = expected(ratings)
    hessian = _K**2 * count * e * (1.0 - e)
    hessian = np.diag(hessian.sum(axis=1)) - hessian
    free = np.zeros((n, n))  # the first engine is held at 0: the rest's covariance
    if n > 1:
        free[1:, 1:] = np.linalg.pinv(hessian[1:, 1:])
    if anchor is not None and anchor[0] in index:
        a = index[anchor[0]]
        shift = np.eye(n) - np.outer(np.ones(n), np.eye(n)[a])
        offset = anchor[1] - ratings[a]
    else:
        shift = np.eye(n) - np.full((n, n), 1.0 / n)
        offset = -float(ratings.mean())
    return ratings + offset, shift @ free @ shift.T


def _optimized(
    loss: Callable[[NDArray[np.float64]], tuple[float, NDArray[np.float64]]], n: int
) -> NDArray[np.float64]:
    """The `n` ratings (the first held at 0) that minimize `loss` (with its gradient)."""
    import numpy as np
    from scipy.optimize import minimize

    found = minimize(
        loss,
        np.zeros(n - 1),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-_BOUND, _BOUND)] * (n - 1),
        options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10_000},
    )
    return np.concatenate(([0.0], found.x))


def _performance(
    name: str,
    games: Sequence[tuple[str, str, float]],
    ratings: NDArray[np.float64],
    index: dict[str, int],
    points: float,
    played: int,
) -> float | None:
    """The rating at which `name`'s score is expected against its rated opponents."""
    import numpy as np

    opponents = [index[b] for a, b, _ in games if a == name and b in index]
    opponents += [index[a] for a, b, _ in games if b == name and a in index]
    difference = elo(points / played) if played else None
    if not opponents or difference is None:
        return None
    return float(np.mean(ratings[opponents])) + difference


def _with_los(
    ranked: list[Rating], index: dict[str, int], covariance: NDArray[np.float64]
) -> list[Rating]:
    out = []
    for k, rating in enumerate(ranked):
        below = ranked[k + 1] if k + 1 < len(ranked) else None
        los = None
        mine, theirs = rating["elo"], below["elo"] if below is not None else None
        if mine is not None and below is not None and theirs is not None:
            i, j = index[rating["name"]], index[below["name"]]
            variance = covariance[i, i] + covariance[j, j] - 2.0 * covariance[i, j]
            if variance > 0:
                los = NormalDist().cdf((mine - theirs) / math.sqrt(variance))
        out.append(rating | {"los_next": los})
    return out
