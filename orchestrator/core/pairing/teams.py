"""The team Swiss (docs/systems/team-swiss.md, FlexChess): teams of engines, each engine
on a fixed board, paired as teams by the TCEC Swiss rules, with "games" read as "matches"
and "white" and "black" as Team 1 and Team 2.

A match is one game per board, board 1 against board 1 and so on down.  Team 1 has White on
boards 1, 4, 5, 8, 9, 12, ... and Team 2 on boards 2, 3, 6, 7, 10, 11, ...; a double round
plays every match twice, Team 1 and Team 2 exchanged.  Nothing about matches is stored: a
round's games say which team was Team 1 (the board pattern) and so which match each game
belongs to.

A match is won by the team with more board points; the team Swiss pairs by matches (a won
match counts 1, a drawn one 1/2, as a game does in the TCEC Swiss), and the standings rank
by match points (2 for a win, 1 for a draw), then board points.  A team's BYE wins each of
its matches of the round on every board.  A team leaves the pairing once any of its engines
has withdrawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from orchestrator.core.event.model import (
    Game,
    Player,
    Result,
    Round,
    Rules,
    StateError,
    Team,
    Tournament,
)
from orchestrator.core.event.standings import Line, place
from orchestrator.core.pairing.registry import NO_OPTIONS, Draft, NoOptions, System, lookup
from orchestrator.core.pairing.swiss import pair_swiss

#: match points for a won, drawn and lost match
MATCH_POINTS = (2.0, 1.0, 0.0)


def team1_white(board: int) -> bool:
    """Whether Team 1 has White on `board` (1 = the first board).

    >>> [b for b in range(1, 13) if team1_white(b)]
    [1, 4, 5, 8, 9, 12]
    """
    return board % 4 in (0, 1)


def match_games(team1: Team, team2: Team) -> tuple[Game, ...]:
    """The games of a match of `team1` (Team 1) against `team2`, board 1 first.

    >>> [(g.white, g.black) for g in match_games(Team("A", ("a1", "a2", "a3", "a4")),
    ...                                          Team("B", ("b1", "b2", "b3", "b4")))]
    [('a1', 'b1'), ('b2', 'a2'), ('b3', 'a3'), ('a4', 'b4')]
    """
    return tuple(
        Game(one, two) if team1_white(board) else Game(two, one)
        for board, (one, two) in enumerate(zip(team1.members, team2.members, strict=True), 1)
    )


@dataclass(frozen=True, slots=True)
class Seat:
    """Where a player sits: its team and board."""

    team: str
    board: int


def seats(t: Tournament) -> dict[str, Seat]:
    """Every team member's team and board.

    >>> seats(Tournament((), teams=(Team("T", ("x", "y")),)))["y"]
    Seat(team='T', board=2)
    """
    return {
        name: Seat(team.name, board)
        for team in t.teams
        for board, name in enumerate(team.members, 1)
    }


def board_tags(teams: tuple[Team, ...], white: str, black: str) -> dict[str, str]:
    """The PGN tags of a team Swiss's game: its board and both teams (none otherwise).

    >>> board_tags((Team("A", ("a1", "a2")), Team("B", ("b1", "b2"))), "b2", "a2")
    {'Board': '2', 'WhiteTeam': 'B', 'BlackTeam': 'A'}
    >>> board_tags((), "x", "y")
    {}
    """
    seat = seats(Tournament((), teams=teams))
    if white not in seat or black not in seat:
        return {}
    return {
        "Board": str(seat[white].board),
        "WhiteTeam": seat[white].team,
        "BlackTeam": seat[black].team,
    }


@dataclass(frozen=True, slots=True)
class Match:
    """One match of a round: Team 1, Team 2 and the games of its boards played so far."""

    team1: str
    team2: str
    boards: int  # the boards of a whole match
    games: tuple[tuple[int, Game], ...]  # (board, game), board order

    def points(self, team: str, seat: dict[str, Seat]) -> float:
        """The board points `team` scored in the match's finished games.

        >>> t = Tournament((), teams=(Team("A", ("a",)), Team("B", ("b",))))
        >>> Match("A", "B", 1, ((1, Game("a", "b", "1-0")),)).points("B", seats(t))
        0.0
        """
        return sum(
            g.points(g.white if seat[g.white].team == team else g.black)
            for _, g in self.games
            if g.result is not None
        )

    def complete(self) -> bool:
        """Whether every board of the match has a result.

        >>> Match("A", "B", 2, ((1, Game("a", "b", "1-0")),)).complete()
        False
        """
        done = sum(1 for _, g in self.games if g.result is not None)
        return done == self.boards

    def result(self, seat: dict[str, Seat]) -> Result | None:
        """The match's result from Team 1's side, once every board has one.

        >>> t = Tournament((), teams=(Team("A", ("a", "c")), Team("B", ("b", "d"))))
        >>> Match("A", "B", 2, ((1, Game("a", "b", "1-0")), (2, Game("d", "c", "1/2-1/2")))
        ...      ).result(seats(t))
        '1-0'
        """
        if not self.complete():
            return None
        one, two = self.points(self.team1, seat), self.points(self.team2, seat)
        return "1-0" if one > two else "0-1" if two > one else "1/2-1/2"


def matches(t: Tournament, rnd: Round) -> list[Match]:
    """The matches of a round's games, in the order their first game comes; a `StateError`
    when its games are not matches of whole teams.

    >>> teams = (Team("A", ("a1", "a2")), Team("B", ("b1", "b2")))
    >>> games = (Game("a1", "b1", "1-0"), Game("b2", "a2", "1-0"))
    >>> [(m.team1, m.team2, len(m.games)) for m in matches(Tournament((), teams=teams),
    ...                                                    Round(1, games))]
    [('A', 'B', 2)]
    """
    seat = seats(t)
    size = len(t.teams[0].members) if t.teams else 0
    found: dict[tuple[str, str], list[tuple[int, Game]]] = {}
    for g in rnd.games:
        white, black = seat.get(g.white), seat.get(g.black)
        where = f"round {rnd.number}: game {g.white} - {g.black}"
        if white is None or black is None:
            raise StateError(f"{where}: {g.black if white else g.white!r} is in no team")
        if white.board != black.board or white.team == black.team:
            raise StateError(f"{where} is not a board of a match between two teams")
        one, two = (white, black) if team1_white(white.board) else (black, white)
        boards = found.setdefault((one.team, two.team), [])
        if any(board == white.board for board, _ in boards):
            raise StateError(f"{where}: board {white.board} of {one.team} - {two.team} twice")
        boards.append((white.board, g))
    return [
        Match(one, two, size, tuple(sorted(games, key=lambda bg: bg[0])))
        for (one, two), games in found.items()
    ]


def team_tournament(t: Tournament) -> Tournament:
    """The event as the teams' own Swiss: teams as players, complete matches as games.

    >>> teams = (Team("A", ("a",)), Team("B", ("b",)))
    >>> t = Tournament((Player("a", 1), Player("b", 2)), (Round(1, (Game("b", "a", "1-0"),)),),
    ...                teams=teams, rules=Rules(system="team-swiss"))
    >>> [(g.white, g.black, g.result) for g in team_tournament(t).rounds[0].games]
    [('B', 'A', '1-0')]
    """
    seat = seats(t)
    withdrawn = {p.name: p.withdrawn_after for p in t.players}
    players = []
    for seed, team in enumerate(t.teams, 1):
        left = [w for name in team.members if (w := withdrawn.get(name)) is not None]
        players.append(Player(team.name, seed, min(left) if left else None))
    rounds = []
    for rnd in t.rounds:
        games = tuple(
            Game(m.team1, m.team2, m.result(seat), all(g.forfeit for _, g in m.games))
            for m in matches(t, rnd)
            if m.complete()
        )
        rounds.append(Round(rnd.number, games, rnd.bye))
    rules = Rules(format=t.rules.format, schedule=t.rules.schedule)
    return Tournament(tuple(players), tuple(rounds), rules)


def pair_team_swiss(t: Tournament, options: NoOptions = NO_OPTIONS) -> Draft:
    """The first leg of the next round of a team Swiss: the teams paired by the TCEC Swiss
    rules, each match then played board by board in the pairing's playing order (a match
    is one unit: a double round plays it again, whole).

    >>> teams = tuple(Team(n, (f"{n}1", f"{n}2")) for n in "ABCD")
    >>> players = tuple(Player(n, i) for i, n in enumerate(
    ...     [m for team in teams for m in team.members], 1))
    >>> draft = pair_team_swiss(Tournament(players, teams=teams))
    >>> [(g.white, g.black) for g in draft.games()]
    [('D1', 'C1'), ('C2', 'D2'), ('B1', 'A1'), ('A2', 'B2')]
    """
    if not t.teams:
        raise StateError("a team Swiss needs its teams")
    team = {x.name: x for x in t.teams}
    paired = pair_swiss(team_tournament(t))
    units = tuple(match_games(team[m.white], team[m.black]) for m in paired.games())
    return Draft(units, bye=paired.bye, dropped_rounds=paired.dropped_rounds)


@dataclass
class TeamLine(Line):
    """One team's line of the team standings: a line whose games are its complete matches
    (`games`, `wins`, `draws`, `losses`), with its match and board points."""

    match_points: float = 0.0
    board_points: float = 0.0


def team_standings(t: Tournament) -> list[TeamLine]:
    """The teams best first: by match points, then board points; teams equal on both
    share their place and are listed by seed.  Every finished game counts for board
    points, a match for match points once all its boards are over.

    >>> teams = (Team("A", ("a1", "a2")), Team("B", ("b1", "b2")))
    >>> games = (Game("a1", "b1", "0-1"), Game("b2", "a2", "1/2-1/2"))
    >>> t = Tournament((), (Round(1, games),), teams=teams)
    >>> [(x.place, x.name, x.match_points, x.board_points) for x in team_standings(t)]
    [('1', 'B', 2.0, 1.5), ('2', 'A', 0.0, 0.5)]
    """
    seat = seats(t)
    lines = {team.name: TeamLine(team.name, seed) for seed, team in enumerate(t.teams, 1)}
    for rnd in t.rounds:
        for m in matches(t, rnd):
            for name, other in ((m.team1, m.team2), (m.team2, m.team1)):
                line, mine, theirs = lines[name], m.points(name, seat), m.points(other, seat)
                line.board_points += mine
                if not m.complete():
                    continue
                line.games += 1
                outcome = 0 if mine > theirs else 1 if mine == theirs else 2
                line.wins += outcome == 0
                line.draws += outcome == 1
                line.losses += outcome == 2
                line.match_points += MATCH_POINTS[outcome]
        if rnd.bye is not None and rnd.bye in lines:
            line = lines[rnd.bye]
            line.byes += 1
            line.match_points += MATCH_POINTS[0] * t.rules.games_per_pair
            line.board_points += len(t.teams[0].members) * t.rules.games_per_pair
    ranked = sorted(lines.values(), key=lambda x: (-x.match_points, -x.board_points, x.seed))
    groups = [list(g) for _, g in groupby(ranked, key=lambda x: (x.match_points, x.board_points))]
    return place(groups)


def check_teams(t: Tournament) -> None:
    """A `StateError` naming the first problem with a team Swiss's teams.

    >>> players = (Player("a", 1), Player("b", 2), Player("c", 3))
    >>> teams = (Team("A", ("a",)), Team("B", ("b", "c")))
    >>> check_teams(Tournament(players, rules=Rules(system="team-swiss"), teams=teams))
    Traceback (most recent call last):
    ...
    orchestrator.core.event.parts.StateError: team 'B' has 2 players, team 'A' 1: every team ...
    """
    if not lookup(t.rules.system).teams:
        raise StateError(f"'teams' are for a team Swiss (system team-swiss), not {t.rules.system}")
    players = [p.name for p in t.players]
    placed: dict[str, str] = {}
    for team in t.teams:
        if not team.name or team.name in players:
            raise StateError(f"team {team.name!r}: a team needs a name that is no player's")
        for name in team.members:
            if name not in players:
                raise StateError(f"team {team.name!r}: unknown player {name!r}")
            if name in placed:
                raise StateError(f"player {name!r} is in team {placed[name]!r} and {team.name!r}")
            placed[name] = team.name
    if len(t.teams) < 2:
        raise StateError("a team Swiss needs at least two teams")
    left = [name for name in players if name not in placed]
    if left:
        raise StateError(f"{left[0]!r} is in no team (a team Swiss puts every player in a team)")
    if len({team.name for team in t.teams}) != len(t.teams):
        raise StateError("two teams have the same name")
    first = t.teams[0]
    for team in t.teams:
        if len(team.members) != len(first.members):
            raise StateError(
                f"team {team.name!r} has {len(team.members)} players, team {first.name!r} "
                f"{len(first.members)}: every team needs the same number"
            )


TEAM_SWISS = System(
    "team-swiss",
    "the team Swiss: teams of engines on fixed boards, paired as teams by the TCEC rules",
    pair_team_swiss,
    noun="a team Swiss",
    phase=False,
    unfixable="a team Swiss pairs whole teams: its games cannot be fixed one by one",
    teams=True,
)
