"""The team Swiss (docs/systems/team-swiss.md): teams of engines on fixed boards, paired as
teams by the TCEC Swiss rules; Team 1 has White on boards 1, 4, 5, 8, 9, ...; standings by
match points, then board points."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.event import state_json
from orchestrator.core.event.model import RESULTS, Game, Player, Round, Rules, Team, Tournament
from orchestrator.core.event.standings import tally
from orchestrator.core.pairing.round import pair_next
from orchestrator.core.pairing.teams import match_games, team_standings
from orchestrator.event.controls import ControlRefused, PairManual
from orchestrator.event.sample import sample_view

NAMES = ("Ants", "Bees", "Cats", "Dogs", "Elks", "Foxes")


def team_state(size: int, boards: int, **extra: Any) -> dict[str, Any]:
    """A fresh team-Swiss state: `size` teams T1, T2, ... of players T1b1, T1b2, ..."""
    members = [[f"T{t}b{b}" for b in range(1, boards + 1)] for t in range(1, size + 1)]
    players = [name for team in members for name in team]
    return {
        "system": "team-swiss",
        "format": "single",
        "teams": [{"name": f"T{t}", "players": m} for t, m in enumerate(members, 1)],
        "players": [{"name": n, "seed": i} for i, n in enumerate(players, 1)],
        "rounds": [],
    } | extra


def cli(args: list[str], stdin: str | None = None) -> tuple[int, str]:
    out = CliRunner().invoke(app, args, input=stdin)
    return out.exit_code, (out.stdout if out.exit_code == 0 else out.stderr)


def team1_has_white(board: int) -> bool:
    """The seed's pattern, written out: Team 1 on 1, 4, 5, 8, 9, 12, ..."""
    return board in (1, 4, 5, 8, 9, 12, 13, 16) or (board > 16 and board % 4 in (0, 1))


def test_team_1_has_white_on_boards_1_4_5_8_and_team_2_on_2_3_6_7() -> None:
    one = Team("One", tuple(f"o{b}" for b in range(1, 11)))
    two = Team("Two", tuple(f"t{b}" for b in range(1, 11)))
    games = match_games(one, two)
    assert [b for b, g in enumerate(games, 1) if g.white.startswith("o")] == [1, 4, 5, 8, 9]
    assert [b for b, g in enumerate(games, 1) if g.white.startswith("t")] == [2, 3, 6, 7, 10]
    assert all(g.white[1:] == g.black[1:] for g in games)  # board against board


def match_view(t: Tournament, rnd: Round) -> dict[tuple[str, str], list[Game]]:
    """The round's games by match, keyed (Team 1, Team 2), read with the test's own rule."""
    seat = {m: (team.name, b) for team in t.teams for b, m in enumerate(team.members, 1)}
    out: dict[tuple[str, str], list[Game]] = {}
    for g in rnd.games:
        (wt, board), (bt, other) = seat[g.white], seat[g.black]
        assert board == other and wt != bt
        key = (wt, bt) if team1_has_white(board) else (bt, wt)
        out.setdefault(key, []).append(g)
    return out


def board_points(games: list[Game], team: str, t: Tournament) -> float:
    members = next(x.members for x in t.teams if x.name == team)
    return sum(g.points(g.white if g.white in members else g.black) for g in games)


@st.composite
def team_events(draw: st.DrawFn) -> Tournament:
    """A team Swiss of 3-8 teams of 1-5 boards after 0-4 rounds with random results."""
    teams, boards = draw(st.integers(3, 8)), draw(st.integers(1, 5))
    fmt = draw(st.sampled_from(["single", "double"]))
    t = state_json.decode(team_state(teams, boards, format=fmt))
    for _ in range(draw(st.integers(0, 4))):
        pairing = pair_next(t)
        results = tuple(draw(st.sampled_from(RESULTS)) for _ in pairing.games)
        t = msgspec.structs.replace(t, rounds=(*t.rounds, pairing.as_round(results)))
    return t


@settings(max_examples=60, deadline=None)
@given(team_events())
def test_teams_are_paired_by_the_tcec_swiss_rules_with_matches_for_games(t: Tournament) -> None:
    """The next round is the TCEC Swiss pairing of a plain event whose players are the teams
    and whose games are the matches (won by more board points), Team 1 playing White; each
    match is then played board against board in the pattern."""
    teams = tuple(Player(x.name, seed) for seed, x in enumerate(t.teams, 1))
    rounds = []
    for rnd in t.rounds:
        games = []
        for (one, two), played in match_view(t, rnd).items():
            a, b = board_points(played, one, t), board_points(played, two, t)
            games.append(Game(one, two, "1-0" if a > b else "0-1" if b > a else "1/2-1/2"))
        rounds.append(Round(rnd.number, tuple(games), rnd.bye))
    rules = Rules(format=t.rules.format, schedule=t.rules.schedule)
    plain = pair_next(Tournament(teams, tuple(rounds), rules))
    pairing = pair_next(t)
    assert pairing.bye == plain.bye
    members = {x.name: x.members for x in t.teams}
    boards = len(t.teams[0].members)
    assert len(pairing.games) == boards * len(plain.games)
    for i, match in enumerate(plain.games):  # in the plain pairing's playing order
        played = pairing.games[i * boards : (i + 1) * boards]
        for board, g in enumerate(played, 1):
            one, two = members[match.white][board - 1], members[match.black][board - 1]
            assert (g.white, g.black) == ((one, two) if team1_has_white(board) else (two, one))


@settings(max_examples=60, deadline=None)
@given(team_events())
def test_team_standings_rank_by_match_points_then_board_points(t: Tournament) -> None:
    mp: Counter[str] = Counter()
    bp: Counter[str] = Counter()
    boards = len(t.teams[0].members)
    for rnd in t.rounds:
        for (one, two), played in match_view(t, rnd).items():
            a, b = board_points(played, one, t), board_points(played, two, t)
            bp[one] += a
            bp[two] += b
            mp[one] += 2 if a > b else 1 if a == b else 0
            mp[two] += 2 if b > a else 1 if a == b else 0
        if rnd.bye:
            mp[rnd.bye] += 2 * t.rules.games_per_pair
            bp[rnd.bye] += boards * t.rules.games_per_pair
    lines = team_standings(t)
    assert {x.name: (x.match_points, x.board_points) for x in lines} == {
        x.name: (float(mp[x.name]), float(bp[x.name])) for x in t.teams
    }
    keys = [(-x.match_points, -x.board_points) for x in lines]
    assert keys == sorted(keys)
    for x, y in itertools.pairwise(lines):  # equal on both: a shared place
        equal = (x.match_points, x.board_points) == (y.match_points, y.board_points)
        assert (x.place == y.place) == equal


def test_a_team_s_bye_wins_every_board() -> None:
    t = state_json.decode(team_state(5, 2))
    pairing = pair_next(t)
    assert pairing.bye == "T5"  # the lowest in pairing order, as the TCEC Swiss says
    t = msgspec.structs.replace(t, rounds=(pairing.as_round(("1-0",) * 4),))
    bye = next(x for x in team_standings(t) if x.name == "T5")
    assert (bye.match_points, bye.board_points, bye.byes) == (2.0, 2.0, 1)
    lines = tally(t)
    assert [(lines[n].score, lines[n].byes) for n in ("T5b1", "T5b2")] == [(1.0, 1), (1.0, 1)]
    assert state_json.decode(state_json.encode(t)) == t  # teams survive the JSON
    second = pair_next(t)
    assert second.bye != "T5"


def test_a_team_leaves_the_pairing_once_one_of_its_engines_withdrew() -> None:
    """T1b2 withdrew after round 1 with its game cancelled: the match stays short of a board,
    the state is still valid, and from round 2 on T1 is not paired (three teams: a BYE)."""
    data = team_state(4, 2)
    data["players"][1]["withdrawn_after"] = 1
    data["rounds"] = [
        {"games": [{"white": "T4b1", "black": "T3b1", "result": "1-0"},
                   {"white": "T3b2", "black": "T4b2", "result": "0-1"},
                   {"white": "T2b1", "black": "T1b1", "result": "1/2-1/2"}]}
    ]  # fmt: skip
    code, out = cli(["pair", "-"], json.dumps(data))
    assert code == 0, out
    paired = json.loads(out)
    assert paired["bye"] in ("T2", "T3", "T4")
    assert not any(g["white"].startswith("T1") or g["black"].startswith("T1")
                   for g in paired["games"])  # fmt: skip
    assert len(paired["games"]) == 2


def test_pair_manual_is_refused_in_a_team_swiss() -> None:
    view = sample_view()
    view = dataclasses.replace(
        view, settings=msgspec.structs.replace(view.settings, system="team-swiss")
    )
    with pytest.raises(ControlRefused, match="a team Swiss pairs whole teams"):
        PairManual(round=2, pairs=(("A", "B"),), reason="why").check(view)


def test_pair_and_simulate_take_a_team_swiss() -> None:
    code, out = cli(["pair", "-"], json.dumps(team_state(6, 4)))
    assert code == 0, out
    games = json.loads(out)["games"]
    assert len(games) == 12 and games[0] == {"white": "T6b1", "black": "T5b1"}
    state = json.dumps(team_state(6, 4))
    code, out = cli(["simulate", "--from", "-", "--rounds", "4", "--table"], state)
    assert code == 0, out
    assert re.search(r"Place  Team  Seed  MP +BP  Matches", out), out
    code, out = cli(["simulate", "--players", "8", "--system", "team-swiss"])
    assert code == 2 and out.count("\n") == 1 and "a team Swiss needs teams" in out, out


def test_a_bad_team_state_is_one_line_and_exit_2() -> None:
    uneven = team_state(3, 2)
    uneven["teams"][2]["players"] = ["T3b1"]
    uneven["teams"][1]["players"].append("T3b2")
    no_team = team_state(2, 2, system="swiss")
    one_board = team_state(2, 2, rounds=[{"games": [{"white": "T1b1", "black": "T2b1",
                                                     "result": "1-0"}]}])  # fmt: skip
    same_team = team_state(2, 2)
    same_team["teams"][1]["name"] = "T1b1"
    for data, message in [
        (uneven, "team 'T2' has 3 players, team 'T1' 2: every team needs the same number"),
        (no_team, "'teams' are for a team Swiss (system team-swiss), not swiss"),
        (one_board, "round 1: match T1 - T2 has 1 of its 2 boards"),
        (same_team, "team 'T1b1': a team needs a name that is no player's"),
        (team_state(2, 2, teams=None), "a team Swiss needs at least two teams"),
        (team_state(2, 2, phases=[{"rounds": 1, "system": "team-swiss"}]), "not one of its"),
    ]:
        code, out = cli(["pair", "-"], json.dumps(data))
        assert code == 2, data
        assert out.count("\n") == 1 and message in out, out
