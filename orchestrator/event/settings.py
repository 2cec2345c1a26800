"""What of a config an event is tied to, and which changes a resume may accept.

The settings are the config's own `[tournament]` section (`TournamentConfig`), with the
players as seeded, the teams, the adjudication rules and what each engine's games depend
on.  They are stored with the event as JSON and compared with the config's on resume.
Changing the players or the pairing system would make the stored pairings wrong, so it is
always refused (`LOCKED`); changes that only affect games still to be played (time control,
rounds, adjudication, engine commands and options, openings) need `--force`; where the files
go, where games run and how many run at once may change freely (`FREE`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from orchestrator.config.model import Config, EngineSettings, KibitzerConfig, TournamentConfig
from orchestrator.core.codec import SchemaError, convert, to_builtins
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.model import Options, Phase, Positive, Rules, Team
from orchestrator.core.game.adjudication import Adjudication, as_folders
from orchestrator.core.pairing.registry import lookup

__all__ = ["FREE", "LOCKED", "EventSettings", "pairing_rules"]

#: settings that may never change once the event has started
LOCKED = (
    "players",
    "teams",
    "system",
    "system_options",
    "phases",
    "format",
    "schedule",
    "cycles",
    "variant",
)
#: settings that may change at any resume; every other change needs --force (the seeding
#: and its groups are in the players, which are locked)
FREE = (
    "concurrency",
    "concurrency_cap",
    "wait_ms",
    "database",
    "pgn_dir",
    "site",
    "live_dir",
    "pgn_comments",
    "rating_interval",
    "rating_anchor",
    "executor",
    "tls_ca_file",
    "tls_cert",
    "tls_key",
    "seeding",
    "groups",
    "ratings",
    "kibitzers",
    "affinity",
    "cpus",
)
#: the keys whose empty string meant "none" in the settings of older orchestrators
_EMPTY_IS_NONE = ("openings", "live_dir", "tls_ca_file", "tls_cert", "tls_key")


class EventSettings(TournamentConfig, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """The settings an event was made with, as stored beside it; `rounds` is always set.

    >>> s = EventSettings(name="Test", players=("A", "B"), rounds=1)
    >>> EventSettings.from_json(s.to_json()) == s
    True
    >>> s.games_per_pair, msgspec.structs.replace(s, format="single").games_per_pair
    (2, 1)
    """

    rounds: Positive = 1  # as the config sets them, or its system's default
    players: tuple[str, ...] = ()  # by seed
    teams: tuple[Team, ...] = ()  # a team Swiss's teams, seed 1 first
    adjudication: Adjudication = msgspec.field(default_factory=Adjudication)
    engines: dict[str, EngineSettings] = msgspec.field(default_factory=dict)
    #: the engines' ratings, where the config gives them (WhiteElo and BlackElo, the TCEC
    #: crosstable's Rating); they may change at any resume
    ratings: dict[str, float] = msgspec.field(default_factory=dict)
    #: the analysis engines that follow the featured game (`orchestrator/kibitz/`)
    kibitzers: tuple[KibitzerConfig, ...] = ()

    @classmethod
    def of(cls, config: Config, players: tuple[str, ...]) -> EventSettings:
        """The settings of `config`'s event, its players (names by seed) as seeded.

        >>> from pathlib import Path
        >>> from orchestrator.event.sample import sample_config
        >>> settings = EventSettings.of(sample_config(Path("/tmp")), ("A", "B", "C", "D"))
        >>> settings.rounds, str(settings.tc), settings.engines["A"].command
        (2, '60+0.6', ('/usr/games/A',))
        """
        return cls(
            **msgspec.structs.asdict(config.tournament)
            | {
                "rounds": config.total_rounds(),
                "players": players,
                "teams": config.teams(),
                "adjudication": config.adjudication,
                "engines": {e.name: e.settings for e in config.engines},
                "ratings": {e.name: e.rating for e in config.engines if e.rating is not None},
                "kibitzers": config.kibitzers,
            }
        )

    def to_json(self) -> str:
        """The stored form: JSON with sorted keys.

        >>> EventSettings(name="E", players=("A", "B"), rounds=1).to_json()[:40]
        '{"adjudication": {"draw": {"from_move": '
        """
        return json.dumps(to_builtins(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> EventSettings:
        """The settings stored with an event; keys it does not know are ignored, keys it
        lacks take their defaults (an event stored by an older orchestrator).

        >>> EventSettings.from_json('{"name": "E", "players": ["A", "B"], "rounds": 3}').format
        'double'
        """
        data: dict[str, Any] = json.loads(text)
        for key in _EMPTY_IS_NONE:
            if data.get(key) == "":
                del data[key]
        adjudication = data.get("adjudication")
        if isinstance(adjudication, dict) and "tablebases" in adjudication:  # older: one folder
            data["adjudication"] = adjudication | {
                "tablebases": as_folders(adjudication["tablebases"])
            }
        if data.get("phases") and data.get("system") not in (None, data["phases"][0]["system"]):
            data["system"] = data["phases"][0]["system"]
        try:
            return convert(data, cls)
        except SchemaError as exc:
            raise OrchestratorError(f"the stored event's settings: {exc}") from None

    def changes(self, current: EventSettings) -> tuple[list[str], list[str]]:
        """(settings that may never change, settings that need --force) that differ
        between these stored settings and `current`.

        >>> stored = EventSettings(name="E", players=("A", "B"), rounds=3)
        >>> now = msgspec.structs.replace(stored, rounds=5, concurrency=2, format="single")
        >>> stored.changes(now)
        (['format'], ['rounds'])
        """
        before, after = to_builtins(self), to_builtins(current)
        differ = sorted(k for k in before if before[k] != after.get(k))
        locked = [k for k in differ if k in LOCKED]
        forced = [k for k in differ if k not in LOCKED and k not in FREE]
        return locked, forced

    @property
    def anchor(self) -> tuple[str, float] | None:
        """The fitted Elo's anchor: `rating_anchor` at its rating (None: the field's mean).

        >>> EventSettings(name="T", rounds=1, rating_anchor="A", ratings={"A": 3500}).anchor
        ('A', 3500)
        """
        name = self.rating_anchor
        if name is None or name not in self.ratings:
            return None
        return name, self.ratings[name]


def pairing_rules(section: TournamentConfig) -> Rules:
    """The rules that pair the event of `section` (settings or config): its own, with the
    event's `random_seed` as the `seed` of every system that makes random choices and has
    none of its own (the seed is stored with the event, so a round pairs the same way).

    >>> section = TournamentConfig(system="random", random_seed=7)
    >>> pairing_rules(section).system_options
    {'seed': 7}
    """

    def seeded(system: str, options: Options) -> Options:
        if lookup(system).seeded:
            return options.with_default("seed", section.random_seed)
        return options

    phases = tuple(
        Phase(p.rounds, p.system, seeded(p.system, p.system_options)) for p in section.phases
    )
    return Rules(
        system=section.system if not phases else "swiss",
        system_options=seeded(section.system, section.system_options) if not phases else Options(),
        phases=phases,
        rounds=section.rounds,
        cycles=section.cycles,
        format=section.format,
        schedule=section.schedule,
    )
