"""Round robin by the Berger tables, for TCEC-style league events.

With n players (n even; an odd field gets a phantom opponent whose partner has the BYE, a
rest day that scores nothing),
Berger number n is fixed and in round r the others pair up as i + j = r + 1 (mod n - 1);
the player with 2i = r + 1 meets n.  Boards follow FIDE's tables: the game of player n on
board 1, then outward around the circle.  In a pair without n, i has white when
(j - i) mod (n - 1) is odd; n has white in even rounds.  Every second cycle reverses all
colours.  Seed k is Berger number k.
"""

from __future__ import annotations

from orchestrator.core.event.model import Game, StateError, Tournament
from orchestrator.core.pairing.registry import NO_OPTIONS, Draft, NoOptions, System


def berger_round(n: int, r: int) -> list[tuple[int, int]]:
    """(white, black) Berger numbers 1..n (n even) for round r (1..n-1), board order.

    >>> berger_round(4, 1), berger_round(4, 2)
    ([(1, 4), (2, 3)], [(4, 3), (1, 2)])
    """
    m = n - 1
    hub = _hub(n, r)
    games = [berger_game(n, r, n)]
    for k in range(1, n // 2):
        games.append(berger_game(n, r, (hub + k - 1) % m + 1))
    return games


def _hub(n: int, r: int) -> int:
    """The player who meets n in round r: 2 * hub = r + 1 (mod n - 1)."""
    m = n - 1
    return next(i for i in range(1, n) if (2 * i - 1) % m == r % m)


def berger_game(n: int, r: int, i: int) -> tuple[int, int]:
    """The (white, black) game of Berger number `i` in round r (n even).

    >>> berger_game(4, 2, 3), berger_game(4, 2, 2)
    ((4, 3), (1, 2))
    """
    m = n - 1
    hub = _hub(n, r)
    if i in (n, hub):
        return (n, hub) if r % 2 == 0 else (hub, n)
    j = (r + 1 - i - 1) % m + 1  # i + j = r + 1 (mod n - 1)
    return (i, j) if (j - i) % m % 2 == 1 else (j, i)


def rounds_in_cycle(players: int) -> int:
    """Rounds of one cycle: an odd field plays one more (each player has one BYE).

    >>> rounds_in_cycle(8), rounds_in_cycle(7)
    (7, 7)
    """
    return players - 1 if players % 2 == 0 else players


def total_rounds(players: int, cycles: int) -> int:
    """Rounds of the whole round robin.

    >>> total_rounds(8, 2)
    14
    """
    return rounds_in_cycle(players) * cycles


def pair_round_robin(t: Tournament, options: NoOptions = NO_OPTIONS) -> Draft:
    """The next round of the Berger table, cycles repeating with colours reversed; a
    `StateError` when every round has been played.  A withdrawn player's games (and BYE)
    are left out of the rounds after its withdrawal: its opponents have a free round.

    >>> from orchestrator.core.event.model import Player, Rules
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABC", 1))
    >>> draft = pair_round_robin(Tournament(players, rules=Rules(system="round-robin")))
    >>> [(g.white, g.black) for g in draft.games()], draft.bye
    ([('B', 'C')], 'A')
    """
    seeded = [p.name for p in t.by_seed()]
    n = len(seeded) + len(seeded) % 2
    per_cycle = n - 1
    done = len(t.rounds)
    cycles = t.rules.cycles
    if done >= per_cycle * cycles:
        raise StateError(f"all {per_cycle * cycles} rounds of the round robin are played")
    cycle, r = divmod(done, per_cycle)
    bye = None
    games: list[Game] = []
    for white, black in berger_round(n, r + 1):
        if max(white, black) > len(seeded):
            bye = seeded[min(white, black) - 1]
            continue
        w, b = seeded[white - 1], seeded[black - 1]
        games.append(Game(b, w) if cycle % 2 else Game(w, b))
    playing = {p.name for p in t.players if p.plays_in(done + 1)}
    games = [g for g in games if g.white in playing and g.black in playing]
    return Draft.of_games(games, bye if bye in playing else None)


ROUND_ROBIN = System(
    "round-robin",
    "Berger tables, `cycles` times",
    pair_round_robin,
    noun="a round robin",
    default_rounds=lambda players, cycles, options: total_rounds(players, cycles),
    max_rounds=lambda players, cycles, options: total_rounds(players, cycles),
    phase=False,
    unfixable="a round robin's pairings are its table: none can be fixed",
    bye_scores=False,
)
