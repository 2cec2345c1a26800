"""`standings --columns`: cutechess-cli's result table (its `-resultformat`), by its tokens
and its named formats, from an event's finished games.

A row per engine in the standings' order.  As in cutechess, an engine's Elo, its error and
LOS are those of its own wins, draws and losses (the trinomial estimate,
`core/stats/elo.py`), not the standings' fitted Elo; a colour's columns count the games it
played with that colour.  BYEs are not games here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from orchestrator.core.game.endings import FAULTS, Ended, ending_of
from orchestrator.core.stats.elo import trinomial

#: cutechess's named formats
FORMATS = {
    "minimal": "Rank,Name",
    "small": "Rank,Name,Games,Points",
    "short": "Rank,Name,Elo,Games",
    "concise": "Rank,Name,Elo,Error,Games",
    "default": "Rank,Name,Elo,Error,Games,Score,DScore",
    "with-points": "Rank,Name,Elo,Error,Games,Points,Score,DScore",
    "wide": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore",
    "wide2": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,wScore,bScore",
    "per-color": "Rank,Name,Elo,Error,Games,W,L,D,Points,wW,wL,wD,wPoints,bW,bL,bD,bPoints",
    "ordo": "Rank,Name,Elo,Points,Games,Score",
    "term": "Rank,Name,Elo,Error,Games,Score,Time,Illegal,Discon,Stall,WrClaim",
    "draws": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,"
    "DStale,DMater,DRepet,DMoves,DAdj,DAgree,OtherD",
    "wide3": "Rank,Name,TC,Elo,Error,Games,WLDStats,DrawStats,Terminations",
}
#: cutechess's groups of tokens
GROUPS = {
    "WLDStats": "W,L,D,Points,Score,wW,wL,wD,wPoints,wScore,bW,bL,bD,bPoints,bScore",
    "DrawStats": "DScore,DStale,DMater,DRepet,DMoves,DAdj,DAgree,OtherD",
    "Terminations": "Time,Illegal,Discon,Stall,WrClaim",
}
#: each token's column head, as cutechess heads it
HEADS = {
    "Rank": "Rank", "Name": "Name", "Games": "Games", "W": "Wins", "L": "Losses",
    "D": "Draws", "wW": "WWins", "wL": "WLoss.", "wD": "WDraws", "bW": "BWins",
    "bL": "BLoss.", "bD": "BDraws", "Points": "Points", "Score": "Score", "DScore": "Draw",
    "Elo": "Elo", "Error": "+/-", "LOS": "LOS", "wPoints": "WPoints", "wScore": "White",
    "wDScore": "WDraw", "wElo": "WElo", "wError": "W+/-", "wLOS": "WLOS",
    "bPoints": "BPoints", "bScore": "Black", "bDScore": "BDraw", "bElo": "BElo",
    "bError": "B+/-", "bLOS": "BLOS", "Time": "Time", "Illegal": "Illegal",
    "Discon": "Discon", "Stall": "Stall", "WrClaim": "WrClaim", "RegulL": "RegulL",
    "RegulW": "RegulW", "OtherW": "OtherW", "DStale": "DStale", "DMater": "DMater",
    "DRepet": "DRepet", "DMoves": "DMoves", "DCount": "DCount", "DAdj": "DAdj",
    "DAgree": "DAgree", "OtherD": "OtherD", "TC": "TC",
}  # fmt: skip
#: the draws each draw column counts (DAdj: an adjudicated draw, a tablebase draw, the move
#: limit; OtherD: the rest, such as the director's or a variant's draw)
_DRAWS = {
    "stalemate": "DStale",
    "insufficient_material": "DMater",
    "repetition": "DRepet",
    "fifty_moves": "DMoves",
    "adjudicated_draw": "DAdj",
    "tablebase": "DAdj",
    "move_limit": "DAdj",
}
#: the losses each fault column counts (the engine's own faults)
_FAULT_COLUMNS = {
    "time_loss": "Time",
    "illegal_move": "Illegal",
    "disconnect": "Discon",
    "stall": "Stall",
}
#: the tokens that count games of a kind (WrClaim, DCount and DAgree: none here)
_COUNTED = (
    *_FAULT_COLUMNS.values(), "WrClaim", "RegulL", "RegulW", "OtherW",
    *dict.fromkeys(_DRAWS.values()), "DCount", "DAgree", "OtherD",
)  # fmt: skip


def tokens(spec: str) -> list[str]:
    """The tokens of a `--columns` value: a named format or a comma-separated list of
    tokens and groups; a `ValueError` naming an unknown one.

    >>> tokens("small")
    ['Rank', 'Name', 'Games', 'Points']
    >>> tokens("Name,Terminations")
    ['Name', 'Time', 'Illegal', 'Discon', 'Stall', 'WrClaim']
    >>> tokens("Name,Wins")
    Traceback (most recent call last):
    ...
    ValueError: unknown column 'Wins'; give a format (minimal, small, ...) or cutechess's tokens ...
    """
    out: list[str] = []
    for token in FORMATS.get(spec, spec).split(","):
        token = token.strip()
        for part in GROUPS.get(token, token).split(","):
            if part not in HEADS:
                raise ValueError(
                    f"unknown column {part!r}; give a format ({', '.join(FORMATS)}) or "
                    "cutechess's tokens (Rank, Name, Games, W, L, D, ...)"
                )
            out.append(part)
    return out


@dataclass
class Record:
    """An engine's finished games, counted as cutechess counts them."""

    name: str
    tc: str = ""
    #: wins, draws and losses with White and with Black
    white: list[int] = field(default_factory=lambda: [0, 0, 0])
    black: list[int] = field(default_factory=lambda: [0, 0, 0])
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, game: Ended, result: str) -> None:
        """Count a finished game of this engine's.

        >>> r = Record("A")
        >>> lost = Ended("A", "B", "time forfeit", "White loses on time", "A", "time_forfeit")
        >>> r.add(lost, "0-1")
        >>> r.add(Ended("B", "A", "normal", "Stalemate"), "1/2-1/2")
        >>> r.white, r.black, dict(r.counts)
        ([0, 0, 1], [0, 1, 0], {'Time': 1, 'DStale': 1})
        """
        is_white = game.white == self.name
        won = result == ("1-0" if is_white else "0-1")
        draw = result == "1/2-1/2"
        (self.white if is_white else self.black)[0 if won else 1 if draw else 2] += 1
        ending = ending_of(game)
        if draw:
            column = _DRAWS.get(ending, "OtherD")
        elif won:
            column = "OtherW" if ending in FAULTS or ending == "forfeit" else "RegulW"
        elif ending in FAULTS and game.fault_engine == self.name:
            column = _FAULT_COLUMNS[ending]
        elif ending == "forfeit":
            return
        else:
            column = "RegulL"
        self.counts[column] += 1

    def values(self, rank: int) -> dict[str, object]:
        """Every token's value for this engine, at `rank` in the table.

        >>> r = Record("A", "60+0.6", [1, 1, 0], [0, 0, 2])
        >>> v = r.values(2)
        >>> v["Games"], v["Points"], v["Score"], v["wScore"], v["bW"], v["Elo"]
        (4, 1.5, 0.375, 0.75, 0, -88.7...)
        """
        w, b = self.white, self.black
        wins, draws, losses = w[0] + b[0], w[1] + b[1], w[2] + b[2]
        games = wins + draws + losses
        out: dict[str, object] = {"Rank": rank, "Name": self.name, "TC": self.tc}
        out |= {"Games": games, "W": wins, "L": losses, "D": draws}
        for side, (sw, sd, sl) in (("w", w), ("b", b), ("", (wins, draws, losses))):
            played = sw + sd + sl
            points = sw + sd / 2
            estimate = trinomial(sw, sd, sl)
            out |= {
                f"{side}Points": points,
                f"{side}Score": points / played if played else None,
                f"{side}DScore": sd / played if played else None,
                f"{side}Elo": estimate["elo"],
                f"{side}Error": estimate["elo_error"],
                f"{side}LOS": estimate["los"],
            }
            if side:
                out |= {f"{side}W": sw, f"{side}L": sl, f"{side}D": sd}
        return out | {token: self.counts[token] for token in _COUNTED}


def records(
    names: Sequence[str], games: Iterable[tuple[Ended, str]], tcs: dict[str, str]
) -> list[Record]:
    """Each engine's record, in the order of `names` (the standings'), from the finished
    `games` and their results; `tcs` gives each engine's time control.

    >>> games = [(Ended("A", "B", "normal", "White mates"), "1-0")]
    >>> [(r.name, r.white, r.black) for r in records(["A", "B"], games, {})]
    [('A', [1, 0, 0], [0, 0, 0]), ('B', [0, 0, 0], [0, 0, 1])]
    """
    by_name = {name: Record(name, tcs.get(name, "")) for name in names}
    for game, result in games:
        for name in (game.white, game.black):
            if name in by_name:
                by_name[name].add(game, result)
    return list(by_name.values())


def _cell(token: str, value: object) -> str:
    if value is None:
        return "-"
    if token in ("Name", "TC", "Rank") or isinstance(value, int):
        return str(value)
    assert isinstance(value, float)
    if token.endswith(("Score", "LOS")):
        return f"{value * 100:.1f}%"
    if token.endswith("Points"):
        return f"{value:.1f}"
    return f"{value:.0f}"


def table(columns: Sequence[str], rows: Sequence[Record]) -> str:
    """The table, cutechess's heads over it, a row per engine, numbers to the right.

    >>> print(table(tokens("wide"), [Record("A", "", [1, 0, 0], [0, 1, 0])]), end="")
    Rank  Name  Elo  +/-  Games  Wins  Losses  Draws  Points  Score   Draw
       1  A     191    -      2     1       0      1     1.5  75.0%  50.0%
    """
    heads = [HEADS[t] for t in columns]
    cells = [
        [_cell(t, values[t]) for t in columns]
        for values in (r.values(i) for i, r in enumerate(rows, 1))
    ]
    widths = [max(len(row[i]) for row in [heads, *cells]) for i in range(len(columns))]

    def line(row: list[str]) -> str:
        return " ".join(
            cell.ljust(width + 1) if token in ("Name", "TC") else cell.rjust(width) + " "
            for token, cell, width in zip(columns, row, widths, strict=True)
        ).rstrip()

    return "".join(line(row) + "\n" for row in [heads, *cells])
