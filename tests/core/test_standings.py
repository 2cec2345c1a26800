"""Standings, tiebreaks and shared places."""

from __future__ import annotations

from orchestrator.core.event.model import Game, Player, Round, Rules, Tournament
from orchestrator.core.event.standings import standings, tally


def event(
    games: list[list[tuple[str, str, str]]],
    byes: list[str | None] | None = None,
    fmt: str = "single",
) -> Tournament:
    names = sorted({n for rnd in games for g in rnd for n in g[:2]} | {b for b in byes or [] if b})
    byes = byes or [None] * len(games)
    return Tournament(
        tuple(Player(n, i + 1) for i, n in enumerate(names)),
        tuple(
            Round(i + 1, tuple(Game(w, b, r) for w, b, r in rnd), byes[i])  # type: ignore[arg-type]
            for i, rnd in enumerate(games)
        ),
        Rules(format=fmt),  # type: ignore[arg-type]
    )


def by_name(lines: list) -> dict:  # type: ignore[type-arg]
    return {line.name: line for line in lines}


def test_sonneborn_berger_example_of_the_seed_document() -> None:
    # the team-Swiss source (docs/systems/team-swiss.md): Joe beat Bill (1.5) and Dave (2),
    # drew Steve (1), lost to Jack: SB = 4
    t = event(
        [
            [("Joe", "Bill", "1-0"), ("Dave", "X1", "1-0"), ("Steve", "X3", "1/2-1/2")],
            [("Joe", "Dave", "1-0"), ("Bill", "X1", "1-0")],
            [("Joe", "Steve", "1/2-1/2"), ("Bill", "X2", "1/2-1/2"), ("Dave", "X2", "1-0")],
            [("Jack", "Joe", "1-0")],
        ]
    )
    lines = by_name(standings(t, ("sb",)))
    assert lines["Bill"].score == 1.5 and lines["Dave"].score == 2 and lines["Steve"].score == 1
    assert lines["Joe"].tiebreaks["sb"] == 4.0


def test_buchholz_median_wins_black() -> None:
    t = event(
        [
            [("A", "B", "1-0"), ("C", "D", "1/2-1/2")],
            [("D", "A", "0-1"), ("B", "C", "1-0")],
            [("A", "C", "1/2-1/2"), ("D", "B", "1-0")],
        ]
    )
    lines = by_name(standings(t, ("buchholz", "median-buchholz", "wins", "black")))
    a = lines["A"]  # beat B (1), beat D (1.5), drew C (1)
    assert (a.score, a.wins, a.black) == (2.5, 2, 1)
    assert a.tiebreaks["buchholz"] == 1 + 1.5 + 1
    assert a.tiebreaks["median-buchholz"] == 1  # the highest and lowest are cut


def test_byes_count_as_wins_but_rank_below_equal_scores() -> None:
    t = event([[("A", "B", "1-0")], [("C", "A", "0-1")]], byes=["C", "B"])
    lines = standings(t, ())
    assert [(x.name, x.score, x.byes) for x in lines] == [("A", 2, 0), ("B", 1, 1), ("C", 1, 1)]
    assert [x.place for x in lines] == ["1", "2-3", "2-3"]
    double = event([[("A", "B", "1-0"), ("B", "A", "1-0")]], byes=["C"], fmt="double")
    assert tally(double)["C"].score == 2  # a win for each game of the round


def test_direct_encounter_separates_a_tie_between_players_who_met() -> None:
    # X and Y finish on 1 point each; X beat Y
    t = event(
        [
            [("X", "Y", "1-0"), ("P", "Q", "1/2-1/2")],
            [("Y", "P", "1-0"), ("Q", "X", "1-0")],
        ]
    )
    assert [(x.name, x.place) for x in standings(t, ())] == [
        ("Q", "1"),
        ("X", "2-3"),
        ("Y", "2-3"),
        ("P", "4"),
    ]
    ranked = standings(t, ("direct",))
    assert [(x.name, x.place) for x in ranked] == [("Q", "1"), ("X", "2"), ("Y", "3"), ("P", "4")]
    assert by_name(ranked)["X"].tiebreaks["direct"] == 1


def test_direct_encounter_needs_everyone_tied_to_have_met() -> None:
    # four players on 1 point; A-C and B-D never met, so no one is separated
    t = event(
        [
            [("A", "B", "1-0"), ("C", "D", "1-0")],
            [("B", "C", "1-0"), ("D", "A", "1-0")],
        ]
    )
    assert {x.place for x in standings(t, ("direct",))} == {"1-4"}


def test_tcec_order_and_shared_places() -> None:
    t = event([[("A", "B", "1/2-1/2"), ("C", "D", "1/2-1/2")]])
    lines = standings(t)
    assert [x.place for x in lines] == ["1-4"] * 4
    assert [x.name for x in lines] == ["A", "B", "C", "D"]  # listed by seed inside the tie
