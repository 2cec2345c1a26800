"""cutechess-style time controls and the chess clock, as pure data and functions.

Forms: ``base+inc`` (seconds, ``M:SS`` allowed for the base), ``moves/base+inc`` (repeating
sessions of `moves` moves), periods (``40/7200, 20/3600, 900+30``: 40 moves in two hours, then
20 in one, then 15 minutes and 30 s a move for the rest), ``st=N`` (fixed seconds per move),
``nodes=N``, ``depth=N`` and ``inf`` (no clock: each engine's own node or depth cap ends its
search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from orchestrator.core.errors import OrchestratorError

Kind = Literal["clock", "movetime", "nodes", "depth", "inf"]

_NUMBER = r"\d+(?:\.\d+)?"
_CLOCK = re.compile(rf"^(?:(?P<moves>\d+)/)?(?P<base>(?:\d+:)?{_NUMBER})(?:\+(?P<inc>{_NUMBER}))?$")


class TimeControlError(OrchestratorError, ValueError):
    """A time control that does not parse; the message quotes it."""


#: the longest time any part of a time control may take: a week, in ms
MAX_MS = 7 * 24 * 3600 * 1000
#: the most moves in a session, and the largest nodes= or depth= limit
MAX_MOVES = 1000
MAX_LIMIT = 2**63 - 1


def _seconds_ms(text: str) -> int:
    """Seconds (or ``M:SS``) as whole ms; a `ValueError` past `MAX_MS` or not finite."""
    if ":" in text:
        minutes, seconds = text.split(":", 1)
        value = (int(minutes) * 60 + float(seconds)) * 1000
    else:
        value = float(text) * 1000
    if not value <= MAX_MS:  # also NaN and infinity
        raise ValueError(f"{text} s is more than a week")
    return round(value)


@dataclass(frozen=True, slots=True)
class Period:
    """One period of a clock: `moves` moves (0: the rest of the game) in `base_ms`, and
    `inc_ms` added after each of its moves."""

    moves: int
    base_ms: int
    inc_ms: int


class TimeControl:
    """A time control.  Written and read as its text (`str`, `parse`): it is one value in
    `engines.toml`, the stored settings and the PGN, never a table of fields."""

    __slots__ = ("base_ms", "inc_ms", "kind", "later", "limit", "moves")

    def __init__(
        self,
        kind: Kind,
        base_ms: int = 0,
        inc_ms: int = 0,
        moves: int = 0,
        limit: int = 0,
        later: tuple[Period, ...] = (),
    ) -> None:
        self.kind = kind
        self.base_ms = base_ms
        self.inc_ms = inc_ms
        self.moves = moves  # moves per session; 0 = the whole game
        self.limit = limit  # ms per move (movetime), nodes, or depth
        self.later = later  # the periods after the first (the last repeats if it has moves)

    @property
    def periods(self) -> tuple[Period, ...]:
        """Every period of a clock, the first one first.

        >>> [p.moves for p in TimeControl.parse("40/7200, 20/3600, 900+30").periods]
        [40, 20, 0]
        """
        return (Period(self.moves, self.base_ms, self.inc_ms), *self.later)

    def _key(self) -> tuple[object, ...]:
        return (self.kind, self.base_ms, self.inc_ms, self.moves, self.limit, self.later)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeControl) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        later = f", later={self.later!r}" if self.later else ""
        return (
            f"TimeControl(kind={self.kind!r}, base_ms={self.base_ms}, inc_ms={self.inc_ms}, "
            f"moves={self.moves}, limit={self.limit}{later})"
        )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A cutechess-style time control; a `TimeControlError` quoting it when it is bad.

        >>> TimeControl.parse("40/60+0.5")
        TimeControl(kind='clock', base_ms=60000, inc_ms=500, moves=40, limit=0)
        >>> TimeControl.parse("st=2").limit, TimeControl.parse("nodes=1000").kind
        (2000, 'nodes')
        >>> str(TimeControl.parse("40/7200 , 20/3600,900+30")), TimeControl.parse("inf").kind
        ('40/7200, 20/3600, 900+30', 'inf')
        >>> try:
        ...     TimeControl.parse("900+30, 40/7200")
        ... except TimeControlError as exc:
        ...     print(str(exc).split(": ")[1])
        a period before the last needs a number of moves (40/7200)
        """
        raw = text.strip().lower()
        shown = text if len(text) <= 40 else text[:37] + "..."
        if raw == "inf":
            return cls("inf")
        if "," in raw:
            parts = [cls.parse(part) for part in raw.split(",")]
            for part in parts:
                if part.kind != "clock" or part.later:
                    raise TimeControlError(
                        f"bad time control {shown!r}: each period is moves/base+inc or base+inc"
                    )
            if any(not part.moves for part in parts[:-1]):
                raise TimeControlError(
                    f"bad time control {shown!r}: a period before the last needs a number of "
                    "moves (40/7200)"
                )
            first = parts[0]
            later = tuple(Period(p.moves, p.base_ms, p.inc_ms) for p in parts[1:])
            return cls("clock", first.base_ms, first.inc_ms, first.moves, later=later)
        for prefix, kind in (("st=", "movetime"), ("nodes=", "nodes"), ("depth=", "depth")):
            if raw.startswith(prefix):
                value = raw[len(prefix) :]
                try:
                    number = _seconds_ms(value) if kind == "movetime" else int(value)
                except ValueError:
                    raise TimeControlError(
                        f"bad time control {shown!r}: {value[:20]!r} is not a number of at "
                        "most a week"
                    ) from None
                if not 0 < number <= MAX_LIMIT:
                    raise TimeControlError(
                        f"bad time control {shown!r}: must be positive and at most {MAX_LIMIT}"
                    )
                return cls(kind, limit=number)  # type: ignore[arg-type]
        match = _CLOCK.match(raw)
        if not match:
            raise TimeControlError(
                f"bad time control {shown!r} (expected base+inc, moves/base+inc, periods as "
                '"40/7200, 900+30", st=N, nodes=N, depth=N or inf)'
            )
        try:
            base, inc = _seconds_ms(match["base"]), _seconds_ms(match["inc"] or "0")
        except ValueError as exc:
            raise TimeControlError(f"bad time control {shown!r}: {exc}") from None
        if base <= 0:
            raise TimeControlError(f"bad time control {shown!r}: the base time must be positive")
        moves = int(match["moves"] or 0)
        if match["moves"] is not None and not 0 < moves <= MAX_MOVES:
            raise TimeControlError(
                f"bad time control {shown!r}: moves per session must be 1 to {MAX_MOVES}"
            )
        return cls("clock", base, inc, moves)

    def pgn_tag(self) -> str:
        """The PGN TimeControl tag value (seconds), as cutechess writes it; periods as the
        PGN standard writes them, `:` between them.

        >>> TimeControl.parse("5:00+3").pgn_tag(), TimeControl.parse("st=0.5").pgn_tag()
        ('300+3', '0.5/move')
        >>> TimeControl.parse("40/7200, 20/3600, 900+30").pgn_tag()
        '40/7200:20/3600:900+30'
        """
        if self.kind == "movetime":
            return f"{_fmt(self.limit)}/move"
        if self.kind != "clock":
            return "-"
        return ":".join(_period_text(p) for p in self.periods)

    def __str__(self) -> str:
        if self.kind == "movetime":
            return f"st={_fmt(self.limit)}"
        if self.kind in ("nodes", "depth"):
            return f"{self.kind}={self.limit}"
        if self.kind == "inf":
            return "inf"
        return ", ".join(_period_text(p) for p in self.periods)


def _period_text(period: Period) -> str:
    text = f"{period.moves}/" if period.moves else ""
    text += _fmt(period.base_ms)
    return text + (f"+{_fmt(period.inc_ms)}" if period.inc_ms else "")


def hms(seconds: float) -> str:
    """A duration as clocks show it, hh:mm:ss (never negative).

    >>> hms(3725.4), hms(-3)
    ('01:02:05', '00:00:00')
    """
    s = max(0, round(seconds))
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def _fmt(ms: int) -> str:
    return f"{ms // 1000}" if ms % 1000 == 0 else f"{ms / 1000:g}"


@dataclass(frozen=True, slots=True)
class Clock:
    """One side's clock: time left and moves left to the next session control.

    The rules, as cutechess and FIDE's Fischer clock keep them:

    - a move's time is deducted from the clock;
    - the flag falls only when one move takes longer than the time left plus the margin
      (`flags`);
    - otherwise the increment is added, and at the end of a `moves/` session the next
      session's base too, so a clock that went below zero inside the margin recovers;
    - an engine is never told a negative time (`told_ms`).

    >>> tc = TimeControl.parse("1+0.1")
    >>> clock = Clock.start(tc)
    >>> clock.flags(1_050, margin_ms=100)  # 50 ms past the clock: inside the margin
    False
    >>> clock = clock.after_move(tc, 1_050)
    >>> clock.remaining_ms  # -50 ms, plus the 100 ms increment
    50
    >>> clock.flags(151, margin_ms=100)  # 101 ms past the clock
    True
    """

    remaining_ms: int
    moves_to_go: int = 0  # 0 = no session control
    period: int = 0  # the index of its period in `TimeControl.periods`

    @classmethod
    def start(cls, tc: TimeControl) -> Clock:
        """A full clock at the start of a game.

        >>> Clock.start(TimeControl.parse("40/60+0.5"))
        Clock(remaining_ms=60000, moves_to_go=40, period=0)
        """
        return cls(tc.base_ms, tc.moves)

    def flags(self, used_ms: int, margin_ms: int) -> bool:
        """Whether a move that took `used_ms` loses on time: past the clock by more than the
        margin.

        >>> Clock(1_000).flags(1_100, margin_ms=100), Clock(1_000).flags(1_101, margin_ms=100)
        (False, True)
        """
        return used_ms - self.remaining_ms > margin_ms

    def after_move(self, tc: TimeControl, used_ms: int) -> Clock:
        """The clock after a move that took `used_ms` and did not flag: the time deducted,
        the period's increment added, and at a period's end the next period's base (the
        last period repeats when it has a number of moves).

        >>> tc = TimeControl.parse("2/10+1")
        >>> Clock.start(tc).after_move(tc, 3_000)
        Clock(remaining_ms=8000, moves_to_go=1, period=0)
        >>> Clock(8_000, 1).after_move(tc, 1_000)  # the session ends
        Clock(remaining_ms=18000, moves_to_go=2, period=0)
        >>> periods = TimeControl.parse("1/10, 2/20, 30+1")
        >>> Clock.start(periods).after_move(periods, 4_000)
        Clock(remaining_ms=26000, moves_to_go=2, period=1)
        >>> Clock(26_000, 1, 1).after_move(periods, 6_000)  # into the last: no moves to go
        Clock(remaining_ms=50000, moves_to_go=0, period=2)
        """
        periods = tc.periods
        now = periods[min(self.period, len(periods) - 1)]
        remaining = self.remaining_ms - used_ms + now.inc_ms
        moves, period = self.moves_to_go, self.period
        if now.moves:
            moves -= 1
            if moves == 0:
                period = min(period + 1, len(periods) - 1)
                remaining += periods[period].base_ms
                moves = periods[period].moves
        return Clock(remaining, moves, period)

    def told_ms(self) -> int:
        """The time left as an engine is told it: never negative.

        >>> Clock(-40).told_ms(), Clock(2_500).told_ms()
        (0, 2500)
        """
        return max(self.remaining_ms, 0)
