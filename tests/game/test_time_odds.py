"""Per-engine limits: each side's own time control and margin (time odds), its own node or
depth cap (with a clock or without one, `tc = "inf"`), and clocks of several periods; each
read back from the lines the engines were sent (the game's engine log) and from the PGN."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from orchestrator.config.model import EngineConfig
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.game.game import GameSpec, play_game
from orchestrator.game.pgn import to_pgn
from orchestrator.store.logs import logs_folder
from tests.support.daemon import run_daemon
from tests.support.paths import SCRIPTED

STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"


def scripted(name: str, *args: str, **limits: object) -> EngineConfig:
    command = (sys.executable, str(SCRIPTED), "--name", name, *args)
    return EngineConfig(name=name, command=command, **limits)  # type: ignore[arg-type]


def goes(log: str, name: str) -> list[str]:
    """The `go` lines sent to engine `name`, in order (the engine log: `>NAME: go ...`)."""
    return [line.split(f">{name}: ", 1)[1] for line in log.splitlines() if f">{name}: go" in line]


def field(line: str, key: str) -> int | None:
    found = re.search(rf"\b{key} (\d+)", line)
    return int(found[1]) if found else None


async def play(spec: GameSpec) -> tuple[chess.pgn.Game, str, str]:
    chunks: list[str] = []
    record = await play_game(spec, on_log=chunks.append)
    pgn = to_pgn(record, event="Odds")
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    return game, "".join(chunks), record.reason


async def test_each_side_is_told_its_own_clock_and_only_the_side_past_its_own_flags() -> None:
    fast = scripted("Fast", "--delay", "150", tc=TimeControl.parse("1+0.01"), timemargin_ms=20)
    slow = scripted("Slow", "--delay", "150")
    spec = GameSpec(
        fast, slow, TimeControl.parse("60+1"),
        adjudication=Adjudication(win=None, draw=None, max_moves=40),
    )  # fmt: skip
    game, log, reason = await play(spec)
    # Fast has 1 s (+10 ms a move): it overstepped its own clock at 150 ms a move; Slow, at
    # the same pace, is nowhere near its 60 s
    assert game.headers["Result"] == "0-1", reason
    assert "Fast" in reason and "on time" in reason
    first_white, first_black = goes(log, "Fast")[0], goes(log, "Slow")[0]
    for line in (first_white, first_black):  # both clocks, each with its own increment
        assert field(line, "winc") == 10 and field(line, "binc") == 1000, line
        assert field(line, "btime") == 60000, line
    assert field(first_white, "wtime") == 1000
    wtime = field(first_black, "wtime")
    assert wtime is not None and 0 < wtime < 1000  # less White's first move, plus 10 ms
    assert "TimeControl" not in game.headers
    assert game.headers["WhiteTimeControl"] == "1+0.01"
    assert game.headers["BlackTimeControl"] == "60+1"


async def test_a_clock_of_three_periods() -> None:
    tc = TimeControl.parse("2/10, 2/20, 30+1")
    spec = GameSpec(
        scripted("W", "--delay", "20"), scripted("B", "--delay", "20"), tc,
        adjudication=Adjudication(win=None, draw=None, max_moves=6),
    )  # fmt: skip
    game, log, reason = await play(spec)
    assert game.headers["Result"] == "1/2-1/2", reason
    white = goes(log, "W")
    assert len(white) == 6
    # movestogo counts down within each period, and the last period has none
    assert [field(line, "movestogo") for line in white] == [2, 1, 2, 1, None, None]
    # the second period's 20 s come after White's 2nd move, the third's 30 s after its 4th
    times = [field(line, "wtime") for line in white]
    incs = [field(line, "winc") for line in white]
    assert times[0] == 10000 and incs[:4] == [0, 0, 0, 0] and incs[4:] == [1000, 1000]
    assert times[1] is not None and 9000 < times[1] <= 10000
    assert times[2] is not None and 29000 < times[2] <= 30000  # 10 + 20 s, less two moves
    assert times[4] is not None and 59000 < times[4] <= 60000  # and 30 s more
    assert game.headers["TimeControl"] == "2/10:2/20:30+1"
    assert game.headers["WhiteTimeControl"] == "2/10:2/20:30+1"


async def test_no_clock_and_a_node_cap_sends_no_time() -> None:
    spec = GameSpec(
        scripted("W", nodes=500), scripted("B", depth=3), TimeControl.parse("inf"),
        adjudication=Adjudication(win=None, draw=None, max_moves=3),
    )  # fmt: skip
    game, log, reason = await play(spec)
    assert game.headers["Result"] == "1/2-1/2", reason
    assert goes(log, "W") == ["go nodes 500"] * 3
    assert goes(log, "B") == ["go depth 3"] * 3
    assert "wtime" not in log and "btime" not in log
    assert game.headers["TimeControl"] == "-"


@pytest.mark.skipif(not shutil.which(STOCKFISH), reason="Debian's stockfish is not installed")
async def test_node_odds_with_stockfish_and_a_clock() -> None:
    def stockfish(name: str, nodes: int) -> EngineConfig:
        return EngineConfig(name=name, command=(STOCKFISH,), nodes=nodes)

    spec = GameSpec(
        stockfish("SF-2000", 2000), stockfish("SF-1000", 1000), TimeControl.parse("60+1"),
        adjudication=Adjudication(win=None, draw=None, max_moves=6),
    )  # fmt: skip
    game, log, reason = await play(spec)
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2"), reason
    white, black = goes(log, "SF-2000"), goes(log, "SF-1000")
    assert white and black
    assert all(field(g, "nodes") == 2000 and field(g, "wtime") is not None for g in white)
    assert all(field(g, "nodes") == 1000 and field(g, "btime") is not None for g in black)


def test_time_odds_from_engines_toml(tmp_path: Path) -> None:
    """A's own control (periods, as a TOML list) and margin, B's node cap on the event's
    clock: each game's PGN gives each side's own control, whichever colour A has."""
    command = [sys.executable, str(SCRIPTED), "--delay", "5"]
    config = tmp_path / "odds.toml"
    config.write_text(
        f"""
[tournament]
name = "Odds"
system = "round-robin"
tc = "60+1"
database = "event.sqlite"
pgn_dir = "pgn"

[adjudication]
max_moves = 4

[[engine]]
name = "A"
command = {json.dumps([*command, "--name", "A"])}
tc = ["40/120", "30+0.5"]
timemargin = 50

[[engine]]
name = "B"
command = {json.dumps([*command, "--name", "B"])}
nodes = 700
"""
    )
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr + out.stdout[-3000:]
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        pgns = [r[0] for r in conn.execute("SELECT pgn FROM games ORDER BY round, number")]
    tags = [chess.pgn.read_headers(io.StringIO(pgn)) for pgn in pgns]
    assert len(tags) == 2
    for h in tags:
        assert h is not None and "TimeControl" not in h
        own = {h["White"]: h["WhiteTimeControl"], h["Black"]: h["BlackTimeControl"]}
        assert own == {"A": "40/120:30+0.5", "B": "60+1"}
    logs = "".join(
        gzip.decompress(p.read_bytes()).decode()
        for p in sorted(logs_folder(tmp_path / "event.sqlite").iterdir())
    )
    assert [field(g, "nodes") for g in goes(logs, "B")] == [700] * 8  # 4 moves, 2 games
    assert all(field(g, "nodes") is None and "wtime" in g for g in goes(logs, "A"))
