"""TCEC Season 20's leagues (`tests/data/tcec-season/`), replayed through the season's
standings and field rules: every league's promoted engines are those TCEC promoted,
including the three-way tie at League 3's cut."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from orchestrator.core.event.model import Game, Player, Round, Rules, Tournament
from orchestrator.core.event.standings import Tiebreak, standings
from orchestrator.core.season import Draw, SeasonEvent, Undecided, resolve_field
from tests.support.paths import DATA

SEASON = json.loads((DATA / "tcec-season" / "season20.json").read_text())
LEAGUES: dict[str, list[list[str]]] = {x["name"]: x["games"] for x in SEASON["leagues"]}
ORDER = ["Qualification League", "League 4", "League 3", "League 2"]
#: Season 20's tiebreaks after points (the data's README says where they come from)
TIEBREAKS: tuple[Tiebreak, ...] = ("direct", "rmobility", "wins", "sb")
#: how many each league promoted into the next
PROMOTE = {"Qualification League": 4, "League 4": 3, "League 3": 3}
#: engines that changed their version string between events (mapped by name)
RENAMED = {"Nemorino 6.03_NNUE": "Nemorino 6.04_NNUE", "Seer 1.2.1_dev": "Seer 1.2.1_20201210"}


def players(league: str) -> list[str]:
    return sorted({g[1] for g in LEAGUES[league]} | {g[2] for g in LEAGUES[league]})


def tournament(league: str) -> Tournament:
    """The league as played: a double round robin of single-game rounds, and in an odd
    field each round's engine without a game has the BYE (a rest day)."""
    rounds: dict[int, list[Game]] = {}
    for number, white, black, result, rmobility in LEAGUES[league]:
        game = Game(white, black, result, rmobility=rmobility)  # type: ignore[arg-type]
        rounds.setdefault(int(number.split(".")[0]), []).append(game)
    entrants = tuple(Player(name, seed) for seed, name in enumerate(players(league), 1))
    played = []
    for n, games in sorted(rounds.items()):
        idle = set(players(league)) - {name for g in games for name in (g.white, g.black)}
        assert len(idle) == len(entrants) % 2, (league, n, idle)
        played.append(Round(n, tuple(games), bye=next(iter(idle), None)))
    rules = Rules(system="round-robin", format="single", cycles=2)
    return Tournament(entrants, tuple(played), rules)


def places(league: str, order: tuple[Tiebreak, ...] = TIEBREAKS) -> list[tuple[str, str]]:
    return [(line.place, line.name) for line in standings(tournament(league), order)]


def next_field(lower: str, upper: str) -> tuple[SeasonEvent, set[str]]:
    """The upper league as a season draws it (its engines that did not play the lower one,
    and the lower one's top N), and the engines TCEC promoted (by name, as the lower league
    knew them)."""
    promoted = {n for n in players(lower) if as_in(upper, n) in players(upper)}
    came = {as_in(upper, n) for n in promoted}
    stayed = [n for n in players(upper) if n not in came]
    return SeasonEvent(upper, (*stayed, Draw(lower, top=PROMOTE[lower]))), promoted


def as_in(league: str, name: str) -> str:
    """`name` as `league` knows it (its new version string, where it changed)."""
    return name if name in players(league) else RENAMED.get(name, name)


@pytest.mark.parametrize(("lower", "upper"), list(itertools.pairwise(ORDER)))
def test_each_league_promotes_the_engines_tcec_promoted(lower: str, upper: str) -> None:
    event, promoted = next_field(lower, upper)
    field = resolve_field(event, {lower: places(lower)})
    drawn = field[len(event.names()) :]
    assert set(drawn) == promoted
    assert {as_in(upper, n) for n in field} == set(players(upper))


def test_league_3_s_tie_at_the_cut_is_broken_by_the_direct_encounter() -> None:
    table = places("League 3")
    assert [name.split()[0] for _, name in table[2:5]] == ["Seer", "Tucano", "Combusken"]
    assert [place for place, _ in table[2:5]] == ["3", "4", "5"]
    # on points alone the cut falls inside a three-way tie: the season would hold, and a
    # director's decision reproduces TCEC's
    event, promoted = next_field("League 3", "League 2")
    on_points = places("League 3", ())
    with pytest.raises(Undecided) as held:
        resolve_field(event, {"League 3": on_points})
    tied = set(held.value.tied)
    assert {n.split()[0] for n in tied} == {"Seer", "Tucano", "Combusken"}
    decided = {"League 3": ["Seer 1.2.1_dev", "Tucano 9.02_dev", "Combusken 1.4.0"]}
    field = resolve_field(event, {"League 3": on_points}, decided)
    assert set(field[len(event.names()) :]) == promoted


def test_the_qualification_league_s_byes_score_nothing_as_tcec_counts_them() -> None:
    """Seven engines: each of the 14 rounds one engine rests.  TCEC's final table of the
    Qualification League (tcec-chess.com, Season 20; owiki.org, "TCEC Season 20")."""
    t = tournament("Qualification League")
    assert sum(r.bye is not None for r in t.rounds) == 14
    table = {line.name.split()[0]: (line.score, line.byes) for line in standings(t, TIEBREAKS)}
    assert table == {
        "Seer": (10.0, 2), "Halogen": (9.0, 2), "MrBob": (8.0, 2), "A0lite": (5.5, 2),
        "Koivisto": (5.0, 2), "Cheese": (3.0, 2), "Stash": (1.5, 2),
    }  # fmt: skip
    first = standings(t, TIEBREAKS)[0]
    # Sonneborn-Berger from the same scores: Seer's wins and draws against the others'
    assert first.tiebreaks["sb"] == sum(
        pts * {x.name: x.score for x in standings(t, TIEBREAKS)}[opp] for opp, pts in first.results
    )


def test_the_data_is_whole() -> None:
    counts: dict[str, Any] = {name: len(games) for name, games in LEAGUES.items()}
    assert counts == {
        "Qualification League": 42, "League 4": 90, "League 3": 90, "League 2": 90,
    }  # fmt: skip
    for name, games in LEAGUES.items():
        n = len(players(name))
        assert len(games) == n * (n - 1), name  # a double round robin
