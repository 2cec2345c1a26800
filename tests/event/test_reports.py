"""Standings and crosstable text."""

from __future__ import annotations

import pytest

from orchestrator.core.event.model import Game, Player, Round, Rules, Tournament
from orchestrator.event.export import crosstable, standings_data, standings_table


def event() -> Tournament:
    players = tuple(Player(n, i + 1) for i, n in enumerate("ABC"))
    return Tournament(
        players,
        (
            Round(1, (Game("B", "A", "0-1"), Game("A", "B", "1/2-1/2")), "C"),
            Round(2, (Game("C", "A", "1-0"), Game("A", "C", "1-0")), "B"),
        ),
        Rules(format="double"),
    )


def test_crosstable_cells_follow_game_order() -> None:
    text = crosstable(event(), ("sb",))
    rows = {line.split()[1]: line for line in text.splitlines()[2:]}
    assert rows["A"].split()[2:] == ["2.5", "01", "*", "1="]  # columns by place: C, A, B
    assert rows["C"].split()[2:] == ["3", "*", "10"]  # 2 BYE points + 1 win; never met B


def test_standings_table_and_data_agree() -> None:
    data = standings_data(event(), ("sb", "wins"))
    assert [(d["place"], d["name"], d["score"]) for d in data] == [
        ("1", "C", 3.0),
        ("2", "A", 2.5),
        ("3", "B", 2.5),
    ]
    table = standings_table(event(), ("sb", "wins"))
    assert "SB = Sonneborn-Berger" in table
    assert [line.split()[1] for line in table.splitlines()[2:5]] == ["C", "A", "B"]


def test_standings_carry_each_engine_s_fitted_elo() -> None:
    """A beat B 1.5-0.5 and split 1-1 with C: the fit ranks A first, every engine has an
    interval around its Elo, the field's mean is 0, and the text table shows the same."""
    data = {d["name"]: d for d in standings_data(event(), ("sb",))}
    elos = {name: d["elo"] for name, d in data.items()}
    assert all(e is not None for e in elos.values())
    assert elos["A"] > elos["B"]  # type: ignore[operator]
    assert abs(sum(elos.values())) < 0.5  # type: ignore[arg-type]
    for d in data.values():
        assert d["elo_low"] < d["elo"] < d["elo_high"]  # type: ignore[operator]
    assert data["A"]["draw_ratio"] == 0.25  # one draw in four games
    table = standings_table(event(), ("sb",))
    row = next(line for line in table.splitlines() if line.split()[1] == "A")
    assert f"{elos['A']:+.0f}" in row.split()


def test_an_anchor_fixes_one_engine_at_its_rating() -> None:
    data = {d["name"]: d for d in standings_data(event(), ("sb",), anchor=("B", 3000.0))}
    assert data["B"]["elo"] == 3000.0 and data["B"]["elo_low"] == data["B"]["elo_high"] == 3000.0
    mean = {d["name"]: d["elo"] for d in standings_data(event(), ("sb",))}
    assert data["A"]["elo"] == pytest.approx(3000.0 + mean["A"] - mean["B"], abs=0.2)  # type: ignore[operator]
    assert "B at 3000" in standings_table(event(), ("sb",), ("B", 3000.0))
