"""The TCEC Swiss pairing rules (docs/systems/swiss.md) as a pure function.

`pair_swiss(t)` pairs round ``len(t.rounds) + 1`` from the results stored in `t`:

1. pairing order: score descending, seed ascending (BYE points count);
2. the BYE: fewest BYEs, then lowest in pairing order; it is left out of everything below;
3. viability: allowed pairs have not met in the encounter history and |WGD1 + WGD2| <= 2;
   while the rest has no perfect matching, the earliest history round is removed for good;
4. greedy: the first unpaired player takes the highest-ranked allowed partner that leaves a
   perfect matching for the rest;
5. colours, and the worst-first playing order (the registry makes the double rounds).

Removals are permanent, so the number removed before each past round is recomputed by
replaying the stored rounds; each stored round is normally its own proof of viability, so
the replay costs one linear pass per round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.core.event.model import Format, Game, Round, StateError, Tournament
from orchestrator.core.pairing.matching import PerfectMatching, bits
from orchestrator.core.pairing.registry import NO_OPTIONS, Draft, NoOptions, System


@dataclass
class SwissState:
    """Per-player figures after some rounds, indexed by seed order (0 = seed 1)."""

    names: list[str]
    score: list[float]
    wgd: list[int]
    byes: list[int]
    withdrawn_after: list[int | None] = field(default_factory=list)  # per player
    partners: list[list[int]] = field(default_factory=list)  # per round: partner or -1
    last_met: dict[tuple[int, int], int] = field(default_factory=dict)  # (a, b) -> round
    dropped: int = 0  # rounds removed from the encounter history so far

    @classmethod
    def start(cls, t: Tournament) -> SwissState:
        """The state before the first round: everyone on zero.

        >>> from orchestrator.core.event.model import Player
        >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
        >>> SwissState.start(Tournament(players)).score
        [0.0, 0.0, 0.0, 0.0]
        """
        players = t.by_seed()
        n = len(players)
        withdrawn = [p.withdrawn_after for p in players]
        return cls([p.name for p in players], [0.0] * n, [0] * n, [0] * n, withdrawn)

    def plays_in(self, player: int, round_number: int) -> bool:
        """Whether `player` (a seed index) is paired in round `round_number`.

        >>> SwissState(["A"], [0.0], [0], [0], [2]).plays_in(0, 3)
        False
        """
        withdrawn = self.withdrawn_after[player] if self.withdrawn_after else None
        return withdrawn is None or round_number <= withdrawn

    def pairing_order(self) -> list[int]:
        """Players (by seed index) in pairing order: score, then seed.

        >>> SwissState(list("ABC"), [1.0, 2.0, 1.0], [0, 0, 0], [0, 0, 0]).pairing_order()
        [1, 0, 2]
        """
        return sorted(range(len(self.names)), key=lambda i: (-self.score[i], i))

    def met_masks(self, first_round: int) -> list[int]:
        """Per player, a bitmask (by seed index) of opponents met in rounds >= first_round.

        >>> state = SwissState(list("AB"), [0.0, 0.0], [0, 0], [0, 0], partners=[[1, 0]])
        >>> state.met_masks(1), state.met_masks(2)
        ([2, 1], [0, 0])
        """
        met = [0] * len(self.names)
        for partners in self.partners[first_round - 1 :]:
            for i, j in enumerate(partners):
                if j >= 0:
                    met[i] |= 1 << j
        return met

    def apply(self, rnd: Round, index: dict[str, int], games_per_pair: int) -> None:
        """Take in a played round: scores, colour differences (WGD), BYEs, encounters.

        >>> from orchestrator.core.event.model import Game
        >>> state = SwissState(list("ABC"), [0.0] * 3, [0] * 3, [0] * 3)
        >>> state.apply(Round(1, (Game("A", "B", "1-0"),), bye="C"), {"A": 0, "B": 1, "C": 2}, 1)
        >>> state.score, state.wgd, state.byes
        ([1.0, 0.0, 1.0], [1, -1, 0], [0, 0, 1])
        >>> state.apply(Round(2, (Game("C", "B", "1-0", forfeit=True),)), {"B": 1, "C": 2}, 1)
        >>> state.score, state.wgd, state.partners[-1]  # a forfeit: no colour, no encounter
        ([1.0, 0.0, 2.0], [1, -1, 0], [-1, -1, -1])
        """
        partners = [-1] * len(self.names)
        for g in rnd.games:
            w, b = index[g.white], index[g.black]
            self.score[w] += g.points(g.white)
            self.score[b] += g.points(g.black)
            if g.forfeit:  # no colour, no encounter
                continue
            partners[w], partners[b] = b, w
            self.last_met[w, b] = self.last_met[b, w] = len(self.partners) + 1
            self.wgd[w] += 1
            self.wgd[b] -= 1
        if rnd.bye is not None:
            bye = index[rnd.bye]
            self.byes[bye] += 1
            self.score[bye] += games_per_pair  # a win for each game of the round
        self.partners.append(partners)


def replay(t: Tournament) -> SwissState:
    """The state after every stored round, with the encounter-history removals they needed.

    >>> from orchestrator.core.event.model import Player
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    >>> from orchestrator.core.event.simulation import simulate
    >>> played = simulate(Tournament(players), 2).tournament
    >>> state = replay(played)
    >>> len(state.partners), state.dropped
    (2, 0)
    """
    state = SwissState.start(t)
    index = {name: i for i, name in enumerate(state.names)}
    for rnd in t.rounds:
        state.dropped = _dropped_before(state, rnd, index)
        state.apply(rnd, index, t.rules.games_per_pair)
    return state


def _dropped_before(state: SwissState, rnd: Round, index: dict[str, int]) -> int:
    """How many history rounds had been removed when `rnd` was paired."""
    played = len(state.partners)
    paired = [g for g in rnd.games if not g.forfeit]
    pairs = {(index[g.white], index[g.black]) for g in paired}
    colours_ok = all(abs(state.wgd[a] + state.wgd[b]) <= 2 for a, b in pairs)
    players = {index[n] for g in paired for n in (g.white, g.black)}
    for k in range(state.dropped, played + 1):
        if colours_ok and all(state.last_met.get(pair, 0) <= k for pair in pairs):
            return k  # the stored round itself is a viable pairing
        order = sorted(players, key=lambda i: (-state.score[i], i))
        if _viable(state, order, state.met_masks(k + 1)) is not None:
            return k
    return played


def _adjacency(
    state: SwissState, order: list[int], met: list[int], colours: bool = True
) -> list[int]:
    """Bitmask rows of allowed pairs, with vertices numbered in pairing order; without
    `colours`, the colour condition is waived."""
    pos = {player: v for v, player in enumerate(order)}
    by_wgd: dict[int, int] = {}
    for v, player in enumerate(order):
        by_wgd[state.wgd[player]] = by_wgd.get(state.wgd[player], 0) | 1 << v
    colour_ok = {
        w: sum(mask for x, mask in by_wgd.items() if abs(w + x) <= 2 or not colours) for w in by_wgd
    }
    rows = []
    for v, player in enumerate(order):
        met_v = 0
        for j in bits(met[player]):
            if j in pos:
                met_v |= 1 << pos[j]
        rows.append(colour_ok[state.wgd[player]] & ~met_v & ~(1 << v))
    return rows


def _viable(
    state: SwissState, order: list[int], met: list[int], colours: bool = True
) -> PerfectMatching | None:
    """A perfect matching of allowed pairs among `order`, or None.

    Our own search proves a matching by finding one; when it finds none, networkx's blossom
    algorithm has the last word, since that verdict permanently removes history.
    """
    adjacency = _adjacency(state, order, met, colours)
    alive = (1 << len(order)) - 1
    found = PerfectMatching.find(adjacency, alive)
    if found is not None:
        return found
    import networkx as nx  # only to confirm that no pairing exists: rare, and slow to import

    graph = nx.Graph()
    graph.add_nodes_from(range(len(order)))
    graph.add_edges_from((v, u) for v in range(len(order)) for u in bits(adjacency[v]) if u > v)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) < len(order):
        return None
    confirmed = PerfectMatching(adjacency, alive)
    for a, b in matching:
        confirmed.mate[a], confirmed.mate[b] = b, a
    return confirmed


def choose_bye(state: SwissState, order: list[int]) -> int | None:
    """The BYE among the players of `order`: fewest BYEs so far, then the lowest in pairing
    order.

    >>> state = SwissState(list("ABC"), [0.0] * 3, [0] * 3, [0, 0, 1])
    >>> choose_bye(state, [0, 1, 2])
    1
    """
    if len(order) % 2 == 0:
        return None
    fewest = min(state.byes[i] for i in order)
    return next(i for i in reversed(order) if state.byes[i] == fewest)


def pair_swiss(t: Tournament, options: NoOptions = NO_OPTIONS) -> Draft:
    """The first leg of the next round of a Swiss event by the TCEC rules.

    >>> from orchestrator.core.event.model import Player, Rules
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    >>> draft = pair_swiss(Tournament(players, rules=Rules(format="double")))
    >>> [(g.white, g.black) for g in draft.games()]
    [('D', 'C'), ('B', 'A')]
    """
    return pair_from(replay(t), t.rules.format)


def pair_from(state: SwissState, fmt: Format) -> Draft:
    """Pair the first leg of the round after those `state` has taken in.

    >>> from orchestrator.core.event.model import Player
    >>> players = tuple(Player(name, seed) for seed, name in enumerate("ABCD", 1))
    >>> len(pair_from(SwissState.start(Tournament(players)), "single").units)
    2
    """
    round_no = len(state.partners) + 1
    order = [i for i in state.pairing_order() if state.plays_in(i, round_no)]
    if len(order) < 2:
        raise StateError(f"round {round_no}: fewer than two players are left to pair")
    bye = choose_bye(state, order)
    order = [i for i in order if i != bye]
    dropped, colours = state.dropped, True
    while (matching := _viable(state, order, state.met_masks(dropped + 1), colours)) is None:
        dropped += 1
        if dropped > len(state.partners):
            if not colours:  # cannot happen: an even field pairs with no condition at all
                raise StateError(f"round {round_no}: no pairing exists")
            # not even an empty history meets the colour condition (only withdrawals,
            # forfeits or a director's results leave such a field): the round waives it
            dropped, colours = state.dropped, False
    pairs: list[tuple[int, int]] = []
    while matching.alive:
        first = (matching.alive & -matching.alive).bit_length() - 1
        for second in bits(matching.adj[first] & matching.alive):
            if matching.take(first, second):
                pairs.append((order[first], order[second]))
                break
        else:  # cannot happen: the current mate of `first` is always accepted
            raise AssertionError(f"round {round_no}: no partner for {state.names[order[first]]}")
    games: list[Game] = []
    names = state.names
    for first, second in reversed(pairs):  # worst first
        if fmt == "single":
            white, black = _single_colours(state, first, second, round_no)
            games.append(Game(names[white], names[black]))
        else:  # the first-of-pair has black in the first game
            games.append(Game(names[second], names[first]))
    return Draft.of_games(games, names[bye] if bye is not None else None, dropped)


def _single_colours(state: SwissState, first: int, second: int, round_no: int) -> tuple[int, int]:
    """(white, black) for a single-round pair: WGD, then score, then the 2112 pattern."""
    if state.wgd[first] != state.wgd[second]:
        return (second, first) if state.wgd[first] > state.wgd[second] else (first, second)
    if state.score[first] != state.score[second]:
        return (second, first) if state.score[first] > state.score[second] else (first, second)
    first_white = round_no % 4 in (2, 3)
    return (first, second) if first_white else (second, first)


SWISS = System(
    "swiss",
    "the TCEC Swiss rules (the default)",
    pair_swiss,
    noun="a TCEC Swiss",
)
