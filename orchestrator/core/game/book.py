"""Polyglot opening books (`.bin`), read by python-chess (`chess.polyglot`): the line a game
pair starts with, drawn move by move with the book's weights from the event's stored seed.

A book walk starts where the pair's opening ends (the start position, or the last move of a
suite's line, as cutechess plays `-openings` and then `-book`), and stops after `depth`
plies or where the book has no move.  The draw depends on the seed and the pair's index
alone, so a resumed event, or the same event run again, plays the same lines.
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.polyglot

from orchestrator.core.game.openings import START, Opening

__all__ = ["Book"]


class Book:
    """A Polyglot book, memory-mapped (a book of any size costs no memory of its own)."""

    def __init__(self, path: Path, depth: int) -> None:
        self.path = path
        self.depth = depth
        #: OSError if it cannot be opened; python-chess reads it as 16-byte entries
        self.reader = chess.polyglot.open_reader(path)

    def close(self) -> None:
        self.reader.close()

    def move(self, board: chess.Board, draw: str) -> chess.Move | None:
        """A move for `board` with the book's weights (None: out of book), drawn from a
        generator seeded by `draw` (a game's name and ply: the same game gets the same move).

        >>> import tempfile, struct, chess.polyglot
        >>> path = Path(tempfile.mkdtemp()) / "e4.bin"
        >>> key = chess.polyglot.zobrist_hash(chess.Board())
        >>> _ = path.write_bytes(struct.pack(">QHHI", key, 28 | 12 << 6, 1, 0))  # 1. e4
        >>> book, bare = Book(path, 8), chess.Board("8/8/8/8/8/8/8/K6k w - - 0 1")
        >>> book.move(chess.Board(), "g:0"), book.move(bare, "g:1")
        (Move.from_uci('e2e4'), None)
        >>> book.close()
        """
        try:
            return self.reader.weighted_choice(board, random=random.Random(draw)).move
        except IndexError:  # out of book
            return None

    def extend(self, opening: Opening | None, seed: int, pair: int) -> Opening:
        """`opening` (None: the start position) with up to `depth` book moves after it, each
        a weighted random choice among the book's moves for the position, from a generator
        seeded by the event's `seed` and the `pair`: the same pair gets the same line.

        >>> import tempfile, chess.polyglot, struct
        >>> e4 = chess.Move.from_uci("e2e4")
        >>> entry = struct.pack(">QHHI", chess.polyglot.zobrist_hash(chess.Board()),
        ...                     e4.to_square | e4.from_square << 6, 1, 0)
        >>> with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        ...     _ = f.write(entry); f.flush()
        ...     book = Book(Path(f.name), 8)
        ...     line = book.extend(None, 1, 0)
        ...     book.close()
        >>> line.moves, line.name
        (('e2e4',), '1. e4')
        """
        base = opening or START
        board = base.after_book()
        start = board.copy(stack=False)
        rng = random.Random(f"{seed}:book:{pair}")
        moves: list[chess.Move] = []
        for _ in range(self.depth):
            try:
                move = self.reader.weighted_choice(board, random=rng).move
            except IndexError:  # out of book
                break
            moves.append(move)
            board.push(move)
        if not moves:
            return base
        line = start.variation_san(moves)
        name = line if opening is None else f"{base.name} {line}"
        return Opening(
            name,
            base.fen,
            base.moves + tuple(m.uci() for m in moves),
            base.eco,
            base.variation,
            chess960=base.chess960,
        )
