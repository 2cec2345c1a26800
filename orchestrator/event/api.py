"""The shapes of the JSON that the read commands print (`--json`), the web view's API serves,
its pages are made from, and its live feed pushes: one typed definition for the producer
(`event/read.py`, `event/feed.py`, ...) and every consumer (`web/pages.py`, `cli/`).

The TCEC files (`crosstable.json`, `schedule.json`, `live.json`) have TCEC's own shapes
(`event/tcec_files.py`).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from orchestrator.core.stats.elo import Figures
from orchestrator.core.stats.ratings import RatingFigures

__all__ = [
    "AuditEntry",
    "BracketJSON",
    "BracketMatchJSON",
    "ComingRound",
    "DaemonJSON",
    "ExportedGame",
    "GameEvent",
    "GameJSON",
    "GameSummary",
    "HeadToHeadJSON",
    "KibitzerJSON",
    "KibitzerPoint",
    "MatchJSON",
    "MoveEvent",
    "MoveJSON",
    "OverviewJSON",
    "PlaceJSON",
    "PlacedJSON",
    "RoundEvent",
    "RoundGameJSON",
    "RoundJSON",
    "RunningGame",
    "ScheduleGame",
    "ScheduleJSON",
    "Side",
    "StageJSON",
    "StandingJSON",
    "StandingsJSON",
    "TeamStandingJSON",
    "VoidedJSON",
    "sprt_outcome",
]

Side = Literal["white", "black"]


class MoveJSON(TypedDict):
    """A move of a game: a book move has only the first six keys."""

    ply: int
    san: str
    uci: str
    book: bool
    side: Side
    fen: str
    score_cp: NotRequired[int | None]
    score_mate: NotRequired[int | None]
    wv: NotRequired[str]  # the score from White's side, as TCEC writes it
    depth: NotRequired[int | None]
    seldepth: NotRequired[int | None]
    nodes: NotRequired[int | None]
    nps: NotRequired[int | None]
    tbhits: NotRequired[int | None]
    hashfull: NotRequired[int | None]
    pv: NotRequired[list[str]]  # in SAN
    expected: NotRequired[str]  # the reply the engine expects (UCI): its PV's next move
    time_ms: NotRequired[int]
    clock_ms: NotRequired[int | None]
    reported_ms: NotRequired[int | None]


class MoveEvent(MoveJSON):
    """A `move` event of the live feed: a move, with its game and attempt."""

    game: int
    attempt: int


class GameEvent(TypedDict):
    """A `game` event: a game started or ended."""

    game: int
    round: int
    status: str
    result: str | None


class RoundEvent(TypedDict):
    """A `round` event: a round was paired or finished."""

    round: int
    finished: bool


class GameSummary(TypedDict):
    """A game as every list of games shows it (`game_summary`)."""

    id: int
    round: int
    number: int
    white: str
    black: str
    status: str  # pending, running, interrupted (no daemon runs it) or finished
    result: str | None
    termination: str | None
    reason: str | None
    opening: str | None
    board: NotRequired[int]  # a team Swiss's board and teams
    white_team: NotRequired[str]
    black_team: NotRequired[str]


class KibitzerPoint(TypedDict):
    """A kibitzer's last word on a position: its ply, and its score from White's side."""

    ply: int
    eval: float | str


class KibitzerJSON(TypedDict):
    """A kibitzer's analysis of a game: its current entry (TCEC's `data.json`, while the
    game is the featured one) and the score it gave every position so far."""

    index: int
    engine: str
    desc: str
    current: dict[str, object] | None
    history: list[KibitzerPoint]


class GameJSON(GameSummary):
    """A game with its moves (`/api/games/ID`)."""

    host: str | None
    start_fen: str
    fen: str
    chess960: bool  # its FENs' castling rights name rooks; castling is king-takes-rook
    #: the rules it is played by, as UCI's UCI_Variant names them ("chess": standard)
    variant: str
    turn: Side
    moves: list[MoveJSON]
    last: dict[Side, MoveJSON | None]  # each side's last engine move
    kibitzers: list[KibitzerJSON]
    log: str | None  # where its engine log is downloaded, once there is one
    pgn: NotRequired[str | None]
    clock_start_ms: NotRequired[int | None]


class VoidedJSON(TypedDict):
    attempt: int
    voided_at: str
    reason: str | None


class RoundGameJSON(GameSummary):
    """A game of a round, as `pairings --json` lists it."""

    plies: int | None
    forfeit: bool
    voided: list[VoidedJSON]
    host: str | None
    #: a game an engine's fault ended: where its engine log is downloaded
    fault_log: str | None


class MatchJSON(TypedDict):
    """A team Swiss match: Team 1, Team 2, their board points and its games."""

    team1: str
    team2: str
    points1: float
    points2: float
    result: str | None
    games: list[int]


class RoundJSON(TypedDict):
    round: int
    bye: str | None
    dropped_rounds: int
    finished: bool
    games: list[RoundGameJSON]
    matches: NotRequired[list[MatchJSON]]


class PlacedJSON(TypedDict):
    """Who stands where: a line of any standings."""

    place: str
    name: str
    seed: int
    byes: int


class StandingJSON(PlacedJSON, RatingFigures):
    """A line of the standings: its games, tiebreaks and strikes, and its rating's figures:
    the Elo fitted over all the event's games (the field's mean at 0) and its 95 % interval,
    None for an engine without a finite rating (a perfect or a zero score); and
    `los_next`, the likelihood that the engine is stronger than the next one by Elo."""

    score: float
    games: int
    wins: int
    draws: int
    losses: int
    tiebreaks: dict[str, float]
    strikes: int
    withdrawn_after: int | None


class TeamStandingJSON(PlacedJSON):
    match_points: float
    board_points: float
    matches: int
    won: int
    drawn: int
    lost: int
    players: list[str]


class BracketMatchJSON(TypedDict):
    """A knockout's match: its engines (None while not known, or a BYE), their points, its
    games' ids in order, and who goes on once it is over."""

    match: int
    name: str
    upper: str | None
    lower: str | None
    upper_seed: int | None
    lower_seed: int | None
    points: list[float]
    games: list[int]
    winner: str | None
    loser: str | None


class StageJSON(TypedDict):
    stage: int
    name: str
    matches: list[BracketMatchJSON]


class PlaceJSON(TypedDict):
    place: str
    name: str


class BracketJSON(TypedDict):
    """A knockout's bracket: every stage (those to come with engines not yet known), the
    stage being played, and the final places once it is over."""

    stages: list[StageJSON]
    current: int
    places: list[PlaceJSON]


class FiguresJSON(Figures):
    """Two engines' games against each other, from the first one's side: their results,
    and the figures they imply (`core/stats/elo.py`: Elo and its 95 % error, nElo and its
    error, LOS; None where unbounded)."""

    engines: list[str]
    games: int
    points: list[float]
    #: wins, draws, losses of the first engine
    wdl: list[int]
    #: game pairs (the two games of one opening, one after the other) that scored the first
    #: engine 0, 1/2, 1, 3/2 and 2 points
    penta: list[int]
    #: the model of the figures: "pentanomial" where the games come in pairs
    model: str


class HeadToHeadJSON(FiguresJSON):
    """A two-engine match: the score from the first engine's side, and the Elo difference
    it implies with its 95% margin (None where unbounded)."""

    wins: int
    draws: int
    losses: int
    planned: int
    #: the same as `elo_error`, kept for readers of earlier versions
    margin: float | None
    #: the tiebreak matches of a tied match, so far, each scored on its own
    tiebreaks: list[TiebreakJSON]
    #: the engine that won the match (tiebreaks included), once it is over; None otherwise
    winner: str | None
    #: whether it ended tied (`shared = true`)
    shared: bool
    #: with `sprt`: the test's log-likelihood ratio, its bounds and verdict (None: running)
    sprt: NotRequired[SprtJSON]


class SprtJSON(TypedDict):
    llr: float
    lower: float
    upper: float
    #: "H0" or "H1" once a bound is crossed; None while it runs, or when its games ran out
    verdict: str | None
    #: whether its games are over: with no verdict, the test ended without one
    over: bool


def sprt_outcome(test: SprtJSON) -> str:
    """What a test came to, as the standings and the web view say it.

    >>> sprt_outcome({"llr": 3.0, "lower": -2.94, "upper": 2.94, "verdict": "H1", "over": True})
    'H1 accepted'
    >>> sprt_outcome({"llr": 0.1, "lower": -2.94, "upper": 2.94, "verdict": None, "over": True})
    'no verdict: its games ran out'
    """
    if test["verdict"]:
        return f"{test['verdict']} accepted"
    return "no verdict: its games ran out" if test["over"] else "running"


class TiebreakJSON(TypedDict):
    """A tiebreak match of a tied match: its games so far of `planned`, at `tc` (None: the
    event's), and the points of each engine (in the match's order)."""

    games: int
    planned: int
    tc: str | None
    points: list[float]


class PairJSON(FiguresJSON):
    """Two engines' games against each other in a gauntlet, from the first one's side: as a
    match's figures (`HeadToHeadJSON`), pentanomial where the games come in pairs."""


class GauntletJSON(TypedDict):
    """A gauntlet: every pair of a gauntlet engine and an opponent; with `sprt`, each
    gauntlet engine's test over its games against the field."""

    pairs: list[PairJSON]
    sprt: NotRequired[dict[str, SprtJSON]]


class EndingsJSON(TypedDict):
    """How the finished games ended (`core/game/endings.py`): the event's count of each
    ending, with `games` and the largest overstep on time in ms; each engine's counts (a
    fault counts only against the engine at fault)."""

    event: dict[str, object]
    engines: dict[str, dict[str, object]]


class StandingsJSON(TypedDict):
    event: str
    rounds: int
    provisional: bool
    standings: list[StandingJSON]
    endings: EndingsJSON
    teams: NotRequired[list[TeamStandingJSON]]
    bracket: NotRequired[BracketJSON]
    match: NotRequired[HeadToHeadJSON]
    gauntlet: NotRequired[GauntletJSON]


class DaemonJSON(TypedDict):
    running: bool
    pid: int | None
    last_seen: str | None


class RunningGame(GameSummary):
    """A game being played, with how far it got."""

    plies: int
    last: str | None
    clock_ms: dict[Side, int | None]


class OverviewJSON(TypedDict):
    """`status --json` and `/api/overview`."""

    event: str
    #: the event's variant, as stored: "standard", "chess960", "dfrc", or a UCI name
    variant: str
    round: int
    rounds: int
    games_finished: int
    games_total: int | None
    games_running: list[RunningGame]
    games_interrupted: list[int]
    finished: bool
    paused: bool
    daemon: DaemonJSON
    provisional: bool
    top: list[StandingJSON]
    top_teams: NotRequired[list[TeamStandingJSON]]
    endings: dict[str, object]


class ScheduleGame(GameSummary):
    started_at: str | None
    duration_s: float | None
    estimated_start: str | None


class ExportedGame(GameSummary):
    """A finished game, as `export --json` gives it."""

    pgn: str | None


class ComingRound(TypedDict):
    round: int
    estimated_start: str


class ScheduleJSON(TypedDict):
    """`/api/schedule`: the games so far and to come, with estimated starts; a long event's
    latest games and next rounds only, the others counted (`earlier_games`, `later_rounds`)."""

    event: str
    mean_game_s: int
    games: list[ScheduleGame]
    coming_rounds: list[ComingRound]
    #: games paired before the first of `games`, not listed
    earlier_games: int
    #: rounds to come after the last of `coming_rounds`, not listed
    later_rounds: int


class AuditEntry(TypedDict):
    """An entry of the audit log: when, what, and a line of text; the rest per kind."""

    at: str
    what: str
    text: str
    id: NotRequired[int]
    kind: NotRequired[str]
    args: NotRequired[dict[str, object]]
    user: NotRequired[str]
    command: NotRequired[str | list[str] | None]  # the command line; an engine's new one
    reason: NotRequired[str | None]
    applied_at: NotRequired[str | None]
    outcome: NotRequired[str | None]
    engine: NotRequired[str]
    detail: NotRequired[str]
    game: NotRequired[int]
    round: NotRequired[int]
    after_round: NotRequired[int]
    options: NotRequired[dict[str, object]]
    first_game: NotRequired[int | None]
