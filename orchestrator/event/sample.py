"""A small stored event, so that the examples in the docstrings of `event/` can run: four
players, a double Swiss, round 1 paired and its first game played (1. e4 e5, then White
won on time)."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.config.model import Config, EngineConfig, TournamentConfig
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.record import Cp, GameRecord, MoveRecord
from orchestrator.core.pairing.round import pair_next
from orchestrator.event.read import EventView, load_view
from orchestrator.event.resume import create_or_resume
from orchestrator.event.state import OpeningChoice, new_games, tournament
from orchestrator.store.database import Store


def sample_config(folder: Path) -> Config:
    """The sample event's config: players A, B, C and D, two rounds, a database in `folder`.

    >>> [e.name for e in sample_config(Path("/tmp")).engines]
    ['A', 'B', 'C', 'D']
    """
    engines = tuple(EngineConfig(name=name, command=(f"/usr/games/{name}",)) for name in "ABCD")
    section = TournamentConfig(
        name="Sample", rounds=2, database=folder / "sample.sqlite", pgn_dir=folder / "pgn"
    )
    return Config(folder / "sample.toml", section, Adjudication(), engines)


#: where samples go by default: one temporary folder per process, removed when it exits
_FOLDER = tempfile.TemporaryDirectory(prefix="orchestrator-sample-")


def sample_database(folder: Path | None = None) -> Path:
    """Store the sample event in `folder` (by default a new folder inside a temporary one
    that is removed when the process exits); its path.

    >>> sample_database().name
    'sample.sqlite'
    """
    config = sample_config(folder or Path(tempfile.mkdtemp(dir=_FOLDER.name)))
    asyncio.run(_store(config))
    return config.tournament.database


def sample_view() -> EventView:
    """The sample event as the read commands see it (its games' PGN texts too).

    >>> sample_view().name
    'Sample'
    """
    return asyncio.run(load_view(sample_database(), pgn=True))


async def _store(config: Config) -> None:
    store = await Store.open(config.tournament.database)
    try:
        event = await create_or_resume(config, store)
        pairing = pair_next(tournament(event.settings, event.players))
        games = new_games(pairing, 0, OpeningChoice(()))
        await store.add_round(pairing.round, pairing.bye, pairing.dropped_rounds, games)
        first = (await store.rounds())[0].games[0]
        attempt = await store.start_attempt(first.id)
        moves = (
            MoveRecord("e2e4", "e4", score=Cp(30), depth=12, time_ms=900, clock_ms=9_200),
            MoveRecord("e7e5", "e5", score=Cp(-25), depth=11, time_ms=700, clock_ms=9_400),
        )
        for ply, move in enumerate(moves, start=1):
            await store.add_move(attempt, ply, move)
        when = datetime(2026, 1, 1, tzinfo=UTC)
        record = GameRecord(
            first.white, first.black, "1-0", "time forfeit", "White wins on time", moves,
            when, when, "10+0.1",
        )  # fmt: skip
        await store.finish_game(first.id, attempt, record, '[Result "1-0"]\n\n1. e4 e5 1-0\n')
    finally:
        await store.close()
