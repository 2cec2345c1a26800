"""A toy pairing system, registered in one place: players paired in the order of their
names (or the reverse), for the test that a registered system is accepted everywhere."""

from __future__ import annotations

import msgspec

from orchestrator.core.event.model import Game, Tournament
from orchestrator.core.pairing.registry import Draft, System, register


class ToyOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    reverse: bool = False


def pair_by_name(t: Tournament, options: ToyOptions) -> Draft:
    number = len(t.rounds) + 1
    names = sorted((p.name for p in t.players if p.plays_in(number)), reverse=options.reverse)
    bye = names.pop() if len(names) % 2 else None
    return Draft.of_games((Game(a, b) for a, b in zip(names[::2], names[1::2], strict=True)), bye)


TOY = register(
    System("toy", "players paired in the order of their names", pair_by_name, ToyOptions)
)
