"""Pinned cores on game hosts: each Dask worker announces the cores of its own CPU mask, plans
its slots with the daemon's `plan_slots`, and runs each game's engines inside them; `check`
prints every host's plan and names a host with too few cores; the "processes" executor shares
this machine's plan out among its workers."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.cpus import cpu_list
from orchestrator.core.errors import DaemonFault
from orchestrator.engines.affinity import GAME_CPUS_ENV, pinned
from orchestrator.executor.worker import _Cores
from tests.support.cluster import Cluster
from tests.support.daemon import event_config, run_daemon
from tests.support.processes import engine_pids

PLAYERS = ["E1", "E2", "E3", "E4"]
CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="a game's two engines need two cores")


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


class Sampler:
    """Every 30 ms while a daemon plays: each scripted engine's CPUs, with the pid of the
    process that started it (its worker)."""

    def __init__(self, tag: Path) -> None:
        self.tag = tag
        self.samples: list[dict[str, tuple[int, tuple[int, ...]]]] = []
        self.running: list[list[tuple[str, str]]] = []  # the games running at each sample
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.done.is_set():
            time.sleep(0.03)
            seen = {}
            for name, pid in engine_pids(self.tag, unique=True).items():
                try:
                    seen[name] = (parent(pid), pinned(pid))
                except (OSError, ValueError, IndexError):
                    continue
            if seen:
                self.samples.append(seen)
                self.running.append(running(self.tag / "event.sqlite"))


def running(db: Path) -> list[tuple[str, str]]:
    """(white, black) of the games running now with a move stored (their engines started and
    pinned, the engines of their previous games gone), read-only."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute(
                "SELECT white, black FROM games g JOIN attempts a ON a.game = g.id "
                "WHERE g.status = 'running' AND a.id = (SELECT max(id) FROM attempts "
                "WHERE game = g.id) AND EXISTS (SELECT 1 FROM moves WHERE attempt = a.id)"
            ).fetchall()
    except sqlite3.Error:
        return []


def placed(stdout: str) -> list[dict[str, Any]]:
    events = (json.loads(line) for line in stdout.splitlines() if line.startswith("{"))
    return [e for e in events if e["event"] == "game_placed"]


def test_each_game_runs_inside_the_cores_its_host_announces(
    cluster: Cluster, tmp_path: Path
) -> None:
    # two hosts of disjoint CPU masks where the machine has four CPUs; on two, both hosts
    # have the only two (each game's engines still get one apiece, inside their host's)
    pools = {"host-a": CPUS[:2], "host-b": CPUS[2:4] if len(CPUS) >= 4 else CPUS[:2]}
    cluster.scheduler()
    for name, cpus in pools.items():
        cluster.worker(name, cpus=cpus)
    cluster.wait_for(set(pools))
    folder = tmp_path / "event"
    folder.mkdir()
    config = event_config(
        folder, players=PLAYERS, rounds=2, delay_ms=40,
        extra=f'executor = "{cluster.url}"\naffinity = true',
    )  # fmt: skip
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 0, checked.output
    for name, cpus in pools.items():
        plan = f"game host {name}: pinned cores: {cpus[0]} | {cpus[1]}; spare: none"
        assert plan in checked.stdout, checked.stdout

    with Sampler(folder) as sampler:
        result = run_daemon(config)
    assert result.returncode == 0, result.stderr[-3000:]
    games = placed(result.stdout)
    assert len(games) == 8 and {g["host"] for g in games} == set(pools)
    for game in games:
        white, black = (set(cpu_list(c)) for c in game["cpus"])
        assert white | black <= set(pools[game["host"]]) and not white & black, game
    # every engine, sampled while it played, ran inside its host's CPUs; pinned, the two
    # engines of a game never shared one
    hosts = {cluster.processes[name].pid: name for name in pools}
    engines = [s for seen in sampler.samples for s in seen.values() if s[0] in hosts]
    assert len(engines) > 20, sampler.samples[:10]
    assert all(set(cpus) <= set(pools[hosts[worker]]) for worker, cpus in engines)
    alone = [c for _, c in engines if len(c) == 1]
    assert len(alone) > len(engines) / 2  # most samples after the engine's pin
    apart = 0
    for seen, games_now in zip(sampler.samples, sampler.running, strict=True):
        for white, black in games_now:
            if white in seen and black in seen and seen[white][0] == seen[black][0] in hosts:
                sets = seen[white][1], seen[black][1]
                if all(len(s) == 1 for s in sets):
                    assert sets[0] != sets[1], (seen, games_now)
                    apart += 1
    assert apart > 5


def test_check_names_a_host_with_too_few_cores(cluster: Cluster, tmp_path: Path) -> None:
    cluster.scheduler()
    cluster.worker("small", resources="game=2", cpus=CPUS[:2])  # 2 games need 4 cores
    cluster.wait_for({"small"})
    config = event_config(
        tmp_path,
        players=PLAYERS[:2],
        rounds=1,
        extra=f'executor = "{cluster.url}"\naffinity = true',
    )
    checked = CliRunner().invoke(app, ["check", str(config)])
    assert checked.exit_code == 1, checked.output
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 1, checked.stderr
    assert (
        "affinity: game host small: 2 games at once of 1-thread engines need 4 cores; "
        in (lines[0])
    )
    assert "2 are available" in lines[0]


def test_processes_share_this_machine_s_plan_out(tmp_path: Path) -> None:
    config = event_config(
        tmp_path, players=PLAYERS, rounds=1, concurrency=1, delay_ms=40,
        extra='executor = "processes"\naffinity = true',
    )  # fmt: skip
    with Sampler(tmp_path) as sampler:
        result = run_daemon(config)
    assert result.returncode == 0, result.stderr[-3000:]
    games = placed(result.stdout)
    assert len(games) == 4
    assert {tuple(g["cpus"]) for g in games} == {(str(CPUS[0]), str(CPUS[1]))}
    pinned_sets = {cpus for seen in sampler.samples for _, cpus in seen.values()}
    assert {(CPUS[0],), (CPUS[1],)} <= pinned_sets, pinned_sets


def test_a_host_plans_again_for_larger_engines_and_gives_up_when_too_small(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(CPUS[:2]))
    monkeypatch.setattr("orchestrator.executor.worker.pin", lambda pid, cpus: None)
    cores = _Cores()
    slot = cores.take(1, 1, "h")
    assert (slot.first, slot.second) == ((CPUS[0],), (CPUS[1],))
    with pytest.raises(DaemonFault, match="no slot of pinned cores came free"):
        monkeypatch.setattr("orchestrator.executor.worker.SLOT_WAIT_S", 0.1)
        cores.take(1, 1, "h")  # the only slot is taken
    cores.give_back(slot)
    with pytest.raises(DaemonFault, match="game host h: pinned cores: 1 games at once of "):
        cores.take(1, 2, "h")  # 2-thread engines: four cores, replanned once none is taken
    monkeypatch.setenv(GAME_CPUS_ENV, str(CPUS[0]))
    fresh = _Cores()
    with pytest.raises(DaemonFault, match="need 2 cores; 1 are available"):
        fresh.take(1, 1, "h")
    monkeypatch.setenv(GAME_CPUS_ENV, "x")
    with pytest.raises(DaemonFault, match=f"{GAME_CPUS_ENV}: 'x' is not a CPU list"):
        _Cores().take(1, 1, "h")
