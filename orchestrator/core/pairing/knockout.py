"""The knockout, as TCEC plays its Cup (docs/systems/knockout.md): a bracket of 2^k slots
seeded in the order of TCEC's viewer, matches of game pairs that stop once decided, tied
matches extended pair by pair, winners of consecutive matches meeting in the next stage and
the two semifinal losers playing for bronze.

The state is only the seeds and the games played: `bracket` replays them, and the next round
is the next game of every match of the current stage that is still being played.  Each game
carries its stage, its match (its place in the stage; in the last stage the final is match 1
and the bronze match 2) and its number in the match.

Colours: in each game pair one engine has White first (`white_first`): "lower" is the engine
of the lower slot of its match (in the first stage the worse seed, later the winner of the
later feeding match; in the final the winner of semifinal 2, in the bronze match the loser
of semifinal 2), "upper" the other one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Literal

import msgspec

from orchestrator.core.event.model import Game, Player, StateError, Tournament
from orchestrator.core.pairing.registry import Draft, System

__all__ = [
    "KNOCKOUT",
    "Bracket",
    "KnockoutOptions",
    "Match",
    "bracket",
    "calculate_seeds",
    "regulation_games",
    "regulation_rounds",
    "stage_name",
    "stages_of",
]

BracketOrder = Literal["equal-distance", "top-bottom"]
#: a number of games that is played in game pairs
EvenGames = Annotated[int, msgspec.Meta(ge=2, multiple_of=2, description="an even number >= 2")]


class KnockoutOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A knockout's settings (`system_options`).

    >>> KnockoutOptions(stage_games=(4, 6, 8)).regulation(2)
    6
    >>> KnockoutOptions(tiebreak_tc=("5+1", "1+1")).tiebreak(3)
    '1+1'
    """

    #: regulation games per match, from the first stage to the final; None: 2 in every stage
    stage_games: tuple[EvenGames, ...] | None = None
    #: the bronze match's regulation games; 0: no bronze match
    bronze_games: Annotated[
        int, msgspec.Meta(ge=0, multiple_of=2, description="0 or an even number")
    ] = 0
    bracket: BracketOrder = "equal-distance"
    white_first: Literal["lower", "upper"] = "lower"
    #: time controls of the tiebreak pairs, the last one repeating; empty: the event's
    tiebreak_tc: tuple[str, ...] = ()
    #: the most tiebreak pairs of a match, where the director wants a cap: one still tied
    #: after them goes to the better seed.  None (TCEC's rule): as many pairs as are needed;
    #: two engines that always draw are the director's to decide (`adjudicate`)
    tiebreak_pairs: Annotated[int, msgspec.Meta(ge=1, description="an integer >= 1")] | None = None

    def __post_init__(self) -> None:
        from orchestrator.core.game.clock import TimeControl

        for text in self.tiebreak_tc:
            try:
                TimeControl.parse(text)
            except ValueError as exc:
                raise ValueError(f"tiebreak_tc: {exc}") from None

    def regulation(self, stage: int) -> int:
        """The regulation games of a match of `stage` (1 = first)."""
        return self.stage_games[stage - 1] if self.stage_games else 2

    def tiebreak(self, pair: int) -> str | None:
        """The time control of tiebreak pair `pair` (1 = first), None for the event's."""
        if not self.tiebreak_tc:
            return None
        return self.tiebreak_tc[min(pair, len(self.tiebreak_tc)) - 1]


def calculate_seeds(num_team: int, new_mode: bool) -> list[int]:
    """The seed in each slot of a bracket of `num_team` engines, as TCEC's viewer orders
    them (tcecgui `calculate_seeds`): match k is slots 2k-1 and 2k, the final 1-2, and 0
    is a BYE.  `new_mode` (Cup 6 on, `bracket = "equal-distance"`) has seed s meet
    s + N/2; the old mode (`"top-bottom"`) has it meet N + 1 - s.

    >>> calculate_seeds(8, True), calculate_seeds(8, False)
    ([1, 5, 3, 7, 2, 6, 4, 8], [1, 8, 4, 5, 2, 7, 3, 6])
    >>> calculate_seeds(6, False)
    [1, 0, 4, 5, 2, 0, 3, 6]
    """
    slots, order = 2, [1, 2]
    while slots < num_team:
        slots *= 2
        grown: list[int] = []
        for seed in order:
            partner = (slots // 2 + seed) % (slots + 1) if new_mode else slots + 1 - seed
            grown += [seed, partner]
        order = [s if s <= num_team else 0 for s in grown]
    return order


def stages_of(entrants: int) -> int:
    """The stages of a knockout of `entrants` engines (the final is the last).

    >>> stages_of(32), stages_of(13), stages_of(2)
    (5, 4, 1)
    """
    return max(1, (entrants - 1).bit_length())


def stage_name(stage: int, stages: int) -> str:
    """How a stage is called, as TCEC's viewer calls it.

    >>> [stage_name(s, 5) for s in range(1, 6)]
    ['Round of 32', 'Round of 16', 'Quarterfinals', 'Semifinals', 'Final']
    """
    matches = 2 ** (stages - stage)
    return {1: "Final", 2: "Semifinals", 4: "Quarterfinals"}.get(matches, f"Round of {2 * matches}")


def decided(regulation: int, points: Iterable[float]) -> bool:
    """Whether a match with these results (the upper engine's points per game) is over: in
    its regulation games once the leader can no longer be caught, after them at the end of
    the first game pair that leaves it untied.

    >>> decided(4, [1, 1, 1]), decided(4, [1, 0.5, 0.5]), decided(4, [0.5] * 4)
    (True, False, False)
    >>> decided(4, [0.5] * 4 + [1]), decided(4, [0.5] * 4 + [1, 0.5])
    (False, True)
    """
    games = list(points)
    lead = abs(2 * sum(games) - len(games))  # upper's points minus lower's
    if len(games) < regulation:
        return lead > regulation - len(games)
    return len(games) % 2 == 0 and lead > 0


@dataclass(frozen=True)
class Match:
    """A match of the bracket: its engines (None while not known; a BYE in the first stage
    is an engine that never comes), its regulation games and the games played."""

    stage: int
    number: int
    upper: str | None
    lower: str | None
    regulation: int
    games: tuple[Game, ...] = ()
    #: the engine that won without the match being decided by its games (a BYE, a withdrawal)
    walkover: str | None = None
    #: the most games it may have (regulation and `tiebreak_pairs`), and the engine that
    #: goes on if it is still tied then: the better seed
    limit: int = 1 << 30
    favourite: str | None = None

    @property
    def points(self) -> tuple[float, float]:
        """The upper and the lower engine's points."""
        upper = sum(g.points(self.upper) for g in self.games if self.upper)
        return upper, len(self.games) - upper

    @property
    def winner(self) -> str | None:
        """The engine that goes on, once the match is over."""
        if self.walkover is not None:
            return self.walkover
        if self.upper is None or self.lower is None:
            return None
        if not decided(self.regulation, (g.points(self.upper) for g in self.games)):
            return self.favourite if len(self.games) >= self.limit else None
        upper, lower = self.points
        return self.upper if upper > lower else self.lower

    def played(self, game: Game) -> Match:
        """The match with `game` played."""
        return dataclasses.replace(self, games=(*self.games, game))

    @property
    def loser(self) -> str | None:
        """The engine that is out (None for a BYE's walkover)."""
        winner = self.winner
        if winner is None:
            return None
        return self.lower if winner == self.upper else self.upper

    @property
    def over(self) -> bool:
        return self.winner is not None

    def next_game(self, white_first: str, options: KnockoutOptions) -> Game:
        """The match's next game, labelled, with its time control in a tiebreak pair."""
        assert self.upper is not None and self.lower is not None
        number = len(self.games) + 1
        first = self.lower if white_first == "lower" else self.upper
        second = self.upper if first == self.lower else self.lower
        white, black = (first, second) if number % 2 else (second, first)
        tc = None
        if number > self.regulation:
            tc = options.tiebreak((number - self.regulation + 1) // 2)
        return Game(white, black, stage=self.stage, match=self.number, number=number, tc=tc)


@dataclass(frozen=True)
class Bracket:
    """Every match so far, stage by stage, the stage being played, and the final places
    once the event is over."""

    stages: tuple[tuple[Match, ...], ...]
    current: int  # the stage being played (1 = first); the last stage once over
    places: tuple[tuple[str, str], ...] = field(default=())  # (place, name), best first

    @property
    def over(self) -> bool:
        return bool(self.places)

    def match_of(self, stage: int, number: int) -> Match:
        return self.stages[stage - 1][number - 1]


def _first_stage(seeded: list[Player], options: KnockoutOptions, stages: int) -> list[Match]:
    """The first stage: the viewer's slot order of a full bracket, with the BYEs (the slots
    of seeds beyond the field) facing the top seeds.  In the old order seed s meets
    N + 1 - s, so the missing seeds face the top ones already; in the equal-distance order
    seed s meets s + N/2, so the seeds below N/2 move down past the BYEs' slots."""
    slots = 2**stages
    byes = slots - len(seeded)
    names: list[str | None] = []
    for s in calculate_seeds(slots, options.bracket == "equal-distance"):
        if options.bracket == "equal-distance" and s > slots // 2:
            s = 0 if s <= slots // 2 + byes else s - byes
        names.append(seeded[s - 1].name if 0 < s <= len(seeded) else None)
    matches = []
    for k in range(slots // 2):
        upper, lower = names[2 * k], names[2 * k + 1]
        bye = upper if lower is None else lower if upper is None else None
        match = _match(1, k + 1, upper, lower, options.regulation(1), options, seeded)
        matches.append(dataclasses.replace(match, walkover=bye))
    return matches


def _match(
    stage: int,
    number: int,
    upper: str | None,
    lower: str | None,
    regulation: int,
    options: KnockoutOptions,
    seeded: list[Player],
) -> Match:
    """A match not yet played, its better seed the favourite after the last tiebreak."""
    rank = {p.name: p.seed for p in seeded}
    known = [name for name in (upper, lower) if name is not None]
    favourite = min(known, key=lambda name: rank[name]) if known else None
    pairs = options.tiebreak_pairs
    limit = regulation + 2 * pairs if pairs is not None else Match.limit
    return Match(stage, number, upper, lower, regulation, limit=limit, favourite=favourite)


def _next_stage(
    done: tuple[Match, ...], options: KnockoutOptions, stages: int, seeded: list[Player]
) -> list[Match]:
    """The stage after `done`: winners of consecutive matches, and in the last stage the
    bronze match of the semifinal losers."""
    stage = done[0].stage + 1
    regulation = options.regulation(stage)
    winners = [m.winner for m in done]
    matches = [
        _match(stage, k + 1, winners[2 * k], winners[2 * k + 1], regulation, options, seeded)
        for k in range(len(done) // 2)
    ]
    if stage == stages and options.bronze_games and len(done) == 2:
        upper, lower = done[0].loser, done[1].loser
        if upper is not None and lower is not None:
            bronze = options.bronze_games
            matches.append(_match(stage, 2, upper, lower, bronze, options, seeded))
    return [_walkover(m) for m in matches]


def _walkover(match: Match, playing: set[str] | None = None) -> Match:
    """The match with a walkover where an engine is missing or (with `playing`) has
    withdrawn: its opponent goes on; of two withdrawn engines, the one ahead (the upper on
    equal points)."""
    if match.over:
        return match
    upper, lower = match.upper, match.lower
    gone = {name for name in (upper, lower) if name is None or (playing and name not in playing)}
    if not gone or (playing is None and upper is not None and lower is not None):
        return match
    if upper in gone and lower not in gone:
        winner = lower
    elif lower in gone and upper not in gone:
        winner = upper
    else:
        up, down = match.points
        winner = lower if down > up else upper
    return dataclasses.replace(match, walkover=winner)


def _places(
    stages: tuple[tuple[Match, ...], ...], seeded: list[Player]
) -> tuple[tuple[str, str], ...]:
    """The final places: the final's winner and loser, the bronze match's (or the two
    semifinal losers sharing third), then each earlier stage's losers sharing the places
    below those still in (in seed order within a shared place)."""
    last = stages[-1]
    final = last[0]
    out: list[tuple[str, str]] = [("1", final.winner or "")]
    if final.loser:
        out.append(("2", final.loser))
    losers: list[list[str]] = []
    if len(last) > 1:
        bronze = last[1]
        out += [("3", bronze.winner or "")] + ([("4", bronze.loser)] if bronze.loser else [])
    elif len(stages) > 1:
        losers.append([m.loser for m in stages[-2] if m.loser])
    earlier = stages[:-2] if len(last) > 1 or len(stages) > 1 else ()
    for matches in reversed(earlier):
        losers.append([m.loser for m in matches if m.loser])
    rank = {p.name: p.seed for p in seeded}
    placed = len(out)
    for group in losers:
        if not group:
            continue
        shown = str(placed + 1) if len(group) == 1 else f"{placed + 1}-{placed + len(group)}"
        out += [(shown, name) for name in sorted(group, key=lambda name: rank[name])]
        placed += len(group)
    return tuple(out)


def bracket(t: Tournament, options: KnockoutOptions) -> Bracket:
    """The bracket of `t` from its seeds and the games played, round by round; a
    `StateError` for a game that is not the next game of a match of its stage.

    >>> from orchestrator.core.event.model import Round
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    >>> one = Round(1, (Game("C", "A", "0-1"), Game("D", "B", "1/2-1/2")))
    >>> b = bracket(Tournament(players, (one,)), KnockoutOptions())
    >>> [(m.upper, m.lower, m.points, m.winner) for m in b.stages[0]]
    [('A', 'C', (1.0, 0.0), None), ('B', 'D', (0.5, 0.5), None)]
    """
    seeded = list(t.by_seed())
    entrants = len(seeded)
    stages = stages_of(entrants)
    done: list[tuple[Match, ...]] = []
    current = tuple(_first_stage(seeded, options, stages))
    for rnd in t.rounds:
        playing = {p.name for p in t.players if p.plays_in(rnd.number)}
        current, done = _advance(current, done, options, seeded, playing)
        if not current:
            raise StateError(f"round {rnd.number}: the knockout was over before it")
        by_engine = {name: m.number for m in current for name in (m.upper, m.lower) if name}
        games: dict[int, list[Game]] = {}
        for game in rnd.games:
            number = by_engine.get(game.white)
            if number is None or by_engine.get(game.black) != number:
                raise StateError(
                    f"round {rnd.number}: {game.white} - {game.black} is not a match of "
                    f"stage {current[0].stage}"
                )
            games.setdefault(number, []).append(game)
        updated = []
        for match in current:
            for game in games.get(match.number, []):
                if match.over:
                    raise StateError(
                        f"round {rnd.number}: {game.white} - {game.black}: their match was "
                        "already decided"
                    )
                expected = match.next_game(options.white_first, options)
                if (game.white, game.black) != (expected.white, expected.black):
                    raise StateError(
                        f"round {rnd.number}: {game.white} - {game.black} should be "
                        f"{expected.white} - {expected.black} (game {expected.number} of "
                        f"stage {match.stage} match {match.number})"
                    )
                match = match.played(game)
            updated.append(match)
        current = tuple(updated)
    playing = {p.name for p in t.players if p.plays_in(len(t.rounds) + 1)}
    current, done = _advance(current, done, options, seeded, playing)
    if current:
        return Bracket((*done, current), current[0].stage)
    every = tuple(done)
    return Bracket(every, len(every), _places(every, seeded))


def _advance(
    current: tuple[Match, ...],
    done: list[tuple[Match, ...]],
    options: KnockoutOptions,
    seeded: list[Player],
    playing: set[str],
) -> tuple[tuple[Match, ...], list[tuple[Match, ...]]]:
    """Walkovers for withdrawn engines, and the next stage while every match of the current
    one is over: (the stage to play, or () once the final is over; the stages done)."""
    stages = stages_of(len(seeded))
    while current:
        current = tuple(_walkover(m, playing) for m in current)
        if not all(m.over for m in current):
            return current, done
        done = [*done, current]
        last = current[0].stage == stages
        current = () if last else tuple(_next_stage(current, options, stages, seeded))
    return current, done


def pair_knockout(t: Tournament, options: KnockoutOptions) -> Draft:
    """The next game of every match of the current stage still being played, in match order;
    once the final (and the bronze match) are over, a finished draft with the places.

    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCD", 1))
    >>> draft = pair_knockout(Tournament(players), KnockoutOptions())
    >>> [(g.white, g.black, g.stage, g.match, g.number) for g in draft.games()]
    [('C', 'A', 1, 1, 1), ('D', 'B', 1, 2, 1)]
    """
    b = bracket(t, options)
    if b.over:
        return Draft((), places=b.places)
    games = [
        m.next_game(options.white_first, options) for m in b.stages[b.current - 1] if not m.over
    ]
    return Draft.of_games(games, openings=tuple(_opening(options, g) for g in games))


def _opening(options: KnockoutOptions, game: Game) -> int:
    """The opening number of a game: game pair p of every match of a stage plays the same
    opening, the book in order, each stage after the regulation pairs of those before it."""
    assert game.stage is not None and game.number is not None
    before = sum(options.regulation(s) for s in range(1, game.stage)) // 2
    return before + (game.number + 1) // 2 - 1


def regulation_rounds(entrants: int, options: KnockoutOptions) -> int:
    """The rounds of a knockout whose every match is played to its regulation length (a
    round is a game of each match): an estimate of its length, for schedules.

    >>> regulation_rounds(32, KnockoutOptions(stage_games=(4, 6, 8, 12, 24), bronze_games=16))
    54
    """
    stages = stages_of(entrants)
    lengths = [options.regulation(s) for s in range(1, stages + 1)]
    lengths[-1] = max(lengths[-1], options.bronze_games)
    return sum(lengths)


def regulation_games(entrants: int, options: KnockoutOptions) -> int:
    """The games of a knockout whose every match is played to its regulation length.

    >>> regulation_games(32, KnockoutOptions(stage_games=(4, 6, 8, 12, 24), bronze_games=16))
    208
    >>> regulation_games(6, KnockoutOptions())  # two first-stage BYEs: 2 + 2 + 1 matches
    10
    """
    stages = stages_of(entrants)
    matches = [entrants - 2 ** (stages - 1)] + [2 ** (stages - s) for s in range(2, stages + 1)]
    games: int = sum(m * options.regulation(s) for s, m in enumerate(matches, 1))
    return games + (options.bronze_games if stages > 1 else 0)


def _check(played: Bracket) -> None:
    """The rounds were the knockout's own (`bracket` raises otherwise)."""


def _fits(options: KnockoutOptions, entrants: int) -> str | None:
    stages = stages_of(entrants)
    if options.stage_games is not None and len(options.stage_games) != stages:
        return (
            f"stage_games has {len(options.stage_games)} entries, but a knockout of {entrants} "
            f"engines has {stages} stage{'s' if stages != 1 else ''} (the first to the final)"
        )
    if options.bronze_games and stages < 2:
        return "bronze_games: a knockout of two engines has no semifinals"
    return None


KNOCKOUT: System[KnockoutOptions, Tournament] = System(
    "knockout",
    "a knockout of game-pair matches, as TCEC's Cup: seeded bracket, tiebreak pairs, bronze",
    pair_knockout,
    KnockoutOptions,
    noun="a knockout",
    default_rounds=lambda entrants, cycles, options: regulation_rounds(entrants, options),
    misfit=_fits,
    phase=False,
    unfixable="a knockout's pairings are its bracket: none can be fixed",
    games_planned=lambda t, options: regulation_games(t.entrants(), options),
    own_games=True,
    ends_itself=True,
    check_rounds=lambda t, options: _check(bracket(t, options)),
)
