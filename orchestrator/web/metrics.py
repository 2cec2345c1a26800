"""`/metrics`: the event's health in Prometheus's text format, through prometheus-client.

The web process (`serve`, and the view of `run --http`) reads every figure when it is
scraped, so that its counts are the database's own and a restart of either process loses
nothing:

- from the database: games by termination, engine faults by engine and kind, engine moves,
  the games running, and the clock histogram (the time charged minus the time the engine
  reported, one sample per engine move that reported its time; new moves are added at each
  scrape, so a scrape reads only what came since the last one);
- from the daemon's heartbeat (`event/health.py`): its loop's lag, the last move, the
  scheduler's connection and each game host, a full disk it waits out;
- from `/proc`, where the daemon runs on this host: its memory, CPU, descriptors
  (prometheus-client's `ProcessCollector`) and threads.

The metric names follow Prometheus's conventions: `orchestrator_` first, the unit in the
name, `_total` for counters.  `monitoring/alerts.yml` and `monitoring/grafana.json` use them.
"""

from __future__ import annotations

import bisect
import contextlib
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from orchestrator.event.health import LAG_BUCKETS, Health, decode
from orchestrator.store.lock import held

__all__ = ["CLOCK_BUCKETS", "EventCollector", "registry"]

#: the upper bounds (seconds) of the clock histogram's buckets (charged minus reported); +Inf
#: last.  An engine that reported more than it was charged counts as 0: what the histogram
#: watches is time charged that the engine did not use, and Prometheus keeps no `_count` or
#: `_sum` of a histogram with negative buckets.
CLOCK_BUCKETS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)

#: a daemon whose heartbeat is older than this is taken for gone
HEARTBEAT_STALE_S = 15.0

#: the engine of a stored move: White moved at the odd plies from a start with White to move
_NEW_MOVES = """
SELECT m.rowid, m.time_ms - m.reported_ms,
       CASE WHEN (m.ply % 2 = 1) = (COALESCE(json_extract(g.opening, '$.fen'), '') NOT LIKE '% b %')
            THEN g.white ELSE g.black END
FROM moves m JOIN attempts a ON a.id = m.attempt JOIN games g ON g.id = a.game
WHERE m.rowid > ? AND m.book = 0 AND m.reported_ms IS NOT NULL
ORDER BY m.rowid LIMIT 20000
"""


class _Histogram:
    """One engine's clock histogram: counts per bucket (not cumulative), sum, count."""

    def __init__(self) -> None:
        self.counts = [0] * (len(CLOCK_BUCKETS) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.counts[bisect.bisect_left(CLOCK_BUCKETS, seconds)] += 1
        self.total += seconds

    def buckets(self) -> list[tuple[str, float]]:
        running, out = 0, []
        for bound, count in zip((*CLOCK_BUCKETS, float("inf")), self.counts, strict=True):
            running += count
            out.append(("+Inf" if bound == float("inf") else repr(bound), float(running)))
        return out


class EventCollector(Collector):
    """The event's metrics, read from `db` at each scrape (see the module)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.clock: dict[str, _Histogram] = {}
        self.last_move = 0  # the rowid of the last move in `clock`
        #: scrapes run in threads at once (`/metrics` reads off the event loop): each new
        #: move is counted once, by one of them, and each sees the whole histogram
        self.lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        conn.execute("PRAGMA query_only = 1")
        return conn

    def collect(self) -> Iterator[Metric]:
        try:
            conn = self._connect()
        except sqlite3.Error:
            return
        with contextlib.closing(conn):
            yield from self._from_database(conn)
            daemon = conn.execute("SELECT pid, host, last_seen, health FROM daemon").fetchone()
        yield from self._from_daemon(daemon)

    def _from_database(self, conn: sqlite3.Connection) -> Iterator[Metric]:
        games = CounterMetricFamily(
            "orchestrator_games", "Finished games, by how they ended", labels=["termination"]
        )
        for termination, count in conn.execute(
            "SELECT COALESCE(termination, 'unknown'), COUNT(*) FROM games "
            "WHERE status = 'finished' GROUP BY 1 ORDER BY 1"
        ):
            games.add_metric([termination], count)
        yield games
        faults = CounterMetricFamily(
            "orchestrator_engine_faults",
            "Games lost by an engine's fault, by engine and kind",
            labels=["engine", "kind"],
        )
        for engine, kind, count in conn.execute(
            "SELECT json_extract(fault, '$.engine'), json_extract(fault, '$.kind'), COUNT(*) "
            "FROM games WHERE fault IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"
        ):
            faults.add_metric([str(engine), str(kind)], count)
        yield faults
        (moves,) = conn.execute("SELECT COUNT(*) FROM moves WHERE book = 0").fetchone()
        yield CounterMetricFamily(
            "orchestrator_moves", "Engine moves played (rate(): moves per second)", value=moves
        )
        (running,) = conn.execute("SELECT COUNT(*) FROM games WHERE status = 'running'").fetchone()
        yield GaugeMetricFamily("orchestrator_games_running", "Games being played", running)
        clock = HistogramMetricFamily(
            "orchestrator_clock_error_seconds",
            "The time charged for an engine move minus the time the engine reported (0 when "
            "it reported more)",
            labels=["engine"],
        )
        with self.lock:
            while rows := conn.execute(_NEW_MOVES, (self.last_move,)).fetchall():
                for rowid, gap_ms, engine in rows:
                    self.clock.setdefault(str(engine), _Histogram()).observe(gap_ms / 1000)
                    self.last_move = rowid
            for engine, histogram in sorted(self.clock.items()):
                clock.add_metric([engine], histogram.buckets(), histogram.total)
        yield clock

    def _from_daemon(self, row: tuple[int, str, str, str | None] | None) -> Iterator[Metric]:
        if row is None:
            yield GaugeMetricFamily("orchestrator_daemon_up", "A daemon runs the event", 0)
            return
        pid, host, last_seen, stored = row
        seen = datetime.fromisoformat(last_seen).timestamp()
        # a daemon holds the event's lock while it runs (a stale heartbeat: it hangs)
        up = held(self.db) and time.time() - seen < HEARTBEAT_STALE_S
        yield GaugeMetricFamily("orchestrator_daemon_up", "A daemon runs the event", int(up))
        yield GaugeMetricFamily(
            "orchestrator_daemon_heartbeat_timestamp_seconds", "The daemon's last heartbeat", seen
        )
        health: Health = decode(stored)
        lag = health.loop_lag
        loop = HistogramMetricFamily(
            "orchestrator_event_loop_lag_seconds",
            "How late the daemon's event loop ran a task that was due (sampled every 0.25 s)",
        )
        bounds = [repr(b) for b in LAG_BUCKETS] + ["+Inf"]
        loop.add_metric([], list(zip(bounds, map(float, lag.cumulative()), strict=True)), lag.total)
        yield loop
        yield GaugeMetricFamily(
            "orchestrator_event_loop_lag_max_seconds",
            "The largest lag of the loop so far",
            lag.most,
        )
        if health.last_move_at is not None:
            yield GaugeMetricFamily(
                "orchestrator_last_move_timestamp_seconds",
                "When the last engine move was played",
                health.last_move_at,
            )
            yield GaugeMetricFamily(
                "orchestrator_seconds_since_last_move",
                "Seconds since the last engine move was played",
                max(0.0, time.time() - health.last_move_at),
            )
        if health.scheduler is not None:
            yield GaugeMetricFamily(
                "orchestrator_scheduler_connected",
                "Whether the daemon is connected to the Dask scheduler",
                int(health.scheduler == "connected"),
            )
        hosts = GaugeMetricFamily(
            "orchestrator_game_host_up", "Game hosts connected to the scheduler", labels=["host"]
        )
        busy = GaugeMetricFamily(
            "orchestrator_game_host_games", "Games each game host plays now", labels=["host"]
        )
        for name, state in sorted(health.hosts.items()):
            hosts.add_metric([name], int(state.up))
            busy.add_metric([name], state.games)
        yield hosts
        yield busy
        yield GaugeMetricFamily(
            "orchestrator_disk_full",
            "Whether the event waits for disk space",
            int(health.disk_full is not None),
        )
        if health.disk_free is not None:
            yield GaugeMetricFamily(
                "orchestrator_disk_free_bytes",
                "Free space where the event writes",
                health.disk_free,
            )
        if host == socket.gethostname() and Path(f"/proc/{pid}").exists():
            yield from _threads(pid)


def _threads(pid: int) -> Iterator[Metric]:
    """The daemon's threads (`/proc/PID/status`; the process collector has no such gauge)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return
    for line in status.splitlines():
        if line.startswith("Threads:"):
            yield GaugeMetricFamily(
                "orchestrator_daemon_threads", "The daemon's threads", int(line.split()[1])
            )


class _DaemonProcess(Collector):
    """prometheus-client's process metrics (`process_resident_memory_bytes`, ...) of the
    daemon of `db`, while it runs on this host."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.pid = 0
        self.collector = ProcessCollector(pid=lambda: self.pid, registry=None)

    def collect(self) -> Iterator[Metric]:
        try:
            with contextlib.closing(
                sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
            ) as conn:
                row = conn.execute("SELECT pid, host FROM daemon").fetchone()
        except sqlite3.Error:
            return
        if row is None or row[1] != socket.gethostname() or not Path(f"/proc/{row[0]}").exists():
            return
        self.pid = int(row[0])
        yield from self.collector.collect()


def registry(db: Path) -> CollectorRegistry:
    """A registry of the event of `db`'s metrics (what `/metrics` serves)."""
    out = CollectorRegistry(auto_describe=False)
    out.register(EventCollector(db))
    out.register(_DaemonProcess(db))
    return out
