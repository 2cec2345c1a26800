"""Results with their uncertainty (`orchestrator/core/stats/`), against reference values
computed independently: fastchess's own test vectors (Disservin/fastchess,
`app/tests/elo_test.cpp` and `app/tests/sprt_test.cpp`, quoted here as data: its `Stats` takes
wins, losses, draws, or the pair counts LL, LD, WL, DD, WD, WW), a closed form, and the
maximum-likelihood fit's own conditions."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.stats.elo import Estimate, penta_counts, pentanomial, trinomial
from orchestrator.core.stats.ratings import _fit, fit_ratings
from orchestrator.core.stats.sprt import Sprt, llr


def wdl(wins: int, losses: int, draws: int) -> tuple[int, int, int]:
    """fastchess's `Stats(wins, losses, draws)` as our (losses, draws, wins)."""
    return (losses, draws, wins)


def penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> tuple[int, ...]:
    """fastchess's pair counts as ours: pairs scoring 0, 1/2, 1 (WL and DD), 3/2, 2."""
    return (ll, ld, wl + dd, wd, ww)


# (the estimate of fastchess's stats, nElo, its error, Elo, its error, LOS %, score); None
# where fastchess checks none.  Its `Stats(wins, losses, draws)` is our trinomial(wins,
# draws, losses); its six pair counts are ours through `penta`.
ELO = [
    (trinomial(76, 123, 89), -20.76, 40.13, None, None, 15.53, 0.477),
    (trinomial(136, 111, 96), 49.77, 36.77, 40.70, 30.43, 99.60, 0.558),
    (trinomial(34, 0, 356), -508.44, 34.48, None, None, None, 0.087),
    (pentanomial(penta(34, 54, 31, 32, 64, 75)), 57.94, 28.28, 55.58, 27.65, 100.00, 0.579),
    (pentanomial(penta(332, 433, 457, 41, 333, 334)), -9.17, 10.96, -8.64, 10.33, 5.05, 0.488),
    (
        pentanomial(penta(7895, 8757, 5485, 200, 568, 9999)),
        *(-19.01, 2.65, -21.04, 2.95, 0.00, 0.470),
    ),
]


@pytest.mark.parametrize(("e", "nelo", "nelo_error", "elo", "error", "los", "score"), ELO)
def test_elo_matches_fastchess(
    e: Estimate,
    nelo: float,
    nelo_error: float,
    elo: float | None,
    error: float | None,
    los: float | None,
    score: float,
) -> None:
    """fastchess compares with doctest's Approx(...).epsilon(0.01): within 1 %."""
    assert e["nelo"] == pytest.approx(nelo, rel=0.01)
    assert e["nelo_error"] == pytest.approx(nelo_error, rel=0.01)
    assert e["score"] == pytest.approx(score, rel=0.01)
    if elo is not None:
        assert e["elo"] == pytest.approx(elo, rel=0.01)
        assert e["elo_error"] == pytest.approx(error, rel=0.01)
    if los is not None:  # printed with two decimals, as a percentage
        assert e["los"] is not None and f"{100 * e['los']:.2f}" == f"{los:.2f}"


# (counts, elo0, elo1, model, LLR)
SPRT = [
    (wdl(36433, 36027, 68692), 0, 2, "normalized", 0.92),
    (wdl(10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
    (wdl(4250, 0, 0), 0, 10, "normalized", 120.56),
    (wdl(21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
    (wdl(57433, 57030, 106593), 0, 2, "logistic", -2.59),
    (penta(365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
    (penta(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    (penta(0, 0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
    (penta(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    (penta(871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "model", "expected"), SPRT)
def test_the_llr_matches_fastchess(
    counts: tuple[int, ...], elo0: float, elo1: float, model: str, expected: float
) -> None:
    assert llr(counts, elo0, elo1, model) == pytest.approx(expected, rel=0.01)  # type: ignore[arg-type]


def test_an_sprt_stops_at_its_bounds() -> None:
    test = Sprt(elo0=0, elo1=5, alpha=0.05, beta=0.05)
    assert test.upper == pytest.approx(math.log(19)) and test.lower == pytest.approx(-math.log(19))
    assert test.state(penta=(0, 0, 0, 0, 5550)).verdict == "H1"
    assert test.state(penta=(5550, 0, 0, 0, 0)).verdict == "H0"
    going = test.state(wins=10, draws=20, losses=10)
    assert going.verdict is None and going.lower < going.llr < going.upper
    for bad in ({"elo0": 5, "elo1": 0}, {"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5}):
        with pytest.raises(ValueError, match=r"elo0|alpha"):
            Sprt(**bad)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["normalized", "logistic"]),
    st.floats(-1.0, 1.0),
    st.floats(-1.0, 1.0),
    st.one_of(
        st.lists(st.integers(0, 10**6), min_size=3, max_size=3),
        st.lists(st.integers(0, 10**6), min_size=5, max_size=5),
    ),
)
def test_every_test_within_its_bounds_has_a_finite_llr(
    model: str, a: float, b: float, counts: list[int]
) -> None:
    """Every pair of bounds a config may give (up to `BOUND`, either sign), over any counts:
    a finite LLR, never an exception (beyond them a bound is refused at check)."""
    from orchestrator.core.stats.sprt import BOUND

    lo, hi = sorted((a * BOUND[model], b * BOUND[model]))
    if lo == hi:
        return
    test = Sprt(elo0=lo, elo1=hi, model=model)  # type: ignore[arg-type]
    if len(counts) == 5:
        assert math.isfinite(test.state(penta=counts).llr)
    else:
        assert math.isfinite(test.state(wins=counts[0], draws=counts[1], losses=counts[2]).llr)


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"elo0": 0, "elo1": 240}, "elo1 must be a number from -200 to 200"),
        ({"elo0": -math.inf, "elo1": math.inf}, "elo0 must be a number"),
        ({"elo0": 0, "elo1": math.nan}, "elo1 must be a number"),
        ({"elo0": 0, "elo1": 1001, "model": "logistic"}, "from -1000 to 1000"),
    ],
)
def test_bounds_beyond_the_model_s_are_refused(bounds: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sprt(**bounds)  # type: ignore[arg-type]


def test_pair_points_become_pentanomial_counts() -> None:
    assert penta_counts([2, 0, 1, 1, 1.5, 0.5, 1]) == (1, 1, 3, 1, 1)
    with pytest.raises(ValueError, match="game pair"):
        penta_counts([2.5])


def test_two_engines_at_75_percent_are_190_8_elo_apart() -> None:
    """The closed form: 1 / (1 + 10^(-d/400)) = 0.75, d = 400 log10(3) = 190.85."""
    games = [("A", "B", 1.0)] * 30 + [("B", "A", 1.0)] * 10
    a, b = fit_ratings(games)
    assert a["elo"] is not None and b["elo"] is not None
    assert a["elo"] - b["elo"] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert a["elo"] + b["elo"] == pytest.approx(0, abs=1e-6)  # the field's mean at 0
    assert a["performance"] == pytest.approx(b["elo"] + 400 * math.log10(3), abs=1e-3)
    assert a["los_next"] is not None and a["los_next"] > 0.99 and b["los_next"] is None


def round_robin(strengths: list[float], cycles: int, seed: int) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    games = []
    for _ in range(cycles):
        for i, a in enumerate(strengths):
            for j, b in enumerate(strengths):
                if i == j:
                    continue
                expected = 1 / (1 + 10 ** ((b - a) / 400))
                draw = 0.4
                u = rng.random()
                score = 0.5 if u < draw else (1.0 if u < draw + (1 - draw) * expected else 0.0)
                games.append((f"E{i}", f"E{j}", score))
    return games


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-300, 300), min_size=3, max_size=7), st.integers(0, 10**6))
def test_a_fitted_round_robin_reproduces_every_score(strengths: list[int], seed: int) -> None:
    """The likelihood's maximum: each engine's expected score against the opponents it met,
    at the fitted ratings, is the score it made."""
    games = round_robin([float(s) for s in strengths], 4, seed)
    ratings = {r["name"]: r for r in fit_ratings(games)}
    if any(r["elo"] is None for r in ratings.values()):
        return  # a perfect score has no finite rating
    for name, rating in ratings.items():
        expected = 0.0
        for white, black, _ in games:
            if name in (white, black):
                other = ratings[black if name == white else white]
                assert rating["elo"] is not None and other["elo"] is not None
                expected += 1 / (1 + 10 ** ((other["elo"] - rating["elo"]) / 400))
        assert expected == pytest.approx(rating["points"], abs=1e-3)
    assert sum(r["elo"] or 0.0 for r in ratings.values()) == pytest.approx(0, abs=1e-6)


def test_intervals_shrink_as_one_over_the_root_of_the_games() -> None:
    games = round_robin([100, 0, -50, -100], 10, 1)
    once = {r["name"]: r for r in fit_ratings(games)}
    four = {r["name"]: r for r in fit_ratings(games * 4)}
    for name, r in once.items():
        assert r["elo"] is not None and four[name]["elo"] == pytest.approx(r["elo"], abs=1e-3)
        assert r["elo_low"] is not None and r["elo_high"] is not None
        width, width4 = r["elo_high"] - r["elo_low"], four[name]["elo_high"] - four[name]["elo_low"]  # type: ignore[operator]
        assert width / width4 == pytest.approx(2.0, rel=1e-3)


def test_an_anchor_and_an_unbeaten_engine() -> None:
    games = [*round_robin([0, 0, 0], 6, 3), ("Z", "E0", 1.0), ("E1", "Z", 0.0)]
    ratings = {r["name"]: r for r in fit_ratings(games, names=["Idle"], anchor=("E0", 3000.0))}
    assert ratings["E0"]["elo"] == pytest.approx(3000.0) and ratings["E0"]["elo_low"] == 3000.0
    assert ratings["Z"]["elo"] is None and ratings["Z"]["points"] == 2  # won every game
    assert ratings["Idle"]["games"] == 0 and ratings["Idle"]["elo"] is None


def test_only_engines_that_took_points_from_each_other_are_rated() -> None:
    """Zermelo's condition: Y beat only Z, who lost every game, and lost to the rest; the
    likelihood has no maximum for either.  The fit rates the group in which every engine
    took points from every other through a chain (E0, E1, E2) and lists Y and Z without."""
    core = round_robin([50, 0, -50], 4, 7)
    extra = [("Y", "Z", 1.0), ("E0", "Y", 1.0), ("Y", "E1", 0.0), ("E2", "Z", 1.0)]
    ratings = {r["name"]: r for r in fit_ratings([*core, *extra])}
    assert {n for n, r in ratings.items() if r["elo"] is not None} == {"E0", "E1", "E2"}
    assert ratings["Y"]["elo"] is None and ratings["Z"]["elo"] is None
    assert sum(r["elo"] or 0.0 for r in ratings.values()) == pytest.approx(0, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=60),
    st.sampled_from([None, ("A", 2500.0), ("B", 3000.0)]),
)
def test_two_engines_ratings_in_closed_form_are_the_optimizer_s(
    scores: list[float], anchor: tuple[str, float] | None
) -> None:
    """A match's two ratings and their covariance, from the score's logit, are what scipy's
    L-BFGS-B finds (the fit of three engines and more)."""
    games = [("A", "B", s) if k % 2 else ("B", "A", 1.0 - s) for k, s in enumerate(scores)]
    games += [("A", "B", 0.5)]  # each takes points from the other: both are rated
    closed = _fit(["A", "B"], games, anchor)
    optimized = _fit(["A", "B"], games, anchor, closed=False)
    assert closed[0] == pytest.approx(optimized[0], abs=1e-4)
    assert closed[1] == pytest.approx(optimized[1], rel=1e-6, abs=1e-6)


def test_a_match_s_fit_loads_no_optimizer() -> None:
    """Two engines' standings need neither scipy nor networkx (a third of a second of the
    daemon's start): a fresh interpreter fits a match and has loaded neither."""
    code = (
        "import sys\n"
        "from orchestrator.core.stats.ratings import fit_ratings, load_fit\n"
        "load_fit(2)\n"
        "fit_ratings([('A', 'B', 1.0), ('B', 'A', 0.5), ('A', 'B', 0.0)])\n"
        "print(sorted(m for m in ('scipy', 'networkx', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['numpy']"]
