"""`run --output fastchess|cutechess`: a match with losses on time and crashes, its console
read as fishtest's worker and OpenBench's client read fastchess's, and every count compared
with the database's."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.support.daemon import run_daemon
from tests.support.paths import SCRIPTED
from tests.support.processes import free_port

# official-stockfish/fishtest, worker/games.py (parse_fastchess_output)
FISHTEST_WLD = re.compile(
    r"Games: ([0-9]+), Wins: ([0-9]+), Losses: ([0-9]+), Draws: ([0-9]+), Points: ([0-9.]+) \("
)
FISHTEST_PTNML = re.compile(r"Ptnml\(0-2\): \[([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+)\]")


def fishtest(lines: list[str]) -> dict[str, Any]:
    """What fishtest's worker takes from fastchess's output: crashes and time losses from
    every line, the last block's W/L/D and pentanomial (with its own check of the block)."""
    stats: dict[str, Any] = {"crashes": 0, "time_losses": 0, "finished": False}
    wld = None
    for line in lines:
        if "Finished match" in line:
            stats["finished"] = True
        if "disconnect" in line or "stall" in line:
            stats["crashes"] += 1
        if "on time" in line or "timeout" in line:
            stats["time_losses"] += 1
        m = FISHTEST_WLD.search(line)
        if m:
            wld = [int(m.group(i)) for i in range(1, 5)]
        m = FISHTEST_PTNML.search(line)
        if m:
            ptnml = [int(m.group(i)) for i in range(1, 6)]
            assert wld is not None
            assert wld[0] == 2 * sum(ptnml)  # fishtest's own assertion
            assert 2 * sum(ptnml) == sum(wld[1:])
            stats["games"], stats["wins"], stats["losses"], stats["draws"] = wld
            stats["pentanomial"] = ptnml
    return stats


def openbench(lines: list[str]) -> dict[str, Any]:
    """What OpenBench's client takes from a runner's output (AndyGrant/OpenBench,
    Client/worker.py, `MatchRunner.update_results`): each `Finished game` line's result by
    its game number, pairs as games (2k - 1, 2k) from the odd game's White side."""
    results: dict[str, Any] = {
        "pentanomial": [0] * 5, "games": {}, "crashes": 0, "timelosses": 0, "illegals": 0,
    }  # fmt: skip
    lookup = {"0-1": 0, "1/2-1/2": 1, "1-0": 2}
    for line in lines:
        if "Finished game" not in line:
            continue
        reason = line.split(":")[1]
        results["crashes"] += "disconnect" in reason or "stalls" in reason
        results["timelosses"] += "on time" in reason
        results["illegals"] += "illegal" in reason
        tokens = line.split()
        game, result = int(tokens[2]), tokens[6]
        results["games"][game] = result
        first, second = (game, game + 1) if game % 2 else (game - 1, game)
        if first in results["games"] and second in results["games"]:
            r1, r2 = results["games"].pop(first), results["games"].pop(second)
            results["pentanomial"][lookup[r1] + 2 - lookup[r2]] += 1
    return results


def match_config(folder: Path, games: int) -> Path:
    """A double round robin of two engines (a match that a tie does not prolong): New crashes
    at its 15th move, Base oversteps its clock at its 15th; whoever is White reaches it
    first, so each game pair has one game of each."""

    def engine(name: str, *args: str) -> str:
        seed = str(len(name))
        command = [sys.executable, str(SCRIPTED), "--name", name, "--seed", seed, *args]
        return f'[[engine]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'

    config = folder / "match.toml"
    config.write_text(
        f"""
[tournament]
name = "Console"
system = "round-robin"
cycles = {games // 2}
tc = "1+0.05"
timemargin = 50
rating_interval = 2
concurrency = 2
database = "event.sqlite"
pgn_dir = "pgn"

{engine("New", "--crash-at", "15")}
{engine("Base", "--overstep-at", "15", "--overstep-ms", "200")}
"""
    )
    return config


def database(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT pair, white, result, fault FROM games WHERE status = 'finished' ORDER BY id"
        ).fetchall()
    points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
    pairs: dict[int, list[float]] = {}
    kinds = [json.loads(f)["kind"] for *_, f in rows if f]
    for pair, white, result, _ in rows:
        score = points[result] if white == "New" else 1 - points[result]
        pairs.setdefault(pair, []).append(score)
    new = [p for scores in pairs.values() for p in scores]
    penta = [0] * 5
    for scores in pairs.values():
        penta[round(2 * sum(scores))] += 1
    return {
        "games": len(rows),
        "wins": new.count(1.0),
        "losses": new.count(0.0),
        "draws": new.count(0.5),
        "pentanomial": penta,
        "crashes": kinds.count("crash"),
        "time_losses": kinds.count("time_forfeit"),
    }


def test_fastchess_output_read_by_fishtest_and_openbench(tmp_path: Path) -> None:
    # with the web view's process, which logs where the daemon does
    web = f"127.0.0.1:{free_port()}"
    out = run_daemon(match_config(tmp_path, 8), "--output", "fastchess", "--http", web)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines and not any(line.startswith("{") for line in lines)
    # the log goes beside the config: fishtest reads stdout and stderr as one stream
    assert out.stderr == ""
    log = (tmp_path / "match.log").read_text()
    assert '"event": "tournament_finished"' in log and '"event": "serving"' in log
    stored = database(tmp_path / "event.sqlite")
    assert stored["games"] == 8 and stored["crashes"] == 4 and stored["time_losses"] == 4
    fish = fishtest(lines + out.stderr.splitlines())
    assert fish["finished"]
    for key in ("games", "wins", "losses", "draws", "pentanomial", "crashes", "time_losses"):
        assert fish[key] == stored[key], key
    bench = openbench(lines)
    assert bench["pentanomial"] == stored["pentanomial"] and not bench["games"]
    assert (bench["crashes"], bench["timelosses"]) == (stored["crashes"], stored["time_losses"])
    assert sum(line.startswith("Started game") for line in lines) == 8
    assert sorted(int(line.split()[2]) for line in lines if "Finished game" in line) == list(
        range(1, 9)
    )


def test_cutechess_output(tmp_path: Path) -> None:
    out = run_daemon(match_config(tmp_path, 4), "--output", "cutechess")
    assert out.returncode == 0, out.stderr[-3000:]
    stored = database(tmp_path / "event.sqlite")
    lines = out.stdout.splitlines()
    scores = [line for line in lines if line.startswith("Score of New vs Base: ")]
    assert scores, lines
    found = re.fullmatch(
        r"Score of New vs Base: (\d+) - (\d+) - (\d+)  \[[0-9.]+\] (\d+)", scores[-1]
    )
    assert found, scores[-1]
    wins, losses, draws, games = (int(x) for x in found.groups())
    assert (wins, losses, draws, games) == (
        stored["wins"], stored["losses"], stored["draws"], stored["games"],
    )  # fmt: skip
    assert lines[-1] == "Finished match"
    assert any(line.startswith("Elo difference: ") for line in lines)
