"""Seeding methods and the worked examples of the seed documents."""

from __future__ import annotations

import string

from orchestrator.core.event.seeding import (
    equal_distance_seeding,
    group_seeding,
    seed,
    split_groups,
)


def test_nineteen_players_in_three_groups() -> None:
    # the team-Swiss source (docs/systems/team-swiss.md): A..S by rating, 3 groups of 7, 6, 6
    players = list(string.ascii_uppercase[:19])
    assert [len(g) for g in split_groups(players, 3)] == [7, 6, 6]
    assert "".join(group_seeding(players, 3)) == "AHNBIOCJPDKQELRFMSG"


def test_eleven_players_in_four_groups() -> None:
    # the TCEC rules (docs/systems/swiss.md): S1=A1, S2=B1, S3=C1, S4=D1, S5=A2, ...  Its
    # sizes ("A-C have 4 players and D has 3") add up to 15, not 11: 11 players in 4 groups
    # are 3, 3, 3, 2, and 15 players give the sizes it names.
    players = [f"x{i}" for i in range(1, 12)]
    groups = split_groups(players, 4)
    assert [len(g) for g in groups] == [3, 3, 3, 2]
    seeded = group_seeding(players, 4)
    assert seeded[:5] == [groups[0][0], groups[1][0], groups[2][0], groups[3][0], groups[0][1]]
    assert seeded == ["x1", "x4", "x7", "x10", "x2", "x5", "x8", "x11", "x3", "x6", "x9"]
    assert [len(g) for g in split_groups([str(i) for i in range(15)], 4)] == [4, 4, 4, 3]


def test_equal_distance_uses_half_the_players_as_groups() -> None:
    players = [str(i) for i in range(1, 11)]  # 5 groups of 2
    assert equal_distance_seeding(players) == ["1", "3", "5", "7", "9", "2", "4", "6", "8", "10"]
    odd = [str(i) for i in range(1, 8)]  # 3 groups: 3, 2, 2
    assert equal_distance_seeding(odd) == ["1", "4", "6", "2", "5", "7", "3"]


def test_group_seeding_orders_by_rating() -> None:
    names = ["weak", "strong", "unrated", "middle"]
    ratings = [2000.0, 3000.0, None, 2500.0]
    assert seed(names, "group", ratings=ratings, groups=2) == [
        "strong",
        "weak",
        "middle",
        "unrated",
    ]
    assert seed(names, "explicit", ratings=ratings) == names


def test_random_seeding_is_repeatable_from_its_seed() -> None:
    names = [f"E{i}" for i in range(40)]
    first = seed(names, "random", rng_seed=7)
    assert first == seed(names, "random", rng_seed=7)
    assert first != seed(names, "random", rng_seed=8)
    assert sorted(first) == sorted(names)
