"""How games ended, counted: a tally for the event and for each engine.

Each finished game has one ending, read from what the store keeps of it: its PGN
`Termination`, its `TerminationDetails` (TCEC's words, `game/game.py` and
`core/game/adjudication.py`), the kind of the engine fault that ended it, and whether it was
a forfeit.  An engine's tally counts the endings of its own games, except that a fault counts
only against the engine at fault (its opponent's row shows the game as a win, not as a
fault).  A loss on time also says by how much the engine overstepped its clock.

Pure functions over plain data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from orchestrator.core.game.adjudication import MOVE_LIMIT_WORDS, RESIGN_WORDS
from orchestrator.core.game.record import Fault

__all__ = [
    "ENDINGS",
    "HEADS",
    "VARIANT_WORDS",
    "Ended",
    "Ending",
    "Tally",
    "ended",
    "ending_of",
    "overstep_ms",
    "summary",
    "tally",
    "time_loss_detail",
]

#: every ending, in the order tables show them
Ending = Literal[
    "mate",
    "stalemate",
    "repetition",
    "fifty_moves",
    "insufficient_material",
    "variant",
    "resign",
    "adjudicated_win",
    "adjudicated_draw",
    "adjudicated_resign",
    "tablebase",
    "move_limit",
    "time_loss",
    "stall",
    "illegal_move",
    "disconnect",
    "forfeit",
    "director",
]
ENDINGS: tuple[Ending, ...] = get_args(Ending)

#: the endings that are an engine's fault (counted against it alone)
FAULTS: frozenset[Ending] = frozenset({"time_loss", "stall", "illegal_move", "disconnect"})

#: each ending's column head in tables (the standings text, the web view)
HEADS: dict[Ending, str] = {
    "mate": "Mate",
    "stalemate": "Stalemate",
    "repetition": "3-fold",
    "fifty_moves": "50-move",
    "insufficient_material": "Material",
    "variant": "Variant",
    "resign": "Resign",
    "adjudicated_win": "Adj.win",
    "adjudicated_draw": "Adj.draw",
    "adjudicated_resign": "Adj.resign",
    "tablebase": "TB",
    "move_limit": "Max.moves",
    "time_loss": "Time",
    "stall": "Stall",
    "illegal_move": "Illegal",
    "disconnect": "Disconn.",
    "forfeit": "Forfeit",
    "director": "Director",
}


#: how the runner words the end of a game by a variant's own rules ("White wins by the rules
#: of Three-check", "Draw by the rules of Horde")
VARIANT_WORDS = " by the rules of "

_BY_FAULT: dict[str, Ending] = {
    "time_forfeit": "time_loss",
    "stall": "stall",
    "illegal_move": "illegal_move",
    "garbage": "illegal_move",
    "crash": "disconnect",
    "startup": "disconnect",
}
_BY_DETAILS: dict[str, Ending] = {
    "White mates": "mate",
    "Black mates": "mate",
    "Stalemate": "stalemate",
    "3-fold repetition": "repetition",
    "Fifty moves rule": "fifty_moves",
    "Insufficient material": "insufficient_material",
    "White resigns": "resign",
    "Black resigns": "resign",
    "TCEC win rule": "adjudicated_win",
    "TCEC draw rule": "adjudicated_draw",
    RESIGN_WORDS: "adjudicated_resign",
    "SyzygyTB": "tablebase",
    MOVE_LIMIT_WORDS: "move_limit",
}
_OVERSTEP = re.compile(r"took (\d+) ms (?:with (-?\d+) ms left|of (\d+) ms)")


def time_loss_detail(used_ms: int, allowed_ms: int, *, clock: bool = True) -> str:
    """The fault's detail of a move that overstepped: `used_ms` against the clock's time
    left (`clock`), or against a fixed time per move.

    >>> time_loss_detail(1250, 1000)
    'took 1250 ms with 1000 ms left, 250 ms past its clock'
    >>> time_loss_detail(1250, 1000, clock=False)
    'took 1250 ms of 1000 ms'
    """
    if clock:
        return (
            f"took {used_ms} ms with {allowed_ms} ms left, {used_ms - allowed_ms} ms past its clock"
        )
    return f"took {used_ms} ms of {allowed_ms} ms"


def overstep_ms(detail: str) -> int | None:
    """By how much a loss on time overstepped, from its fault's detail (`time_loss_detail`);
    None for another detail.

    >>> overstep_ms(time_loss_detail(1250, 1000)), overstep_ms("no move within 9.0s")
    (250, None)
    """
    found = _OVERSTEP.search(detail)
    if found is None:
        return None
    used, left, limit = found.groups()
    return int(used) - int(left if left is not None else limit)


@dataclass(frozen=True)
class Ended:
    """What the store keeps of a finished game's ending."""

    white: str
    black: str
    termination: str | None
    details: str | None
    fault_engine: str | None = None
    fault_kind: str | None = None
    fault_detail: str = ""
    forfeit: bool = False


def ended(
    white: str,
    black: str,
    termination: str | None,
    details: str | None,
    fault: Fault | None,
    forfeit: bool = False,
) -> Ended:
    """What `ending_of` reads of a game: its ending's words and its fault, if any.

    >>> ended("A", "B", "time forfeit", "White loses on time", Fault("A", "time_forfeit", ""))
    Ended(white='A', black='B', termination='time forfeit', details='White loses on time', \
fault_engine='A', fault_kind='time_forfeit', fault_detail='', forfeit=False)
    """
    return Ended(
        white,
        black,
        termination,
        details,
        fault.engine if fault else None,
        fault.kind if fault else None,
        fault.detail if fault else "",
        forfeit,
    )


def ending_of(game: Ended) -> Ending:
    """The ending of a finished game.  A result the director set (or any ending this
    runner does not word itself) is the director's.

    >>> ending_of(Ended("A", "B", "normal", "Black mates"))
    'mate'
    >>> ending_of(Ended("A", "B", "time forfeit", "White loses on time", "A", "time_forfeit"))
    'time_loss'
    >>> ending_of(Ended("A", "B", "adjudication", "A win by the director's decision"))
    'director'
    >>> ending_of(Ended("A", "B", "normal", "White wins by the rules of Three-check"))
    'variant'
    """
    if game.forfeit:
        return "forfeit"
    if game.fault_kind in _BY_FAULT:
        return _BY_FAULT[game.fault_kind]
    if game.termination == "normal" and VARIANT_WORDS in (game.details or ""):
        return "variant"
    return _BY_DETAILS.get(game.details or "", "director")


@dataclass
class Tally:
    """Of `games`, how many ended each way (`counts`: for an engine, its opponents' faults
    are not counted), and the losses on time's oversteps in ms (`overstep_ms`)."""

    games: int = 0
    counts: dict[Ending, int] = field(default_factory=lambda: dict.fromkeys(ENDINGS, 0))
    overstep_ms: list[int] = field(default_factory=list)

    def add(self, ending: Ending, game: Ended, *, counted: bool = True) -> None:
        """One more game, which ended as `ending` (not `counted`: an opponent's fault)."""
        self.games += 1
        if not counted:
            return
        self.counts[ending] += 1
        if ending == "time_loss":
            over = overstep_ms(game.fault_detail)
            if over is not None:
                self.overstep_ms.append(over)

    def json(self) -> dict[str, object]:
        """Every ending's count, and the largest overstep on time (null without one).

        >>> t = Tally()
        >>> t.add("time_loss", Ended("A", "B", None, None, "A", "time_forfeit",
        ...                          time_loss_detail(1020, 1000)))
        >>> data = t.json()
        >>> data["games"], data["time_loss"], data["overstep_ms_max"], data["mate"]
        (1, 1, 20, 0)
        """
        data: dict[str, object] = {"games": self.games}
        for kind, count in self.counts.items():
            data[kind] = count
        data["overstep_ms_max"] = max(self.overstep_ms, default=None)
        return data


def tally(games: Iterable[Ended]) -> tuple[Tally, dict[str, Tally]]:
    """The event's tally and each engine's (by name).

    >>> games = [Ended("A", "B", "normal", "White mates"),
    ...          Ended("B", "A", "time forfeit", "White loses on time", "B", "time_forfeit")]
    >>> event, engines = tally(games)
    >>> event.counts["mate"], event.counts["time_loss"], event.games
    (1, 1, 2)
    >>> engines["A"].counts["time_loss"], engines["B"].counts["time_loss"], engines["A"].games
    (0, 1, 2)
    """
    event = Tally()
    engines: dict[str, Tally] = {}
    for game in games:
        ending = ending_of(game)
        event.add(ending, game)
        for name in (game.white, game.black):
            counted = ending not in FAULTS or game.fault_engine == name
            engines.setdefault(name, Tally()).add(ending, game, counted=counted)
    return event, dict(sorted(engines.items()))


#: how `summary` words each ending (one game, several)
_WORDS: dict[Ending, tuple[str, str]] = {
    "mate": ("mate", "mates"),
    "stalemate": ("stalemate", "stalemates"),
    "repetition": ("repetition", "repetitions"),
    "fifty_moves": ("fifty-move draw", "fifty-move draws"),
    "insufficient_material": ("dead draw", "dead draws"),
    "resign": ("resignation", "resignations"),
    "adjudicated_win": ("adjudicated win", "adjudicated wins"),
    "adjudicated_draw": ("adjudicated draw", "adjudicated draws"),
    "adjudicated_resign": ("resign adjudication", "resign adjudications"),
    "tablebase": ("tablebase adjudication", "tablebase adjudications"),
    "move_limit": ("move-limit draw", "move-limit draws"),
    "time_loss": ("loss on time", "losses on time"),
    "stall": ("stall", "stalls"),
    "illegal_move": ("illegal move", "illegal moves"),
    "disconnect": ("disconnect", "disconnects"),
    "forfeit": ("forfeit", "forfeits"),
    "director": ("director's result", "director's results"),
}


def summary(counts: Mapping[str, object]) -> str:
    """A tally's JSON (`Tally.json`) in words, its endings that happened in table order
    ("" before any game).

    >>> t = Tally()
    >>> t.add("mate", Ended("A", "B", "normal", "White mates"))
    >>> t.add("time_loss", Ended("A", "B", None, None, "A", "time_forfeit",
    ...                          time_loss_detail(1020, 1000)))
    >>> summary(t.json())
    '1 mate, 1 loss on time (the largest 20 ms over)'
    """
    words = []
    for kind in ENDINGS:
        count = counts.get(kind)
        if isinstance(count, int) and count:
            one, many = _WORDS[kind]
            words.append(f"{count} {one if count == 1 else many}")
            over = counts.get("overstep_ms_max")
            if kind == "time_loss" and over is not None:
                words[-1] += f" (the largest {over} ms over)"
    return ", ".join(words)
