"""A game's engine log: every line written to or read from its engines, with its time.

Each line reads as cutechess's debug output does: the seconds since the game started (to the
millisecond), ``>`` for a line written to an engine, ``<`` for a line it printed and ``!``
for a line of its stderr, the engine's name, and the line.  The runner's own notes (who
plays, how the game ended, how many lines the cap left out) start with ``#``.  A line is cut
at `LINE_KEPT` characters, a note at `NOTE_KEPT` bytes, and a game's whole log, notes
included, is at most `LOG_CAP` bytes of UTF-8: the engines' lines stop `NOTES_ROOM` bytes
short of the cap, which keeps room for the runner's notes, so a flooding engine costs a
count, not memory or disk, and the notes that say how the game ended are always kept.

The text is handed on in chunks (`take`), one with every move, so that it can cross from a
game host to the daemon with the move.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["LINE_KEPT", "LOG_CAP", "NOTES_ROOM", "NOTE_KEPT", "Journal"]

#: what is kept of one engine line, in fault reports and in the log
LINE_KEPT = 400
#: the most a game's log keeps, notes included (bytes of UTF-8, before compression)
LOG_CAP = 16 << 20
#: the most one note of the runner's keeps (bytes of its text)
NOTE_KEPT = 500
#: the notes a game's log has at most: who plays, how it ended, what the cap left out
NOTES = 3
#: what the engines' lines leave of the cap for the runner's notes ("# ", text, newline)
NOTES_ROOM = NOTES * (NOTE_KEPT + 3)


def _size(text: str) -> int:
    """Bytes of `text` in UTF-8 (`isascii` is a flag read: no copy for ASCII text)."""
    return len(text) if text.isascii() else len(text.encode())


def _cut(text: str, size: int) -> str:
    """`text` cut to at most `size` bytes of UTF-8, on a character's boundary.

    >>> _cut("e4 é5", 5), _cut("e4 é5", 4), _cut("d4", 5)
    ('e4 é', 'e4 ', 'd4')
    """
    if _size(text) <= size:
        return text
    return text.encode()[:size].decode(errors="ignore")


def _kept(text: str) -> str:
    """A line as the log keeps it: cut at `LINE_KEPT` characters, with its length.

    >>> _kept("e2e4"), _kept("x" * (LINE_KEPT + 5))[-30:]
    ('e2e4', 'xxxxxxxx... [405 characters]')
    """
    return text if len(text) <= LINE_KEPT else f"{text[:LINE_KEPT]}... [{len(text)} characters]"


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
        self.size = 0  # bytes of every entry and note kept so far
        self.notes = 0
        self.dropped = 0
        self._chunk: list[str] = []

    def line(self, at: float, sign: str, engine: str, text: str) -> None:
        """One engine line at monotonic time `at`; past the cap it is only counted."""
        self._add(self._entries(at, sign, engine, [text])[0])

    def lines(self, at: float, sign: str, engine: str, texts: list[str]) -> None:
        """Lines of one engine at one time, as `line` writes each: an engine's write of
        many lines costs one entry.

        >>> journal = Journal(clock=lambda: 0.0)
        >>> journal.lines(0.5, "<", "SF", ["info depth 1", "bestmove e2e4"])
        >>> print(journal.take(), end="")
             0.500 <SF: info depth 1
             0.500 <SF: bestmove e2e4
        """
        if not texts:
            return
        shown = texts if max(map(len, texts)) <= LINE_KEPT else [_kept(text) for text in texts]
        lead = f"{at - self.started:10.3f} {sign}{engine}: "  # one time for them all
        entry = lead + f"\n{lead}".join(shown) + "\n"
        size = _size(entry)
        if self.size + size > self.cap - NOTES_ROOM:  # near the cap: line by line
            for text in texts:
                self.line(at, sign, engine, text)
            return
        self.size += size
        self._chunk.append(entry)

    def stamped(self, sign: str, engine: str, times: list[float], texts: list[str]) -> None:
        """Lines of one engine, each written at its own time (`times`, monotonic), as
        `line` writes each: a move's output costs one entry, formatted in one go.

        >>> journal = Journal(clock=lambda: 0.0)
        >>> journal.stamped("<", "S%F", [0.25, 0.5], ["info depth 1", "bestmove e2e4"])
        >>> print(journal.take(), end="")
             0.250 <S%F: info depth 1
             0.500 <S%F: bestmove e2e4
        """
        if not texts:
            return
        shown = texts if max(map(len, texts)) <= LINE_KEPT else [_kept(text) for text in texts]
        started = self.started
        values: list[object] = [None] * (2 * len(texts))
        values[0::2] = [at - started for at in times]
        values[1::2] = shown
        form = f"%10.3f {sign}{engine.replace('%', '%%')}: %s\n"
        entry = (form * len(texts)) % tuple(values)
        size = _size(entry)
        if self.size + size > self.cap - NOTES_ROOM:  # near the cap: line by line
            for at, text in zip(times, texts, strict=True):
                self.line(at, sign, engine, text)
            return
        self.size += size
        self._chunk.append(entry)

    def _entries(self, at: float, sign: str, engine: str, texts: list[str]) -> list[str]:
        """Each of `texts` as a line of the log at `at`, cut at `LINE_KEPT` characters."""
        prefix = f"{at - self.started:10.3f} {sign}{engine}: "
        return [f"{prefix}{_kept(text)}\n" for text in texts]

    def note(self, text: str) -> None:
        """A line of the runner's own (``# ...``), cut at `NOTE_KEPT` bytes: the room the
        engines' lines leave keeps the first `NOTES` of them (a game writes no more).

        >>> journal = Journal()
        >>> journal.note("Stockfish (White) - Ethereal (Black)")
        >>> journal.take()
        '# Stockfish (White) - Ethereal (Black)\\n'
        """
        entry = f"# {_cut(text, NOTE_KEPT)}\n"
        size = _size(entry)
        if self.notes >= NOTES and self.size + size > self.cap:
            self.dropped += 1
            return
        self.notes += 1
        self.size += size
        self._chunk.append(entry)

    def _add(self, entry: str) -> None:
        size = _size(entry)
        if self.size + size > self.cap - NOTES_ROOM:
            self.dropped += 1
            return
        self.size += size
        self._chunk.append(entry)

    def take(self) -> str:
        """The text written since the last `take`."""
        text = "".join(self._chunk)
        self._chunk.clear()
        return text

    def close(self) -> str:
        """The last chunk, with a count of the lines the cap left out (a note).

        >>> journal = Journal(cap=NOTES_ROOM + 60)
        >>> for n in range(3):
        ...     journal.line(journal.started, "<", "E", f"info depth {n}")
        >>> print(journal.close(), end="")
             0.000 <E: info depth 0
             0.000 <E: info depth 1
        # 1 more line not kept: a game's log keeps 1569 bytes
        """
        if self.dropped:
            lines = "line" if self.dropped == 1 else "lines"
            self.note(f"{self.dropped} more {lines} not kept: a game's log keeps {self.cap} bytes")
            self.dropped = 0
        return self.take()
