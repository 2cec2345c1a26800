"""Read and validate `engines.toml` against its declared schema (`config/model.py`): every
mistake becomes one `ConfigError` naming the file and the key or engine.

`load` reads the file and checks its contents; `check_files` looks at the machine (engine
binaries, working directories, the opening suite) and is called before anything is played.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import chess
import msgspec

from orchestrator.config.model import (
    MAX_GAMES,
    Config,
    ConfigError,
    EngineConfig,
    KibitzerConfig,
    TournamentConfig,
    dask_address,
)
from orchestrator.core.codec import Key, SchemaError, convert, json_schema
from orchestrator.core.event.model import Player, Rules, StateError, Tournament
from orchestrator.core.game.adjudication import Adjudication, as_folders
from orchestrator.core.game.book import Book
from orchestrator.core.game.openings import Opening, OpeningError, parse_suite
from orchestrator.core.game.variants import rules_of
from orchestrator.core.pairing.registry import lookup, names
from orchestrator.core.pairing.teams import check_teams

__all__ = [
    "ConfigFile",
    "check_engine_files",
    "check_files",
    "load",
    "parse",
    "read_book",
    "read_engine",
    "read_openings",
    "schema",
]


class ConfigFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An `engines.toml` as written: its three kinds of table."""

    tournament: TournamentConfig = msgspec.field(default_factory=TournamentConfig)
    adjudication: Adjudication = msgspec.field(default_factory=Adjudication)
    engine: tuple[EngineConfig, ...] = ()
    kibitzer: tuple[KibitzerConfig, ...] = ()


#: the keys that name files and folders, resolved against the config file's folder
_PATHS = {
    "tournament": ("openings", "book", "database", "pgn_dir", "live_dir", "tls_ca_file", "tls_cert",
                   "tls_key"),
    "adjudication": ("tablebases",),
    "engine": ("workdir", "stderr", "book"),
    "kibitzer": ("workdir",),
}  # fmt: skip


def load(path: Path) -> Config:
    """Read `path` and validate everything that does not need the machine."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse(data, path)


def parse(data: dict[str, Any], path: Path) -> Config:
    """A config from decoded TOML: checked against the schema, paths resolved against the
    file's folder, then the checks that need the whole file (engines, teams, rounds)."""
    try:
        read = convert(_prepared(data), ConfigFile)
    except SchemaError as exc:
        raise ConfigError(f"{path}: {_where(exc, data)}") from None
    folder = path.parent
    tournament = msgspec.structs.replace(
        read.tournament, **_resolved(read.tournament, _PATHS["tournament"], folder)
    )
    adjudication = msgspec.structs.replace(
        read.adjudication, **_resolved(read.adjudication, _PATHS["adjudication"], folder)
    )
    engines: list[EngineConfig] = []
    for engine in read.engine:
        if any(e.name == engine.name for e in engines):
            raise ConfigError(f'{path}: [[engine]] "{engine.name}": duplicate engine name')
        engines.append(
            msgspec.structs.replace(engine, **_resolved(engine, _PATHS["engine"], folder))
        )
    if len(engines) < 2:
        raise ConfigError(f"{path}: [[engine]]: an event needs at least two engines")
    kibitzers = tuple(
        msgspec.structs.replace(k, **_resolved(k, _PATHS["kibitzer"], folder))
        for k in read.kibitzer
    )
    _check_kibitzers(path, tournament, kibitzers, {e.name for e in engines})
    _check_own_games(path, tournament, data.get("tournament"))
    _check_anchor(path, tournament, engines)
    config = Config(path, tournament, adjudication, tuple(engines), kibitzers)
    _check_event(config)
    return config


def _prepared(data: dict[str, Any]) -> dict[str, Any]:
    """The TOML's own spellings as the schema takes them: `system` given as a list of
    phases, rules turned on or off with true/false, a command line as one string, and an
    empty path as no path."""
    out = dict(data)
    tournament = out.get("tournament")
    if isinstance(tournament, dict):
        tournament = dict(tournament)
        if "phases" in tournament:  # the schema's name for a list given as `system`
            raise SchemaError(("tournament",), "unknown key 'phases'", unknown="phases")
        if isinstance(tournament.get("system"), list):
            tournament["phases"] = tournament.pop("system")
        out["tournament"] = _periods(_no_empty_paths(tournament, _PATHS["tournament"]))
    adjudication = out.get("adjudication")
    if isinstance(adjudication, dict):
        adjudication = dict(adjudication)
        for rule in ("win", "draw", "resign"):
            if adjudication.get(rule) is True:  # the rule with its default figures
                adjudication[rule] = {}
            elif adjudication.get(rule) is False:
                adjudication[rule] = None
        if "tablebases" in adjudication:
            adjudication["tablebases"] = as_folders(adjudication["tablebases"])
        out["adjudication"] = adjudication
    engines = out.get("engine")
    if isinstance(engines, list):
        out["engine"] = [_engine(e) for e in engines]
    kibitzers = out.get("kibitzer")
    if isinstance(kibitzers, list):
        out["kibitzer"] = [_engine(k) for k in kibitzers]
    return out


def _periods(table: dict[str, Any]) -> dict[str, Any]:
    """A `tc` given as a TOML list of periods, as one text ("40/7200, 900+30")."""
    tc = table.get("tc")
    if isinstance(tc, list) and tc and all(isinstance(p, str) for p in tc):
        return table | {"tc": ", ".join(tc)}
    return table


def read_engine(table: dict[str, Any], path: Path) -> EngineConfig:
    """One `[[engine]]` table of the config `path` as the schema reads it (a command line
    as one string split, relative paths against the file's folder); a `ConfigError`
    naming the engine."""
    try:
        engine = convert(_engine(table), EngineConfig)
    except SchemaError as exc:
        raise ConfigError(f'{path}: [[engine]] "{table.get("name")}": {exc}') from None
    return msgspec.structs.replace(engine, **_resolved(engine, _PATHS["engine"], path.parent))


def _engine(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    engine = _periods(_no_empty_paths(dict(raw), _PATHS["engine"]))
    command = engine.get("command")
    if isinstance(command, str):
        with contextlib.suppress(ValueError):  # unbalanced quotes: the schema says what it is
            engine["command"] = shlex.split(command)
    return engine


def _no_empty_paths(table: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in table.items() if not (k in keys and v == "")}


def _resolved(section: Any, keys: tuple[str, ...], folder: Path) -> dict[str, Any]:
    """The relative paths of `keys` (a path, or a list of paths) against `folder`."""
    out: dict[str, Any] = {}
    for key in keys:
        value = getattr(section, key)
        if isinstance(value, Path) and not value.is_absolute():
            out[key] = folder / value
        elif isinstance(value, tuple):
            out[key] = tuple(v if v.is_absolute() else folder / v for v in value)
    return out


def _where(exc: SchemaError, data: dict[str, Any]) -> str:
    """A schema error as the config's author names the place: `[tournament] rounds`,
    `[[engine]] "Toga" options`, `[adjudication] win plies`."""
    path: list[Key] = list(exc.path)
    message = exc.message
    if "..." in path:  # a value of a table of values (options, resources)
        path = path[: path.index("...")]
        message = message.split(", not ")[0].replace("expected", "every value must be", 1)
    if exc.message.startswith("missing key "):
        path.append(exc.message.split("'")[1])
    head = path.pop(0) if path else None
    if head in ("engine", "kibitzer") and path and isinstance(index := path[0], int):
        path.pop(0)
        raw = data.get(head, [])
        name = raw[index].get("name") if isinstance(raw[index], dict) else None
        named = path != ["name"] and not message.startswith("name:")
        shown = (
            f'"{name}"' if named and isinstance(name, str) and name.strip() else (f"#{index + 1}")
        )
        where = f"[[{head}]] {shown}"
    elif head is None:
        where = "top level"
    else:
        where = f"[{head}]"
    if head == "tournament" and path[:1] == ["phases"]:
        path[0] = "system: phases"
    for key in path:
        where += f"[{key}]" if isinstance(key, int) else f" {key}"
    if re.match(r"^[a-z_]+(\[\d+\])?: ", message):  # the message names its key
        return f"{where} {message}"
    return f"{where}: {message}"


#: TCEC's viewer shows two kibitzers (data.json and data1.json)
MAX_KIBITZERS = 2


def _check_kibitzers(
    path: Path,
    tournament: TournamentConfig,
    kibitzers: tuple[KibitzerConfig, ...],
    players: set[str],
) -> None:
    """At most two kibitzers, with names of their own (no player's: TCEC's viewer labels the
    panels by name), writing into `live_dir`; `requires` only with a Dask scheduler to place
    them."""
    if not kibitzers:
        return
    if len(kibitzers) > MAX_KIBITZERS:
        raise ConfigError(
            f"{path}: [[kibitzer]]: at most {MAX_KIBITZERS} kibitzers (TCEC's data.json and "
            f"data1.json), not {len(kibitzers)}"
        )
    if len({k.name for k in kibitzers}) < len(kibitzers):
        raise ConfigError(f'{path}: [[kibitzer]] "{kibitzers[1].name}": duplicate kibitzer name')
    for k in kibitzers:
        if k.name in players:
            raise ConfigError(
                f'{path}: [[kibitzer]] "{k.name}": a kibitzer may not carry a player\'s name '
                "(TCEC's viewer labels the engines' and the kibitzers' panels by name)"
            )
    if tournament.live_dir is None:
        raise ConfigError(
            f'{path}: [[kibitzer]] "{kibitzers[0].name}": kibitzers write TCEC\'s live files: '
            "set live_dir in [tournament]"
        )
    for k in kibitzers:
        if k.requires and dask_address(tournament.executor) is None:
            raise ConfigError(
                f'{path}: [[kibitzer]] "{k.name}" requires: a kibitzer runs on a game host of '
                'its own only with a Dask scheduler (executor = "dask://HOST:PORT" or '
                f'"tls://HOST:PORT"), not "{tournament.executor}"'
            )


def _check_own_games(path: Path, tournament: TournamentConfig, given: object) -> None:
    """A system that gives every game with its colours (a knockout's and a match's game
    pairs) takes no `format` or `schedule`: one given is refused, not silently ignored."""
    system = lookup(tournament.system)
    if not system.own_games or not isinstance(given, dict):
        return
    for key in ("format", "schedule"):
        if key in given:
            raise ConfigError(
                f"{path}: [tournament] {key}: {system.noun} plays its own game pairs, each "
                f"with colours reversed: leave {key} out"
            )


def _check_anchor(path: Path, tournament: TournamentConfig, engines: list[EngineConfig]) -> None:
    """`rating_anchor` names an engine of the event that has a `rating`."""
    name = tournament.rating_anchor
    if name is None:
        return
    engine = next((e for e in engines if e.name == name), None)
    if engine is None:
        raise ConfigError(f'{path}: [tournament] rating_anchor: no engine is named "{name}"')
    if engine.rating is None:
        raise ConfigError(
            f'{path}: [tournament] rating_anchor: engine "{name}" has no rating to anchor to'
        )


def _check_event(config: Config) -> None:
    """What needs the whole file: a team Swiss's teams (as the core checks any team
    Swiss's), and a round robin's number of rounds."""
    path, section = config.path, config.tournament
    team_swiss = lookup(section.system).teams
    for e in config.engines:
        if e.team is not None and not team_swiss:
            raise ConfigError(
                f'{path}: [[engine]] "{e.name}" team: only a team Swiss (system = "team-swiss") '
                "has teams"
            )
    if team_swiss:
        if section.seeding != "explicit":
            raise ConfigError(
                f"{path}: [tournament] seeding: a team Swiss seeds its teams by rating "
                f"(leave seeding out)"
            )
        players = tuple(Player(e.name, i) for i, e in enumerate(config.engines, 1))
        rules = Rules(system=section.system)
        try:
            check_teams(Tournament(players, rules=rules, teams=config.teams()))
        except StateError as exc:
            raise ConfigError(f"{path}: [[engine]] team: {exc}") from None
    entrants = len(config.teams()) or len(config.engines)
    try:
        section.check_field(entrants)
    except StateError as exc:
        raise ConfigError(f"{path}: [tournament] {exc}") from None
    for e in config.engines:
        if e.book is not None and rules_of(section.variant) != "chess":
            raise ConfigError(
                f'{path}: [[engine]] "{e.name}" book: a Polyglot book is for the rules of '
                f"chess, and the event's variant is {section.variant!r}"
            )
        if (
            e.protocol == "xboard"
            and e.nodes is not None
            and e.own_tc(section.tc).kind
            in (
                "clock",
                "movetime",
            )
        ):
            raise ConfigError(
                f'{path}: [[engine]] "{e.name}" nodes: XBoard cannot mix a node cap with a '
                'clock; give this engine tc = "inf" (or a depth cap)'
            )
        if e.own_tc(section.tc).kind == "inf" and e.nodes is None and e.depth is None:
            where = "its" if e.tc is not None else "the event's"
            raise ConfigError(
                f'{path}: [[engine]] "{e.name}": {where} tc = "inf" (no clock) needs a cap on '
                "each search: nodes = N or depth = N"
            )
    if section.book is not None and section.variant != "standard":
        raise ConfigError(
            f"{path}: [tournament] book: a Polyglot book is for standard chess, and the "
            f"event's variant is {section.variant!r}"
        )
    if section.opening_plies is not None and section.openings is None:
        raise ConfigError(
            f"{path}: [tournament] opening_plies: it cuts the lines of `openings`, and there "
            "are none (a book's depth is book_depth)"
        )
    system = lookup(section.system)
    if system.ends_itself and section.rounds is not None:
        raise ConfigError(
            f"{path}: [tournament] rounds: {system.noun} ends when its pairing is done "
            "(its length follows from system_options): leave rounds out"
        )
    most = system.most(len(config.engines), section.cycles, section.system_options)
    if section.rounds is not None and most is not None and section.rounds > most:
        cycles = f" and {section.cycles} cycles" if section.cycles > 1 else ""
        raise ConfigError(
            f"{path}: [tournament] rounds: {system.noun} of {len(config.engines)} "
            f"engines{cycles} has only {most} round{'s' if most != 1 else ''}"
        )
    players = tuple(Player(e.name, i) for i, e in enumerate(config.engines, 1))
    planned = Tournament(players, rules=section, teams=config.teams()).games_planned()
    if planned > MAX_GAMES:
        raise ConfigError(
            f"{path}: [tournament]: the event would play {planned:,} games, and an event plans "
            f"{MAX_GAMES:,} at most (fewer rounds, cycles or games)"
        )


def schema() -> dict[str, Any]:
    """The JSON Schema of `engines.toml`, for editors: the declared schema, with the TOML's
    own spellings (`system` as a list of phases, a rule turned off with `false`, a command
    line as one string) and the names of the registered systems.

    >>> sorted(schema()["$defs"]["TournamentConfig"]["properties"])[:3]
    ['affinity', 'book', 'book_depth']
    """
    out = json_schema(ConfigFile)
    defs = out["$defs"]
    section = defs["TournamentConfig"]["properties"]
    phases = section.pop("phases")
    section["system"] = {
        "anyOf": [{"enum": list(names())}, phases],
        "default": "swiss",
        "description": "the pairing system, or a list of phases",
    }
    for rule in ("win", "draw"):
        defs["Adjudication"]["properties"][rule]["anyOf"] = [
            {"$ref": f"#/$defs/{rule.capitalize()}Rule"},
            {"type": "boolean"},
        ]
    section["database"]["default"] = "tournament.sqlite"
    section["pgn_dir"]["default"] = "pgn_out"
    section["tc"]["default"] = "60+0.6"
    engine = defs["EngineConfig"]["properties"]
    engine["command"] = {"anyOf": [{"type": "string"}, engine["command"]]}
    return out


def resolve_command(engine: EngineConfig) -> str | None:
    """The executable an engine's command runs, or None when there is none."""
    program = engine.command[0]
    base = engine.workdir or Path.cwd()
    if os.sep in program:
        candidate = Path(program) if Path(program).is_absolute() else base / program
        return str(candidate) if os.access(candidate, os.X_OK) and candidate.is_file() else None
    return shutil.which(program)


def check_engine_files(path: Path, engine: EngineConfig) -> None:
    """An engine's program and working folder are on this machine; a `ConfigError` naming
    the config `path` and the engine."""
    where = f'{path}: [[engine]] "{engine.name}"'
    if engine.workdir is not None and not engine.workdir.is_dir():
        raise ConfigError(f"{where} workdir: no such folder {str(engine.workdir)!r}")
    if engine.book is not None:
        open_book(engine.book, engine.book_depth, f"{where} book").close()
    if engine.stderr is not None and (engine.stderr.is_dir() or not engine.stderr.parent.is_dir()):
        wrong = "is a folder" if engine.stderr.is_dir() else "is in no folder that exists"
        raise ConfigError(f"{where} stderr: {str(engine.stderr)!r} {wrong}: name a file")
    if resolve_command(engine) is None:
        raise ConfigError(
            f"{where} command: {engine.command[0]!r} is not an executable program "
            "(is the engine installed?)"
        )


def check_files(config: Config, *, engines: bool = True) -> None:
    """Check what the config names on this machine: binaries (unless `engines` is false),
    folders, the opening suite.  With a Dask scheduler's executor, engine commands resolve
    on the game hosts, not here."""
    for engine in () if config.remote or not engines else config.engines:
        check_engine_files(config.path, engine)
    openings = config.tournament.openings
    if openings is not None and not openings.is_file():
        raise ConfigError(f"{config.path}: [tournament] openings: no such file {str(openings)!r}")
    for key in ("tls_ca_file", "tls_cert", "tls_key"):
        path = getattr(config.tournament, key)
        if path is not None and not path.is_file():
            raise ConfigError(f"{config.path}: [tournament] {key}: no such file {str(path)!r}")
    book = config.tournament.book
    if book is not None and not book.is_file():
        raise ConfigError(f"{config.path}: [tournament] book: no such file {str(book)!r}")
    for tb in config.adjudication.tablebase_folders():
        if not tb.is_dir():
            where = f"{config.path}: [adjudication] tablebases"
            raise ConfigError(f"{where}: no such folder {str(tb)!r}")
    database = config.tournament.database
    if database.is_dir():
        raise ConfigError(f"{config.path}: [tournament] database: {str(database)!r} is a folder")
    _writable(config, "database", database.parent)
    pgn_dir = config.tournament.pgn_dir
    if pgn_dir.exists() and not pgn_dir.is_dir():
        raise ConfigError(f"{config.path}: [tournament] pgn_dir: {str(pgn_dir)!r} is not a folder")
    _writable(config, "pgn_dir", pgn_dir)
    live_dir = config.tournament.live_dir
    if live_dir is not None:
        if live_dir.exists() and not live_dir.is_dir():
            raise ConfigError(
                f"{config.path}: [tournament] live_dir: {str(live_dir)!r} is not a folder"
            )
        _writable(config, "live_dir", live_dir)


def _writable(config: Config, key: str, folder: Path) -> None:
    """A file can be written in `folder`: tried, by making the folder (and the ones above it
    that are missing) and a file in it, then removing what the try made."""
    made: list[Path] = []
    if folder.is_symlink() and not folder.exists():
        raise ConfigError(
            f"{config.path}: [tournament] {key}: {str(folder)!r} is a link to "
            f"{str(folder.readlink())!r}, which does not exist"
        )
    try:
        missing = [p for p in (folder, *folder.parents) if not p.exists()]
        for path in reversed(missing):
            path.mkdir()
            made.append(path)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".orchestrator-check-"):
            pass  # written and removed
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"{config.path}: [tournament] {key}: cannot write in {str(folder)!r}: {reason}"
        ) from None
    finally:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                path.rmdir()


def read_openings(config: Config) -> list[Opening] | None:
    """The config's opening suite (None without one); a `ConfigError` naming the file."""
    path = config.tournament.openings
    if path is None:
        return None
    try:
        suite = parse_suite(path.read_text(encoding="utf-8"), str(path), config.tournament.variant)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{config.path}: [tournament] openings: cannot read {path}: {exc}"
        ) from None
    except OpeningError as exc:
        raise ConfigError(f"{config.path}: [tournament] openings: {exc}") from None
    start = config.tournament.opening_start
    if start > len(suite):
        raise ConfigError(
            f"{config.path}: [tournament] opening_start: {start}, and {path} has "
            f"{len(suite)} line{'s' if len(suite) != 1 else ''}"
        )
    return suite


def open_book(path: Path, depth: int, where: str) -> Book:
    """The Polyglot book at `path`, opened; a `ConfigError` starting with `where` when it
    cannot be read or is not a book (its size is not a positive multiple of 16 bytes)."""
    try:
        size = path.stat().st_size
        if size == 0 or size % 16:
            raise ConfigError(
                f"{where}: {path} is not a Polyglot book (its size, {size} bytes, is not a "
                "positive multiple of 16)"
            )
        return Book(path, depth)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc.strerror}") from None


def read_book(config: Config) -> Book | None:
    """The config's Polyglot book, opened (None without one); a `ConfigError` naming the file
    when it cannot be read or is not a book."""
    path = config.tournament.book
    if path is None:
        return None
    where = f"{config.path}: [tournament] book"
    book = open_book(path, config.tournament.book_depth, where)
    if config.tournament.openings is None and not any(book.reader.find_all(chess.Board())):
        book.close()
        raise ConfigError(f"{where}: {path} has no move for the start position")
    return book
