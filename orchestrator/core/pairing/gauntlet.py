"""Gauntlets and head-to-head matches (docs/systems/gauntlet.md, match.md).

A **gauntlet**: the first `gauntlets` seeds each play every other engine, `cycles` times.
The rounds are the Berger table's (`roundrobin.py`) with only the games of a gauntlet engine
kept, and the rounds left empty dropped, so no engine plays two games at once and the
gauntlet engines play in every round they can.

A **match**: two engines play `games` games, each opening twice with colours reversed, back
to back (a round is one such game pair), as TCEC's Superfinal plays its 100 games from 50
openings.  The engine with White first alternates from pair to pair, seed 1 first.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Annotated

import msgspec

from orchestrator.core.event.model import Game, StateError, Tournament
from orchestrator.core.event.standings import place, tally
from orchestrator.core.pairing.registry import Draft, System
from orchestrator.core.pairing.round import check_replay
from orchestrator.core.pairing.roundrobin import berger_game
from orchestrator.core.stats.elo import penta_counts
from orchestrator.core.stats.sprt import Sprt, SprtState

__all__ = [
    "GAUNTLET",
    "MATCH",
    "GauntletOptions",
    "MatchOptions",
    "MatchState",
    "TiebreakMatch",
    "games_of",
    "gauntlet_round",
    "gauntlet_tests",
    "match_state",
    "pair_points",
    "places_by_points",
]


class GauntletOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How many of the top seeds run the gauntlet; with `sprt`, each gauntlet engine's
    games against the whole field are a test, and the gauntlet ends once every one of them
    has its verdict (or its rounds are played)."""

    gauntlets: Annotated[int, msgspec.Meta(ge=1, description="an integer >= 1")] = 1
    sprt: Sprt | None = None
    #: false: the gauntlet engine has White in every game (fastchess's `-noswap`)
    swap: bool = True
    #: every game's colours the other way round (cutechess's and fastchess's `-reverse`)
    reverse: bool = False


def games_of(t: Tournament, name: str, opponent: str | None = None) -> tuple[Game, ...]:
    """`name`'s finished games (against `opponent` only, if given), in the order played.

    >>> from orchestrator.core.event.model import Player, Round
    >>> one = Round(1, (Game("A", "B", "1-0"), Game("C", "A", "0-1"), Game("B", "C", "0-1")))
    >>> [(g.white, g.black) for g in games_of(Tournament((), (one,)), "A")]
    [('A', 'B'), ('C', 'A')]
    """
    return tuple(
        g
        for _, g in t.finished_games()
        if name in (g.white, g.black) and (opponent is None or opponent in (g.white, g.black))
    )


def gauntlet_tests(t: Tournament, options: GauntletOptions) -> dict[str, SprtState]:
    """Each gauntlet engine's SPRT over its games against the field (none without `sprt`):
    over its game pairs (pentanomial) in double rounds, over its games (trinomial) in
    single ones.

    >>> from orchestrator.core.event.model import Player, Round, Rules
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABC", 1))
    >>> won = Round(1, (Game("A", "B", "1-0"), Game("B", "A", "0-1")))
    >>> t = Tournament(players, (won,) * 200, Rules(system="gauntlet"))
    >>> gauntlet_tests(t, GauntletOptions(sprt=Sprt(elo0=0, elo1=5)))["A"].verdict
    'H1'
    """
    if options.sprt is None:
        return {}
    paired = t.rules.games_per_pair == 2
    tests = {}
    for player in t.by_seed()[: options.gauntlets]:
        games = games_of(t, player.name)
        if paired:
            tests[player.name] = options.sprt.state(
                penta=penta_counts(pair_points(games, player.name))
            )
        else:
            points = [g.points(player.name) for g in games]
            tests[player.name] = options.sprt.state(
                wins=points.count(1.0), draws=points.count(0.5), losses=points.count(0.0)
            )
    return tests


def places_by_points(t: Tournament) -> tuple[tuple[str, str], ...]:
    """Every player's place by points alone, a tie shared ("2-3").

    >>> from orchestrator.core.event.model import Player, Round
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABC", 1))
    >>> t = Tournament(players, (Round(1, (Game("A", "B", "1-0"), Game("C", "A", "1-0"))),))
    >>> places_by_points(t)
    (('1-2', 'A'), ('1-2', 'C'), ('3', 'B'))
    """
    by_score = sorted(tally(t).values(), key=lambda line: (-line.score, line.seed))
    tied = [list(group) for _, group in groupby(by_score, key=lambda line: line.score)]
    return tuple((line.place, line.name) for line in place(tied))


EvenGames = Annotated[int, msgspec.Meta(ge=2, multiple_of=2, description="an even number >= 2")]


class TiebreakMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A tiebreak of a tied match: `games` more games, in game pairs, at `tc` (None: the
    event's time control), scored on their own."""

    games: EvenGames
    tc: str | None = None

    def __post_init__(self) -> None:
        from orchestrator.core.game.clock import TimeControl

        if self.tc is not None:
            try:
                TimeControl.parse(self.tc)
            except ValueError as exc:
                raise ValueError(f"tc: {exc}") from None


#: a tied match without tiebreaks of its own: game pairs at the event's time control
PAIRS = (TiebreakMatch(2),)


class MatchOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The games of a match, in game pairs; how a tie after them is broken: the `tiebreaks`
    matches in turn, the last one repeating (by default, game pairs at the event's time
    control, until one is decisive), or not at all with `shared`.  With `sprt`, the match
    is a test that ends once its log-likelihood ratio over the game pairs crosses a bound,
    or after `games` (a tie then stays shared)."""

    games: EvenGames = 2
    tiebreaks: tuple[TiebreakMatch, ...] = ()
    shared: bool = False
    sprt: Sprt | None = None
    #: false: the first engine has White in every game (fastchess's `-noswap`)
    swap: bool = True
    #: the second engine has White first (cutechess's and fastchess's `-reverse`)
    reverse: bool = False

    def __post_init__(self) -> None:
        if self.shared and self.tiebreaks:
            raise ValueError("shared: a shared result breaks no tie: leave tiebreaks out")
        if self.sprt is not None and self.tiebreaks:
            raise ValueError("sprt: a test ends with its verdict or its games: leave tiebreaks out")


@dataclass(frozen=True)
class MatchState:
    """Where a match stands: its regulation games and each tiebreak match played so far
    (its settings and games), and its places once it is over.

    >>> from orchestrator.core.event.model import Player, Round
    >>> players = (Player("A", 1), Player("B", 2))
    >>> drawn = Round(1, (Game("A", "B", "1/2-1/2"), Game("B", "A", "1/2-1/2")))
    >>> state = match_state(Tournament(players, (drawn,)), MatchOptions())
    >>> state.places, [len(games) for _, games in state.tiebreaks]
    ((), [0])
    >>> won = Round(2, (Game("B", "A", "1-0"), Game("A", "B", "1/2-1/2")))
    >>> match_state(Tournament(players, (drawn, won)), MatchOptions()).places
    (('1', 'B'), ('2', 'A'))
    """

    first: str
    second: str
    regulation: tuple[Game, ...]
    tiebreaks: tuple[tuple[TiebreakMatch, tuple[Game, ...]], ...]
    places: tuple[tuple[str, str], ...] = ()
    #: the SPRT over the regulation's game pairs, with `sprt`
    sprt: SprtState | None = None

    def score(self, games: tuple[Game, ...]) -> float:
        """The first seed's points in `games` minus the second's."""
        return sum(2 * g.points(self.first) - 1 for g in games)


def match_state(t: Tournament, options: MatchOptions) -> MatchState:
    """The match of `t`'s played rounds (`MatchState`)."""
    first, second = (p.name for p in t.by_seed())
    played = [g for r in t.rounds for g in r.games if g.result is not None]
    regulation = tuple(played[: options.games])
    rest = played[options.games :]
    state = MatchState(first, second, regulation, ())
    if options.sprt is not None:
        return _test(state, options.sprt, options.games)
    if len(regulation) < options.games:
        return state
    tiebreaks: list[tuple[TiebreakMatch, tuple[Game, ...]]] = []
    stages = options.tiebreaks or PAIRS
    last: tuple[Game, ...] = regulation
    while True:
        margin = state.score(last)
        if margin or options.shared:
            winner, loser = (first, second) if margin > 0 else (second, first)
            places = (("1", winner), ("2", loser)) if margin else (("1-2", first), ("1-2", second))
            return MatchState(first, second, regulation, tuple(tiebreaks), places)
        stage = stages[min(len(tiebreaks), len(stages) - 1)]
        last, rest = tuple(rest[: stage.games]), rest[stage.games :]
        tiebreaks.append((stage, last))
        if len(last) < stage.games:
            return MatchState(first, second, regulation, tuple(tiebreaks))


def pair_points(games: tuple[Game, ...], name: str) -> list[float]:
    """`name`'s points in each complete game pair of `games` (two games one after the
    other, the same engines with colours reversed: one opening).

    >>> pair_points((Game("A", "B", "1-0"), Game("B", "A", "1/2-1/2"), Game("A", "B", "1-0")), "A")
    [1.5]
    """
    return [
        games[i].points(name) + games[i + 1].points(name)
        for i in range(0, len(games) - 1, 2)
        if (games[i + 1].white, games[i + 1].black) == (games[i].black, games[i].white)
    ]


def _test(state: MatchState, sprt: Sprt, games: int) -> MatchState:
    """A match under an SPRT: over once a bound is crossed (after a whole game pair) or
    its `games` are played; the places by points, a tie shared."""
    pairs = pair_points(state.regulation, state.first)
    verdict = sprt.state(penta=penta_counts(pairs))
    over = verdict.verdict is not None or len(state.regulation) >= games
    places: tuple[tuple[str, str], ...] = ()
    if over and len(state.regulation) % 2 == 0:
        margin = state.score(state.regulation)
        winner, loser = (state.first, state.second) if margin > 0 else (state.second, state.first)
        tied = (("1-2", state.first), ("1-2", state.second))
        places = (("1", winner), ("2", loser)) if margin else tied
    return MatchState(state.first, state.second, state.regulation, (), places, verdict)


def gauntlet_round(players: int, gauntlets: int, number: int) -> list[tuple[int, int]]:
    """Round `number` (from 1) of one cycle of a gauntlet: its (white, black) seed numbers,
    by gauntlet seed.  It is the Berger round of the same number with only the games of a
    gauntlet engine, but for one gauntlet engine in an odd field, whose round with the
    phantom (Berger round 1) is skipped.

    >>> [gauntlet_round(4, 1, r) for r in (1, 2, 3)]
    [[(1, 4)], [(1, 2)], [(3, 1)]]
    >>> gauntlet_round(5, 1, 1), gauntlet_round(6, 2, 1)
    ([(1, 2)], [(1, 6), (2, 5)])
    """
    n = players + players % 2
    berger = number + 1 if gauntlets == 1 and players % 2 else number
    games: list[tuple[int, int]] = []
    for seed in range(1, gauntlets + 1):
        game = berger_game(n, berger, seed)
        if max(game) <= players and game not in games:
            games.append(game)
    return games


def rounds_per_cycle(players: int, gauntlets: int) -> int:
    """Rounds of one cycle of a gauntlet: every Berger round has a gauntlet engine's game,
    but the one lone gauntlet engine of an odd field sits out against the phantom.

    >>> rounds_per_cycle(4, 1), rounds_per_cycle(5, 1), rounds_per_cycle(5, 2)
    (3, 4, 5)
    """
    n = players + players % 2
    return n - 1 - (1 if gauntlets == 1 and players % 2 else 0)


def gauntlet_games(players: int, gauntlets: int) -> int:
    """The games of one cycle of a gauntlet (one game per pair).

    >>> gauntlet_games(7, 2)
    11
    """
    return gauntlets * (players - 1) - gauntlets * (gauntlets - 1) // 2


def pair_gauntlet(t: Tournament, options: GauntletOptions) -> Draft:
    """The next round of the gauntlet, cycles repeating with colours reversed; a withdrawn
    engine's games are left out.

    >>> from orchestrator.core.event.model import Player, Rules
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    >>> draft = pair_gauntlet(Tournament(players), GauntletOptions())
    >>> [(g.white, g.black) for g in draft.games()]
    [('A', 'D')]
    """
    if options.sprt is not None and t.rounds:
        tests = gauntlet_tests(t, options)
        if all(test.verdict is not None for test in tests.values()):
            return Draft((), places=places_by_points(t))  # every test has its verdict
    seeded = [p.name for p in t.by_seed()]
    per_cycle = rounds_per_cycle(len(seeded), options.gauntlets)
    done = len(t.rounds)
    if done >= per_cycle * t.rules.cycles:
        raise StateError(f"all {per_cycle * t.rules.cycles} rounds of the gauntlet are played")
    cycle, r = divmod(done, per_cycle)
    playing = {p.name for p in t.players if p.plays_in(done + 1)}
    games = []
    for white, black in gauntlet_round(len(seeded), options.gauntlets, r + 1):
        if options.swap:  # Berger's colours, reversed every other cycle
            flip = (cycle % 2 == 1) != options.reverse
        else:  # the gauntlet engine (of two, the higher seed) White, always
            white, black = min(white, black), max(white, black)
            flip = options.reverse
        w, b = seeded[white - 1], seeded[black - 1]
        if w in playing and b in playing:
            games.append(Game(b, w) if flip else Game(w, b))
    return Draft.of_games(games, swap=options.swap)


def _gauntlet_length(players: int, cycles: int, options: GauntletOptions) -> int:
    return rounds_per_cycle(players, options.gauntlets) * cycles


def _gauntlets_fit(options: GauntletOptions, entrants: int) -> str | None:
    if options.gauntlets < entrants:
        return None
    return f"gauntlets: {options.gauntlets} of {entrants} engines leaves no one to play"


def pair_match(t: Tournament, options: MatchOptions) -> Draft:
    """The next game pair of the match: one opening, colours reversed, back to back (the
    same colours with `swap` false; the second seed White first with `reverse`); after
    a tie, the next pair of its tiebreak match, at that match's time control (a tiebreak
    game is stage `k + 1`, match 1, game `n` of the k-th tiebreak match); the places once
    the match is over.

    >>> from orchestrator.core.event.model import Player, Round
    >>> players = (Player("A", 1), Player("B", 2))
    >>> [(g.white, g.black) for g in pair_match(Tournament(players), MatchOptions(4)).games()]
    [('A', 'B'), ('B', 'A')]
    >>> one = Round(1, (Game("A", "B", "1-0"), Game("B", "A", "1-0")))
    >>> draft = pair_match(Tournament(players, (one,)), MatchOptions(4))
    >>> [(g.white, g.black) for g in draft.games()]
    [('B', 'A'), ('A', 'B')]
    >>> rapid = MatchOptions(2, tiebreaks=(TiebreakMatch(4, "1500+10"),))
    >>> tied = Round(1, (Game("A", "B", "1-0"), Game("B", "A", "1-0")))
    >>> [(g.white, g.stage, g.number, g.tc) for g in pair_match(Tournament(players, (tied,)),
    ...                                                          rapid).games()]
    [('B', 2, 1, '1500+10'), ('A', 2, 2, '1500+10')]
    >>> noswap = MatchOptions(4, swap=False, reverse=True)  # B has White in every game
    >>> [(g.white, g.black) for g in pair_match(Tournament(players, (one,)), noswap).games()]
    [('B', 'A'), ('B', 'A')]
    """
    state = match_state(t, options)
    if state.places:
        return Draft((), places=state.places)
    number = len(t.rounds) + 1  # the pair: odd ones give seed 1 White first
    playing = {p.name for p in t.players if p.plays_in(number)}
    if state.first not in playing or state.second not in playing:
        return Draft(())
    one, two = (state.second, state.first) if options.reverse else (state.first, state.second)
    white, black = (one, two) if number % 2 or not options.swap else (two, one)
    again = (black, white) if options.swap else (white, black)  # the pair's second game
    if not state.tiebreaks:
        return Draft(((Game(white, black), Game(*again)),))
    stage, games = state.tiebreaks[-1]
    k, n = len(state.tiebreaks) + 1, len(games) + 1
    first = Game(white, black, stage=k, match=1, number=n, tc=stage.tc)
    second = Game(*again, stage=k, match=1, number=n + 1, tc=stage.tc)
    return Draft(((first, second),))


def _two(options: MatchOptions, entrants: int) -> str | None:
    return None if entrants == 2 else f"a match is between two engines, not {entrants}"


GAUNTLET: System[GauntletOptions, Tournament] = System(
    "gauntlet",
    "the first `gauntlets` seeds each play every other engine, `cycles` times",
    pair_gauntlet,
    GauntletOptions,
    noun="a gauntlet",
    default_rounds=_gauntlet_length,
    max_rounds=_gauntlet_length,
    misfit=_gauntlets_fit,
    phase=False,
    unfixable="a gauntlet's pairings are its table: none can be fixed",
    check_rounds=lambda t, options: check_replay(t),
    games_planned=lambda t, options: (
        t.rules.games_per_pair * t.rules.cycles * gauntlet_games(t.entrants(), options.gauntlets)
    ),
)
MATCH: System[MatchOptions, Tournament] = System(
    "match",
    "two engines, `games` games: each opening twice with colours reversed, back to back; "
    "a tie broken by `tiebreaks` (game pairs by default), or `shared`",
    pair_match,
    MatchOptions,
    noun="a match",
    default_rounds=lambda players, cycles, options: options.games // 2,
    misfit=_two,
    phase=False,
    unfixable="a match's pairings are its game pairs: none can be fixed",
    own_games=True,
    ends_itself=True,
    check_rounds=lambda t, options: check_replay(t),
    games_planned=lambda t, options: options.games,
)
