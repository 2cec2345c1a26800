"""A season as its readers see it: each event's state, field, leaders or final places and who
moves up or down (`season status`, the season's web page), and its events as TCEC's viewer
lists them in `gamelist.json`.  Read from the season's store and its events' databases; the
season's rules are `core/season.py`, its file `config/season.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from orchestrator.config.season import Season, event_title, slug
from orchestrator.core.event.model import Rules
from orchestrator.core.season import SeasonEvent
from orchestrator.event.read import final_places, load_view
from orchestrator.event.tcec_files import ArchiveEvent, ArchiveMenu, archive_flags
from orchestrator.store.database import Store, StoreError
from orchestrator.store.season import EventRow, SeasonStore

__all__ = [
    "EventStatus",
    "SeasonStatus",
    "archive_menu",
    "begun",
    "event_database",
    "season_status",
    "season_store",
]


def season_store(season: Season) -> SeasonStore:
    """The season's own store, `season.sqlite` in its folder (made if missing)."""
    return SeasonStore(season.folder / "season.sqlite")


def event_database(season: Season, name: str) -> Path:
    """Where the games of the season's event `name` are stored.

    >>> season = Season(Path("s20.toml"), "TCEC Season 20", Path("s20"), {}, ())
    >>> event_database(season, "League 2").as_posix()
    's20/League_2.sqlite'
    """
    return season.folder / f"{slug(name)}.sqlite"


class EventStatus(msgspec.Struct, frozen=True):
    """One event of a season, as `season status` and the season's page show it."""

    name: str  # as the season file names it ("League 2")
    title: str  # its full name ("TCEC Season 20 - League 2")
    slug: str  # its files' name, and where the season's web view serves its pages
    system: str
    state: Literal["pending", "running", "finished"]
    after: tuple[str, ...]  # the draws that feed it ("top 2 of League 2")
    field: tuple[str, ...]  # once it started; before, a director's field if one was set
    field_by_director: bool
    places: tuple[tuple[str, str], ...]  # final places once over; leaders while it runs
    up: tuple[str, ...]  # its top `promote`, once over
    down: tuple[str, ...]  # its bottom `relegate`, once over
    games_finished: int
    games_total: int | None


class SeasonStatus(msgspec.Struct, frozen=True):
    name: str
    held: str | None  # a director's hold before the next event, with its reason
    events: tuple[EventStatus, ...]


def _system(event: SeasonEvent) -> str:
    return str(event.tournament.get("system", Rules().system))


async def _finished_games(db: Path) -> int:
    """How many games of the event in `db` have a result (none where it cannot be read)."""
    try:
        store = await Store.open(db, readonly=True)
    except StoreError:
        return 0
    try:
        return await store.finished_games()
    finally:
        await store.close()


def _stored(season: Season) -> bool:
    """Whether the season has a store (`season run` made it)."""
    return (season.folder / "season.sqlite").exists()


def begun(season: Season) -> list[str]:
    """The season's events that have begun, in the file's order (none before its first run:
    its store is not made)."""
    if not _stored(season):
        return []
    with season_store(season) as store:
        rows = store.events()
    return [e.name for e in season.events if e.name in rows]


async def season_status(season: Season) -> SeasonStatus:
    """Every event of `season` with its state; an event being played is read from its own
    database (its standings: the leaders), a finished one's places from the season's store.
    A season never run reads as all pending (its store is not made)."""
    rows: dict[str, EventRow] = {}
    held: str | None = None
    given: dict[str, list[str]] = {}
    if _stored(season):
        with season_store(season) as store:
            rows, held, given = store.events(), store.held(), store.fields()
    events = []
    for event in season.events:
        row = rows.get(event.name)
        state: Literal["pending", "running", "finished"] = (
            "pending" if row is None else "finished" if row.state == "finished" else "running"
        )
        places: list[tuple[str, str]] = [] if row is None or row.places is None else row.places
        finished, total = 0, None
        db = event_database(season, event.name)
        if row is not None and row.places is not None:  # over: its places are stored
            finished = total = await _finished_games(db)
        elif row is not None and db.exists():  # being played: read whole, for its leaders
            try:
                view = await load_view(db)
            except StoreError:  # being made: the next reading has it
                view = None
            if view is not None:
                finished = sum(1 for r in view.rounds for g in r.games if g.status == "finished")
                total = view.tournament.games_planned()
                places = final_places(view)
        names = [n for _, n in places]
        over = state == "finished"
        field: list[str] = list(row.field) if row is not None else given.get(event.name, [])
        events.append(
            EventStatus(
                name=event.name,
                title=event_title(season, event.name),
                slug=slug(event.name),
                system=_system(event),
                state=state,
                after=tuple(str(d) for d in event.draws()),
                field=tuple(field),
                field_by_director=row is None and event.name in given,
                places=tuple((p, n) for p, n in places),
                up=tuple(names[: event.promote]) if over else (),
                down=tuple(names[len(names) - event.relegate :]) if over and event.relegate else (),
                games_finished=finished,
                games_total=total,
            )
        )
    return SeasonStatus(name=season.name, held=held, events=tuple(events))


def archive_menu(season: Season, upto: str) -> ArchiveMenu:
    """The season's events as TCEC's viewer lists them in `gamelist.json`: each of its events
    in the file's order up to `upto` (the one being played: the earlier ones are over).

    >>> from orchestrator.core.season import SeasonEvent
    >>> events = (SeasonEvent("League 2", ("A", "B")), SeasonEvent("Cup", ("A", "B"),
    ...           tournament={"system": "knockout"}), SeasonEvent("Superfinal", ("A", "B")))
    >>> season = Season(Path("s20.toml"), "TCEC Season 20", Path("s20"), {}, events)
    >>> menu = archive_menu(season, "Cup")
    >>> menu.season, [(e.menu, e.cup) for e in menu.events]
    ('20', [('League 2', 0), ('Cup', 6)])
    """
    listed = []
    for event in season.events:
        options = event.tournament.get("system_options", {})
        cup, frc = archive_flags(
            _system(event),
            options if isinstance(options, dict) else {},
            str(event.tournament.get("variant", "standard")),
        )
        listed.append(ArchiveEvent(event_title(season, event.name), event.name, cup, frc))
        if event.name == upto:
            break
    return ArchiveMenu(ArchiveMenu.key(season.name), tuple(listed))
