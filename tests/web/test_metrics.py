"""`/metrics`: scraped while a daemon plays an event, its counts are the database's and its
clock histogram has one sample per engine move; the example alerting rules and Grafana
dashboard (`monitoring/`) use only metrics that it serves."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import yaml  # type: ignore[import-untyped]
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.event.health import Health, HostHealth, encode
from orchestrator.web.app import make_app
from tests.support.daemon import event_config
from tests.support.paths import ROOT
from tests.support.processes import free_port, serving

MONITORING = ROOT / "monitoring"


def scrape(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample of `url`'s /metrics: name -> [(labels, value)]."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def total(samples: dict[str, list[tuple[dict[str, str], float]]], name: str) -> float:
    return sum(value for _, value in samples.get(name, []))


def test_metrics_during_an_event_equal_the_database(tmp_path: Path) -> None:
    players = ["E01", "E02", "E03", "E04"]
    # games of about 4 s, so that heartbeats (every 3 s) carry the health while they run
    config = event_config(tmp_path, players=players, rounds=2, delay_ms=100)
    text = config.read_text()
    # one engine crashes at its fourth move: a fault, by engine and kind
    config.write_text(text.replace('"--name", "E03",', '"--name", "E03", "--crash-at", "4",'))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "orchestrator", "run", str(config), "--http", f":{port}"]
    daemon = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL)
    during: list[dict[str, list[tuple[dict[str, str], float]]]] = []
    try:
        deadline = time.monotonic() + 240
        while daemon.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                during.append(scrape(url))
            time.sleep(0.3)
        assert daemon.wait(timeout=60) == 0
    finally:
        daemon.kill()
        daemon.wait()
    assert during, "never scraped while the event ran"
    live = [
        s
        for s in during
        if total(s, "orchestrator_games_running") > 0
        and total(s, "orchestrator_event_loop_lag_seconds_count") > 0
    ]
    assert live, "no scrape saw a game running after a heartbeat"
    seen = live[-1]
    assert total(seen, "orchestrator_daemon_up") == 1
    assert total(seen, "process_resident_memory_bytes") > 10e6  # the daemon's, from /proc
    assert total(seen, "orchestrator_daemon_threads") >= 1
    assert 0 <= total(seen, "orchestrator_event_loop_lag_max_seconds") < 5
    assert "orchestrator_seconds_since_last_move" in seen
    assert 0 <= total(seen, "orchestrator_seconds_since_last_move") < 60

    # the finished event, scraped from `serve`: every count is the database's
    db = tmp_path / "event.sqlite"
    with serving(db) as (_, served_port):
        for _ in range(300):  # until it listens
            try:
                last = scrape(f"http://127.0.0.1:{served_port}")
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("serve never answered")
    with sqlite3.connect(db) as conn:
        by_termination = dict(
            conn.execute(
                "SELECT termination, COUNT(*) FROM games WHERE status = 'finished' GROUP BY 1"
            ).fetchall()
        )
        faults = Counter(
            (json.loads(f)["engine"], json.loads(f)["kind"])
            for (f,) in conn.execute("SELECT fault FROM games WHERE fault IS NOT NULL")
        )
        moves = conn.execute("SELECT COUNT(*) FROM moves WHERE book = 0").fetchone()[0]
        timed = conn.execute(
            "SELECT COUNT(*) FROM moves WHERE book = 0 AND reported_ms IS NOT NULL"
        ).fetchone()[0]
    assert total(last, "orchestrator_daemon_up") == 0  # the event is over
    assert {
        labels["termination"]: value for labels, value in last["orchestrator_games_total"]
    } == by_termination
    assert (
        faults
        and {
            (labels["engine"], labels["kind"]): value
            for labels, value in last["orchestrator_engine_faults_total"]
        }
        == faults
    )
    assert total(last, "orchestrator_moves_total") == moves
    per_engine = {
        labels["engine"]: value for labels, value in last["orchestrator_clock_error_seconds_count"]
    }
    assert set(per_engine) == set(players) and sum(per_engine.values()) == timed
    assert total(last, "orchestrator_clock_error_seconds_bucket") > 0


async def test_the_monitoring_files_use_only_served_metrics(tmp_path: Path) -> None:
    """Every metric an alert or a dashboard panel names is one `/metrics` serves, with a
    daemon's whole health stored (a scheduler, game hosts, a full disk)."""
    from orchestrator.event.sample import sample_database

    db = tmp_path / "event.sqlite"
    sample = await asyncio.to_thread(sample_database)  # it runs a loop of its own
    db.write_bytes(sample.read_bytes())
    health = Health(
        last_move_at=time.time(),
        scheduler="connected",
        hosts={"host-a": HostHealth(up=True, games=1)},
        disk_full="the database: no space left",
        disk_free=1 << 20,
    )
    with sqlite3.connect(db) as conn:
        now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        conn.execute(
            "INSERT OR REPLACE INTO daemon (id, pid, host, started_at, last_seen, health) "
            "VALUES (1, ?, ?, ?, ?, ?)",
            (os.getpid(), socket.gethostname(), now, now, encode(health)),
        )
    async with TestClient(TestServer(make_app(db))) as client:
        response = await client.get("/metrics")
        assert response.status == 200
        text = await response.text()
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}
    served = {  # a family without samples yet (no engine fault) is served all the same
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in suffixes.get(family.type, [""])
    }
    alerts = yaml.safe_load((MONITORING / "alerts.yml").read_text())
    expressions = [rule["expr"] for group in alerts["groups"] for rule in group["rules"]]
    dashboard = json.loads((MONITORING / "grafana.json").read_text())
    expressions += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert len(expressions) > 15
    used = {
        name for expr in expressions for name in re.findall(r"\b(?:orchestrator|process)_\w+", expr)
    }
    assert used and used <= served, sorted(used - served)


def test_scrapes_at_once_count_each_move_once(tmp_path: Path) -> None:
    """`/metrics` is read in threads: eight first scrapes at once see each move once (they
    counted 3,808 or 9,520 samples for 1,904 moves before the collector held a lock)."""
    from concurrent.futures import ThreadPoolExecutor

    from prometheus_client import generate_latest

    from orchestrator.event.sample import sample_database
    from orchestrator.web.metrics import registry

    db = sample_database(tmp_path)
    with sqlite3.connect(db) as conn:
        attempt, ply = conn.execute("SELECT attempt, max(ply) FROM moves").fetchone()
        conn.executemany(
            "INSERT INTO moves (attempt, ply, uci, san, book, time_ms, reported_ms) "
            "VALUES (?, ?, 'a2a3', 'a3', 0, 105, 100)",
            [(attempt, ply + n) for n in range(1, 30_001)],
        )
        timed = conn.execute("SELECT COUNT(*) FROM moves WHERE reported_ms IS NOT NULL").fetchone()
    metrics = registry(db)
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda _: generate_latest(metrics).decode(), range(8)))
    for text in texts:
        counted = sum(
            sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "orchestrator_clock_error_seconds_count"
        )
        assert counted == timed[0] == 30_000
