"""`check --compliance CMD`: Stockfish passes every step; a broken engine is stopped at
the step it breaks, named, with exit code 1."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys

from orchestrator.engines.compliance import compliance
from tests.support.paths import ROOT, SCRIPTED

STOCKFISH = "/usr/games/stockfish"


def check(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "check", "--compliance", command],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip


def test_stockfish_passes_every_step() -> None:
    assert shutil.which(STOCKFISH), "stockfish is not installed (./tasks.sh installs it)"
    out = check(STOCKFISH)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == f"{STOCKFISH}: passed all 12 steps"
    assert all(line.startswith("ok      ") for line in lines[:-1])


def test_an_illegal_move_fails_its_step_by_name() -> None:
    """The scripted engine answers an illegal move for its own second move of a game: the
    search after `position startpos moves e2e4 e7e5`."""
    out = check(f"{sys.executable} {SCRIPTED} --name S --illegal-at 2")
    assert out.returncode == 1
    failed = out.stdout.splitlines()[-1]
    assert failed.startswith(
        "FAILED  position startpos moves, go wtime winc btime binc: a legal bestmove and a "
        "score: 'a1b1' is not a legal move in "
    ), failed


def test_a_bad_option_line_and_a_silent_engine_are_named() -> None:
    """An engine whose spin option's default is out of its range fails the handshake; one
    that never answers `isready` fails that step after the wait."""
    bad_option = (
        "import sys\n"
        "for line in sys.stdin:\n"
        "    if line.strip() == 'uci':\n"
        "        print('id name B\\nid author A', flush=True)\n"
        "        print('option name Hash type spin default 99 min 1 max 10', flush=True)\n"
        "        print('uciok', flush=True)\n"
    )
    steps = asyncio.run(compliance((sys.executable, "-c", bad_option), wait_s=2))
    assert [s.ok for s in steps] == [True, False]
    assert steps[-1].name == "uci: id name, id author, uciok"
    assert "default 99 outside 1..10" in steps[-1].detail
    silent = bad_option.replace("default 99", "default 9")
    steps = asyncio.run(compliance((sys.executable, "-c", silent), wait_s=1))
    assert (steps[-1].name, steps[-1].ok) == ("isready: readyok", False)
    assert steps[-1].detail.startswith("no readyok within 1s")
