"""Create an event from a config, or resume the one a database holds.

A new database gets the config's event: its settings and its seeded players.  A database
with an event is resumed only if the config still describes it: settings that may never
change (`LOCKED`) are refused, and changes that only affect games still to be played need
`force`.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.config.model import Config
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.model import Player
from orchestrator.event.settings import EventSettings
from orchestrator.event.state import seeded_players
from orchestrator.store.database import Store


class SettingsChanged(OrchestratorError):
    """The config no longer describes the stored event."""


@dataclass(frozen=True)
class StartedEvent:
    """The event a daemon runs: its settings, its players, and whether it was resumed."""

    settings: EventSettings
    players: tuple[Player, ...]
    resumed: bool


async def create_or_resume(config: Config, store: Store, *, force: bool = False) -> StartedEvent:
    """Create `config`'s event in `store`, or resume the event stored there (one committed
    transaction either way); `SettingsChanged` when the config does not fit the stored
    event.

    >>> import asyncio, msgspec, tempfile
    >>> from pathlib import Path
    >>> from orchestrator.event.sample import sample_config
    >>> folder = tempfile.TemporaryDirectory()
    >>> config = sample_config(Path(folder.name))
    >>> async def open_twice(second: Config) -> tuple[bool, bool]:
    ...     store = await Store.open(config.tournament.database)
    ...     try:
    ...         first = await create_or_resume(config, store)
    ...         return first.resumed, (await create_or_resume(second, store)).resumed
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(open_twice(config))
    (False, True)
    >>> other = msgspec.structs.replace(config, engines=config.engines[:3])
    >>> try:
    ...     asyncio.run(open_twice(other))
    ... except SettingsChanged as exc:
    ...     print(str(exc).partition(": ")[2])
    the stored event was made with other players; they cannot change (start a new database)
    >>> folder.cleanup()
    """
    players = seeded_players(config)
    settings = EventSettings.of(config, tuple(p.name for p in players))
    stored = await store.event()
    if stored is None:
        await store.create_event(config.tournament.name, settings.to_json(), players)
        return StartedEvent(settings, players, resumed=False)
    locked, forced = EventSettings.from_json(stored.settings).changes(settings)
    if locked:
        raise SettingsChanged(
            f"{config.path}: the stored event was made with other {', '.join(locked)}; "
            "they cannot change (start a new database)"
        )
    if forced and not force:
        raise SettingsChanged(
            f"{config.path}: {', '.join(forced)} differ from the stored event; "
            "resume with --force to accept changes that only affect games still to play"
        )
    if stored.settings != settings.to_json():
        await store.update_settings(settings.to_json())
    return StartedEvent(settings, tuple(await store.players()), resumed=True)
