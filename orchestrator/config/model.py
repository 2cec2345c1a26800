"""What an `engines.toml` says (docs/config.md), declared as msgspec schemas.

The `[tournament]` section extends the event's `Rules` (the core's own definition of how it
pairs), the `[adjudication]` section is the core's `Adjudication`, and each `[[engine]]` an
`EngineConfig`.  `config/load.py` reads a file against these declarations; `orchestrator
schema config` publishes them as a JSON Schema.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from orchestrator.core.cpus import cpu_list
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.model import Positive, Rules, Team, clean_name
from orchestrator.core.event.seeding import SeedingMethod, by_strength
from orchestrator.core.event.standings import TCEC_ORDER, Tiebreak
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.openings import Variant
from orchestrator.core.game.variants import variant_name

__all__ = [
    "MAX_GAMES",
    "MAX_NAME",
    "Config",
    "ConfigError",
    "EngineConfig",
    "EngineSettings",
    "Name",
    "OptionValue",
    "TournamentConfig",
    "dask_address",
]

OptionValue = Annotated[
    str | int | float | bool, msgspec.Meta(description="a string, number or boolean")
]

#: the most games an event may plan: a match of `games`, a round robin's cycles, a Swiss's
#: rounds (every reader of the event reads its games; a longer test is several events)
MAX_GAMES = 100_000
#: the longest name: an event's name names its PGN archive, and an engine's its engine logs
MAX_NAME = 200
#: a name people read in PGN tags and file names (made NFC and checked by `clean_name`)
Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1, max_length=MAX_NAME, description=f"a name of 1 to {MAX_NAME} characters"
    ),
]
Seconds = Annotated[float, msgspec.Meta(ge=0.1, le=86400, description="seconds, 0.1 or more")]
Milliseconds = Annotated[int, msgspec.Meta(ge=0, description="an integer >= 0")]


def _clean(section: msgspec.Struct, *keys: str) -> None:
    """Its names made NFC and checked (`clean_name`); a `ValueError` naming the key."""
    for key in keys:
        value = getattr(section, key)
        if value is None:
            continue
        try:
            msgspec.structs.force_setattr(section, key, clean_name(value))
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}") from None


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
    ValueError: expected "local", "processes", "dask://HOST:PORT" or "tls://HOST:PORT", not ...
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
        raise ValueError(f"expected {EXECUTOR_FORMS}, not {executor!r}")
    return f"{'tcp' if scheme == 'dask' else 'tls'}://{host}:{port}"


class EngineSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What an engine's games depend on: stored with the event, compared on resume."""

    command: Annotated[
        tuple[str, ...],
        msgspec.Meta(min_length=1, description="a command line (string or list of strings)"),
    ]
    protocol: Literal["uci", "xboard"] = "uci"
    options: Annotated[
        dict[str, OptionValue], msgspec.Meta(description="a table of engine options")
    ] = msgspec.field(default_factory=dict)
    #: think on the opponent's time; None: as `[tournament]`'s `ponder` says
    ponder: bool | None = None
    #: its own time control and margin (time odds); None: `[tournament]`'s
    tc: TimeControl | None = None
    timemargin_ms: Milliseconds | None = msgspec.field(default=None, name="timemargin")
    #: a cap on each of its searches, with its clock or without one (`tc = "inf"`)
    nodes: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)] | None = None
    depth: Annotated[int, msgspec.Meta(ge=1, le=1000)] | None = None
    #: lines sent once after the handshake and its options, before the first game
    #: (cutechess's `initstr`)
    init: Annotated[
        tuple[str, ...], msgspec.Meta(description="a list of lines for the engine")
    ] = ()
    #: its scores are from White's side, not its own (cutechess's `whitepov`): turned to
    #: the mover's before adjudication, the PGN and the live files
    white_pov: bool = False
    #: a Polyglot book of its own: its moves come from it while the game has fewer than
    #: `book_depth` plies and the book has a move
    book: Path | None = None
    book_depth: Positive = 16

    def _check_init(self) -> None:
        for line in self.init:
            if not line.strip() or any(ord(c) < 32 or ord(c) == 127 for c in line):
                raise ValueError(
                    f"init: {line!r} is not a line: each is text without control characters"
                )

    def own_tc(self, event: TimeControl) -> TimeControl:
        """Its time control in an event of time control `event`: its own, else the event's.

        >>> sf = EngineConfig(name="SF", command=("sf",), tc=TimeControl.parse("30+0.3"))
        >>> str(sf.own_tc(TimeControl.parse("60+0.6")))
        '30+0.3'
        """
        return event if self.tc is None else self.tc


def _check_requires(requires: dict[str, float]) -> None:
    """Worker resources are names (never "game", the slot every game takes) with positive
    amounts."""
    for key, amount in requires.items():
        if not (0 < amount < math.inf) or not key.strip() or key == "game":
            raise ValueError(
                f"requires: resource {key!r} must be a name other than 'game' with a "
                "positive amount"
            )


class EngineConfig(EngineSettings, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One `[[engine]]`."""

    name: Name
    #: orders group seeding and drives `simulate`'s results
    rating: (
        Annotated[float, msgspec.Meta(ge=-1e9, le=1e9, description="a finite number")] | None
    ) = None
    workdir: Path | None = None
    #: seconds to start and finish the handshake, and to be ready at each game's start
    startup_timeout: Seconds = 10.0
    #: how long past its clock a silent engine is waited for before it is killed
    move_grace_ms: Milliseconds = msgspec.field(default=1000, name="move_grace")
    #: keep the process between this engine's games
    reuse: bool = False
    #: worker resources a game host must have to run this engine (Dask executors)
    requires: Annotated[
        dict[str, float],
        msgspec.Meta(description="a table of worker resources, e.g. { gpu = 1 }"),
    ] = msgspec.field(default_factory=dict)
    #: a team Swiss: the engine's team
    team: Name | None = None
    #: how its answers are stamped: "socket", by the kernel as it writes them (exact,
    #: whatever the daemon does); "pipe", when the daemon reads them, for an engine whose
    #: runtime cannot write to a socket (Node.js, which discards output it cannot place)
    stdout: Literal["socket", "pipe"] = "socket"
    #: a file its stderr lines are appended to, each with its game (None: its games' logs
    #: alone keep them)
    stderr: Path | None = None

    def __post_init__(self) -> None:
        _clean(self, "name", "team")
        if not self.command[0]:
            raise ValueError("command: expected a command line (string or list of strings)")
        _check_requires(self.requires)
        self._check_init()

    @property
    def settings(self) -> EngineSettings:
        """What its games depend on, as stored with the event."""
        return EngineSettings(
            command=self.command,
            protocol=self.protocol,
            options=self.options,
            ponder=self.ponder,
            tc=self.tc,
            timemargin_ms=self.timemargin_ms,
            nodes=self.nodes,
            depth=self.depth,
            init=self.init,
            white_pov=self.white_pov,
            book=self.book,
            book_depth=self.book_depth,
        )


class KibitzerConfig(EngineSettings, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One `[[kibitzer]]`: an analysis engine that follows the featured game (TCEC's
    kibitzers: `data.json`, `liveeval.json`)."""

    name: Name
    #: what it runs on, as TCEC's `desc` ("1x2080 Ti 7Men TB"); shown beside its name
    desc: str = ""
    workdir: Path | None = None
    startup_timeout: Seconds = 10.0
    #: worker resources of the machine it should run on; on this machine when empty
    requires: Annotated[
        dict[str, float],
        msgspec.Meta(description="a table of worker resources (name = amount > 0)"),
    ] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        _clean(self, "name")
        if not self.command[0]:
            raise ValueError("command: expected a command line (string or list of strings)")
        if self.ponder is not None:
            raise ValueError("ponder: a kibitzer analyses without a clock; it does not ponder")
        for key in ("tc", "timemargin_ms", "nodes", "depth", "book"):
            if getattr(self, key) is not None:
                shown = key.removesuffix("_ms")
                raise ValueError(
                    f"{shown}: a kibitzer analyses without a clock or a limit; {shown} is a "
                    "player's key"
                )
        _check_requires(self.requires)
        self._check_init()

    def engine(self) -> EngineConfig:
        """The kibitzer as an engine the adapter starts."""
        return EngineConfig(
            name=self.name,
            command=self.command,
            protocol=self.protocol,
            options=self.options,
            workdir=self.workdir,
            startup_timeout=self.startup_timeout,
            init=self.init,
        )


class TournamentConfig(Rules, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The `[tournament]` section: the event's rules, and how it is run."""

    name: Name = "Orchestrator Swiss"
    site: Name = "?"
    seeding: SeedingMethod = "explicit"
    #: group seeding: None is players / 7 rounded to an even number (at least 2)
    groups: Positive | None = None
    tc: TimeControl = msgspec.field(default_factory=lambda: TimeControl.parse("60+0.6"))
    #: ms allowed past the clock before a loss on time
    timemargin_ms: Milliseconds = msgspec.field(default=100, name="timemargin")
    concurrency: Positive = 1
    #: the most games at once `concurrency` may ask for: a documented cap, which a config
    #: raises on purpose (each game is two engine processes, and with `processes` a worker)
    concurrency_cap: Positive = 64
    #: a pause (ms) between one game's end and the next game's start in its place (a slot
    #: of `concurrency`), as cutechess's `-wait`
    wait_ms: Annotated[
        int, msgspec.Meta(ge=0, le=3_600_000, description="an integer from 0 to 3600000 (ms)")
    ] = 0
    #: standard chess, Chess960 ("chess960"), double Chess960 ("dfrc"), or a variant of the
    #: rules by python-chess's names ("atomic", "crazyhouse", "3check", "kingofthehill",
    #: "antichess", "horde", "racingkings", ...; stored by its UCI name)
    variant: Variant = "standard"
    #: engines think on the opponent's time (an engine's own `ponder` overrides it)
    ponder: bool = False
    #: pin each running game's engines to whole cores of their own (Linux; on game hosts,
    #: each host's own cores)
    affinity: bool = False
    #: the CPUs pinned games may use ("0-15"); None: every CPU this process may use
    cpus: str | None = None
    openings: Path | None = None
    opening_order: Literal["random", "sequential"] = "random"
    #: who shares an opening: each game pair its own ("pair"), or every game of a round the
    #: round's ("round")
    opening_policy: Literal["pair", "round"] = "pair"
    #: the suite's line the first pair takes, from 1 (fastchess's `start`)
    opening_start: Positive = 1
    #: a suite's lines are played to at most this many plies (None: whole)
    opening_plies: Annotated[int, msgspec.Meta(ge=0)] | None = None
    #: a Polyglot book (.bin) that continues each pair's opening, `book_depth` plies at most
    book: Path | None = None
    book_depth: Positive = 8
    random_seed: Milliseconds = 1
    database: Path = msgspec.field(default_factory=lambda: Path("tournament.sqlite"))
    pgn_dir: Path = msgspec.field(default_factory=lambda: Path("pgn_out"))
    tiebreaks: tuple[Tiebreak, ...] = TCEC_ORDER
    #: crash, stall, illegal-move and startup faults that withdraw an engine; 0: off
    strikes: Milliseconds = 0
    withdrawn_games: Literal["forfeit", "cancel"] = "forfeit"
    #: TCEC's live files are written here; None: not at all
    live_dir: Path | None = None
    pgn_comments: Literal["cutechess", "tcec"] = "cutechess"
    #: a `ratings` log line (every engine's fitted Elo) every this many finished games; 0: none
    rating_interval: Annotated[int, msgspec.Meta(ge=0)] = 20
    #: the engine whose `rating` anchors the fitted Elo; None: the field's mean is 0
    rating_anchor: str | None = None
    #: where games run: "local" (in the daemon), "processes" (a local Dask cluster),
    #: "dask://HOST:PORT" or "tls://HOST:PORT" (an existing Dask scheduler)
    executor: str = "local"
    tls_ca_file: Path | None = None  # tls:// executors: the certificates Dask's TLS uses
    tls_cert: Path | None = None
    tls_key: Path | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _clean(self, "name", "site")
        try:
            msgspec.structs.force_setattr(self, "variant", variant_name(self.variant))
        except ValueError as exc:
            raise ValueError(f"variant: {exc}") from None
        if self.cpus is not None:
            try:
                cpu_list(self.cpus)
            except ValueError as exc:
                raise ValueError(f"cpus: {exc}") from None
            if not self.affinity:
                raise ValueError("cpus: set affinity = true to pin games to these CPUs")
        if self.cpus is not None and dask_address(self.executor) is not None:
            raise ValueError(
                "cpus: the CPUs of this machine, where no game runs with "
                f"executor = {self.executor!r}: a game host pins its games to the CPUs of "
                "its worker's CPU mask, or of ORCHESTRATOR_GAME_CPUS where the worker starts"
            )
        if self.concurrency > self.concurrency_cap:
            raise ValueError(
                f"concurrency: {self.concurrency} games at once is more than concurrency_cap "
                f"({self.concurrency_cap}); each game runs two engine processes: raise "
                "concurrency_cap to allow it"
            )
        if len(set(self.tiebreaks)) != len(self.tiebreaks):
            raise ValueError("tiebreaks: each tiebreak may be given once")
        try:
            dask_address(self.executor)
        except ValueError as exc:
            raise ValueError(f"executor: {exc}") from None
        tls = {"tls_ca_file": self.tls_ca_file, "tls_cert": self.tls_cert, "tls_key": self.tls_key}
        if self.executor.startswith("tls://"):
            missing = [key for key, value in tls.items() if value is None]
            if missing:
                raise ValueError(
                    f"{missing[0]}: a tls:// executor needs tls_ca_file, tls_cert and tls_key "
                    f"({missing[0]} is not set)"
                )
        elif any(tls.values()):
            raise ValueError("executor: only a tls:// executor uses certificates")


class Config(msgspec.Struct, frozen=True):
    """A whole `engines.toml`, with where it was read from (relative paths are resolved)."""

    path: Path
    tournament: TournamentConfig
    adjudication: Adjudication
    engines: tuple[EngineConfig, ...]
    kibitzers: tuple[KibitzerConfig, ...] = ()

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
        """The rounds the event plays: as set, or the system's default for its entrants."""
        entrants = len(self.teams()) or len(self.engines)
        return self.tournament.planned_rounds(entrants)

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
