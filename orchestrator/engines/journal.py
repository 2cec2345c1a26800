"""A game's engine log: every line written to or read from its engines, with its time.

Each line reads as cutechess's debug output does: the seconds since the game started (to the
millisecond), ``>`` for a line written to an engine, ``<`` for a line it printed and ``!``
for a line of its stderr, the engine's name, and the line.  The runner's own notes (who
plays, how the game ended) start with ``#``.  A line is cut at `LINE_KEPT` characters and a
game's log at `LOG_CAP` bytes, so a flooding engine costs a count, not memory or disk.

The text is handed on in chunks (`take`), one with every move, so that it can cross from a
game host to the daemon with the move.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["LINE_KEPT", "LOG_CAP", "Journal"]

#: what is kept of one engine line, in fault reports and in the log
LINE_KEPT = 400
#: the most a game's log keeps (bytes of text, before compression)
LOG_CAP = 16 << 20


class Journal:
    """The engine log of one game, as it is written.

    >>> clock = iter([100.0, 100.25, 101.5]).__next__
    >>> journal = Journal(clock=clock)
    >>> journal.line(clock(), ">", "Stockfish", "go wtime 1000 btime 1000")
    >>> journal.line(clock(), "<", "Stockfish", "bestmove e2e4")
    >>> print(journal.take(), end="")
         0.250 >Stockfish: go wtime 1000 btime 1000
         1.500 <Stockfish: bestmove e2e4
    >>> journal.take()
    ''
    """

    def __init__(self, *, cap: int = LOG_CAP, clock: Callable[[], float] = time.monotonic) -> None:
        self.started = clock()
        self.cap = cap
        self.size = 0
        self.dropped = 0
        self._chunk: list[str] = []

    def line(self, at: float, sign: str, engine: str, text: str) -> None:
        """One engine line at monotonic time `at`; past the cap it is only counted."""
        if len(text) > LINE_KEPT:
            text = text[:LINE_KEPT] + f"... [{len(text)} characters]"
        self._add(f"{at - self.started:10.3f} {sign}{engine}: {text}\n")

    def note(self, text: str) -> None:
        """A line of the runner's own (``# ...``), kept past the cap (there are two).

        >>> journal = Journal()
        >>> journal.note("Stockfish (White) - Ethereal (Black)")
        >>> journal.take()
        '# Stockfish (White) - Ethereal (Black)\\n'
        """
        self._chunk.append(f"# {text}\n")

    def _add(self, entry: str) -> None:
        if self.size + len(entry) > self.cap:
            self.dropped += 1
            return
        self.size += len(entry)
        self._chunk.append(entry)

    def take(self) -> str:
        """The text written since the last `take`."""
        text = "".join(self._chunk)
        self._chunk.clear()
        return text

    def close(self) -> str:
        """The last chunk, with a count of the lines the cap left out.

        >>> journal = Journal(cap=60)
        >>> for n in range(3):
        ...     journal.line(journal.started, "<", "E", f"info depth {n}")
        >>> print(journal.close(), end="")
             0.000 <E: info depth 0
             0.000 <E: info depth 1
        # 1 more line not kept: a game's log keeps 60 bytes
        """
        if self.dropped:
            lines = "line" if self.dropped == 1 else "lines"
            self._chunk.append(
                f"# {self.dropped} more {lines} not kept: a game's log keeps {self.cap} bytes\n"
            )
            self.dropped = 0
        return self.take()
