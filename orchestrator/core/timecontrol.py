"""cutechess-style time controls and the chess clock, as pure data and functions.

Forms: ``base+inc`` (seconds, ``M:SS`` allowed for the base), ``moves/base+inc`` (repeating
sessions of `moves` moves), ``st=N`` (fixed seconds per move), ``nodes=N`` and ``depth=N``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

Kind = Literal["clock", "movetime", "nodes", "depth"]

_NUMBER = r"\d+(?:\.\d+)?"
_CLOCK = re.compile(rf"^(?:(?P<moves>\d+)/)?(?P<base>(?:\d+:)?{_NUMBER})(?:\+(?P<inc>{_NUMBER}))?$")


class TimeControlError(ValueError):
    """A time control that does not parse; the message quotes it."""


def _seconds_ms(text: str) -> int:
    if ":" in text:
        minutes, seconds = text.split(":", 1)
        return round((int(minutes) * 60 + float(seconds)) * 1000)
    return round(float(text) * 1000)


@dataclass(frozen=True, slots=True)
class TimeControl:
    kind: Kind
    base_ms: int = 0
    inc_ms: int = 0
    moves: int = 0  # moves per session; 0 = the whole game
    limit: int = 0  # ms per move (movetime), nodes, or depth

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        raw = text.strip().lower()
        for prefix, kind in (("st=", "movetime"), ("nodes=", "nodes"), ("depth=", "depth")):
            if raw.startswith(prefix):
                value = raw[len(prefix) :]
                try:
                    number = _seconds_ms(value) if kind == "movetime" else int(value)
                except ValueError:
                    raise TimeControlError(
                        f"bad time control {text!r}: {value!r} is not a number"
                    ) from None
                if number <= 0:
                    raise TimeControlError(f"bad time control {text!r}: must be positive")
                return cls(kind, limit=number)  # type: ignore[arg-type]
        match = _CLOCK.match(raw)
        if not match:
            raise TimeControlError(
                f"bad time control {text!r} (expected base+inc, moves/base+inc, st=N, "
                "nodes=N or depth=N)"
            )
        base = _seconds_ms(match["base"])
        if base <= 0:
            raise TimeControlError(f"bad time control {text!r}: the base time must be positive")
        moves = int(match["moves"] or 0)
        if match["moves"] is not None and moves <= 0:
            raise TimeControlError(f"bad time control {text!r}: moves per session must be > 0")
        return cls("clock", base, _seconds_ms(match["inc"] or "0"), moves)

    def pgn_tag(self) -> str:
        """The PGN TimeControl tag value (seconds), as cutechess writes it."""
        if self.kind == "movetime":
            return f"{_fmt(self.limit)}/move"
        if self.kind != "clock":
            return "-"
        text = f"{self.moves}/" if self.moves else ""
        text += _fmt(self.base_ms)
        return text + (f"+{_fmt(self.inc_ms)}" if self.inc_ms else "")

    def __str__(self) -> str:
        if self.kind == "movetime":
            return f"st={_fmt(self.limit)}"
        if self.kind in ("nodes", "depth"):
            return f"{self.kind}={self.limit}"
        return self.pgn_tag()


def _fmt(ms: int) -> str:
    return f"{ms // 1000}" if ms % 1000 == 0 else f"{ms / 1000:g}"


@dataclass(frozen=True, slots=True)
class Clock:
    """One side's clock: time left and moves left to the next session control."""

    remaining_ms: int
    moves_to_go: int = 0  # 0 = no session control

    @classmethod
    def start(cls, tc: TimeControl) -> Clock:
        return cls(tc.base_ms, tc.moves)

    def after_move(self, tc: TimeControl, used_ms: int) -> Clock:
        """The clock after a move that took `used_ms` (may go negative: a flag fall)."""
        remaining = self.remaining_ms - used_ms
        if remaining < 0:
            return replace(self, remaining_ms=remaining)
        remaining += tc.inc_ms
        moves = self.moves_to_go
        if tc.moves:
            moves -= 1
            if moves == 0:
                remaining += tc.base_ms
                moves = tc.moves
        return Clock(remaining, moves)
