"""Pair the next round, whatever the system: the registered system of the round (or of its
phase), the pairs a director fixed, and the round's legs."""

from __future__ import annotations

import msgspec

from orchestrator.core.event.model import Game, Pairing, RoundNotes, StateError, Tournament
from orchestrator.core.pairing.registry import Draft, legs, lookup


def pair_next(tournament: Tournament) -> Pairing:
    """The next round of `tournament` in playing order, by its system's rules.

    >>> from orchestrator.core.event.model import Player
    >>> pairing = pair_next(Tournament(tuple(Player(n, s) for s, n in enumerate("ABCD", 1))))
    >>> [(g.white, g.black) for g in pairing.games]
    [('D', 'C'), ('B', 'A')]
    """
    draft = _with_fixed(tournament) if tournament.fixed else first_leg(tournament)
    rules = tournament.rules
    if lookup(rules.system_of(len(tournament.rounds) + 1)[0]).own_games:
        games = draft.games()  # the system gave every game of the round, colours and all
    else:
        games = legs(draft.units, rules.format, rules.schedule, draft.swap)
    notes = {f: getattr(draft, f) for f in RoundNotes.__struct_fields__}
    return Pairing(len(tournament.rounds) + 1, games, **notes)


def first_leg(t: Tournament) -> Draft:
    """The first leg of `t`'s next round by the system of that round."""
    name, options = t.rules.system_of(len(t.rounds) + 1)
    return lookup(name).first_leg(t, options)


def _with_fixed(t: Tournament) -> Draft:
    """The next round with the director's fixed pairs (manual pairings): the system pairs
    the rest, who may include the BYE; the fixed pairs play first-leg colours as given, last.

    >>> from orchestrator.core.event.model import Player
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABCDEF", 1))
    >>> pairing = pair_next(Tournament(players, fixed=(("F", "A"),)))
    >>> [(g.white, g.black) for g in pairing.games]
    [('E', 'D'), ('C', 'B'), ('F', 'A')]
    """
    number = len(t.rounds) + 1
    playing = {p.name for p in t.players if p.plays_in(number)}
    taken = [name for pair in t.fixed for name in pair]
    for name in taken:
        if name not in playing:
            raise StateError(f"round {number}: {name!r} does not play this round")
    if len(set(taken)) != len(taken) or any(a == b for a, b in t.fixed):
        raise StateError(f"round {number}: a player is in two fixed pairs")
    system = lookup(t.rules.system_of(number)[0])
    if system.unfixable:
        raise StateError(system.unfixable)
    rest = msgspec.structs.replace(
        t,
        fixed=(),
        players=tuple(
            msgspec.structs.replace(p, withdrawn_after=number - 1) if p.name in taken else p
            for p in t.players
        ),
    )
    left = sorted(playing - set(taken))
    if len(left) >= 2:
        paired = first_leg(rest)
        units, bye, dropped = paired.units, paired.bye, paired.dropped_rounds
    else:
        units, bye, dropped = (), (left[0] if left else None), 0
    fixed = tuple((Game(white, black),) for white, black in t.fixed)
    return Draft(units + fixed, bye=bye, dropped_rounds=dropped)


def check_replay(t: Tournament) -> None:
    """A `StateError` unless every played round of `t` holds the games its system pairs for
    the rounds before it, in order (without the games a withdrawing player's cancellation
    left out): the check of the systems whose rounds are not everyone's.

    >>> from orchestrator.core.event.model import Player, Round, Rules
    >>> players = (Player("A", 1), Player("B", 2), Player("C", 3))
    >>> rules = Rules(system="gauntlet", format="single")
    >>> check_replay(Tournament(players, (Round(1, (Game("C", "A", "1-0"),)),), rules=rules))
    Traceback (most recent call last):
    ...
    orchestrator.core.event.parts.StateError: round 1: the games are C-A, not A-B (as paired)
    """
    for rnd in t.rounds:
        before = msgspec.structs.replace(t, rounds=t.rounds[: rnd.number - 1])
        withdrawing = {p.name for p in t.players if p.withdrawn_after == rnd.number}
        paired = [(g.white, g.black) for g in pair_next(before).games]
        played = [(g.white, g.black) for g in rnd.games]
        kept = [pair for pair in paired if pair in played or not set(pair) & withdrawing]
        if played != kept:
            shown = ", ".join(f"{w}-{b}" for w, b in played) or "none"
            expected = ", ".join(f"{w}-{b}" for w, b in paired) or "none"
            raise StateError(
                f"round {rnd.number}: the games are {shown}, not {expected} (as paired)"
            )
