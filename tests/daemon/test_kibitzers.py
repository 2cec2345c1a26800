"""Kibitzers through the daemon: two scripted kibitzers (the second crashes at ply 20 of a
game) follow the featured game, their four files follow every move, the crashed one is
started again, and the players' games and move times are those of the same event without
kibitzers."""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess.pgn
import pytest

from orchestrator.engines.adapter import KIBITZ_PRIORITY, _idle_child
from tests.support.daemon import run_daemon
from tests.support.engines import kibitzers_toml
from tests.support.paths import SCRIPTED

THINK_MS = 400  # each player's move: long enough for the kibitzers to answer every position
PLIES = 28  # max_moves = 14: K2, restarted after it crashed at plies 20 and 21, has
# six plies (2.4 s) to show one, under a loaded machine's slow start


def config(folder: Path, kibitzers: bool) -> Path:
    engines = "".join(
        f"""
[[engine]]
name = "{name}"
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "--name", "{name}",
           "--seed", "{seed}", "--delay", "{THINK_MS}"]
"""
        for seed, name in enumerate(["P1", "P2"])
    )
    extra = kibitzers_toml(["K1", "K2"], "--crash-at", "11") if kibitzers else ""
    path = folder / "event.toml"
    path.write_text(
        f"""
[tournament]
name = "Kibitz"
rounds = 1
format = "double"
tc = "120+1"
database = "event.sqlite"
pgn_dir = "pgn"
live_dir = "live"

[adjudication]
win = false
draw = false
max_moves = 14
{engines}{extra}"""
    )
    return path


class Watcher(threading.Thread):
    """Reads the kibitzer files every 20 ms while the event plays: which (game, ply) each
    `data*.json` showed, and the plies each `liveeval*.json` held."""

    def __init__(self, folder: Path) -> None:
        super().__init__(daemon=True)
        self.folder = folder
        self.shown: dict[str, set[tuple[int, int]]] = {"data": set(), "data1": set()}
        self.history: dict[str, set[tuple[int, int]]] = {"liveeval": set(), "liveeval1": set()}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for name, seen in self.shown.items():
                if (data := self._read(name)) is not None:
                    seen.add((data["game"], data["ply"]))
            for name, held in self.history.items():
                if (data := self._read(name)) is not None:
                    held.update((data["game"], m["ply"]) for m in data["moves"])
            time.sleep(0.02)

    def _read(self, name: str) -> dict[str, object] | None:
        try:
            data: dict[str, object] = json.loads((self.folder / f"{name}.json").read_text())
        except (OSError, ValueError):
            return None
        return data


def games(db: Path) -> list[tuple[int, list[str]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, pgn FROM games ORDER BY id").fetchall()
    out = []
    for game_id, pgn in rows:
        game = chess.pgn.read_game(__import__("io").StringIO(pgn))
        assert game is not None
        out.append((game_id, [m.uci() for m in game.mainline_moves()]))
    return out


def move_times(db: Path) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [t for (t,) in conn.execute("SELECT time_ms FROM moves WHERE book = 0")]


def test_kibitzers_follow_every_move_and_cost_the_players_nothing(tmp_path: Path) -> None:
    plain, kibitzed = tmp_path / "plain", tmp_path / "kibitzed"
    plain.mkdir()
    kibitzed.mkdir()
    # the event without kibitzers plays at the same time, beside it: the same machine's load
    # for both (and the suite waits on their moves once)
    alone = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config(plain, False))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=plain,
    )
    (kibitzed / "live").mkdir()
    watcher = Watcher(kibitzed / "live")
    watcher.start()
    try:
        run = run_daemon(config(kibitzed, True))
    finally:
        watcher.done.set()
        watcher.join()
        _, alone_err = alone.communicate(timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert alone.returncode == 0, alone_err[-3000:]

    # the same games, move for move, and the same move times within noise
    played = games(kibitzed / "event.sqlite")
    assert played == games(plain / "event.sqlite")
    assert [len(moves) for _, moves in played] == [PLIES, PLIES]
    alone, beside = move_times(plain / "event.sqlite"), move_times(kibitzed / "event.sqlite")
    assert abs(statistics.median(beside) - statistics.median(alone)) <= 25, (alone, beside)
    assert max(beside) < THINK_MS + 200, beside

    # the daemon started no game before the kibitzers ran (`KibitzProcess.ready`), so K1
    # showed every position of both games, the start's too
    assert '"event": "kibitzers_ready"' in run.stdout, run.stdout[-3000:]
    for game_id, _ in played:
        every = {(game_id, ply) for ply in range(PLIES)}
        assert every <= watcher.shown["data"], sorted(every - watcher.shown["data"])
        # a position joins the history once the next one is analysed: the last one, in the
        # archive below
        earlier = every - {(game_id, PLIES - 1)}
        assert earlier <= watcher.history["liveeval"], earlier - watcher.history["liveeval"]
        # K2 crashed at plies 20 and 21 (its 11th move) and was started again: it showed the
        # positions before, and after its restart
        before = {(game_id, ply) for ply in range(20)}
        assert before <= watcher.shown["data1"], sorted(before - watcher.shown["data1"])
        assert any(ply >= 22 for g, ply in watcher.shown["data1"] if g == game_id)
        assert before <= watcher.history["liveeval1"]
        for suffix in ("", "1"):  # each finished game's history, archived
            archived = json.loads(
                (
                    kibitzed / "live" / "archive" / f"game-{game_id}-liveeval{suffix}.json"
                ).read_text()
            )
            assert archived["game"] == game_id
            plies = {m["ply"] for m in archived["moves"]}
            last = PLIES if not suffix else 20
            assert plies >= set(range(last)), plies
    restarts = [
        json.loads(line) for line in run.stdout.splitlines() if "kibitzer_restarted" in line
    ]
    assert len(restarts) >= 2 and {r["kibitzer"] for r in restarts} == {"K2"}, run.stdout[-3000:]


def policy_and_nice(pid: int) -> tuple[int, int]:
    """A process's scheduling policy and nice value (fields 41 and 19 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[38]), int(fields[16])


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux only")
def test_a_kibitzer_s_engine_starts_at_the_lowest_priority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What `Engine.start(idle=True)` runs in the child before exec (the suite itself runs
    kibitzers at normal priority, see tests/conftest.py)."""
    for setting, expected in ((None, (os.SCHED_IDLE, 19)), ("normal", (os.SCHED_OTHER, 0))):
        if setting is None:
            monkeypatch.delenv(KIBITZ_PRIORITY)
        else:
            monkeypatch.setenv(KIBITZ_PRIORITY, setting)
        child = subprocess.Popen(["sleep", "10"], preexec_fn=_idle_child)  # noqa: PLW1509
        try:
            assert policy_and_nice(child.pid) == expected
        finally:
            child.kill()
            child.wait()
