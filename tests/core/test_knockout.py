"""The knockout against TCEC's own Cups and its viewer's bracket order, and its properties:
a match ends exactly when it is decided, a tied match on its first decisive pair, no engine
plays twice at once, and any bracket gives one winner."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.event.model import Game, Player, Round, Rules, StateError, Tournament
from orchestrator.core.pairing.knockout import (
    KnockoutOptions,
    bracket,
    calculate_seeds,
    decided,
)
from orchestrator.core.pairing.round import pair_next
from tests.support.paths import DATA

CUPS = sorted((DATA / "tcec-cup").glob("cup*.json"))


def test_the_bracket_order_is_the_viewer_s() -> None:
    """Every test vector of tcecgui's `calculate_seeds` (js/game.test.js)."""
    vectors = json.loads((DATA / "tcec-cup" / "calculate_seeds.json").read_text())["vectors"]
    assert len(vectors) >= 17
    for vector in vectors:
        got = calculate_seeds(vector["num_team"], bool(vector["new_mode"]))
        assert got == vector["expected"], vector


def pair(state: dict[str, Any]) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["pair", "-"], input=json.dumps(state))
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


@pytest.mark.parametrize("path", CUPS, ids=[p.stem for p in CUPS])
def test_a_real_cup_is_reproduced_game_by_game(path: Path) -> None:
    """The real results, fed game by game to `orchestrator pair`: it asks for exactly the
    games TCEC played, in order, with the same colours, then the next stages and the bronze
    match, and at the end names the winner."""
    cup = json.loads(path.read_text())
    state: dict[str, Any] = {
        "players": cup["players"],
        "system": "knockout",
        "system_options": cup["system_options"],
        "rounds": [],
    }
    stages = cup["stages"]
    bronze = [s for s in stages if s["name"] == "Bronze"]
    played = [s for s in stages if s["name"] != "Bronze"]
    # the real games of each match, by (stage, match): the final is match 1 of the last
    # stage and the bronze match its match 2
    real: dict[tuple[int, int], list[dict[str, str]]] = {}
    for number, stage in enumerate(played, 1):
        for match in stage["matches"]:
            real[number, match["slot"]] = list(match["games"])
    for match in bronze[0]["matches"] if bronze else []:
        real[len(played), 2] = list(match["games"])
    asked = dict.fromkeys(real, 0)
    while True:
        out = pair(state)
        if out.get("finished"):
            break
        games = []
        for game in out["games"]:
            key = (game["stage"], game["match"])
            assert key in real, game
            assert asked[key] < len(real[key]), f"{key}: a game TCEC did not play: {game}"
            truth = real[key][asked[key]]
            asked[key] += 1
            assert game["game"] == asked[key]
            assert (game["white"], game["black"]) == (truth["white"], truth["black"]), (key, game)
            games.append(dict(truth))
        state["rounds"].append({"games": games})
    assert asked == {key: len(games) for key, games in real.items()}  # every real game
    final = played[-1]["matches"][0]
    assert out["winner"] == final["winner"]
    places = {p["name"]: p["place"] for p in out["places"]}
    assert places[final["winner"]] == "1"
    if bronze:
        assert places[bronze[0]["matches"][0]["winner"]] == "3"
    assert len(places) == len(cup["players"])


def cup_state(n: int, options: KnockoutOptions, rng: random.Random) -> Tournament:
    """A knockout of `n` engines played to its end with random results."""
    players = tuple(Player(f"E{i:02d}", i) for i in range(1, n + 1))
    rules = Rules(system="knockout", system_options=_options(options), format="single")
    t = Tournament(players, rules=rules)
    while not (pairing := pair_next(t)).finished:
        results = tuple(rng.choice(["1-0", "0-1", "1/2-1/2", "1/2-1/2"]) for _ in pairing.games)
        t = Tournament(players, (*t.rounds, pairing.as_round(results)), rules)
    return t


def _options(options: KnockoutOptions) -> Any:
    from orchestrator.core.codec import to_builtins
    from orchestrator.core.event.model import Options

    return Options(to_builtins(options))


@settings(max_examples=80, deadline=None)
@given(
    st.integers(2, 64),
    st.sampled_from(["equal-distance", "top-bottom"]),
    st.sampled_from(["lower", "upper"]),
    st.booleans(),
    st.integers(0, 2**32),
)
def test_any_bracket_gives_one_winner_and_no_engine_plays_twice_at_once(
    n: int, order: str, white_first: str, with_bronze: bool, seed: int
) -> None:
    stages = max(1, (n - 1).bit_length())
    rng = random.Random(seed)
    options = KnockoutOptions(
        stage_games=tuple(rng.choice([2, 4]) for _ in range(stages)),
        bronze_games=2 if with_bronze and stages > 1 else 0,
        bracket=order,  # type: ignore[arg-type]
        white_first=white_first,  # type: ignore[arg-type]
    )
    t = cup_state(n, options, rng)
    for rnd in t.rounds:
        names = [name for g in rnd.games for name in (g.white, g.black)]
        assert len(names) == len(set(names)), rnd  # nobody twice at once
    b = bracket(t, options)
    assert b.over
    places = [name for _, name in b.places]
    assert len(places) == len(set(places)) == n
    assert b.places[0][0] == "1"
    winners = [m.winner for m in b.stages[-1][:1]]
    assert winners == [b.places[0][1]]
    # the BYEs went to the top seeds: a first-stage walkover is a seed 1..byes
    byes = 2**stages - n
    walked = sorted(int(m.walkover[1:]) for m in b.stages[0] if m.walkover)
    assert walked == list(range(1, byes + 1))


def upper_points(results: list[str]) -> list[float]:
    return [{"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[r] for r in results]


def catchable(games: list[float], left: int) -> bool:
    """Whether some results of the `left` games to come leave the two level or the
    trailing engine ahead (by trying them all)."""
    ahead = 2 * sum(games) - len(games)  # the upper engine's points minus the lower's
    if ahead == 0:
        return True
    for rest in itertools.product([0.0, 0.5, 1.0], repeat=left):
        after = ahead + sum(2 * x - 1 for x in rest)
        if after == 0 or (after > 0) != (ahead > 0):
            return True
    return False


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([2, 4, 6]), st.lists(st.sampled_from([0.0, 0.5, 1.0]), max_size=16))
def test_a_match_ends_exactly_when_it_is_decided(regulation: int, points: list[float]) -> None:
    """Within its regulation games a match is over exactly when no results of the games
    left could catch the leader; after them, exactly at the end of a game pair that leaves
    the scores unequal."""
    for k in range(len(points) + 1):
        games = points[:k]
        if k < regulation:
            expected = not catchable(games, regulation - k)
        else:
            expected = k % 2 == 0 and sum(games) * 2 != k
        assert decided(regulation, games) == expected, (regulation, games)
        if expected:
            break  # the match ends here: no later game is played


def test_a_tied_match_ends_on_its_first_decisive_pair() -> None:
    options = KnockoutOptions(stage_games=(2,), tiebreak_tc=("10+1", "5+1"))
    players = (Player("A", 1), Player("B", 2))
    rules = Rules(system="knockout", system_options=_options(options), format="single")
    # a drawn pair, a pair won one game each, then B wins (Black in game 6: A has White)
    results = ["1/2-1/2", "1/2-1/2", "1-0", "1-0", "1/2-1/2", "0-1"]
    t = Tournament(players, rules=rules)
    tcs = []
    for result in results:
        pairing = pair_next(t)
        assert not pairing.finished
        (game,) = pairing.games
        tcs.append(game.tc)
        t = Tournament(players, (*t.rounds, pairing.as_round((result,))), rules)
    assert tcs == [None, None, "10+1", "10+1", "5+1", "5+1"]
    final = pair_next(t)
    assert final.finished and final.places == (("1", "B"), ("2", "A"))


def test_a_game_that_is_not_the_next_of_its_match_is_refused() -> None:
    players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    rules = Rules(system="knockout", format="single")
    wrong = Round(1, (Game("A", "C", "1-0"), Game("D", "B", "1-0")))  # C has White first
    with pytest.raises(StateError, match=r"A - C should be C - A"):
        bracket(Tournament(players, (wrong,), rules), KnockoutOptions())


def test_a_match_drawn_through_every_tiebreak_pair_goes_to_the_better_seed() -> None:
    """Two engines that always draw: after `tiebreak_pairs` pairs the better seed goes on
    (an unattended event must end)."""
    options = KnockoutOptions(stage_games=(2, 2), tiebreak_pairs=3)
    players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    rules = Rules(system="knockout", system_options=_options(options), format="single")
    t = Tournament(players, rules=rules)
    while not (pairing := pair_next(t)).finished:
        t = Tournament(players, (*t.rounds, pairing.as_round(("1/2-1/2",) * len(pairing.games))))
        t = Tournament(players, t.rounds, rules)
    b = bracket(t, options)
    assert [len(m.games) for m in b.stages[0]] == [2 + 2 * 3, 2 + 2 * 3]
    assert b.places == (("1", "A"), ("2", "B"), ("3-4", "C"), ("3-4", "D"))
