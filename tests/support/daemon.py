"""Running the daemon as a user does (`orchestrator run` in a subprocess), reading what it
stored, and the configs of the tests' events."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import structlog
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.executor.base import Executor
from tests.support.engines import scripted_engines_toml
from tests.support.fake_executor import FakeExecutor

PLAYERS = [f"E{i:02d}" for i in range(1, 11)]


#: a PGN opening book of two openings, with their tags
BOOK = """[Opening "Italian Game"]
[ECO "C50"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 *

[Opening "Queen's Gambit"]
[Variation "Declined"]
[ECO "D30"]

1. d4 d5 2. c4 e6 *
"""


def event_config(
    folder: Path,
    *,
    players: list[str] = PLAYERS,
    rounds: int | None = 5,
    extra: str = "",
    concurrency: int = 2,
    delay_ms: int = 0,
    name: str = "Daemon Test",
    legs: bool = True,
    groups: int = 2,
    adjudication: str = (
        "win = { plies = 10, score = 10.0 }\ndraw = { from_move = 1, plies = 6, score = 0.15 }"
        "\nmax_moves = 20"
    ),
) -> Path:
    engines = scripted_engines_toml(players, folder, delay_ms)
    path = folder / "event.toml"
    path.write_text(
        f"""
[tournament]
name = "{name}"
{"" if rounds is None else f"rounds = {rounds}"}
{'format = "double"' if legs else ""}
{'schedule = "legs"' if legs else ""}
seeding = "group"
groups = {groups}
tc = "60+1"
concurrency = {concurrency}
database = "event.sqlite"
pgn_dir = "pgn"
{extra}

[adjudication]
{adjudication}
{engines}"""
    )
    return path


def run_daemon(config: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=config.parent,
    )


def start_daemon(config: Path) -> subprocess.Popen[str]:
    """`orchestrator run CONFIG` in the background, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=config.parent,
    )


def cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.stdout


def stored_games(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT round, number, white, black, result, termination, plies, pgn FROM games "
            "ORDER BY round, number"
        ).fetchall()


def finished_count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


async def run_in_process(
    config: Path, executor: Executor | None = None
) -> list[MutableMapping[str, Any]]:
    """Run the event of `config` to its end in this process, as `orchestrator run` does (the
    config checked, the database locked, the event created or resumed), with `executor`: by
    default one that plays no engines (`FakeExecutor`).  What it logged."""
    with structlog.testing.capture_logs() as logs:
        await _run(config, executor)
    return logs


async def _run(config: Path, executor: Executor | None) -> None:
    from orchestrator.daemon.loop import Daemon
    from orchestrator.daemon.run import validate
    from orchestrator.event.resume import create_or_resume
    from orchestrator.store.database import Store
    from orchestrator.store.lock import DatabaseLock

    loaded, openings = await validate(config, start_engines=False)
    lock = DatabaseLock(loaded.tournament.database)
    lock.acquire()
    try:
        store = await Store.open(loaded.tournament.database)
        try:
            event = await create_or_resume(loaded, store)
            daemon = Daemon(loaded, event, store, openings, executor=executor or FakeExecutor())
            await daemon.run()
        finally:
            await store.close()
    finally:
        lock.release()
