"""A pairing system registered in one place (`tests/support/toy_system.py`) is accepted by
engines.toml, the state JSON, `simulate --system`, the help texts and the JSON Schemas."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config.load import load
from orchestrator.config.model import ConfigError
from orchestrator.core.event import state_json
from orchestrator.core.pairing.registry import names, register, unregister
from orchestrator.core.pairing.round import pair_next
from tests.support.paths import ROOT

WITH_TOY = "import tests.support.toy_system, sys; from orchestrator.cli import main; main()"


def orchestrator(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The command line of a program that registered the toy system before it started."""
    return subprocess.run(
        [sys.executable, "-c", WITH_TOY, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.fixture
def toy() -> Iterator[None]:
    from tests.support.toy_system import TOY

    register(TOY)  # again: a test before may have taken it away
    yield
    unregister("toy")


def test_engines_toml_takes_it_and_its_options(toy: None, tmp_path: Path) -> None:
    engines = "".join(f'[[engine]]\nname = "{n}"\ncommand = "x"\n' for n in "ABCD")
    config = tmp_path / "engines.toml"
    config.write_text(
        '[tournament]\nsystem = "toy"\nsystem_options = { reverse = true }\n' + engines
    )
    assert load(config).tournament.system == "toy"
    config.write_text('[tournament]\nsystem = "toy"\nsystem_options = { seed = 1 }\n' + engines)
    with pytest.raises(ConfigError, match="system_options: toy takes reverse, not 'seed'"):
        load(config)


def test_the_state_json_pairs_by_it(toy: None) -> None:
    data = {
        "system": "toy",
        "system_options": {"reverse": True},
        "players": [{"name": n, "seed": i} for i, n in enumerate("BDCAE", 1)],
    }
    pairing = pair_next(state_json.decode(data))
    assert [(g.white, g.black) for g in pairing.games] == [("E", "D"), ("C", "B")]
    assert pairing.bye == "A"
    assert "toy" in names()


def test_the_command_line_knows_it() -> None:
    out = orchestrator("simulate", "--system", "toy", "--players", "6", "--rounds", "2")
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["system"] == "toy" and len(state["rounds"]) == 2
    assert [(g["white"], g["black"]) for g in state["rounds"][0]["games"]] == [
        ("P1", "P2"), ("P3", "P4"), ("P5", "P6"),
    ]  # fmt: skip
    pair = orchestrator("pair", "-", stdin=json.dumps(state))
    assert pair.returncode == 0 and json.loads(pair.stdout)["round"] == 3, pair.stderr
    assert "toy" in orchestrator("simulate", "--help").stdout
    assert "toy" in orchestrator("schema", "state").stdout
    assert '"toy"' in orchestrator("schema", "config").stdout


def test_without_it_it_is_refused_in_one_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "simulate", "--system", "toy", "--players", "4"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert out.returncode == 2 and "unknown system 'toy'" in out.stderr
    assert out.stderr.count("\n") == 1
