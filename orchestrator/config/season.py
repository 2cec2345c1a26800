"""`season.toml`: a season's events in order, sharing one definition of each engine.

```toml
[season]
name = "Season 1"

[[engine]]                    # as in engines.toml, once for the whole season
name = "A"
command = "/usr/games/stockfish"

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

Each event is played as the config this module writes for it (`event_toml`): its own
database and PGN in the season's folder, readable by every command as any event is.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from orchestrator.config.load import _PATHS, check_files, parse
from orchestrator.config.model import Config, ConfigError
from orchestrator.config.write import toml_table, toml_value
from orchestrator.core.codec import SchemaError, convert, json_schema
from orchestrator.core.season import SeasonEvent, check_season, field_size

__all__ = [
    "Season",
    "check_field",
    "event_config",
    "event_title",
    "event_toml",
    "load_season",
    "schema",
    "season_toml",
    "slug",
]


class SeasonSection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`[season]`."""

    name: str = "Season"
    #: where the events' configs, databases and PGN go; default: beside the file, its stem
    folder: str | None = None


class SeasonFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    season: SeasonSection = msgspec.field(default_factory=SeasonSection)
    engine: tuple[dict[str, Any], ...] = ()
    event: tuple[SeasonEvent, ...] = ()


class Season(msgspec.Struct, frozen=True):
    """A loaded season: its file, its folder, its engines' tables by name, its events."""

    path: Path
    name: str
    folder: Path
    engines: dict[str, dict[str, Any]]
    events: tuple[SeasonEvent, ...]

    def event(self, name: str) -> SeasonEvent:
        for e in self.events:
            if e.name == name:
                return e
        raise ConfigError(f"{self.path}: no [[event]] is named {name!r}")


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


def load_season(path: Path) -> Season:
    """Read and check `path`: the file's own consistency (`check_season`), and each event's
    rules and engines as a config of a field of its size; a `ConfigError` naming the file,
    the event and the key."""
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
    engines: dict[str, dict[str, Any]] = {}
    for n, table in enumerate(read.engine, 1):
        name = table.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{path}: [[engine]] #{n}: missing key 'name'")
        if name in engines:
            raise ConfigError(f'{path}: [[engine]] "{name}": duplicate engine name')
        engines[name] = _absolute(dict(table), _PATHS["engine"], path.parent)
    try:
        check_season(read.event, list(engines))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not read.event:
        raise ConfigError(f"{path}: [[event]]: a season needs at least one event")
    folder = path.parent / (read.season.folder or path.stem)
    season = Season(path, read.season.name, folder, engines, read.event)
    for event in season.events:  # each event's rules, for a field of its size
        named = event.names()
        spare = [n for n in engines if n not in named]
        stand_in = (named + spare)[: field_size(event)]
        if len(stand_in) < field_size(event):
            raise ConfigError(
                f'{path}: [[event]] "{event.name}": its field of {field_size(event)} is larger '
                f"than the season's {len(engines)} engines"
            )
        event_config(season, event, tuple(stand_in))
    return season


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
    file's): an event's config is written in the season's folder."""
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


def event_toml(
    season: Season,
    event: SeasonEvent,
    field: tuple[str, ...],
    engines: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The config of `event` played by `field` (in that order: the seeds), in the season's
    folder: its database and PGN named after it; the engines' tables are `engines` (those
    stored when it started) or the season file's.  The same field gives the same text."""
    tables = season.engines if engines is None else engines
    folder = season.path.parent
    tournament = _absolute(dict(event.tournament), _PATHS["tournament"], folder)
    name = slug(event.name)
    tournament |= {
        "name": event_title(season, event.name),  # TCEC's: its PGN archive's name too
        "database": f"{name}.sqlite",
        "pgn_dir": f"{name}-pgn",
    }
    adjudication = _absolute(dict(event.adjudication), _PATHS["adjudication"], folder)
    lines = [
        f"# written by `orchestrator season` from {season.path.name}: the event "
        f"{toml_value(event.name)}, its field fixed when it started",
        *toml_table("[tournament]", tournament),
    ]
    if adjudication:
        lines += ["", *toml_table("[adjudication]", adjudication)]
    for engine in field:
        lines += ["", *toml_table("[[engine]]", tables[engine])]
    return "\n".join(lines) + "\n"


def event_config(season: Season, event: SeasonEvent, field: tuple[str, ...]) -> Config:
    """`event`'s config for `field`, checked as `check` checks one (without starting
    engines); a `ConfigError` naming the season file and the event."""
    path = season.folder / f"{slug(event.name)}.toml"
    try:
        config = parse(tomllib.loads(event_toml(season, event, field)), path)
        check_files(config)
    except ConfigError as exc:
        message = str(exc).removeprefix(f"{path}: ")
        raise ConfigError(f'{season.path}: [[event]] "{event.name}": {message}') from None
    return config


def season_toml(season: Season, fields: dict[str, list[str]]) -> str:
    """The season file again, each event in `fields` with those named engines (its draws
    kept): `season next`'s file."""
    lines = [*toml_table("[season]", {"name": season.name})]
    for table in season.engines.values():
        lines += ["", *toml_table("[[engine]]", table)]
    for event in season.events:
        named = fields.get(event.name, event.names())
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
