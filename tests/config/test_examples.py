"""The configs in `examples/` stay valid: each event's, and the season's, as `check` reads
them (without starting engines: the Debian engines they name must be installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config.load import check_files, load
from orchestrator.config.season import load_season

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.skipif(
    not Path("/usr/games/stockfish").exists(), reason="the examples play Debian's engines"
)


@pytest.mark.parametrize("name", ["gauntlet.toml", "sprt.toml"])
def test_an_example_event_is_valid(name: str) -> None:
    config = load(EXAMPLES / name)
    check_files(config)
    assert len(config.engines) >= 2


def test_the_example_season_is_valid() -> None:
    season = load_season(EXAMPLES / "season.toml")
    assert [e.name for e in season.events] == [
        "League 2", "League 1", "Premier Division", "Superfinal",
    ]  # fmt: skip
    assert season.folder == EXAMPLES / "season"
