"""What an `engines.toml` says, as plain data (SPEC.md section 7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.core.adjudication import Adjudication
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.model import Format, Phase, Schedule, System, Team
from orchestrator.core.pairing import default_rounds
from orchestrator.core.seeding import SeedingMethod, by_strength
from orchestrator.core.standings import TCEC_ORDER, Tiebreak
from orchestrator.core.timecontrol import TimeControl

OptionValue = str | int | float | bool


class ConfigError(OrchestratorError, ValueError):
    """A mistake in a config file; the message names the file and the key or engine."""


EXECUTOR_FORMS = '"local", "processes", "dask://HOST:PORT" or "tls://HOST:PORT"'


def dask_address(executor: str) -> str | None:
    """The Dask scheduler address an `executor` setting names; None for "local" and
    "processes" (no scheduler to connect to); ValueError when it is none of the forms.

    >>> dask_address("dask://10.0.0.5:8786"), dask_address("tls://sched.lan:8786")
    ('tcp://10.0.0.5:8786', 'tls://sched.lan:8786')
    >>> dask_address("local") is None, dask_address("processes") is None
    (True, True)
    >>> dask_address("dask://nowhere")
    Traceback (most recent call last):
    ...
    ValueError: must be "local", "processes", "dask://HOST:PORT" or "tls://HOST:PORT"
    """
    if executor in ("local", "processes"):
        return None
    scheme, sep, rest = executor.partition("://")
    host, colon, port = rest.rpartition(":")
    valid = (
        sep
        and scheme in ("dask", "tls")
        and colon
        and host.strip("[]")
        and not any(c.isspace() or c in "/?#@" for c in host)
        and port.isdigit()
        and 0 < int(port) < 65536
    )
    if not valid:
        raise ValueError(f"must be {EXECUTOR_FORMS}")
    return f"{'tcp' if scheme == 'dask' else 'tls'}://{host}:{port}"


@dataclass(frozen=True)
class EngineConfig:
    name: str
    command: tuple[str, ...]
    protocol: str = "uci"  # "uci" | "xboard"
    options: dict[str, OptionValue] = field(default_factory=dict)
    rating: float | None = None
    workdir: Path | None = None
    startup_timeout: float = 10.0  # seconds to start and finish the handshake
    move_grace_ms: int = 1000  # extra wait past the clock before a stalled engine is killed
    reuse: bool = False  # keep the process between this engine's games
    #: worker resources a game host must have to run this engine (Dask executors)
    requires: dict[str, float] = field(default_factory=dict)
    team: str | None = None  # a team Swiss: the engine's team


@dataclass(frozen=True)
class TournamentConfig:
    name: str = "Orchestrator Swiss"
    site: str = "?"
    system: System = "swiss"
    system_options: dict[str, object] = field(default_factory=dict)
    phases: tuple[Phase, ...] = ()  # `system` given as a list of phases
    rounds: int | None = None  # None: players // 2 for a Swiss, the whole table for RR
    cycles: int = 1
    format: Format = "double"
    schedule: Schedule = "legs"
    seeding: SeedingMethod = "explicit"
    groups: int | None = None  # None: players / 7 rounded to an even number (at least 2)
    tc: TimeControl = field(default_factory=lambda: TimeControl.parse("60+0.6"))
    timemargin_ms: int = 100
    concurrency: int = 1
    openings: Path | None = None
    opening_order: str = "random"  # "random" (seeded) | "sequential"
    random_seed: int = 1
    database: Path = Path("tournament.sqlite")
    pgn_dir: Path = Path("pgn_out")
    tiebreaks: tuple[Tiebreak, ...] = TCEC_ORDER
    strikes: int = 0  # crash, stall, illegal-move and startup faults that withdraw an engine
    withdrawn_games: str = "forfeit"  # a withdrawn engine's unplayed games: forfeit | cancel
    live_dir: Path | None = None  # TCEC's live files are written here; None: not at all
    pgn_comments: str = "cutechess"  # the per-move PGN comments: cutechess | tcec
    #: where games run: "local" (in the daemon), "processes" (a local Dask cluster),
    #: "dask://HOST:PORT" or "tls://HOST:PORT" (an existing Dask scheduler)
    executor: str = "local"
    tls_ca_file: Path | None = None  # tls:// executors: the certificates Dask's TLS uses
    tls_cert: Path | None = None
    tls_key: Path | None = None


@dataclass(frozen=True)
class Config:
    path: Path
    tournament: TournamentConfig
    adjudication: Adjudication
    engines: tuple[EngineConfig, ...]

    @property
    def remote(self) -> bool:
        """Whether games run on game hosts of an existing Dask scheduler (engine commands
        then resolve there, not on this machine)."""
        return dask_address(self.tournament.executor) is not None

    def engine(self, name: str) -> EngineConfig:
        for e in self.engines:
            if e.name == name:
                return e
        raise ConfigError(f"{self.path}: no engine named {name!r}")

    def total_rounds(self) -> int:
        """The rounds the event plays: as set, or the system's default for its players."""
        section = self.tournament
        if section.rounds is not None:
            return section.rounds
        if section.phases:
            return sum(phase.rounds for phase in section.phases)
        entrants = len(self.teams()) if section.system == "team-swiss" else len(self.engines)
        return default_rounds(section.system, entrants, section.cycles)

    def teams(self) -> tuple[Team, ...]:
        """A team Swiss's teams, seed 1 first: by team rating (the mean of its engines'
        ratings; teams with an unrated engine after the rated ones, in the order the config
        names them first), each team's engines on boards by rating (unrated last, in config
        order)."""
        names = list(dict.fromkeys(e.team for e in self.engines if e.team is not None))
        members = {name: [e for e in self.engines if e.team == name] for name in names}
        means: list[float | None] = []
        for name in names:
            ratings = [e.rating for e in members[name]]
            rated = [r for r in ratings if r is not None]
            means.append(sum(rated) / len(rated) if len(rated) == len(ratings) else None)
        return tuple(
            Team(
                name,
                tuple(
                    by_strength([e.name for e in members[name]], [e.rating for e in members[name]])
                ),
            )
            for name in by_strength(names, means)
        )

    def groups(self) -> int:
        if self.tournament.groups is not None:
            return self.tournament.groups
        return max(2, 2 * round(len(self.engines) / 14))
