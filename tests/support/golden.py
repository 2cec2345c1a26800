"""Recorded outputs of `orchestrator pair` and `orchestrator simulate`, kept in the repository
so that a refactor can prove it changed no byte of them.

    .venv/bin/python -m tests.support.golden --write    # record (before a change)
    .venv/bin/python -m tests.support.golden            # compare, as the test does

The cases: `simulate` for every pairing system, both formats and 20 seeds (the team Swiss
starts from a state with teams), `simulate --table` for a few of them, `pair` on the state
before each simulated event's last round and on every prefix of every state in
`tests/data/tcec`, and `simulate --from` each of those states.  Each case keeps its arguments,
its exit code and the SHA-256 of its stdout, with stdout itself (JSON compacted) to show what
differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from orchestrator.cli import app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GOLDEN = DATA / "golden"
SYSTEMS = (
    "swiss",
    "round-robin",
    "olafsson",
    "bakert",
    "koth",
    "factored",
    "quartile",
    "random",
    "team-swiss",
)
SEEDS = range(1, 21)


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    stdin: str = ""


def team_state(teams: int, boards: int) -> dict[str, Any]:
    """A fresh team-Swiss state: teams T1, T2, ... of players T1b1, T1b2, ..."""
    members = [[f"T{t}b{b}" for b in range(1, boards + 1)] for t in range(1, teams + 1)]
    names = [name for team in members for name in team]
    return {
        "system": "team-swiss",
        "format": "single",
        "teams": [{"name": f"T{t}", "players": m} for t, m in enumerate(members, 1)],
        "players": [{"name": n, "seed": i} for i, n in enumerate(names, 1)],
        "rounds": [],
    }


def phase_state(players: int) -> dict[str, Any]:
    return {
        "format": "single",
        "phases": [
            {"rounds": 2, "system": "swiss"},
            {"rounds": 2, "system": "koth", "system_options": {"repeats": 1, "gibson": True}},
            {"rounds": 1, "system": "random", "system_options": {"seed": 5}},
        ],
        "planned_rounds": 6,
        "players": [{"name": f"P{i:02d}", "seed": i} for i in range(1, players + 1)],
        "rounds": [],
    }


def simulate_cases() -> Iterator[Case]:
    for system in SYSTEMS:
        for fmt in ("single", "double"):
            for seed in SEEDS:
                players = 5 + seed % 8
                args = ["simulate", "--system", system, "--format", fmt, "--seed", str(seed)]
                if fmt == "double" and seed % 2:
                    args += ["--schedule", "pairs"]
                if system == "team-swiss":
                    state = team_state(3 + seed % 4, 1 + seed % 4)
                    yield Case((*args, "--from", "-"), json.dumps(state))
                else:
                    yield Case((*args, "--players", str(players)))
    for seed in SEEDS:
        yield Case(("simulate", "--from", "-", "--seed", str(seed)), json.dumps(phase_state(9)))
    for system in SYSTEMS[:-1]:
        yield Case(("simulate", "--system", system, "--players", "11", "--table", "--seed", "3"))
    yield Case(("simulate", "--from", "-", "--table"), json.dumps(team_state(5, 4)))


def tcec_states() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted((DATA / "tcec").glob("*.json")):
        data = json.loads(path.read_text())
        if "players" in data and "rounds" in data:
            yield path.name, data


def run(case: Case) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(case.args), input=case.stdin)
    return result.exit_code, result.stdout


def cases() -> Iterator[Case]:
    """Every case, `pair` cases made from the `simulate` outputs (recorded or current)."""
    for case in simulate_cases():
        yield case
        code, out = run(case)
        if code != 0 or "--table" in case.args:
            continue
        state = json.loads(out)
        for keep in sorted({len(state["rounds"]) // 2, len(state["rounds"]) - 1}):
            prefix = dict(state, rounds=state["rounds"][:keep])
            yield Case(("pair", "-"), json.dumps(prefix))
    for _, data in tcec_states():
        for keep in range(len(data["rounds"]) + 1):
            yield Case(("pair", "-"), json.dumps(dict(data, rounds=data["rounds"][:keep])))
        yield Case(("simulate", "--from", "-", "--seed", "4"), json.dumps(data))


def record(case: Case) -> dict[str, Any]:
    code, out = run(case)
    try:
        shown = json.dumps(json.loads(out), separators=(",", ":"))
    except ValueError:
        shown = out
    return {
        "args": list(case.args),
        "stdin": hashlib.sha256(case.stdin.encode()).hexdigest()[:16],
        "exit": code,
        "sha256": hashlib.sha256(out.encode()).hexdigest(),
        "stdout": shown,
    }


def current() -> list[dict[str, Any]]:
    return [record(case) for case in cases()]


def stored() -> list[dict[str, Any]]:
    out = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def write() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in GOLDEN.glob("*.jsonl"):
        old.unlink()
    records = current()
    by_file: dict[str, list[str]] = {}
    for rec in records:
        name = rec["args"][0] + ("-" + rec["args"][2] if rec["args"][1] == "--system" else "")
        by_file.setdefault(name, []).append(json.dumps(rec, separators=(",", ":")))
    for name, lines in by_file.items():
        (GOLDEN / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the current outputs")
    if parser.parse_args().write:
        print(f"{write()} cases recorded in {GOLDEN}")
        return
    old = {(tuple(r["args"]), r["stdin"]): r for r in stored()}
    new = current()
    wrong = [r for r in new if old.get((tuple(r["args"]), r["stdin"])) != r]
    print(f"{len(new)} cases, {len(wrong)} differ")
    for r in wrong[:5]:
        print(" ", r["args"])
    sys.exit(1 if wrong or len(old) != len(new) else 0)


if __name__ == "__main__":
    main()
