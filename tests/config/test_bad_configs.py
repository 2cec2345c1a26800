"""The bad-config corpus: each broken engines.toml gives one clear line and exit code 2,
before the database is touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from tests.support.paths import DATA

CORPUS = sorted((DATA / "bad_configs").glob("*.toml"))


def expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), path
    return first.removeprefix("# expect: ")


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("source", CORPUS, ids=[p.stem for p in CORPUS])
@pytest.mark.parametrize("command", ["run", "check"])
def test_bad_config(source: Path, command: str, tmp_path: Path) -> None:
    for companion in (DATA / "bad_configs").glob("*.epd"):
        shutil.copy(companion, tmp_path)
    config = tmp_path / source.name
    shutil.copy(source, config)
    result = CliRunner().invoke(app, [command, str(config)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"orchestrator: error: {config}")
    assert expected(source) in lines[0]
    assert "Traceback" not in result.output
    assert not list(tmp_path.glob("*.sqlite*")), "the database was touched"
