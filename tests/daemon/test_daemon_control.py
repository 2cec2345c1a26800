"""The daemon's controls: one daemon per database, resume checks, signals, systemd, logs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.daemon import event_config, finished_count, run_daemon
from tests.support.processes import engines_alive, free_port, wait_for


def start(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config), *args],
        cwd=config.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def running_games(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM games WHERE status='running'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_second_daemon_on_the_same_database_exits_2(tmp_path: Path) -> None:
    config = event_config(tmp_path, delay_ms=300, rounds=3)  # still playing at the end
    first = start(config)
    try:
        wait_for(lambda: running_games(tmp_path / "event.sqlite") > 0)
        second = run_daemon(config)
        assert second.returncode == 2
        assert "another daemon" in second.stderr and "Traceback" not in second.stderr
        assert f"(pid {first.pid})" in second.stderr
        # the lock is on the file, not its name: a symlink or a hard link finds it taken
        (tmp_path / "symlink.sqlite").symlink_to(tmp_path / "event.sqlite")
        (tmp_path / "hardlink.sqlite").hardlink_to(tmp_path / "event.sqlite")
        for name in ("symlink.sqlite", "hardlink.sqlite"):
            other = tmp_path / f"{name}.toml"
            text = config.read_text().replace('database = "event.sqlite"', f'database = "{name}"')
            other.write_text(text)
            third = run_daemon(other)
            assert third.returncode == 2, third.stderr
            assert f"another daemon (pid {first.pid}) runs this database" in third.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)


def test_sigterm_aborts_running_games_and_resume_replays_them(tmp_path: Path) -> None:
    config = event_config(tmp_path, delay_ms=30, rounds=2)
    db = tmp_path / "event.sqlite"
    proc = start(config)
    wait_for(lambda: running_games(db) > 0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert time.monotonic() - sent < 5
    names = [e["event"] for e in events(out)]
    assert "shutdown_requested" in names and "game_aborted" in names
    with sqlite3.connect(db) as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM attempts WHERE status='aborted'").fetchone()[0] >= 1
        )
        assert conn.execute("SELECT COUNT(*) FROM games WHERE status='running'").fetchone()[0] == 0
    assert not engines_alive(str(tmp_path))
    resumed = run_daemon(config)
    assert resumed.returncode == 0, resumed.stderr
    assert "tournament_resumed" in [e["event"] for e in events(resumed.stdout)]
    assert finished_count(db) == 20


def test_drain_lets_running_games_finish(tmp_path: Path) -> None:
    config = event_config(tmp_path, delay_ms=30, rounds=2)
    db = tmp_path / "event.sqlite"
    proc = start(config, "--drain")
    wait_for(lambda: running_games(db) > 0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    names = [e["event"] for e in events(out)]
    assert "game_aborted" not in names and "game_finished" in names
    with sqlite3.connect(db) as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM attempts WHERE status='aborted'").fetchone()[0] == 0
        )


def test_changed_config_is_refused_unless_forced(tmp_path: Path) -> None:
    config = event_config(tmp_path, rounds=1)
    assert run_daemon(config).returncode == 0
    text = config.read_text()
    config.write_text(text.replace('tc = "60+1"', 'tc = "30+1"'))
    out = run_daemon(config)
    assert out.returncode == 2 and "tc differ from the stored event" in out.stderr
    out = run_daemon(config, "--force")
    assert out.returncode == 0, out.stderr
    config.write_text(text.replace('format = "double"', 'format = "single"'))
    out = run_daemon(config, "--force")
    assert out.returncode == 2 and "other format" in out.stderr
    forced = text.replace('tc = "60+1"', 'tc = "30+1"')
    config.write_text(forced.replace("concurrency = 2", "concurrency = 1"))
    assert run_daemon(config).returncode == 0  # free to change


def test_systemd_notify_and_log_events(tmp_path: Path) -> None:
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(0.2)
    messages: list[str] = []
    done = threading.Event()

    def listen() -> None:  # like systemd: read while the daemon runs
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                messages.append(sock.recv(100).decode())

    listener = threading.Thread(target=listen)
    listener.start()
    config = event_config(tmp_path, rounds=1)
    try:
        proc = start(config, env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "200000"})
        out, err = proc.communicate(timeout=120)
    finally:
        done.set()
        listener.join()
        sock.close()
    assert proc.returncode == 0, err
    assert "READY=1" in messages and "WATCHDOG=1" in messages
    logged = events(out)
    names = [e["event"] for e in logged]
    for name in (
        "tournament_started",
        "round_paired",
        "game_started",
        "game_finished",
        "round_finished",
        "tournament_finished",
    ):
        assert name in names
    finished = next(e for e in logged if e["event"] == "game_finished")
    for key in (
        "timestamp",
        "level",
        "tournament",
        "round",
        "game_id",
        "white",
        "black",
        "result",
        "termination",
        "plies",
    ):
        assert key in finished
    assert str(finished["timestamp"]).endswith("Z")


def test_openings_are_seeded_and_shared_by_both_games_of_a_pair(tmp_path: Path) -> None:
    (tmp_path / "book.pgn").write_text(
        "".join(
            f'[Event "o{i}"]\n\n1. {move} *\n\n'
            for i, move in enumerate(
                ["e4 e5", "d4 d5", "c4 c5", "Nf3 Nf6", "e4 c5", "d4 Nf6", "g3 g6"]
            )
        )
    )
    config = event_config(tmp_path, rounds=2, extra='openings = "book.pgn"\nrandom_seed = 7')
    assert run_daemon(config).returncode == 0
    with sqlite3.connect(tmp_path / "event.sqlite") as conn:
        rows = conn.execute("SELECT pair, white, black, opening FROM games ORDER BY id").fetchall()
    by_pair: dict[int, set[str]] = {}
    for pair, _, _, opening in rows:
        by_pair.setdefault(pair, set()).add(opening)
    assert len(by_pair) == 10 and all(len(o) == 1 for o in by_pair.values())
    names = [json.loads(next(iter(o)))["name"] for _, o in sorted(by_pair.items())]
    assert sorted(names[:7]) == [f"o{i}" for i in range(7)]  # every opening once per cycle
    archive = (tmp_path / "pgn" / "Daemon_Test" / "Daemon_Test.pgn").read_text()
    assert archive.count("{ book }") == 2 * 2 * 10  # two book plies in each of 20 games
    other = tmp_path / "again"
    other.mkdir()
    (other / "book.pgn").write_text((tmp_path / "book.pgn").read_text())
    config = event_config(other, rounds=2, extra='openings = "book.pgn"\nrandom_seed = 7')
    assert run_daemon(config).returncode == 0
    with sqlite3.connect(other / "event.sqlite") as conn:
        again = conn.execute("SELECT pair, white, black, opening FROM games ORDER BY id").fetchall()
    assert again == rows  # the same seed, the same openings


def test_notify_never_blocks_on_a_full_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.daemon.system import notify

    address = str(tmp_path / "full.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    try:
        started = time.monotonic()
        for _ in range(20_000):  # far more than the socket buffers: nobody reads
            notify("WATCHDOG=1")
        assert time.monotonic() - started < 10
    finally:
        sock.close()


@pytest.mark.parametrize("moment", ["starting", "checking", "playing", "hangup"])
def test_a_stop_signal_at_any_moment_exits_0(tmp_path: Path, moment: str) -> None:
    """SIGTERM while the program starts or the config is checked (an engine slow to start),
    SIGINT twice during the shutdown, or SIGHUP (a closed terminal) while games run."""
    config = event_config(tmp_path, rounds=2, delay_ms=50)
    if moment == "checking":
        text = config.read_text().replace('"--by-opponent"', '"--by-opponent", "--slow-start", "3"')
        config.write_text(text)
    daemon = start(config)
    if moment == "starting":
        time.sleep(0.2)
        daemon.send_signal(signal.SIGTERM)
    elif moment == "checking":
        time.sleep(1.5)
        daemon.send_signal(signal.SIGTERM)
    elif moment == "hangup":
        wait_for(lambda: running_games(tmp_path / "event.sqlite") > 0)
        daemon.send_signal(signal.SIGHUP)
    else:
        wait_for(lambda: running_games(tmp_path / "event.sqlite") > 0)
        daemon.send_signal(signal.SIGINT)
        time.sleep(0.05)
        daemon.send_signal(signal.SIGINT)
    out, err = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, err
    assert "Traceback" not in err
    if moment in ("hangup", "playing"):  # a clean shutdown: nothing left running
        assert '"shutdown_requested"' in out
        assert running_games(tmp_path / "event.sqlite") == 0
    if moment == "checking":
        assert not (tmp_path / "event.sqlite").exists()  # stopped before the database


def test_an_empty_file_is_not_made_a_new_event(tmp_path: Path) -> None:
    config = event_config(tmp_path, players=["E01", "E02"], rounds=1)
    (tmp_path / "event.sqlite").write_bytes(b"")
    out = run_daemon(config)
    assert out.returncode == 2
    assert out.stderr == (
        f"orchestrator: error: {tmp_path / 'event.sqlite'}: the file is empty, "
        "not an orchestrator database (remove it to start a new event there)\n"
    )
    assert (tmp_path / "event.sqlite").stat().st_size == 0


def sleepers() -> set[int]:
    """Processes running `sleep 300` (what the scripted engine's escapees run)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "cmdline").read_bytes() == b"sleep\x00300\x00":
                    found.add(int(entry.name))
    return found


def test_processes_that_escape_an_engine_are_ended(tmp_path: Path) -> None:
    """An engine whose child calls setsid leaves its process group; the daemon, their
    subreaper, ends them after every game."""
    before = sleepers()
    config = event_config(tmp_path, players=["E01", "E02", "E03", "E04"], rounds=2)
    text = config.read_text().replace('"--name", "E01"', '"--name", "E01", "--spawn-escapee"')
    config.write_text(text)
    out = run_daemon(config)
    assert out.returncode == 0, out.stderr
    assert '"orphans_killed"' in out.stdout
    wait_for(lambda: not sleepers() - before, timeout=10)


ADOPTING = """
import os, subprocess, sys, time
from orchestrator.daemon.system import become_subreaper
from orchestrator.engines.procfs import children, processes
assert become_subreaper()
zombie = subprocess.Popen(["true"])
parent = subprocess.Popen(["sh", "-c", "setsid sleep 300 & echo $!"], stdout=subprocess.PIPE)
orphan = int(parent.stdout.readline())
parent.wait()
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    mine = {p.pid: p.state for p in children()}
    if orphan in mine and mine.get(zombie.pid) == "Z":
        break
    time.sleep(0.05)
scanned = {p.pid: p.state for p in processes() if p.parent == os.getpid()}
os.kill(orphan, 9)
print(sorted(mine) == sorted(scanned), orphan in mine, mine.get(zombie.pid))
"""


def test_the_daemons_children_are_read_from_its_own_lists() -> None:
    """`children()`, which the orphan sweep reads every few seconds, finds what a scan of
    every process finds: an orphan the subreaper adopted and a zombie of its own."""
    out = subprocess.run(
        [sys.executable, "-c", ADOPTING], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "Z"]


def run_script(script: str, config: Path) -> subprocess.CompletedProcess[str]:
    """`script` (which runs the daemon on its first argument) on `config`."""
    return subprocess.run(
        [sys.executable, "-c", script, str(config)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=config.parent,
    )


FLAKY_MACHINE = """
import errno, sys
from orchestrator.engines import adapter
real, calls = adapter.Engine.start.__func__, []

async def start(cls, config, journal=None):  # the first starts after the config check fail
    calls.append(config.name)
    if 5 <= len(calls) < 7:
        raise adapter.DaemonFault(f"cannot start {config.name}: Too many open files")
    return await real(cls, config, journal)

adapter.Engine.start = classmethod(start)

from orchestrator.cli import main
sys.argv = ["orchestrator", "run", sys.argv[1]]
main()
"""


def test_a_fault_of_the_daemon_s_own_is_never_an_engine_s(tmp_path: Path) -> None:
    """No descriptors left when a game starts: the attempt is aborted and played again a
    little later; no engine loses a game for it."""
    config = event_config(tmp_path, players=["E01", "E02", "E03", "E04"], rounds=2)
    out = run_script(FLAKY_MACHINE, config)
    assert out.returncode == 0, out.stderr
    faults = [e for e in events(out.stdout) if e["event"] == "daemon_fault"]
    assert faults and "Too many open files" in str(faults[0]["error"])
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games WHERE fault IS NOT NULL").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM games WHERE status != 'finished'").fetchone() == (
            0,
        )
        assert db.execute("SELECT COUNT(*) FROM attempts WHERE status = 'aborted'").fetchone()[0]


IDLE_FLOOD = """
import select, socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
held = []
for i in range(count):  # idle: connected, and never a byte sent
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    held.append(s)
    if i % 50 == 49:
        time.sleep(0.05)  # within the listening queue: the server holds them all
# every handshake concluded (the kernel drops a SYN over a full listening queue, and the
# client sends it again later): then the server has at most its queue's worth left to accept,
# however little CPU it gets beside other processes
poll = select.poll()
for s in held:
    poll.register(s, select.POLLOUT)
pending = {s.fileno() for s in held}
deadline = time.monotonic() + 120
while pending and time.monotonic() < deadline:
    for fd, _ in poll.poll(1000):
        pending.discard(fd)
        poll.unregister(fd)
print("holding" if not pending else f"{len(pending)} never connected", flush=True)
time.sleep(3600)
"""


def healthy(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return s.recv(64).startswith(b"HTTP/1.1 200")
    return False


def test_1100_idle_connections_under_1024_descriptors(tmp_path: Path) -> None:
    """A crowd of idle sockets on `run --http`, under the usual limit of 1024 descriptors, all
    the time an event plays: no engine is blamed, the event finishes, the view still answers,
    and the server's log stays short."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    config = event_config(tmp_path, players=["E01", "E02", "E03", "E04"], rounds=2, delay_ms=300)
    port = free_port()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config), "--http", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,  # noqa: PLW1509 (this test starts no thread)
    )
    floods: list[subprocess.Popen[str]] = []
    try:
        wait_for(lambda: healthy(port))
        for _ in range(2):  # 550 sockets each, within this machine's own limits
            flood = subprocess.Popen(
                [sys.executable, "-c", IDLE_FLOOD, str(port), "550"],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert flood.stdout is not None and flood.stdout.readline() == "holding\n"
            floods.append(flood)
        assert daemon.poll() is None and finished_count(tmp_path / "event.sqlite") < 8
        # a reader still gets in, long before idle connections time out (web.server.IDLE_S)
        wait_for(lambda: healthy(port), timeout=10)
        out, err = daemon.communicate(timeout=300)
    finally:
        for flood in floods:
            flood.kill()
            flood.wait()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) < 200, f"{len(lines)} log lines"
    assert "Too many open files" not in out + err
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games WHERE fault IS NOT NULL").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone() == (8,)


MEASURED_DAEMON = """
import atexit, sys
from pathlib import Path

def peak() -> None:
    status = Path("/proc/self/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    sys.stderr.write(f"peak_kib={line.split()[1]}\\n")

atexit.register(peak)
from orchestrator.cli import main
sys.argv = ["orchestrator", "run", sys.argv[1]]
main()
"""


def test_a_20_mb_line_costs_the_daemon_little(tmp_path: Path) -> None:
    """An engine that writes 20 MB without a newline, in every game it plays: each is lost by
    a `garbage` fault, the daemon's peak memory stays under 300 MB and the database under
    10 MB."""
    config = event_config(tmp_path, players=["E01", "E02", "E03", "E04"], rounds=2)
    text = config.read_text().replace(
        '"--name", "E01"', '"--name", "E01", "--flood-at", "2", "--flood-mb", "20"'
    )
    config.write_text(text)
    out = run_script(MEASURED_DAEMON, config)
    assert out.returncode == 0, out.stderr
    peak_mb = int(out.stderr.rsplit("peak_kib=", 1)[1].split()[0]) / 1024
    assert peak_mb < 300, peak_mb
    database = tmp_path / "event.sqlite"
    size_mb = sum(p.stat().st_size for p in tmp_path.glob("event.sqlite*")) / 2**20
    assert size_mb < 10, size_mb
    with sqlite3.connect(database) as db:
        faults = db.execute(
            "SELECT fault FROM games WHERE white = 'E01' OR black = 'E01'"
        ).fetchall()
    assert len(faults) == 4 and all('"garbage"' in fault for (fault,) in faults), faults
    print(f"daemon peak {peak_mb:.0f} MB, database {size_mb:.2f} MB")


FROZEN_DAEMON = """
import atexit, gc, sys
from orchestrator.daemon.loop import Daemon

played = Daemon.run

async def run(self):
    sys.stderr.write(f"frozen={gc.get_freeze_count()}\\n")
    await played(self)

Daemon.run = run
atexit.register(lambda: sys.stderr.write(f"after={gc.get_freeze_count()}\\n"))
from orchestrator.cli import main
sys.argv = ["orchestrator", "run", sys.argv[1]]
main()
"""


def test_the_heap_loaded_before_the_games_is_frozen_while_they_play(tmp_path: Path) -> None:
    """What the daemon loaded before its first game (modules, numpy, scipy, the config) is
    out of the garbage collector's full collections while the event plays
    (`system.frozen_heap`), and given back when it ends."""
    config = event_config(tmp_path, players=["E01", "E02", "E03", "E04"], rounds=1)
    out = run_script(FROZEN_DAEMON, config)
    assert out.returncode == 0, out.stderr
    assert finished_count(tmp_path / "event.sqlite") == 4
    frozen = int(out.stderr.split("frozen=", 1)[1].split()[0])
    assert frozen > 10_000, frozen  # numpy and scipy alone are more
    assert int(out.stderr.rsplit("after=", 1)[1].split()[0]) == 0
