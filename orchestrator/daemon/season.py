"""`orchestrator season run`: a season's events played in the order of its file, each as
`run` plays a config (the config `config/season.py` writes for it, in the season's folder).

An event starts once the events that feed it have finished: its field is resolved from
their final places (`core/season.py`) and stored with them, in one transaction, before its
config is written; a cut inside a tie holds the season until a director decides it.  Killed
at any moment, the season resumes where it stopped: a finished event is skipped, a started
one is resumed with the field it was given (its config is written again, the same).
"""

from __future__ import annotations

import asyncio

import structlog

from orchestrator.config.season import Season, event_config, event_toml, slug
from orchestrator.core.season import Undecided, resolve_field
from orchestrator.daemon.run import run_event
from orchestrator.daemon.system import WebProcess
from orchestrator.event.read import final_places, load_view
from orchestrator.event.season import archive_menu, event_database, season_store
from orchestrator.store.lock import DatabaseLock
from orchestrator.store.season import SeasonStore

__all__ = ["HELD", "run_season"]

log = structlog.get_logger()

#: `season run`'s exit status when a tie at a cut waits for a director (`season decide`)
HELD = 3


async def run_season(season: Season, http: tuple[str, int] | None = None) -> int:
    """Play `season` to its end (0), or until it is stopped (the exit status of the event
    that was stopped) or held by an undecided tie (`HELD`); with `http`, its web view is
    served there (`season serve`) for as long as it runs."""
    # a bad address fails before anything is made
    site = None if http is None else WebProcess(["season", "serve", str(season.path)], *http)
    lock = DatabaseLock(season.folder / "season.sqlite")  # one `season run` at a time
    try:
        lock.acquire()
    except BaseException:
        if site is not None:
            site.socket.close()
        raise
    store = season_store(season)
    try:
        if site is not None:
            site.start()
        return await _play(season, store)
    finally:
        if site is not None:
            await asyncio.to_thread(site.stop)
        store.close()
        lock.release()  # after SQLite's own locks are gone (see store/lock.py)


async def _play(season: Season, store: SeasonStore) -> int:
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
            feeding = {d.of for d in event.draws()}
            chosen_by = {name: rows[name].places or [] for name in feeding}
            given = store.fields().get(event.name)
            try:
                field = (
                    tuple(given)
                    if given is not None
                    else resolve_field(event, chosen_by, store.decisions())
                )
            except Undecided as held:
                log.error("season_held", name=event.name, detail=str(held), tied=held.tied)
                return HELD
            event_config(season, event, field)  # its engines and rules, before it is fixed
            store.start(event.name, field, season.engines, chosen_by)
            log.info("season_event_started", name=event.name, field=list(field))
            engines = season.engines
        else:
            field, engines = row.field, row.engines
        path = season.folder / f"{slug(event.name)}.toml"
        path.write_text(event_toml(season, event, field, engines), encoding="utf-8")
        code = await run_event(path, False, False, None, menu=archive_menu(season, event.name))
        structlog.contextvars.clear_contextvars()  # the event's own (its name)
        view = await load_view(event_database(season, event.name))
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
