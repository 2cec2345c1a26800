"""What of a config an event is tied to, and which changes a resume may accept.

The settings are stored with the event as JSON and compared with the config's on resume.
Changing the players or the pairing system would make the stored pairings wrong, so it is
always refused (`LOCKED`); changes that only affect games still to be played (time control,
rounds, adjudication, engine commands and options, openings) need `--force`; where the files
go and how many games run at once may change freely (`FREE`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from orchestrator.config.model import Config
from orchestrator.core.adjudication import Adjudication, DrawRule, WinRule
from orchestrator.core.model import Format, Schedule, System, Team
from orchestrator.core.standings import TCEC_ORDER, Tiebreak

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
)
#: settings that may change at any resume; every other change needs --force
FREE = ("concurrency", "database", "pgn_dir", "site", "live_dir", "pgn_comments")


@dataclass(frozen=True)
class EngineSettings:
    """What an engine's games depend on."""

    command: tuple[str, ...]
    protocol: str = "uci"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EventSettings:
    """The settings an event was made with, as stored beside it.

    >>> s = EventSettings(name="Test", players=("A", "B"), rounds=1)
    >>> EventSettings.from_json(s.to_json()) == s
    True
    >>> s.games_per_pair, dataclasses.replace(s, format="single").games_per_pair
    (2, 1)
    """

    name: str
    players: tuple[str, ...]  # by seed
    rounds: int
    site: str = "?"
    system: System = "swiss"
    system_options: dict[str, Any] = field(default_factory=dict)
    phases: tuple[dict[str, Any], ...] = ()  # {rounds, system, system_options}
    teams: tuple[dict[str, Any], ...] = ()  # a team Swiss: {name, players (board order)}
    format: Format = "double"
    schedule: Schedule = "legs"
    cycles: int = 1
    tc: str = "60+0.6"
    timemargin: int = 100
    concurrency: int = 1
    openings: str = ""
    opening_order: str = "random"
    random_seed: int = 1
    database: str = "tournament.sqlite"
    pgn_dir: str = "pgn_out"
    tiebreaks: tuple[Tiebreak, ...] = TCEC_ORDER
    strikes: int = 0
    withdrawn_games: str = "forfeit"
    live_dir: str = ""
    pgn_comments: str = "cutechess"
    adjudication: dict[str, Any] = field(default_factory=dict)
    engines: dict[str, EngineSettings] = field(default_factory=dict)

    @classmethod
    def of(cls, config: Config, players: tuple[str, ...]) -> EventSettings:
        """The settings of `config`'s event, its players (names by seed) as seeded.

        >>> from pathlib import Path
        >>> from orchestrator.event.sample import sample_config
        >>> settings = EventSettings.of(sample_config(Path("/tmp")), ("A", "B", "C", "D"))
        >>> settings.rounds, settings.tc, settings.engines["A"].command
        (2, '60+0.6', ('/usr/games/A',))
        """
        section = config.tournament
        adjudication = dataclasses.asdict(config.adjudication)
        adjudication["tablebases"] = str(config.adjudication.tablebases or "")
        return cls(
            name=section.name,
            site=section.site,
            players=players,
            system=section.system,
            system_options=dict(section.system_options),
            phases=tuple(
                {"rounds": p.rounds, "system": p.system, "system_options": dict(p.options)}
                for p in section.phases
            ),
            teams=tuple(
                {"name": team.name, "players": list(team.members)} for team in config.teams()
            ),
            format=section.format,
            schedule=section.schedule,
            cycles=section.cycles,
            rounds=config.total_rounds(),
            tc=str(section.tc),
            timemargin=section.timemargin_ms,
            concurrency=section.concurrency,
            openings=str(section.openings or ""),
            opening_order=section.opening_order,
            random_seed=section.random_seed,
            database=str(section.database),
            pgn_dir=str(section.pgn_dir),
            tiebreaks=section.tiebreaks,
            strikes=section.strikes,
            withdrawn_games=section.withdrawn_games,
            live_dir=str(section.live_dir or ""),
            pgn_comments=section.pgn_comments,
            adjudication=adjudication,
            engines={
                e.name: EngineSettings(e.command, e.protocol, dict(e.options))
                for e in config.engines
            },
        )

    def rules(self) -> Adjudication:
        """The adjudication rules, as the config gave them.

        >>> EventSettings(name="E", players=(), rounds=1).rules() == Adjudication()
        True
        """
        if not self.adjudication:
            return Adjudication()
        data = dict(self.adjudication)
        win, draw = data.pop("win", None), data.pop("draw", None)
        tablebases = data.pop("tablebases", "")
        known = {f.name for f in dataclasses.fields(Adjudication)}
        return Adjudication(
            win=None if win is None else WinRule(**win),
            draw=None if draw is None else DrawRule(**draw),
            tablebases=Path(tablebases) if tablebases else None,
            **{k: v for k, v in data.items() if k in known},
        )

    def team_list(self) -> tuple[Team, ...]:
        """A team Swiss's teams, seed 1 first (none for any other system).

        >>> EventSettings(name="E", players=("a", "b"), rounds=1,
        ...               teams=({"name": "T", "players": ["a", "b"]},)).team_list()
        (Team(name='T', members=('a', 'b')),)
        """
        return tuple(Team(t["name"], tuple(t["players"])) for t in self.teams)

    @property
    def games_per_pair(self) -> int:
        """Games each pair plays in a round.

        >>> EventSettings(name="E", players=(), rounds=1, format="single").games_per_pair
        1
        """
        return 2 if self.format == "double" else 1

    def to_json(self) -> str:
        """The stored form: JSON with sorted keys.

        >>> EventSettings(name="E", players=("A", "B"), rounds=1).to_json()[:40]
        '{"adjudication": {}, "concurrency": 1, "'
        """
        return json.dumps(self._plain(), sort_keys=True)

    def _plain(self) -> dict[str, Any]:
        plain = dataclasses.asdict(self)
        plain["players"] = list(self.players)
        plain["tiebreaks"] = list(self.tiebreaks)
        plain["engines"] = {
            name: {"command": list(e.command), "protocol": e.protocol, "options": e.options}
            for name, e in self.engines.items()
        }
        return plain

    @classmethod
    def from_json(cls, text: str) -> EventSettings:
        """The settings stored with an event; keys it does not know are ignored, keys it
        lacks take their defaults (an event stored by an older orchestrator).

        >>> EventSettings.from_json('{"name": "E", "players": ["A", "B"], "rounds": 3}').format
        'double'
        """
        data: dict[str, Any] = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)}
        plain = {k: v for k, v in data.items() if k in known}
        plain["players"] = tuple(plain.get("players", ()))
        plain["tiebreaks"] = tuple(plain.get("tiebreaks", TCEC_ORDER))
        plain["phases"] = tuple(plain.get("phases", ()))
        plain["teams"] = tuple(plain.get("teams", ()))
        plain["engines"] = {
            name: EngineSettings(tuple(e["command"]), e.get("protocol", "uci"), e["options"])
            for name, e in cast(dict[str, Any], plain.get("engines", {})).items()
        }
        return cls(**plain)

    def changes(self, current: EventSettings) -> tuple[list[str], list[str]]:
        """(settings that may never change, settings that need --force) that differ
        between these stored settings and `current`.

        >>> stored = EventSettings(name="E", players=("A", "B"), rounds=3)
        >>> now = dataclasses.replace(stored, rounds=5, concurrency=2, format="single")
        >>> stored.changes(now)
        (['format'], ['rounds'])
        """
        before, after = self._plain(), current._plain()
        differ = sorted(k for k in before if before[k] != after[k])
        locked = [k for k in differ if k in LOCKED]
        forced = [k for k in differ if k not in LOCKED and k not in FREE]
        return locked, forced
