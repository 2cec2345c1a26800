"""Standings and crosstables as plain text and JSON-ready data, for people and tools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.core.model import Tournament
from orchestrator.core.standings import TIEBREAKS, Line, Tiebreak, standings

_SHORT = {
    "sb": "SB",
    "wins": "Wins",
    "black": "Black",
    "direct": "DE",
    "buchholz": "Buch",
    "median-buchholz": "MBuch",
}


def _num(x: float) -> str:
    return f"{x:g}"


def standings_data(t: Tournament, order: Sequence[Tiebreak]) -> list[dict[str, Any]]:
    """The standings as the `--json` outputs give them."""
    return [
        {
            "place": line.place,
            "name": line.name,
            "seed": line.seed,
            "score": line.score,
            "games": line.games,
            "wins": line.wins,
            "draws": line.draws,
            "losses": line.losses,
            "byes": line.byes,
            "tiebreaks": {tb: line.tiebreaks[tb] for tb in order},
        }
        for line in standings(t, order)
    ]


def standings_table(t: Tournament, order: Sequence[Tiebreak]) -> str:
    lines: list[Line] = standings(t, order)
    header = ["Place", "Engine", "Seed", "Score", "Games", "+", "=", "-", "BYE"]
    header += [_SHORT[tb] for tb in order]
    rows = [
        [
            line.place,
            line.name,
            str(line.seed),
            _num(line.score),
            str(line.games),
            str(line.wins),
            str(line.draws),
            str(line.losses),
            str(line.byes),
            *(_num(line.tiebreaks[tb]) for tb in order),
        ]
        for line in lines
    ]
    legend = ", ".join(f"{_SHORT[tb]} = {TIEBREAKS[tb]}" for tb in order)
    return _table(header, rows) + (f"\nTiebreaks: {legend}\n" if order else "")


def crosstable(t: Tournament, order: Sequence[Tiebreak]) -> str:
    """Rows by place; each cell the results against that opponent in order (1, =, 0)."""
    lines = standings(t, order)
    number = {line.name: i + 1 for i, line in enumerate(lines)}
    cells: dict[tuple[str, str], str] = {}
    for line in lines:
        for opponent, pts in line.results:
            mark = "1" if pts == 1 else "0" if pts == 0 else "="
            cells[line.name, opponent] = cells.get((line.name, opponent), "") + mark
    header = ["#", "Engine", "Score", *(str(i + 1) for i in range(len(lines)))]
    rows = []
    for line in lines:
        row = [str(number[line.name]), line.name, _num(line.score)]
        for other in lines:
            row.append("*" if other is line else cells.get((line.name, other.name), ""))
        rows.append(row)
    return _table(header, rows)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i == 1 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(header), rule, *(fmt(r) for r in rows)]) + "\n"
