"""The other formats played by the daemon: a knockout (as TCEC's Cup) through
`orchestrator run` with a kill -9 mid-stage, and a gauntlet and a head-to-head match."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from aiohttp.test_utils import TestClient, TestServer

from orchestrator.web.app import make_app
from tests.support.daemon import (
    cli,
    event_config,
    finished_count,
    run_daemon,
    run_in_process,
    stored_games,
)
from tests.support.paths import SCRIPTED
from tests.support.processes import engines_alive

ENGINES = [f"K{i:02d}" for i in range(1, 17)]
KNOCKOUT = (
    'system = "knockout"\n'
    "system_options = { stage_games = [2, 2, 2, 2], bronze_games = 2, tiebreak_pairs = 1, "
    'tiebreak_tc = ["30+1"] }\n'
)


def knockout_config(folder: Path) -> Path:
    """16 scripted engines whose pair of names decides every game (a pair that draws goes
    to its one tiebreak pair, then to the better seed), in explicit seed order."""
    extra = KNOCKOUT + f'live_dir = "{folder / "live"}"\n'
    config = event_config(folder, players=ENGINES, rounds=None, extra=extra, legs=False)
    config.write_text(config.read_text().replace('seeding = "group"', 'seeding = "explicit"'))
    return config


@pytest.fixture(scope="module")
def knockout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The knockout played without interruption: the database."""
    folder = tmp_path_factory.mktemp("knockout")
    out = run_daemon(knockout_config(folder))
    assert out.returncode == 0, out.stderr + out.stdout[-2000:]
    return folder / "event.sqlite"


def test_the_daemon_plays_a_knockout_to_its_end(knockout: Path) -> None:
    """Every game the daemon played is the next game of its match; the bracket has one
    winner and every engine a place; the PGN names stage, match and game; a tiebreak
    pair is played at its own time control."""
    state = json.loads(cli("state", "--db", str(knockout)))
    assert state["system"] == "knockout"
    paired = subprocess.run(
        [sys.executable, "-m", "orchestrator", "pair", "-"],
        input=json.dumps(state),
        capture_output=True,
        text=True,
        check=True,
    )
    final = json.loads(paired.stdout)
    assert final["finished"] is True
    assert sorted(p["name"] for p in final["places"]) == ENGINES
    standings = cli("standings", "--db", str(knockout), "--json")
    bracket = standings["bracket"]
    assert [s["name"] for s in bracket["stages"]] == [
        "Round of 16",
        "Quarterfinals",
        "Semifinals",
        "Final",
    ]
    assert [len(s["matches"]) for s in bracket["stages"]] == [8, 4, 2, 2]  # final and bronze
    assert [p["name"] for p in bracket["places"]] == [p["name"] for p in final["places"]]
    with sqlite3.connect(knockout) as conn:
        rows = conn.execute(
            "SELECT stage, slot, match_game, tc, pgn, white, black FROM games ORDER BY id"
        ).fetchall()
    assert all(stage is not None for stage, *_ in rows)
    for stage, slot, number, tc, pgn, white, black in rows:
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None
        assert game.headers["Round"] == f"{stage}.{slot}.{number}"
        assert (white, black) == (game.headers["White"], game.headers["Black"])
        assert (tc is not None) == (number > 2), (stage, slot, number, tc)
        assert game.headers["TimeControl"] == ("30+1" if tc else "60+1")
    # a match's games stay in order and alternate colours pair by pair
    by_match: dict[tuple[int, int], list[tuple[int, str, str]]] = {}
    for stage, slot, number, _, _, white, black in rows:
        by_match.setdefault((stage, slot), []).append((number, white, black))
    for games in by_match.values():
        assert [n for n, _, _ in games] == list(range(1, len(games) + 1))
        for (_, w1, b1), (_, w2, b2) in zip(games[0::2], games[1::2], strict=False):
            assert (w1, b1) == (b2, w2)


def test_the_bracket_page_and_eventcrosstable_show_every_match(knockout: Path) -> None:
    standings = cli("standings", "--db", str(knockout), "--json")
    played = [m for s in standings["bracket"]["stages"] for m in s["matches"] if m["games"]]
    assert len(played) == 8 + 4 + 2 + 2

    async def page() -> str:
        async with TestClient(TestServer(make_app(knockout))) as client:
            response = await client.get("/bracket")
            assert response.status == 200
            return await response.text()

    html = asyncio.run(page())
    assert html.count("class='match") == len(played)
    for match in played:
        for game in match["games"]:
            assert f"href='games/{game}'" in html
    assert "id='places'" in html
    live = json.loads((knockout.parent / "live" / "Eventcrosstable.json").read_text())
    assert len(live["teams"]) == 8
    assert {e["name"] for pair in live["teams"] for e in pair} == set(ENGINES)
    assert len(live["matchresults"]) == len(live["EventTable"]) == len(played)
    assert [len(stage) for stage in live["results"][0]] == [8, 4, 2, 2]
    games = sum(len(m["games"]) for m in played)
    numbers = [int(n) for m in live["EventTable"].values() for n in m["Gamesno"].split(",")]
    assert sorted(numbers) == list(range(1, games + 1))


def test_a_knockout_survives_kill_nine_mid_stage(knockout: Path, tmp_path: Path) -> None:
    """Killed with SIGKILL while a stage is being played (twice), then run to its end: the
    same games as the uninterrupted run, none lost or played twice."""
    config = knockout_config(tmp_path)
    db = tmp_path / "event.sqlite"
    kills = 0
    for target in (6, 30):  # in the first stage, and in a later one
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        deadline = time.monotonic() + 120
        while finished_count(db) < target and time.monotonic() < deadline:
            assert proc.poll() is None, "the daemon ended before it was killed"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    assert kills == 2
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr
    assert [g[:7] for g in stored_games(db)] == [g[:7] for g in stored_games(knockout)]
    with sqlite3.connect(db) as conn:
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM attempts GROUP BY status"))
    assert statuses.get("finished") == len(stored_games(db)) and "running" not in statuses
    time.sleep(0.5)
    assert not engines_alive(str(tmp_path)), "engine processes outlived the daemon"


def openings_file(folder: Path, count: int) -> Path:
    """An EPD suite of `count` different positions (the start after two different moves)."""
    board = chess.Board()
    lines = []
    for move in list(board.legal_moves):
        board.push(move)
        for reply in list(board.legal_moves):
            board.push(reply)
            lines.append(f'{board.epd()} id "{move.uci()} {reply.uci()}";')
            board.pop()
        board.pop()
    path = folder / "openings.epd"
    path.write_text("\n".join(lines[:count]) + "\n")
    return path


def test_a_hundred_game_match_plays_fifty_openings_each_twice_back_to_back(
    tmp_path: Path,
) -> None:
    openings = openings_file(tmp_path, 60)
    extra = (
        'system = "match"\nsystem_options = { games = 100, shared = true }\n'
        f'openings = "{openings}"\nopening_order = "sequential"\n'
    )
    config = event_config(tmp_path, players=["Alpha", "Beta"], rounds=None, extra=extra, legs=False)
    asyncio.run(run_in_process(config))
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        games = conn.execute(
            "SELECT white, black, opening, result FROM games ORDER BY round, number"
        ).fetchall()
    assert len(games) == 100
    names = [json.loads(opening)["name"] for _, _, opening, _ in games]
    assert len(set(names)) == 50
    for first, second in zip(games[0::2], games[1::2], strict=True):
        assert first[2] == second[2]  # one opening, back to back
        assert (first[0], first[1]) == (second[1], second[0])  # colours reversed
    assert names[0::2] == list(dict.fromkeys(names))  # each opening's pair once
    standings: dict[str, Any] = cli("standings", "--db", str(tmp_path / "event.sqlite"), "--json")
    match = standings["match"]
    assert match["games"] == 100 and match["engines"] == ["Alpha", "Beta"]
    assert match["wins"] + match["draws"] + match["losses"] == 100
    text = cli("standings", "--db", str(tmp_path / "event.sqlite"))
    assert "Elo difference: " in text and "after 100 of 100 games" in text
    assert match["shared"] and match["winner"] is None and match["tiebreaks"] == []


def test_a_tied_match_goes_to_its_tiebreak_at_its_own_time_control(tmp_path: Path) -> None:
    """Two scripted engines draw at 60+1 and A wins at fast time controls: the 2-game match
    is tied, its tiebreak match (2 games at 10+0.1) is A's; the PGN's TimeControl and Round
    show the tiebreak, and the standings and the log name one winner."""
    engines = "".join(
        f"""
[[engine]]
name = "{name}"
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "--name", "{name}",
           "--seed", "{seed}", "--score-below", "20000:{cp}"]
"""
        for seed, (name, cp) in enumerate((("A", 1500), ("B", -1500)))
    )
    config = tmp_path / "match.toml"
    config.write_text(
        f"""
[tournament]
name = "Tied Match"
system = "match"
system_options = {{ games = 2, tiebreaks = [{{ games = 2, tc = "10+0.1" }}] }}
tc = "60+1"
database = "event.sqlite"
pgn_dir = "pgn"

[adjudication]
win = {{ plies = 4, score = 10.0 }}
draw = {{ from_move = 1, plies = 6, score = 0.15 }}
max_moves = 40
{engines}"""
    )
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        rows = conn.execute(
            "SELECT white, black, result, tc, stage, slot, match_game, pgn FROM games "
            "ORDER BY round, number"
        ).fetchall()
    assert [(w, b, r, tc) for w, b, r, tc, *_ in rows] == [
        ("A", "B", "1/2-1/2", None),
        ("B", "A", "1/2-1/2", None),
        ("B", "A", "0-1", "10+0.1"),  # the second pair: B has White first
        ("A", "B", "1-0", "10+0.1"),
    ]
    tags = [chess.pgn.read_headers(io.StringIO(row[-1])) for row in rows]
    assert [(h["TimeControl"], h["Round"]) for h in tags] == [
        ("60+1", "1.1"), ("60+1", "1.2"), ("10+0.1", "2.1.1"), ("10+0.1", "2.1.2")
    ]  # fmt: skip
    standings: dict[str, Any] = cli("standings", "--db", str(tmp_path / "event.sqlite"), "--json")
    match = standings["match"]
    assert match["points"] == [1.0, 1.0] and match["winner"] == "A"
    assert match["tiebreaks"] == [{"games": 2, "planned": 2, "tc": "10+0.1", "points": [2, 0]}]
    assert standings["standings"][0]["name"] == "A"
    text = cli("standings", "--db", str(tmp_path / "event.sqlite"))
    assert "Tiebreak 1 at 10+0.1: A 2 - 0 B after 2 of 2 games" in text and "Winner: A" in text
    finished = [
        json.loads(line) for line in out.stdout.splitlines() if "tournament_finished" in line
    ]
    assert finished and finished[-1]["winner"] == "A"


def test_the_daemon_plays_a_gauntlet(tmp_path: Path) -> None:
    """Two gauntlet engines against five others, double rounds: each gauntlet engine meets
    every other engine twice (colours reversed), the others never meet, and no engine is in
    two games of a round."""
    players = ["G1", "G2", "O1", "O2", "O3", "O4", "O5"]
    extra = 'system = "gauntlet"\nsystem_options = { gauntlets = 2 }\n'
    config = event_config(tmp_path, players=players, rounds=None, extra=extra, groups=1)
    text = config.read_text().replace('seeding = "group"', 'seeding = "explicit"')
    config.write_text(text)
    asyncio.run(run_in_process(config))
    rounds = json.loads(cli("state", "--db", str(tmp_path / "event.sqlite")))["rounds"]
    met: dict[frozenset[str], list[tuple[str, str]]] = {}
    for rnd in rounds:
        pairs = {frozenset((g["white"], g["black"])) for g in rnd["games"]}
        names = [name for pair in pairs for name in pair]
        assert len(names) == len(set(names))  # no engine in two pairs of a round
        for g in rnd["games"]:
            met.setdefault(frozenset((g["white"], g["black"])), []).append((g["white"], g["black"]))
    expected = {frozenset(("G1", o)) for o in players if o != "G1"} | {
        frozenset(("G2", o)) for o in players if o not in ("G1", "G2")
    }
    assert set(met) == expected
    for games in met.values():
        assert len(games) == 2 and games[0] == games[1][::-1]
    status = cli("status", "--db", str(tmp_path / "event.sqlite"), "--json")
    assert status["finished"] and status["games_finished"] == status["games_total"] == 22
