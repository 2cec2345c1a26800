"""Whole events played by the daemon in this process, its games played by the fake
executor (`tests/support/fake_executor.py`): what the daemon pairs, stores, counts and shows
for events in phases and team Swiss events, where engine processes are not the point."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.event import state_json
from orchestrator.core.event.model import Tournament
from orchestrator.web.app import make_app
from tests.core.test_systems import pair
from tests.core.test_teams import NAMES, board_points, cli, match_view
from tests.support.daemon import event_config, run_in_process
from tests.support.engines import scripted_engines_toml


def test_the_daemon_plays_an_event_in_phases(tmp_path: Path) -> None:
    """Two rounds of TCEC Swiss, then two of King of the Hill: every round the daemon paired
    is what `pair` gives for the stored state before it, and `state` keeps the phases (with
    the seed of the random system)."""
    config = event_config(tmp_path, players=[f"E{i}" for i in range(1, 8)], rounds=4)
    phases = (
        'system = [{ rounds = 2, system = "swiss" }, '
        '{ rounds = 1, system = "koth", system_options = { repeats = 1 } }, '
        '{ rounds = 1, system = "random" }]\n'
    )
    config.write_text(config.read_text().replace("rounds = 4\n", "rounds = 4\n" + phases))
    asyncio.run(run_in_process(config))
    stored = CliRunner().invoke(app, ["state", "--db", str(tmp_path / "event.sqlite")])
    data = json.loads(stored.stdout)
    assert [p["system"] for p in data["phases"]] == ["swiss", "koth", "random"]
    assert data["phases"][2]["system_options"] == {"seed": 1}  # the event's random_seed
    for number in range(1, 5):
        before = dict(data, rounds=data["rounds"][: number - 1])
        code, paired = pair(before)
        assert code == 0, paired
        games = [
            {"white": g["white"], "black": g["black"]} for g in data["rounds"][number - 1]["games"]
        ]
        assert json.loads(paired)["games"] == games


def team_config(folder: Path, rounds: int) -> Path:
    """6 teams of 4 scripted engines (results decided by the pair of names) in a double-round
    team Swiss.  The engines are listed out of board order, and the teams out of seed order:
    boards go by rating, teams by their mean rating."""
    config = event_config(folder, players=[], rounds=rounds)
    text = config.read_text().replace('seeding = "group"\n', 'system = "team-swiss"\n')
    text = text.replace("groups = 2\n", "")
    for team in reversed(NAMES):
        for board in (3, 1, 4, 2):
            name = f"{team[:3]}{board}"
            engine = scripted_engines_toml([name], folder)
            engine = engine.replace('"--seed", "0"', f'"--seed", "{len(text)}"')
            rating = 3000 - 10 * board - NAMES.index(team)
            text += re.sub(r"rating = \d+", f'rating = {rating}\nteam = "{team}"', engine)
    config.write_text(text)
    return config


def test_the_daemon_plays_a_team_swiss_of_six_teams_of_four(tmp_path: Path) -> None:
    config = team_config(tmp_path, rounds=3)
    logs = asyncio.run(run_in_process(config))
    db = tmp_path / "event.sqlite"
    code, text = cli(["state", "--db", str(db)])
    data = json.loads(text)
    # the teams, seeded by mean rating, boards by rating
    assert [x["name"] for x in data["teams"]] == list(NAMES)
    assert data["teams"][0]["players"] == ["Ant1", "Ant2", "Ant3", "Ant4"]
    assert data["teams"][5]["players"] == ["Fox1", "Fox2", "Fox3", "Fox4"]
    t = state_json.decode(data)
    assert len(t.rounds) == 3
    met: Counter[frozenset[str]] = Counter()
    for rnd in t.rounds:
        by_match = match_view(t, rnd)  # asserts board against board, team against team
        assert len(by_match) == 6  # 3 pairs of teams, each a match of two legs
        for (one, two), games in by_match.items():
            assert (two, one) in by_match  # the return leg: Team 1 and Team 2 exchanged
            assert len(games) == 4
            met[frozenset((one, two))] += 1
        teams_playing = Counter(team for key in by_match for team in key)
        assert set(teams_playing.values()) == {2}
    assert set(met.values()) == {2}  # no two teams met in two rounds
    for number in range(1, 4):  # every round is what `pair` gives for the state before it
        code, paired = cli(
            ["pair", "-"], json.dumps(dict(data, rounds=data["rounds"][: number - 1]))
        )
        assert code == 0, paired
        stored = [
            {"white": g["white"], "black": g["black"]} for g in data["rounds"][number - 1]["games"]
        ]
        assert json.loads(paired)["games"] == stored
    # the standings: by match points, then board points, as the test counts them
    code, text = cli(["standings", "--db", str(db), "--json"])
    teams = json.loads(text)["teams"]
    mp: Counter[str] = Counter()
    bp: Counter[str] = Counter()
    for rnd in t.rounds:
        for (one, two), games in match_view(t, rnd).items():
            a, b = board_points(games, one, t), board_points(games, two, t)
            bp[one], bp[two] = bp[one] + a, bp[two] + b
            mp[one] += 2 if a > b else 1 if a == b else 0
            mp[two] += 2 if b > a else 1 if a == b else 0
    assert [(x["name"], x["match_points"], x["board_points"]) for x in teams] == sorted(
        ((n, float(mp[n]), float(bp[n])) for n in NAMES),
        key=lambda x: (-x[1], -x[2], NAMES.index(x[0])),
    )
    assert len({x["match_points"] for x in teams}) > 1  # the results do separate the teams
    winners = [x["name"] for x in teams if x["place"] == teams[0]["place"]]
    (finished,) = [e for e in logs if e["event"] == "tournament_finished"]
    assert finished["winner"] == ", ".join(winners)
    # the PGN names each game's board and teams
    pgn = next((tmp_path / "pgn").rglob("*.pgn")).parent
    seat = {m: (x["name"], b) for x in data["teams"] for b, m in enumerate(x["players"], 1)}
    event = "".join(p.read_text() for p in sorted(pgn.glob("round-*.pgn")))
    tags = re.findall(r'\[White "(.+)"\]\n\[Black "(.+)"\]\n\[Result ".+"\]\n\[Board "(\d+)"\]\n'
                      r'\[WhiteTeam "(.+)"\]\n\[BlackTeam "(.+)"\]', event)  # fmt: skip
    assert len(tags) == 72
    for white, black, board, white_team, black_team in tags:
        assert (seat[white], seat[black]) == ((white_team, int(board)), (black_team, int(board)))
    code, text = cli(["pairings", "--db", str(db), "--round", "1"])
    first = next(iter(match_view(t, t.rounds[0])))
    assert re.search(rf"\n  {first[0]} - {first[1]}  \d+(\.5)?-\d+(\.5)?\n  1\. board 1: ", text)
    assert text.count(" board 4: ") == 6
    status = cli(["status", "--db", str(db), "--json"])[1]
    assert json.loads(status)["games_total"] == 72
    asyncio.run(web_pages(db, t))


async def web_pages(db: Path, t: Tournament) -> None:
    """The round page shows match by match, board by board; standings show the teams."""
    async with TestClient(TestServer(make_app(db))) as client:
        page = await (await client.get("/rounds/1")).text()
        headings = re.findall(r"<tr class='match'><th colspan='\d+'>(\w+) - (\w+): ", page)
        assert [tuple(h) for h in headings] == list(match_view(t, t.rounds[0]))
        assert "<th>Board</th>" in page
        data = await (await client.get("/api/rounds/1")).json()
        assert [(g["board"], g["white_team"]) for g in data["games"][:2]] == [
            (1, data["matches"][0]["team1"]),
            (2, data["matches"][0]["team2"]),
        ]
        page = await (await client.get("/")).text()
        assert "<table id='top-teams'>" in page
        page = await (await client.get("/standings")).text()
        assert "<table id='teams'>" in page and "Match points" in page
        game = data["games"][0]["id"]
        page = await (await client.get(f"/games/{game}")).text()
        assert f"<p>Board 1: {data['matches'][0]['team1']} - " in page


def test_every_count_of_a_round_s_games_agrees_in_a_team_swiss(tmp_path: Path) -> None:
    """5 teams of 4 boards, single rounds: a round is 2 matches of 4 boards (one team has the
    BYE), 8 games.  The log's `game_started` total, `status`'s `games_total`, the schedule's
    coming rounds and the games stored agree on it."""
    config = event_config(tmp_path, players=[], rounds=3)
    text = config.read_text().replace('seeding = "group"\n', 'system = "team-swiss"\n')
    text = text.replace("groups = 2\n", "").replace('format = "double"', 'format = "single"')
    for team in range(1, 6):
        for board in range(1, 5):
            engine = scripted_engines_toml([f"T{team}b{board}"], tmp_path)
            text += re.sub(r"rating = \d+", f'rating = {3000 - board}\nteam = "T{team}"', engine)
    config.write_text(text)
    logs = asyncio.run(run_in_process(config))
    db = tmp_path / "event.sqlite"
    started = [e for e in logs if e["event"] == "game_started"]
    assert {e["total"] for e in started} == {3 * 8}
    assert sorted(e["index"] for e in started) == list(range(1, 25))
    status = json.loads(cli(["status", "--db", str(db), "--json"])[1])
    assert status["games_total"] == 3 * 8 and status["games_finished"] == 3 * 8
    rounds = json.loads(cli(["state", "--db", str(db)])[1])["rounds"]
    assert [len(r["games"]) for r in rounds] == [8, 8, 8]
    # the odd team's BYE, stored as the team's (it once broke the players' foreign key)
    byes = [r["bye"] for r in rounds]
    assert set(byes) <= {f"T{t}" for t in range(1, 6)} and len(byes) == 3
    with sqlite3.connect(db) as conn:
        stored = [row[0] for row in conn.execute("SELECT bye_team FROM rounds ORDER BY number")]
    assert stored == byes


def test_the_schedule_counts_the_rounds_to_come_with_the_same_rule(tmp_path: Path) -> None:
    """Before its first round, the schedule of a team Swiss of 5 teams of 4 plays each round
    to come as the 8 games it will have: on one slot, rounds 8 mean games apart."""
    from datetime import UTC, datetime

    from orchestrator.config.load import load
    from orchestrator.event.read import load_view, schedule_data
    from orchestrator.event.resume import create_or_resume
    from orchestrator.store.database import Store

    config = event_config(tmp_path, players=[], rounds=2, concurrency=1)
    text = config.read_text().replace('seeding = "group"\n', 'system = "team-swiss"\n')
    text = text.replace("groups = 2\n", "").replace('format = "double"', 'format = "single"')
    text = text.replace('tc = "60+1"', 'tc = "10+0"')
    for team in range(1, 6):
        for board in range(1, 5):
            engine = scripted_engines_toml([f"T{team}b{board}"], tmp_path)
            text += re.sub(r"rating = \d+", f'rating = {3000 - board}\nteam = "T{team}"', engine)
    config.write_text(text)

    async def created() -> None:
        store = await Store.open(tmp_path / "event.sqlite")
        try:
            await create_or_resume(load(config), store)
        finally:
            await store.close()

    asyncio.run(created())
    view = asyncio.run(load_view(tmp_path / "event.sqlite"))
    assert view.tournament.games_per_round() == 8
    plan = schedule_data(view, datetime.now(UTC))
    first, second = (datetime.fromisoformat(r["estimated_start"]) for r in plan["coming_rounds"])
    assert (second - first).total_seconds() == 8 * plan["mean_game_s"]


def test_a_failure_after_the_event_started_exits_1_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config or input error ends `run` with exit 2 before anything starts; a failure of
    the event once it runs (here a pairing the system cannot make) is exit 1, one line."""
    from orchestrator.core.event.model import StateError
    from orchestrator.daemon.loop import Daemon

    async def cannot_pair(self: Daemon) -> None:
        raise StateError("round 2: no pairing of the remaining players exists")

    monkeypatch.setattr(Daemon, "run", cannot_pair)
    config = event_config(tmp_path, players=["E1", "E2", "E3", "E4"], rounds=2)
    result = CliRunner().invoke(app, ["run", str(config)])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (
        "orchestrator: error: the event failed: round 2: no pairing of the remaining players exists"
    )
