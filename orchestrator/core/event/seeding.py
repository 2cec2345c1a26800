"""Seeding: turn an entry list into seed numbers (docs/systems/swiss.md, from the TCEC rules).

Every method returns the names in seed order (first = seed 1).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

SeedingMethod = Literal["explicit", "group", "equal-distance", "random"]
SEEDING_METHODS: tuple[SeedingMethod, ...] = ("explicit", "group", "equal-distance", "random")


def split_groups(by_strength: Sequence[str], groups: int) -> list[list[str]]:
    """Groups A, B, ... of consecutive players; the stronger groups take the extra players.

    >>> split_groups(list("abcdefghijk"), 4)
    [['a', 'b', 'c'], ['d', 'e', 'f'], ['g', 'h', 'i'], ['j', 'k']]
    """
    if groups < 1:
        raise ValueError(f"the number of groups must be at least 1, not {groups}")
    groups = min(groups, len(by_strength)) or 1
    size, extra = divmod(len(by_strength), groups)
    out, start = [], 0
    for g in range(groups):
        end = start + size + (1 if g < extra else 0)
        out.append(list(by_strength[start:end]))
        start = end
    return out


def interleave(groups: Sequence[Sequence[str]]) -> list[str]:
    """Seeds A1, B1, C1, ..., A2, B2, ...: the strongest unseeded player of each group in turn.

    >>> interleave([["a1", "a2"], ["b1", "b2"], ["c1"]])
    ['a1', 'b1', 'c1', 'a2', 'b2']
    """
    longest = max((len(g) for g in groups), default=0)
    return [g[i] for i in range(longest) for g in groups if i < len(g)]


def group_seeding(by_strength: Sequence[str], groups: int) -> list[str]:
    """Players (strongest first) split into `groups` groups, then interleaved.

    >>> group_seeding(list("abcdef"), 2)
    ['a', 'd', 'b', 'e', 'c', 'f']
    """
    return interleave(split_groups(by_strength, groups))


def equal_distance_seeding(by_strength: Sequence[str]) -> list[str]:
    """Group seeding with players / 2 groups (rounded down): top encounters come late.

    >>> equal_distance_seeding(list("abcdef"))
    ['a', 'c', 'e', 'b', 'd', 'f']
    """
    return group_seeding(by_strength, max(1, len(by_strength) // 2))


def random_seeding(names: Sequence[str], rng_seed: int) -> list[str]:
    """A shuffle drawn from `rng_seed`: the same seed, the same order.

    >>> random_seeding(list("abcd"), 7) == random_seeding(list("abcd"), 7)
    True
    >>> sorted(random_seeding(list("abcd"), 7))
    ['a', 'b', 'c', 'd']
    """
    order = list(names)
    random.Random(rng_seed).shuffle(order)
    return order


def by_strength(names: Sequence[str], ratings: Sequence[float | None]) -> list[str]:
    """Strongest first by rating; unrated players after rated ones; ties keep entry order.

    >>> by_strength(["a", "b", "c", "d"], [3000, None, 3500, 3000])
    ['c', 'a', 'd', 'b']
    """
    indexed = range(len(names))
    key = sorted(indexed, key=lambda i: (ratings[i] is None, -(ratings[i] or 0.0), i))
    return [names[i] for i in key]


def seed(
    names: Sequence[str],
    method: SeedingMethod = "explicit",
    *,
    ratings: Sequence[float | None] | None = None,
    groups: int = 2,
    rng_seed: int = 1,
) -> list[str]:
    """Names in seed order by `method`; `ratings` order the group methods.

    >>> seed(["a", "b", "c", "d"], "group", ratings=[1, 2, 3, 4], groups=2)
    ['d', 'b', 'c', 'a']
    >>> seed(["a", "b"])
    ['a', 'b']
    """
    strength = by_strength(names, ratings or [None] * len(names))
    if method == "explicit":
        return list(names)
    if method == "group":
        return group_seeding(strength, groups)
    if method == "equal-distance":
        return equal_distance_seeding(strength)
    return random_seeding(names, rng_seed)
