"""Pinned cores on a real host: the topology read from a fake /sys under a test folder, a
process's every thread moved, and a daemon-played event whose engines each run on a core of
their own, a wrapped engine's children with it; too few cores is one line (check: exit 1,
run: exit 2)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config.model import EngineConfig
from orchestrator.core.cpus import Core, cpu_text, plan_slots
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.record import MoveRecord
from orchestrator.engines.affinity import pin, pinned, read_cores
from orchestrator.game.game import GameSpec, play_game
from tests.support.daemon import event_config, run_daemon
from tests.support.paths import SCRIPTED
from tests.support.processes import engine_pids

LINUX = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")


def fake_sys(root: Path, nodes: int, cores_per_node: int, smt: int) -> Path:
    """A /sys/devices/system/cpu of `nodes` x `cores_per_node` cores with `smt` siblings each,
    numbered as Linux numbers them: first thread of every core, then the second ones."""
    cores = nodes * cores_per_node
    folder = root / "cpu"
    for thread in range(smt):
        for core in range(cores):
            cpu = thread * cores + core
            top = folder / f"cpu{cpu}" / "topology"
            top.mkdir(parents=True)
            siblings = [t * cores + core for t in range(smt)]
            (top / "thread_siblings_list").write_text(cpu_text(siblings) + "\n")
            (folder / f"cpu{cpu}" / f"node{core // cores_per_node}").mkdir()
    (folder / "online").write_text(f"0-{cores * smt - 1}\n")
    return folder


def test_the_reader_groups_smt_siblings_and_nodes(tmp_path: Path) -> None:
    root = fake_sys(tmp_path, nodes=2, cores_per_node=4, smt=2)
    cores = read_cores(root, allowed=range(16))
    assert len(cores) == 8
    assert Core(0, (0, 8)) in cores and Core(1, (7, 15)) in cores
    plan = plan_slots(cores, 2)
    # each engine a whole core, siblings together, both games on a node of their own
    assert [(s.first, s.second) for s in plan.slots] == [((0, 8), (1, 9)), ((4, 12), (5, 13))]
    assert plan.spare == (2, 3, 6, 7, 10, 11, 14, 15)


def test_the_reader_keeps_to_the_allowed_and_online_cpus(tmp_path: Path) -> None:
    root = fake_sys(tmp_path, nodes=1, cores_per_node=4, smt=2)
    (root / "online").write_text("0-6\n")  # cpu 7 (core 3's sibling) offline
    cores = read_cores(root, allowed=[0, 1, 2, 3, 4, 5, 7])
    assert cores == [Core(0, (0, 4)), Core(0, (1, 5)), Core(0, (2,)), Core(0, (3,))]


def test_a_host_without_topology_counts_each_cpu_as_a_core(tmp_path: Path) -> None:
    assert read_cores(tmp_path / "nothing", allowed=[0, 1, 2]) == [
        Core(0, (0,)),
        Core(0, (1,)),
        Core(0, (2,)),
    ]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")
def test_pin_moves_every_thread_of_a_process() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    script = (
        "import threading, time\n"
        "for _ in range(3): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "print('ready', flush=True); time.sleep(30)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        pin(child.pid, cpus[-1:])
        threads = list(Path(f"/proc/{child.pid}/task").iterdir())
        assert len(threads) >= 4
        for task in threads:
            assert os.sched_getaffinity(int(task.name)) == {cpus[-1]}
        assert pinned(child.pid) == (cpus[-1],)
    finally:
        child.kill()
        child.wait()
    pin(child.pid, cpus)  # gone: left alone, no error


@LINUX
def test_the_engines_of_a_running_game_are_pinned_apart(tmp_path: Path) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("a game's two engines need two cores")
    config = event_config(
        tmp_path, players=["A", "B", "C", "D"], rounds=2, concurrency=1, delay_ms=30,
        extra="affinity = true",
    )  # fmt: skip
    plan = plan_slots(read_cores(), 1)
    seen: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    done = threading.Event()

    def watch() -> None:
        db = tmp_path / "event.sqlite"
        while not done.is_set():
            time.sleep(0.05)
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
                    row = conn.execute(
                        "SELECT white, black FROM games WHERE status = 'running'"
                    ).fetchone()
            except sqlite3.Error:
                continue
            if row is None:
                continue
            pids = engine_pids(tmp_path)
            try:
                sets = (pinned(pids[row[0]]), pinned(pids[row[1]]))
            except (KeyError, OSError):
                continue
            seen.append(sets)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run_daemon(config)
    finally:
        done.set()
        watcher.join()
    assert result.returncode == 0, result.stderr[-3000:]
    assert '"event": "cores_pinned"' in result.stdout
    pinned_sets = [s for s in seen if s == (plan.slots[0].first, plan.slots[0].second)]
    assert len(pinned_sets) > 10, seen[:20]  # sampled often, in every game
    # once a game has started, its engines never share a CPU
    assert all(not set(white) & set(black) for white, black in pinned_sets)


def test_too_few_cores_is_one_line(tmp_path: Path) -> None:
    config = event_config(
        tmp_path, players=["A", "B"], rounds=1, concurrency=1,
        extra='affinity = true\ncpus = "0"',
    )  # fmt: skip
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 1, checked.output
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 1 and "affinity: 1 games at once" in lines[0], checked.stderr
    ran = CliRunner().invoke(app, ["run", str(config)])
    assert ran.exit_code == 2, ran.output
    assert "need 2 cores; 1 are available" in ran.stderr
    assert not (tmp_path / "event.sqlite").exists()


@LINUX
async def test_a_wrapped_engine_s_children_are_pinned_with_it(tmp_path: Path) -> None:
    """An engine started by a wrapper script (`sh -c "engine ...; exit $?"`, which starts
    the engine as its child before any pin): every task of the engine's process group, the
    wrapper and the real engine, is inside the game's set at every move."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("a game's two engines need two cores")

    def wrapped(name: str) -> EngineConfig:
        line = f"{sys.executable} {SCRIPTED} --name {name} --delay 50 --tag {tmp_path}"
        return EngineConfig(name=name, command=("/bin/sh", "-c", f"{line}; exit $?"))

    sets = {"W": (cpus[-1],), "B": (cpus[0],)}
    seen: list[dict[str, tuple[tuple[int, ...], tuple[int, ...]]]] = []

    def on_move(move: MoveRecord, ply: int, mover: chess.Color) -> None:
        found = {}
        for name, pid in engine_pids(tmp_path).items():  # the real engines, not the wrappers
            wrapper = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
            found[name] = (pinned(pid), pinned(wrapper))
        seen.append(found)

    spec = GameSpec(
        wrapped("W"),
        wrapped("B"),
        TimeControl.parse("30+0"),
        adjudication=Adjudication(win=None, draw=None, max_moves=4),
        cpus=(sets["W"], sets["B"]),
    )
    record = await play_game(spec, on_move=on_move)
    assert record.fault is None and record.plies == 8, record.reason
    assert len(seen) == 8
    for found in seen:
        assert found == {name: (cpu, cpu) for name, cpu in sets.items()}, found
