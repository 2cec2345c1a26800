"""`orchestrator season run`: a season's events played in the order of its file, each as
`run` plays a config: the config `config/season.py` makes for it in memory.

An event starts once the events that feed it have finished: its field is resolved from
their final places (`core/season.py`); a cut inside a tie holds the season until a director
decides it.  Its field and engines are stored in the season's store with the places that
chose it, in one transaction, once its database holds it (`run_event`'s `accepted`): a
refused event changes nothing.  Killed at any moment, the season resumes where it stopped:
a finished event is skipped, a started one is resumed with the field and engines it was
given.  The config written beside each event's database is for people, never read back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from orchestrator.config.model import Config, ConfigError
from orchestrator.config.season import (
    STORE,
    Season,
    check_known,
    event_config,
    event_data,
    event_toml,
)
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.season import Places, SeasonEvent, Undecided, resolve_field
from orchestrator.daemon.outputs import write_atomic
from orchestrator.daemon.run import run_event
from orchestrator.daemon.system import WebProcess
from orchestrator.event.read import final_places, load_view
from orchestrator.event.season import archive_menu, season_store, stored
from orchestrator.store.lock import DatabaseLock
from orchestrator.store.season import SeasonStore

__all__ = ["HELD", "run_season"]

log = structlog.get_logger()

#: `season run`'s exit status when a tie at a cut waits for a director (`season decide`)
HELD = 3


async def run_season(
    season: Season, http: tuple[str, int] | None = None, *, force: bool = False
) -> int:
    """Play `season` to its end (0), or until it is stopped (the exit status of the event
    that was stopped) or held by an undecided tie (`HELD`); with `http`, its web view is
    served there (`season serve`) for as long as it runs; `force` resumes an event whose
    settings changed in ways that only affect games still to play (as `run --force`)."""
    if stored(season):  # another season's folder, or an event renamed: refused, untouched
        season_store(season).close()
    # a bad address fails before anything is made
    site = None if http is None else WebProcess(["season", "serve", str(season.path)], *http)
    lock = DatabaseLock(season.folder / STORE)  # one `season run` at a time
    try:
        lock.acquire()
    except BaseException:
        if site is not None:
            site.socket.close()
        raise
    try:
        store = season_store(season, write=True)
    except BaseException:
        lock.release()
        raise
    try:
        if site is not None:
            site.start()
        return await _play(season, store, force)
    finally:
        if site is not None:
            await asyncio.to_thread(site.stop)
        store.close()
        lock.release()  # after SQLite's own locks are gone (see store/lock.py)


def _field(season: Season, store: SeasonStore, event: SeasonEvent) -> tuple[str, ...] | None:
    """The field of `event`, which has not started: a director's, else its draws' (None: a
    tie at a cut waits for a director), every engine under its name now."""
    rows = store.events()
    feeding = {d.of for d in event.draws()}
    chosen_by = {name: rows[name].places or [] for name in feeding}
    given = store.fields().get(event.name)
    try:
        field = (
            tuple(season.current(n) for n in given)
            if given is not None
            else resolve_field(event, chosen_by, store.decisions(), season.aliases)
        )
    except Undecided as held:
        log.error("season_held", name=event.name, detail=str(held), tied=held.tied)
        return None
    except ValueError as exc:  # a draw with too few engines left to take
        raise ConfigError(f"{season.path}: {exc}") from None
    check_known(season, event, field, may=False)
    return field


async def _play(season: Season, store: SeasonStore, force: bool) -> int:
    """The season's events, each in turn, from where it stopped."""
    for event in season.events:
        rows = store.events()
        row = rows.get(event.name)
        if row is not None and row.state == "finished":
            continue
        if row is None:
            reason = store.held()
            if reason is not None:  # a director's hold, before the next event
                log.error("season_held", name=event.name, detail=f"held: {reason}", tied=[])
                return HELD
            field = _field(season, store, event)
            if field is None:
                return HELD
            engines = {name: season.engines[name] for name in field}
        else:
            field, engines = row.field, row.engines
        config = event_config(season, event, field, engines)
        text = event_toml(season, event_data(season, event, field, engines), event.name)
        feeding = {d.of: rows[d.of].places or [] for d in event.draws()}

        accepted = partial(
            _accepted, store, event.name, field, engines, feeding, config.path, text, row is None
        )
        try:
            code = await run_event(
                config, force, False, None, menu=archive_menu(season, event.name),
                accepted=accepted,
            )  # fmt: skip
        except OrchestratorError as exc:
            raise _named(exc, season, event, config) from None
        structlog.contextvars.clear_contextvars()  # the event's own (its name)
        view = await load_view(season.database(event.name))
        if code != 0 or not view.finished:  # stopped: the season stops with it
            return code
        places = final_places(view)
        store.finish(event.name, places)
        log.info(
            "season_event_finished",
            name=event.name,
            winner=", ".join(n for p, n in places if p == places[0][0]),
        )
    log.info("season_finished", season=season.name, events=len(season.events))
    return 0


def _accepted(
    store: SeasonStore,
    name: str,
    field: tuple[str, ...],
    engines: Mapping[str, Mapping[str, Any]],
    feeding: Mapping[str, Places],
    path: Path,
    text: str,
    new: bool,
) -> None:
    """The event `name` is in its database: a `new` one's field is fixed in the season's
    store (with its engines and the places that chose it), and its config is written
    beside the database, for people."""
    if new:
        store.start(name, field, engines, feeding)
        log.info("season_event_started", name=name, field=list(field))
    write_atomic(path, text)


def _named(
    exc: OrchestratorError, season: Season, event: SeasonEvent, config: Config
) -> OrchestratorError:
    """An event's error as the season's: naming the season file and the event where it
    named the event's config (which exists only in memory)."""
    text = str(exc)
    prefix = f"{config.path}: "
    if not text.startswith(prefix):
        return exc
    named = OrchestratorError(f'{season.path}: [[event]] "{event.name}": {text[len(prefix) :]}')
    named.exit_code = exc.exit_code
    return named
