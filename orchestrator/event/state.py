"""The event's state as the pure core sees it, built from the stored rows in one place.

One rule decides which rounds count: a round counts once every one of its games has a
result.  The pairing of the next round sees those rounds; the standings (their files, the
read commands and the web view) see every finished game, also of the round being played
(`tournament(..., played=True)`), and say that they are provisional.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orchestrator.config.model import Config
from orchestrator.core.event.model import Game, Pairing, Player, Round, Tournament
from orchestrator.core.event.seeding import seed
from orchestrator.core.game.book import Book
from orchestrator.core.game.openings import START, Opening, Variant, choose, draw_position
from orchestrator.core.game.variants import is_960, rules_of
from orchestrator.core.pairing.registry import lookup
from orchestrator.event.settings import EventSettings, pairing_rules
from orchestrator.store.database import NewGame, RoundRow


def seeded_players(config: Config) -> tuple[Player, ...]:
    """The config's engines as players, seeded by the config's method.

    >>> from pathlib import Path
    >>> from orchestrator.event.sample import sample_config
    >>> seeded_players(sample_config(Path("/tmp")))[0]
    Player(name='A', seed=1, withdrawn_after=None)
    """
    section = config.tournament
    if lookup(section.system).teams:  # team by team, board by board
        members = [name for team in config.teams() for name in team.members]
        return tuple(Player(name, i + 1) for i, name in enumerate(members))
    names = seed(
        [e.name for e in config.engines],
        section.seeding,
        ratings=[e.rating for e in config.engines],
        groups=config.groups(),
        rng_seed=section.random_seed,
    )
    return tuple(Player(name, i + 1) for i, name in enumerate(names))


def tournament(
    settings: EventSettings,
    players: Sequence[Player],
    rounds: Sequence[RoundRow] = (),
    *,
    played: bool = False,
) -> Tournament:
    """The stored event as a core `Tournament`: every round whose games all have a result
    (what pairing the next round needs), or with `played` every finished game, also of a
    round not yet over (what provisional standings count).

    >>> settings = EventSettings(name="E", players=("A", "B"), rounds=2, format="single")
    >>> tournament(settings, [Player("A", 1), Player("B", 2)]).rules.games_per_pair
    1
    """
    return Tournament(
        players=tuple(players),
        rounds=tuple(core for core, whole in map(_core_round, rounds) if played or whole),
        rules=pairing_rules(settings),
        teams=settings.teams,
    )


#: the core rounds made from finished rounds' rows (and whether every game of theirs has a
#: result), by the row's identity, for as long as the row lives: the store keeps a finished
#: round's row from one read of the event to the next (`FinishedRounds`), so that the
#: event's core is made from the rounds read since
_made: dict[int, tuple[weakref.ref[RoundRow], Round, bool]] = {}


def _core_round(row: RoundRow) -> tuple[Round, bool]:
    """`row` as a core `Round` (its games that have a result, and its BYE), and whether
    every game of it has one; made once for a finished round's row, while it lives.

    >>> row = RoundRow(1, None, 0, "p", "f", ())
    >>> _core_round(row)[0] is _core_round(row)[0], _core_round(row)
    (True, (Round(number=1, games=(), bye=None), True))
    """
    key = id(row)
    made = _made.get(key)
    if made is not None and made[0]() is row:
        return made[1], made[2]
    core = Round(
        row.number,
        tuple(
            Game(
                g.white,
                g.black,
                g.result,
                g.forfeit,
                g.stage,
                g.slot,
                g.match_game,
                g.tc,
                g.rmobility,
            )
            for g in row.games
            if g.result
        ),
        row.bye,
    )
    whole = len(core.games) == len(row.games)
    if row.finished_at is not None:  # (a round in play changes from one read to the next)

        def forget(_: weakref.ref[RoundRow]) -> None:  # the row is gone: its entry too
            _made.pop(key, None)

        _made[key] = (weakref.ref(row, forget), core, whole)
    return core, whole


def pair_numbers(games: Sequence[Game], first: int) -> list[int]:
    """The event-wide index of each game's pair, counting on from `first`: both games of a
    pair (the same two players) share one, and it chooses their opening.

    >>> pair_numbers([Game("A", "B"), Game("C", "D"), Game("B", "A"), Game("D", "C")], 10)
    [10, 11, 10, 11]
    """
    index: dict[frozenset[str], int] = {}
    return [index.setdefault(frozenset((g.white, g.black)), first + len(index)) for g in games]


@dataclass(frozen=True)
class OpeningChoice:
    """The opening suite and how an event chooses from it."""

    suite: Sequence[Opening]
    seed: int = 1
    order: str = "random"
    variant: Variant = "standard"
    #: a Polyglot book that continues every pair's opening (`book`, `book_depth`)
    book: Book | None = None
    #: a suite's lines are cut after this many plies (`opening_plies`; None: whole)
    plies: int | None = None
    #: the suite's line the first pair takes, from 1 (`opening_start`)
    start: int = 1
    #: each game pair takes the next opening ("pair"), or each round ("round")
    policy: str = "pair"

    def for_pair(self, pair: int) -> Opening | None:
        """The opening of the event's `pair`-th pair: from the suite, or without one a
        Chess960 event's start position drawn from the seed, a variant's own start position,
        or None (the standard position).

        >>> OpeningChoice([Opening("a"), Opening("b")], order="sequential").for_pair(3).name
        'b'
        >>> OpeningChoice((), seed=3, variant="chess960").for_pair(0).chess960
        True
        >>> OpeningChoice((), variant="crazyhouse").for_pair(0).board().fen()
        'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1'

        `opening_start` and `opening_plies`:

        >>> suite = [Opening.from_san(line) for line in ("e4 e5 Nf3", "d4 d5 c4", "c4")]
        >>> choice = OpeningChoice(suite, order="sequential", start=2, plies=2)
        >>> [choice.for_pair(pair).moves for pair in range(3)]
        [('d2d4', 'd7d5'), ('c2c4',), ('e2e4', 'e7e5')]
        """
        opening: Opening | None = None
        if self.suite:
            opening = choose(list(self.suite), pair + self.start - 1, self.seed, self.order)
            if self.plies is not None and len(opening.moves) > self.plies:
                opening = opening.cut(self.plies)
        elif is_960(self.variant):
            opening = draw_position(self.variant, self.seed, pair)
        elif rules_of(self.variant) != "chess":  # the variant's own start position
            opening = replace(START, rules=rules_of(self.variant))
        if self.book is not None:
            opening = self.book.extend(opening, self.seed, pair)
        return opening


def new_games(pairing: Pairing, first_pair: int, openings: OpeningChoice) -> list[NewGame]:
    """The rows of a newly paired round's games, in playing order, with their pair index
    and opening.

    >>> pairing = Pairing(3, (Game("A", "B"), Game("B", "A")))
    >>> [(g.number, g.pair, g.white) for g in new_games(pairing, 7, OpeningChoice(()))]
    [(1, 7, 'A'), (2, 7, 'B')]

    A system that numbers its openings itself (a knockout) gives each game's number:

    >>> knockout = Pairing(5, (Game("A", "B", stage=2, match=1, number=3),), openings=(4,))
    >>> [(g.pair, g.stage, g.slot, g.match_game) for g in new_games(knockout, 7, OpeningChoice(()))]
    [(4, 2, 1, 3)]

    With `opening_policy = "round"` every game of round 3 takes the suite's third opening:

    >>> suite = [Opening(name) for name in "abcd"]
    >>> choice = OpeningChoice(suite, order="sequential", policy="round")
    >>> round_3 = Pairing(3, (Game("A", "B"), Game("C", "D"), Game("B", "A"), Game("D", "C")))
    >>> [(g.pair, g.opening.name) for g in new_games(round_3, 4, choice)]
    [(4, 'c'), (5, 'c'), (4, 'c'), (5, 'c')]
    """
    pairs = list(pairing.openings) or pair_numbers(pairing.games, first_pair)
    by_round = openings.policy == "round" and not pairing.openings
    return [
        NewGame(
            number,
            pair,
            game.white,
            game.black,
            openings.for_pair(pairing.round - 1 if by_round else pair),
            game.stage,
            game.match,
            game.number,
            game.tc,
        )
        for number, (game, pair) in enumerate(zip(pairing.games, pairs, strict=True), start=1)
    ]
