"""A season as its readers see it: each event's state, field, leaders or final places and who
moves up or down (`season status`, the season's web page), and its events as TCEC's viewer
lists them in `gamelist.json`.  Read from the season's store and its events' databases; the
season's rules are `core/season.py`, its file `config/season.py`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import msgspec

from orchestrator.config.model import ConfigError
from orchestrator.config.season import STORE, Season, check_known, check_machine, event_title
from orchestrator.core.event.model import Rules
from orchestrator.core.season import SeasonEvent, Undecided, movers, resolve_field
from orchestrator.event.read import final_places, load_view
from orchestrator.event.tcec_files import ArchiveEvent, ArchiveMenu, archive_flags
from orchestrator.store.database import Store, StoreError
from orchestrator.store.season import EventRow, SeasonStore

__all__ = [
    "EventStatus",
    "SeasonStatus",
    "archive_menu",
    "begun",
    "check_season_machine",
    "season_status",
    "season_store",
    "stored",
]


def stored(season: Season) -> bool:
    """Whether the season has a store yet (a `season run`, `hold` or `field` made it)."""
    return (season.folder / STORE).exists()


def _owner_path(season: Season) -> str:
    """The season file as its store keeps it: a path from the season's folder."""
    return os.path.relpath(season.path.resolve(), season.folder.resolve())


def season_store(season: Season, *, write: bool = False) -> SeasonStore:
    """The season's own store, `season.sqlite` in its folder (made, with the folder, where
    it is missing; only a command that writes should make it: `write`).  A store belongs to
    one season file: another file naming the same folder is refused (a `ConfigError`), and
    so is a store holding an event the file no longer names."""
    path = season.folder / STORE
    if path.exists():
        with SeasonStore(path) as store:
            owner, rows = store.owner(), store.events()
        ours = _owner_path(season)
        if owner is not None and owner != ours:
            raise ConfigError(
                f"{season.path}: its folder {season.folder} holds the season of "
                f"{os.path.normpath(season.folder / owner)}: give this season a folder of its "
                "own ([season] folder)"
            )
        names = {e.name for e in season.events}
        gone = [name for name in rows if name not in names]
        if gone:
            raise ConfigError(
                f'{season.path}: the season\'s store has begun the event "{gone[0]}", which '
                "no [[event]] names now: an event that has begun keeps its name"
            )
    store = SeasonStore(path)
    if write:
        store.own(_owner_path(season))
    return store


def check_season_machine(season: Season) -> None:
    """What every event still to play needs on this machine: its files and folders, and the
    programs of the engines that may play it (its field where it is known, else its named
    engines and those of the events that feed it).  An engine that a finished event feeds
    into it and that no [[engine]] names now (renamed without `formerly`) is named.  A
    `ConfigError` naming the event; nothing is written."""
    rows: dict[str, EventRow] = {}
    decisions: dict[str, list[str]] = {}
    given: dict[str, list[str]] = {}
    if stored(season):
        with season_store(season) as store:
            rows, decisions, given = store.events(), store.decisions(), store.fields()
    may_play: dict[str, list[str]] = {}
    for event in season.events:
        row = rows.get(event.name)
        if row is not None:
            may_play[event.name] = list(row.field)
            if row.state != "finished":
                tables = {name: row.engines[name] for name in row.field}
                check_machine(season, event, row.field, tables)
            continue
        feeding = {d.of for d in event.draws()}
        finished = {n: rows[n].places or [] for n in feeding if n in rows and rows[n].places}
        field: list[str] = [n for of in feeding for n in may_play[of]]
        known = event.name in given or len(finished) == len(feeding)
        if event.name in given:
            field = given[event.name]
        elif known:
            try:
                field = list(resolve_field(event, finished, decisions, season.aliases))
            except Undecided:
                known = False
            except ValueError as exc:
                raise ConfigError(f"{season.path}: {exc}") from None
        names = list(dict.fromkeys([*event.names(), *field]))
        check_known(season, event, names, may=not known)
        pool = list(dict.fromkeys(season.current(n) for n in names))
        may_play[event.name] = pool
        check_machine(season, event, pool)


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
    up: tuple[str, ...]  # its top `promote`, once over (a tie at the cut as decided)
    down: tuple[str, ...]  # its bottom `relegate`, once over
    #: once over: a tie at its promotion or relegation cut that waits for a director
    undecided: str | None
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


def begun(season: Season) -> list[str]:
    """The season's events that have begun, in the file's order (none before its first run:
    its store is not made)."""
    if not stored(season):
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
    decisions: dict[str, list[str]] = {}
    if stored(season):
        with season_store(season) as store:
            rows, held, given = store.events(), store.held(), store.fields()
            decisions = store.decisions()
    events = []
    for event in season.events:
        row = rows.get(event.name)
        state: Literal["pending", "running", "finished"] = (
            "pending" if row is None else "finished" if row.state == "finished" else "running"
        )
        places: list[tuple[str, str]] = [] if row is None or row.places is None else row.places
        finished, total = 0, None
        db = season.database(event.name)
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
        over = state == "finished"
        up: list[str] = []
        down: list[str] = []
        undecided = None
        if over:
            try:
                up, down = movers(event, places, decisions)
            except Undecided as exc:
                undecided = str(exc).partition(": ")[2]
        field: list[str] = list(row.field) if row is not None else given.get(event.name, [])
        events.append(
            EventStatus(
                name=event.name,
                title=event_title(season, event.name),
                slug=season.stem(event.name),
                system=_system(event),
                state=state,
                after=tuple(str(d) for d in event.draws()),
                field=tuple(field),
                field_by_director=row is None and event.name in given,
                places=tuple((p, n) for p, n in places),
                up=tuple(up),
                down=tuple(down),
                undecided=undecided,
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
