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

from typing import Annotated

import msgspec

from orchestrator.core.event.model import Game, StateError, Tournament
from orchestrator.core.pairing.registry import Draft, System
from orchestrator.core.pairing.round import check_replay
from orchestrator.core.pairing.roundrobin import berger_game

__all__ = ["GAUNTLET", "MATCH", "GauntletOptions", "MatchOptions", "gauntlet_round"]


class GauntletOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How many of the top seeds run the gauntlet."""

    gauntlets: Annotated[int, msgspec.Meta(ge=1, description="an integer >= 1")] = 1


class MatchOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The games of a match, in game pairs."""

    games: Annotated[int, msgspec.Meta(ge=2, multiple_of=2, description="an even number >= 2")] = 2


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
    seeded = [p.name for p in t.by_seed()]
    per_cycle = rounds_per_cycle(len(seeded), options.gauntlets)
    done = len(t.rounds)
    if done >= per_cycle * t.rules.cycles:
        raise StateError(f"all {per_cycle * t.rules.cycles} rounds of the gauntlet are played")
    cycle, r = divmod(done, per_cycle)
    playing = {p.name for p in t.players if p.plays_in(done + 1)}
    games = []
    for white, black in gauntlet_round(len(seeded), options.gauntlets, r + 1):
        w, b = seeded[white - 1], seeded[black - 1]
        if w in playing and b in playing:
            games.append(Game(b, w) if cycle % 2 else Game(w, b))
    return Draft.of_games(games)


def _gauntlet_length(players: int, cycles: int, options: GauntletOptions) -> int:
    return rounds_per_cycle(players, options.gauntlets) * cycles


def _gauntlets_fit(options: GauntletOptions, entrants: int) -> str | None:
    if options.gauntlets < entrants:
        return None
    return f"gauntlets: {options.gauntlets} of {entrants} engines leaves no one to play"


def pair_match(t: Tournament, options: MatchOptions) -> Draft:
    """The next game pair of the match: one opening, colours reversed, back to back.

    >>> from orchestrator.core.event.model import Player, Round
    >>> players = (Player("A", 1), Player("B", 2))
    >>> [(g.white, g.black) for g in pair_match(Tournament(players), MatchOptions(4)).games()]
    [('A', 'B'), ('B', 'A')]
    >>> one = Round(1, (Game("A", "B", "1-0"), Game("B", "A", "1-0")))
    >>> draft = pair_match(Tournament(players, (one,)), MatchOptions(4))
    >>> [(g.white, g.black) for g in draft.games()]
    [('B', 'A'), ('A', 'B')]
    """
    first, second = (p.name for p in t.by_seed())
    done = len(t.rounds)
    if done >= options.games // 2:
        raise StateError(f"all {options.games} games of the match are played")
    number = done + 1
    playing = {p.name for p in t.players if p.plays_in(number)}
    if first not in playing or second not in playing:
        return Draft(())
    white, black = (first, second) if number % 2 else (second, first)
    return Draft(((Game(white, black), Game(black, white)),))


def _two(options: MatchOptions, entrants: int) -> str | None:
    return None if entrants == 2 else f"a match is between two engines, not {entrants}"


GAUNTLET: System[GauntletOptions] = System(
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
    games_planned=lambda players, rules, options: (
        rules.games_per_pair * rules.cycles * gauntlet_games(players, options.gauntlets)
    ),
)
MATCH: System[MatchOptions] = System(
    "match",
    "two engines, `games` games: each opening twice with colours reversed, back to back",
    pair_match,
    MatchOptions,
    noun="a match",
    default_rounds=lambda players, cycles, options: options.games // 2,
    max_rounds=lambda players, cycles, options: options.games // 2,
    misfit=_two,
    phase=False,
    unfixable="a match's pairings are its game pairs: none can be fixed",
    own_games=True,
    check_rounds=lambda t, options: check_replay(t),
    games_planned=lambda players, rules, options: options.games,
)
