"""Start-up of the command line: the wall time and the modules imported by `orchestrator pair`
on a 44-player state, `orchestrator status` and `orchestrator --help`, beside a bare
`python -c "import chess"` measured in the same run.

    .venv/bin/python bench/cli.py [--repeat N]

Target: `pair` takes at most twice the bare import of python-chess.  Each figure is the
median of N runs (default 21), each a fresh process, as a user starts one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from orchestrator.core.event import state_json
from orchestrator.core.event.model import Player, Rules, Tournament
from orchestrator.core.event.simulation import simulate
from orchestrator.event.sample import sample_database

SCRIPT = str(Path(sys.executable).with_name("orchestrator"))


def wall_ms(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def modules(command: list[str]) -> int:
    """How many modules the command imports (python's own start-up included)."""
    script = command[1:] if command[0] == sys.executable else command
    out = subprocess.run(
        [sys.executable, "-X", "importtime", *script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    return sum(1 for line in out.stderr.splitlines() if line.startswith("import time:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="runs per command")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    players = tuple(Player(f"Engine {i:02d}", i) for i in range(1, 45))
    played = simulate(Tournament(players, rules=Rules(format="double")), 5, rng_seed=1)
    state = folder / "state.json"
    state.write_text(json.dumps(state_json.encode(played.tournament)))
    db = sample_database(folder)
    commands = {
        'python -c "import chess"': [sys.executable, "-c", "import chess"],
        "orchestrator pair (44 players, round 6)": [SCRIPT, "pair", str(state)],
        "orchestrator status": [SCRIPT, "status", "--db", str(db)],
        "orchestrator --help": [SCRIPT, "--help"],
    }
    print(f"| command | wall ms (median of {args.repeat}) | modules imported |")
    print("|---|---:|---:|")
    results = {}
    for label, command in commands.items():
        results[label] = wall_ms(command, args.repeat)
        print(f"| {label} | {results[label]:.0f} | {modules(command)} |")
    bare = results['python -c "import chess"']
    ratio = results["orchestrator pair (44 players, round 6)"] / bare
    print(f"\npair / bare import of chess: {ratio:.2f} (target: at most 2)")


if __name__ == "__main__":
    main()
