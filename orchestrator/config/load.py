"""Read and validate `engines.toml`: every mistake becomes one `ConfigError` naming the key.

`load` reads the file and checks its contents; `check_files` looks at the machine (engine
binaries, working directories, the opening suite) and is called before anything is played.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from orchestrator.config.model import (
    EXECUTOR_FORMS,
    Config,
    ConfigError,
    EngineConfig,
    OptionValue,
    TournamentConfig,
    dask_address,
)
from orchestrator.core import state_json
from orchestrator.core.adjudication import Adjudication, DrawRule, WinRule
from orchestrator.core.model import SYSTEMS, Phase, StateError
from orchestrator.core.openings import Opening, OpeningError, parse_suite
from orchestrator.core.pairing import check_options
from orchestrator.core.roundrobin import total_rounds
from orchestrator.core.seeding import SEEDING_METHODS
from orchestrator.core.standings import TIEBREAKS
from orchestrator.core.timecontrol import TimeControl, TimeControlError

T = TypeVar("T")
D = TypeVar("D")


class _Table:
    """One TOML table being read: typed getters that name the key in their errors."""

    def __init__(self, path: Path, where: str, data: Any) -> None:
        self.path, self.where = path, where
        if not isinstance(data, dict):
            self.fail(f"must be a table, not {_show(data)}")
        self.data: dict[str, Any] = data
        self.used: set[str] = set()

    def fail(self, message: str, key: str | None = None) -> None:
        at = f"{self.where} {key}" if key else self.where
        raise ConfigError(f"{self.path}: {at}: {message}")

    def get(self, key: str, default: D, check: Callable[[Any], T | None], want: str) -> T | D:
        self.used.add(key)
        if key not in self.data:
            return default
        value = check(self.data[key])
        if value is None:
            self.fail(f"expected {want}, not {_show(self.data[key])}", key)
        return cast(T, value)

    def text(self, key: str, default: str) -> str:
        return self.get(key, default, lambda v: v if isinstance(v, str) else None, "a string")

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        want = "one of " + ", ".join(f'"{c}"' for c in choices)
        return self.get(key, default, lambda v: v if v in choices else None, want)

    def integer(self, key: str, default: D, minimum: int = 1) -> int | D:
        def check(v: Any) -> int | None:
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= minimum
            return cast(int, v) if ok else None

        return self.get(key, default, check, f"an integer >= {minimum}")

    def number(self, key: str, default: D, minimum: float = 0.0) -> float | D:
        def check(v: Any) -> float | None:
            number = isinstance(v, int | float) and not isinstance(v, bool)
            ok = number and minimum <= v < math.inf  # not infinite, not NaN
            return float(v) if ok else None

        return self.get(key, default, check, f"a finite number >= {minimum:g}")

    def name(self, key: str, default: str) -> str:
        """A name people read in PGN tags and file names: no control characters."""

        def check(v: Any) -> str | None:
            ok = isinstance(v, str) and not any(ord(c) < 32 or ord(c) == 127 for c in v)
            return v if ok else None

        return self.get(key, default, check, "a string without control characters")

    def boolean(self, key: str, default: bool) -> bool:
        return self.get(key, default, lambda v: v if isinstance(v, bool) else None, "true/false")

    def file(self, key: str) -> Path | None:
        value = self.text(key, "")
        return (self.path.parent / value) if value else None

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            self.fail(f"unknown key '{unknown[0]}'")


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, dict) else "a table"


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
    root = _Table(path, "top level", data)
    raw_engines: list[Any] = root.get(
        "engine", [], lambda v: v if isinstance(v, list) else None, "[[engine]] tables"
    )
    tournament = _tournament(
        _Table(path, "[tournament]", root.get("tournament", {}, _dict, "a table"))
    )
    adjudication = _adjudication(
        _Table(path, "[adjudication]", root.get("adjudication", {}, _dict, "a table"))
    )
    root.finish()
    engines: list[EngineConfig] = []
    for i, raw in enumerate(raw_engines):
        engines.append(_engine(path, i, raw, {e.name for e in engines}))
    if len(engines) < 2:
        raise ConfigError(f"{path}: [[engine]]: an event needs at least two engines")
    config = Config(path, tournament, adjudication, tuple(engines))
    if tournament.seeding == "group" and config.groups() < 1:
        raise ConfigError(f"{path}: [tournament] groups: must be at least 1")
    if tournament.system == "round-robin" and tournament.rounds is not None:
        _check_rr_rounds(config)
    _check_teams(config)
    return config


def _check_teams(config: Config) -> None:
    """A team Swiss: every engine in a team, at least two teams of equal size, team names
    that are no engine's; any other system: no teams."""
    path, team_swiss = config.path, config.tournament.system == "team-swiss"
    engines = {e.name for e in config.engines}
    for e in config.engines:
        where = f'{path}: [[engine]] "{e.name}" team'
        if e.team is None and team_swiss:
            raise ConfigError(f"{where}: missing (a team Swiss puts every engine in a team)")
        if e.team is not None and not team_swiss:
            raise ConfigError(f'{where}: only a team Swiss (system = "team-swiss") has teams')
        if e.team is not None and e.team in engines:
            raise ConfigError(f"{where}: {e.team!r} is an engine's name")
    if not team_swiss:
        return
    teams = config.teams()
    if config.tournament.seeding != "explicit":
        raise ConfigError(
            f"{path}: [tournament] seeding: a team Swiss seeds its teams by rating "
            f"(leave seeding out)"
        )
    if len(teams) < 2:
        raise ConfigError(f"{path}: [[engine]] team: a team Swiss needs at least two teams")
    first = teams[0]
    for team in teams:
        if len(team.members) != len(first.members):
            raise ConfigError(
                f"{path}: [[engine]] team: team {team.name!r} has {len(team.members)}, "
                f"{first.name!r} {len(first.members)} engines: every team needs the same number"
            )


def _dict(v: Any) -> dict[str, Any] | None:
    return cast(dict[str, Any], v) if isinstance(v, dict) else None


def _check_rr_rounds(config: Config) -> None:
    most = total_rounds(len(config.engines), config.tournament.cycles)
    if config.total_rounds() > most:
        raise ConfigError(
            f"{config.path}: [tournament] rounds: a round robin of {len(config.engines)} "
            f"engines and {config.tournament.cycles} cycle(s) has only {most} rounds"
        )


def _tournament(table: _Table) -> TournamentConfig:
    d = TournamentConfig()

    def tc(v: Any) -> TimeControl | None:
        if not isinstance(v, str):
            return None
        try:
            return TimeControl.parse(v)
        except TimeControlError as exc:
            table.fail(str(exc), "tc")
            return None

    def executor(v: Any) -> str | None:
        if not isinstance(v, str):
            return None
        try:
            dask_address(v)
        except ValueError:
            return None
        return v

    def tiebreaks(v: Any) -> tuple[Any, ...] | None:
        ok = isinstance(v, list) and all(x in TIEBREAKS for x in v) and len(set(v)) == len(v)
        return tuple(v) if ok else None

    system, options, phases = _system(table)
    out = TournamentConfig(
        name=table.name("name", d.name),
        site=table.name("site", d.site),
        system=system,
        system_options=options,
        phases=phases,
        rounds=table.integer("rounds", d.rounds),
        cycles=table.integer("cycles", d.cycles),
        format=cast(Any, table.choice("format", d.format, ("single", "double"))),
        schedule=cast(Any, table.choice("schedule", d.schedule, ("legs", "pairs"))),
        seeding=cast(Any, table.choice("seeding", d.seeding, SEEDING_METHODS)),
        groups=table.integer("groups", d.groups),
        tc=table.get("tc", d.tc, tc, 'a time control such as "10+0.1"'),
        timemargin_ms=table.integer("timemargin", d.timemargin_ms, minimum=0),
        concurrency=table.integer("concurrency", d.concurrency),
        openings=table.file("openings"),
        opening_order=table.choice("opening_order", d.opening_order, ("random", "sequential")),
        random_seed=table.integer("random_seed", d.random_seed, minimum=0),
        database=table.file("database") or table.path.parent / d.database,
        pgn_dir=table.file("pgn_dir") or table.path.parent / d.pgn_dir,
        tiebreaks=table.get(
            "tiebreaks", d.tiebreaks, tiebreaks, "a list of distinct " + ", ".join(TIEBREAKS)
        ),
        strikes=table.integer("strikes", d.strikes, minimum=0),
        withdrawn_games=table.choice("withdrawn_games", d.withdrawn_games, ("forfeit", "cancel")),
        live_dir=table.file("live_dir"),
        pgn_comments=table.choice("pgn_comments", d.pgn_comments, ("cutechess", "tcec")),
        executor=table.get("executor", d.executor, executor, EXECUTOR_FORMS),
        tls_ca_file=table.file("tls_ca_file"),
        tls_cert=table.file("tls_cert"),
        tls_key=table.file("tls_key"),
    )
    tls = (out.tls_ca_file, out.tls_cert, out.tls_key)
    if out.executor.startswith("tls://") and None in tls:
        missing = ("tls_ca_file", "tls_cert", "tls_key")[tls.index(None)]
        table.fail(
            f"a tls:// executor needs tls_ca_file, tls_cert and tls_key ({missing} is not set)",
            missing,
        )
    if not out.executor.startswith("tls://") and any(tls):
        table.fail("only a tls:// executor uses certificates", "executor")
    if not out.name.strip():
        table.fail("must not be empty", "name")
    table.finish()
    return out


def _system(table: _Table) -> tuple[Any, dict[str, object], tuple[Phase, ...]]:
    """`system` (a name, or a list of phases: { rounds, system, system_options }) and
    `system_options`, checked by the core's rules."""
    table.used.update(("system", "system_options"))
    raw = table.data.get("system", "swiss")
    options = table.data.get("system_options", {})
    if not isinstance(options, dict):
        table.fail(f"expected a table, not {_show(options)}", "system_options")
    if isinstance(raw, list):
        if "system_options" in table.data:
            table.fail("a list of phases gives each phase its own system_options", "system_options")
        try:
            phases = state_json.phases(raw)
        except StateError as exc:
            table.fail(str(exc), "system")
        return phases[0].system, {}, phases
    if raw not in SYSTEMS:
        shown = ", ".join(f'"{name}"' for name in SYSTEMS)
        table.fail(f"expected one of {shown}, not {_show(raw)}", "system")
    try:
        check_options(raw, options)
    except StateError as exc:
        table.fail(str(exc).removeprefix("system_options: "), "system_options")
    return raw, dict(options), ()


def _adjudication(a: _Table) -> Adjudication:
    d = Adjudication()

    def rule(key: str, default: Any, build: Callable[[_Table], Any]) -> Any:
        a.used.add(key)
        value = a.data.get(key, True)
        if value is False:
            return None
        if value is True:
            return default
        return build(_Table(a.path, f"[adjudication] {key}", value))

    def win(table: _Table) -> WinRule:
        w = WinRule(table.integer("plies", WinRule.plies), table.number("score", WinRule.score))
        table.finish()
        return w

    def draw(table: _Table) -> DrawRule:
        r = DrawRule(
            table.integer("from_move", DrawRule.from_move),
            table.integer("plies", DrawRule.plies),
            table.number("score", DrawRule.score),
        )
        table.finish()
        return r

    out = Adjudication(
        win=rule("win", d.win, win),
        draw=rule("draw", d.draw, draw),
        tablebases=a.file("tablebases"),
        tb_pieces=a.integer("tb_pieces", d.tb_pieces, minimum=3),
        max_moves=a.integer("max_moves", d.max_moves, minimum=0),
    )
    a.finish()
    return out


def _engine(path: Path, i: int, raw: Any, taken: set[str]) -> EngineConfig:
    e = _Table(path, f"[[engine]] #{i + 1}", raw)
    name = e.name("name", "")
    if not name.strip():
        e.fail("missing key 'name'" if "name" not in e.data else "must not be empty", "name")
    e.where = f'[[engine]] "{name}"'
    if name in taken:
        e.fail("duplicate engine name")

    def command(v: Any) -> tuple[str, ...] | None:
        if isinstance(v, str):
            try:
                parts = shlex.split(v)
            except ValueError:
                return None
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            parts = list(v)
        else:
            return None
        return tuple(parts) if parts and parts[0] else None

    if "command" not in e.data:
        e.fail("missing key 'command'")

    def options(v: Any) -> dict[str, OptionValue] | None:
        if not isinstance(v, dict):
            return None
        for key, value in v.items():
            if not isinstance(value, str | int | float | bool):
                e.fail(f"option {key!r} must be a string, number or boolean", "options")
        return dict(v)

    def requires(v: Any) -> dict[str, float] | None:
        if not isinstance(v, dict):
            return None
        for key, value in v.items():
            amount = value if isinstance(value, int | float) and not isinstance(value, bool) else -1
            if not (0 < amount < math.inf) or not str(key).strip() or key == "game":
                e.fail(
                    f"resource {key!r} must be a name other than 'game' with a positive amount",
                    "requires",
                )
        return {str(k): float(x) for k, x in v.items()}

    workdir = e.file("workdir")
    out = EngineConfig(
        name=name,
        command=e.get("command", (), command, "a command line (string or list of strings)"),
        protocol=e.choice("protocol", "uci", ("uci", "xboard")),
        options=e.get("options", {}, options, "a table of engine options"),
        rating=e.number("rating", None, minimum=-1e9),
        workdir=workdir,
        startup_timeout=e.number("startup_timeout", EngineConfig.startup_timeout, 0.1),
        move_grace_ms=e.integer("move_grace", EngineConfig.move_grace_ms, minimum=0),
        reuse=e.boolean("reuse", EngineConfig.reuse),
        requires=e.get("requires", {}, requires, "a table of worker resources, e.g. { gpu = 1 }"),
        team=e.name("team", "") or None,
    )
    e.finish()
    return out


def resolve_command(engine: EngineConfig) -> str | None:
    """The executable an engine's command runs, or None when there is none."""
    program = engine.command[0]
    base = engine.workdir or Path.cwd()
    if os.sep in program:
        candidate = Path(program) if Path(program).is_absolute() else base / program
        return str(candidate) if os.access(candidate, os.X_OK) and candidate.is_file() else None
    return shutil.which(program)


def check_files(config: Config) -> None:
    """Check what the config names on this machine: binaries, folders, the opening suite.
    With a Dask scheduler's executor, engine commands resolve on the game hosts, not here."""
    for engine in () if config.remote else config.engines:
        where = f'{config.path}: [[engine]] "{engine.name}"'
        if engine.workdir is not None and not engine.workdir.is_dir():
            raise ConfigError(f"{where} workdir: no such folder {str(engine.workdir)!r}")
        if resolve_command(engine) is None:
            raise ConfigError(
                f"{where} command: {engine.command[0]!r} is not an executable program "
                "(is the engine installed?)"
            )
    openings = config.tournament.openings
    if openings is not None and not openings.is_file():
        raise ConfigError(f"{config.path}: [tournament] openings: no such file {str(openings)!r}")
    for key in ("tls_ca_file", "tls_cert", "tls_key"):
        path = getattr(config.tournament, key)
        if path is not None and not path.is_file():
            raise ConfigError(f"{config.path}: [tournament] {key}: no such file {str(path)!r}")
    tb = config.adjudication.tablebases
    if tb is not None and not tb.is_dir():
        raise ConfigError(f"{config.path}: [adjudication] tablebases: no such folder {str(tb)!r}")
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
    """`folder`, or the nearest folder above it that exists, must be writable by us."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{config.path}: [tournament] {key}: cannot write in {str(existing)!r}")


def read_openings(config: Config) -> list[Opening] | None:
    """The config's opening suite (None without one); a `ConfigError` naming the file."""
    path = config.tournament.openings
    if path is None:
        return None
    try:
        return parse_suite(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{config.path}: [tournament] openings: cannot read {path}: {exc}"
        ) from None
    except OpeningError as exc:
        raise ConfigError(f"{config.path}: [tournament] openings: {exc}") from None
