"""`season.toml`: a season's events in order, sharing one definition of each engine.

```toml
[season]
name = "Season 1"

[[engine]]                    # as in engines.toml, once for the whole season
name = "A"
command = "/usr/games/stockfish"
formerly = ["A 1.0"]          # names it played under in the season's earlier events

[[event]]
name = "League 2"
field = ["A", "B", "C", "D"]
promote = 1                   # its top 1 go up (next season's memberships)
relegate = 1                  # its bottom 1 go down
[event.tournament]            # the [tournament] keys of engines.toml
system = "round-robin"
tc = "10+0.1"

[[event]]
name = "League 1"
field = ["E", "F", { top = 1, of = "League 2" }]
```

Each event is a `Config` made here in memory (`event_config`), from the season file and,
once it has begun, the field and engines its store keeps: its own database and PGN in the
season's folder, named after it (`Season.stem`: a name no other event, the season's store
or the season file shares).  The config written beside them (`event_toml`) is for people,
never read back.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from orchestrator.config.load import _PATHS, check_engine_files, check_files, parse, read_engine
from orchestrator.config.model import MAX_NAME, Config, ConfigError
from orchestrator.config.write import toml_table, toml_value
from orchestrator.core.codec import SchemaError, convert, json_schema
from orchestrator.core.season import SeasonEvent, check_season, field_size

__all__ = [
    "STORE",
    "Season",
    "check_field",
    "check_known",
    "check_machine",
    "event_config",
    "event_data",
    "event_title",
    "event_toml",
    "load_season",
    "schema",
    "season_toml",
    "slug",
]

#: the season's own store in its folder
STORE = "season.sqlite"
#: the longest file name an event's own name may give (its files add a suffix)
MAX_STEM = 100


class SeasonSection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`[season]`."""

    name: str = "Season"
    #: where the events' databases and PGN go; default: beside the file, its stem
    folder: str | None = None


class SeasonFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    season: SeasonSection = msgspec.field(default_factory=SeasonSection)
    engine: tuple[dict[str, Any], ...] = ()
    event: tuple[SeasonEvent, ...] = ()


class Season(msgspec.Struct, frozen=True):
    """A loaded season: its file, its folder, its engines' tables by name, its events, and
    the names its engines had earlier in the season (`aliases`: an old name to the name
    now, from each engine's `formerly`)."""

    path: Path
    name: str
    folder: Path
    engines: dict[str, dict[str, Any]]
    events: tuple[SeasonEvent, ...]
    aliases: dict[str, str] = msgspec.field(default_factory=dict)

    def event(self, name: str) -> SeasonEvent:
        for e in self.events:
            if e.name == name:
                return e
        raise ConfigError(f"{self.path}: no [[event]] is named {name!r}")

    def stem(self, name: str) -> str:
        """The name of the files of the event `name` in the season's folder (its database
        `STEM.sqlite`, its PGN `STEM-pgn/`, its config for people `STEM.toml`).

        >>> Season(Path("s.toml"), "S", Path("s"), {}, ()).stem("League 2")
        'League_2'
        """
        return slug(name)

    def database(self, name: str) -> Path:
        """Where the games of the event `name` are stored.

        >>> Season(Path("s20.toml"), "S", Path("s20"), {}, ()).database("League 2").as_posix()
        's20/League_2.sqlite'
        """
        return self.folder / f"{self.stem(name)}.sqlite"

    def current(self, name: str) -> str:
        """An engine's name now, from any name it had in the season."""
        return self.aliases.get(name, name)


def schema() -> dict[str, Any]:
    """The JSON Schema of `season.toml`, for editors (an event's `tournament` and
    `adjudication` are engines.toml's sections: `orchestrator schema config`).

    >>> sorted(schema()["$defs"]["SeasonEvent"]["properties"])[:3]
    ['adjudication', 'field', 'name']
    """
    return json_schema(SeasonFile)


def slug(name: str) -> str:
    """An event's name as its files are named.

    >>> slug("League 2 (Div. P)")
    'League_2_Div_P'
    """
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "event"


def event_title(season: Season, name: str) -> str:
    """The full name of the season's event `name`, as TCEC names its events (and so its
    whole PGN: `TCEC_Season_20_-_League_2.pgn`).

    >>> season = Season(Path("s20.toml"), "TCEC Season 20", Path("s20"), {}, ())
    >>> event_title(season, "League 2")
    'TCEC Season 20 - League 2'
    """
    return f"{season.name} - {name}"


def _files(stem: str) -> tuple[str, ...]:
    """The names an event whose files are named `stem` takes in the season's folder."""
    database = f"{stem}.sqlite"
    return (f"{stem}.toml", database, f"{database}-wal", f"{database}-shm",
            f"{database}-journal", f"{database}.logs", f"{stem}-pgn")  # fmt: skip


def _check_names(season: Season) -> None:
    """Every event's files have names of their own: no two events' files share a name (nor
    in another letter case), none is the season's store or the season file, none is too
    long; each event's full name fits a PGN archive's name.  A `ConfigError` naming the
    event."""
    owner: dict[str, str] = {}
    store = (STORE, f"{STORE}-wal", f"{STORE}-shm", f"{STORE}-journal")
    for name in store:
        owner[name.casefold()] = f"the season's own store ({STORE})"
    if season.path.parent.resolve() == season.folder.resolve():
        owner[season.path.name.casefold()] = f"the season file ({season.path.name})"
    for event in season.events:
        where = f'{season.path}: [[event]] "{event.name}"'
        title = event_title(season, event.name)
        if len(title) > MAX_NAME:
            raise ConfigError(
                f'{where}: its full name ([season] name, " - ", its name) has '
                f"{len(title)} characters, and an event's name may have {MAX_NAME} at most "
                "(it names its PGN archive)"
            )
        stem = season.stem(event.name)
        if len(stem) > MAX_STEM:
            raise ConfigError(
                f"{where}: its name gives its files a name of {len(stem)} characters "
                f"({MAX_STEM} at most): shorten it"
            )
        for name in _files(stem):
            other = owner.get(name.casefold())
            if other is not None:
                raise ConfigError(
                    f"{where}: its files ({stem}.sqlite, {stem}-pgn) would be named as "
                    f"those of {other}: rename it"
                )
        for name in _files(stem):
            owner[name.casefold()] = f'[[event]] "{event.name}"'


def _engines(
    path: Path, tables: Iterable[dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The season's engines' tables by name (paths absolute), and the names they had
    earlier in the season (`formerly`), each to its engine's name now."""
    engines: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    for n, given in enumerate(tables, 1):
        table = dict(given)
        name = table.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{path}: [[engine]] #{n}: missing key 'name'")
        if name in engines:
            raise ConfigError(f'{path}: [[engine]] "{name}": duplicate engine name')
        formerly = table.pop("formerly", [])
        if not isinstance(formerly, list) or not all(
            isinstance(old, str) and old.strip() for old in formerly
        ):
            raise ConfigError(
                f'{path}: [[engine]] "{name}" formerly: expected a list of the names it had '
                'earlier in the season, such as ["Seer 1.2.1_dev"]'
            )
        for old in formerly:
            if old == name or old in aliases:
                raise ConfigError(
                    f'{path}: [[engine]] "{name}" formerly: "{old}" is '
                    + ("its own name" if old == name else f'"{aliases[old]}"\'s already')
                )
            aliases[old] = name
        engines[name] = _absolute(table, _PATHS["engine"], path.parent)
    for old, name in aliases.items():
        if old in engines:
            raise ConfigError(
                f'{path}: [[engine]] "{name}" formerly: "{old}" is the name of another '
                "[[engine]] now"
            )
    return engines, aliases


def load_season(path: Path) -> Season:
    """Read and check `path`: the file's own consistency (`check_season`), its events'
    files' names, and each event's rules and engines as a config of a field of its size; a
    `ConfigError` naming the file, the event and the key.  Nothing on the machine is looked
    at (`check_machine`): reading a season and a director's controls need no engine's
    program."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        read = convert(data, SeasonFile)
    except SchemaError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    engines, aliases = _engines(path, read.engine)
    try:
        check_season(read.event, list(engines), aliases)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not read.event:
        raise ConfigError(f"{path}: [[event]]: a season needs at least one event")
    folder = path.parent / (read.season.folder or path.stem)
    season = Season(path, read.season.name, folder, engines, read.event, aliases)
    _check_names(season)
    for event in season.events:  # each event's rules, for a field of its size
        event_config(season, event, stand_in(season, event))
    return season


def stand_in(season: Season, event: SeasonEvent, pool: Iterable[str] = ()) -> tuple[str, ...]:
    """A field of `event`'s size to check its rules with: its named engines, then engines
    of `pool`, then the season's others."""
    named = [season.current(n) for n in event.names()]
    others = [n for n in dict.fromkeys([*pool, *season.engines]) if n not in named]
    field = (named + others)[: field_size(event)]
    if len(field) < field_size(event):
        raise ConfigError(
            f'{season.path}: [[event]] "{event.name}": its field of {field_size(event)} is '
            f"larger than the season's {len(season.engines)} engines"
        )
    return tuple(field)


def check_machine(
    season: Season,
    event: SeasonEvent,
    players: Iterable[str],
    engines: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """What `event` needs on this machine (`check_files`: its opening suite, book, folders)
    and the programs of the engines that may still play it (`players`: with `engines`, the
    tables stored when it started, its field); a `ConfigError` naming the season file and
    the event."""
    pool = list(players)
    tables = season.engines if engines is None else engines
    field = tuple(pool) if engines is not None else stand_in(season, event, pool)
    config = event_config(season, event, field, engines)
    try:
        check_files(config, engines=False)
        if not config.remote:
            for name in pool:
                check_engine_files(config.path, read_engine(dict(tables[name]), config.path))
    except ConfigError as exc:
        message = str(exc).removeprefix(f"{config.path}: ")
        raise ConfigError(f'{season.path}: [[event]] "{event.name}": {message}') from None


def check_known(season: Season, event: SeasonEvent, names: Iterable[str], *, may: bool) -> None:
    """Every engine an event's field brings (`may`: may bring) is named by an [[engine]]
    now: one renamed for a new version lists its earlier names in `formerly`; a
    `ConfigError` naming the event and the engine."""
    unknown = [n for n in names if season.current(n) not in season.engines]
    if unknown:
        raise ConfigError(
            f'{season.path}: [[event]] "{event.name}": its field {"may bring" if may else "brings"}'
            f' "{unknown[0]}", whom no [[engine]] names now: an engine renamed for a new version '
            f'lists its earlier names (formerly = ["{unknown[0]}"])'
        )


def check_field(season: Season, event: SeasonEvent, field: tuple[str, ...]) -> None:
    """A field a director gives `event`: engines of the season, each once, as many as its
    rules allow (`event_config`); a `ConfigError` naming the event."""
    unknown = [n for n in field if n not in season.engines]
    if unknown:
        raise ConfigError(
            f'{season.path}: [[event]] "{event.name}": no [[engine]] is named {unknown[0]!r}'
        )
    if len(set(field)) != len(field) or len(field) < 2:
        raise ConfigError(
            f'{season.path}: [[event]] "{event.name}": a field is two engines or more, each once'
        )
    event_config(season, event, field)


def _absolute(table: dict[str, Any], keys: tuple[str, ...], folder: Path) -> dict[str, Any]:
    """`table` with the relative paths of `keys` made absolute against `folder` (the season
    file's): an event's config lives in the season's folder."""
    for key in keys:
        value = table.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            table[key] = str(folder / value)
        elif isinstance(value, list):
            table[key] = [
                str(folder / v) if isinstance(v, str) and not Path(v).is_absolute() else v
                for v in value
            ]
    return table


def event_data(
    season: Season,
    event: SeasonEvent,
    field: tuple[str, ...],
    engines: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The config of `event` played by `field` (in that order: the seeds), as engines.toml
    data: its database and PGN in the season's folder named after it; the engines' tables
    are `engines` (those stored when it started) or the season file's.  The same field
    gives the same data."""
    tables = season.engines if engines is None else engines
    folder = season.path.parent
    tournament = _absolute(dict(event.tournament), _PATHS["tournament"], folder)
    stem = season.stem(event.name)
    tournament |= {
        "name": event_title(season, event.name),  # TCEC's: its PGN archive's name too
        "database": f"{stem}.sqlite",
        "pgn_dir": f"{stem}-pgn",
    }
    data: dict[str, Any] = {"tournament": tournament}
    adjudication = _absolute(dict(event.adjudication), _PATHS["adjudication"], folder)
    if adjudication:
        data["adjudication"] = adjudication
    data["engine"] = [dict(tables[engine]) for engine in field]
    return data


def event_toml(season: Season, data: Mapping[str, Any], event: str) -> str:
    """`event_data` as the TOML written beside the event's database, for people (the
    season never reads it back)."""
    lines = [
        f"# written by `orchestrator season run` from {season.path.name} for the event "
        f"{toml_value(event)}: for people to read, never read back (the season file and "
        "the season's store are what the season plays)",
        *toml_table("[tournament]", data["tournament"]),
    ]
    if "adjudication" in data:
        lines += ["", *toml_table("[adjudication]", data["adjudication"])]
    for engine in data["engine"]:
        lines += ["", *toml_table("[[engine]]", engine)]
    return "\n".join(lines) + "\n"


def event_config(
    season: Season,
    event: SeasonEvent,
    field: tuple[str, ...],
    engines: Mapping[str, Mapping[str, Any]] | None = None,
) -> Config:
    """`event`'s config for `field`, checked as `check` checks one's contents (without
    the machine: `check_machine`); a `ConfigError` naming the season file and the event."""
    path = season.folder / f"{season.stem(event.name)}.toml"
    try:
        return parse(event_data(season, event, field, engines), path)
    except ConfigError as exc:
        message = str(exc).removeprefix(f"{path}: ")
        raise ConfigError(f'{season.path}: [[event]] "{event.name}": {message}') from None


def next_name(name: str) -> str:
    """The next season's name: the number it ends in, one higher (else the same name).

    >>> next_name("TCEC Season 20"), next_name("Summer League")
    ('TCEC Season 21', 'Summer League')
    """
    found = re.search(r"(\d+)(\D*)$", name)
    if found is None:
        return name
    return f"{name[: found.start(1)]}{int(found[1]) + 1}{found[2]}"


def season_toml(season: Season, fields: dict[str, list[str]]) -> str:
    """The next season's file: the season's name one higher (`next_name`), each event in
    `fields` with those named engines (its draws kept), every engine under its name now."""
    lines = [*toml_table("[season]", {"name": next_name(season.name)})]
    for table in season.engines.values():
        lines += ["", *toml_table("[[engine]]", table)]
    for event in season.events:
        named = fields.get(event.name, [season.current(n) for n in event.names()])
        field: list[object] = [*named]
        field += [{k: v for k, v in msgspec.to_builtins(d).items() if v is not None}
                  for d in event.draws()]  # fmt: skip
        lines += ["", *toml_table("[[event]]", {
            "name": event.name,
            "field": field,
            "promote": event.promote or None,
            "relegate": event.relegate or None,
        })]  # fmt: skip
        if event.tournament:
            lines += toml_table("[event.tournament]", event.tournament)
        if event.adjudication:
            lines += toml_table("[event.adjudication]", event.adjudication)
    return "\n".join(lines) + "\n"
