"""Opening suites (EPD positions or PGN move lines) and the seeded choice among them.

Parsing works on text; the caller reads the file.  A game from an opening starts after its
book moves, which are part of the game's PGN; a suite position becomes the FEN tag.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

import chess
import chess.pgn

from orchestrator.core.errors import OrchestratorError
from orchestrator.core.game.record import MoveRecord


class OpeningError(OrchestratorError, ValueError):
    """An opening suite that does not parse; the message says where."""


START_NAME = "start position"


def opening_tags(name: str | None, variation: str | None, eco: str | None) -> dict[str, str]:
    """The PGN tags that name an opening, where the suite names it.

    >>> opening_tags("Sicilian", None, "B20")
    {'Opening': 'Sicilian', 'ECO': 'B20'}
    """
    tags = {"Opening": name or "", "Variation": variation or "", "ECO": eco or ""}
    return {tag: value for tag, value in tags.items() if value}


@dataclass(frozen=True, slots=True)
class Opening:
    name: str
    fen: str | None = None  # None: the standard starting position
    moves: tuple[str, ...] = ()  # book moves in UCI
    eco: str | None = field(default=None, repr=False)  # as the suite names them, if it does
    variation: str | None = field(default=None, repr=False)

    def board(self) -> chess.Board:
        """The start position (the book moves are not yet played).

        >>> Opening("KPK", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").board().fen()
        '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1'
        """
        return chess.Board(self.fen) if self.fen else chess.Board()

    def book(self) -> tuple[MoveRecord, ...]:
        """The book moves as a game records them: the first moves of every game from this
        opening (the one place where they are replayed).

        >>> [(m.san, m.book) for m in Opening("x", None, ("e2e4", "c7c5")).book()]
        [('e4', True), ('c5', True)]
        """
        board, out = self.board(), []
        for uci in self.moves:
            move = chess.Move.from_uci(uci)
            out.append(MoveRecord(uci, board.san(move), book=True))
            board.push(move)
        return tuple(out)

    def after_book(self) -> chess.Board:
        """The position the engines play from: the book moves made.

        >>> Opening("x", None, ("e2e4",)).after_book().fen()
        'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
        """
        board = self.board()
        for uci in self.moves:
            board.push_uci(uci)
        return board

    @classmethod
    def from_san(cls, line: str, fen: str | None = None) -> Opening:
        """An opening from a line of SAN moves such as "e4 e5 Nf3" (move numbers allowed).

        >>> Opening.from_san("1. e4 e5 2. Nf3").moves
        ('e2e4', 'e7e5', 'g1f3')
        """
        board = chess.Board(fen) if fen else chess.Board()
        moves = []
        for token in line.split():
            if token.rstrip(".").isdigit() or token.endswith("."):
                continue
            try:
                moves.append(board.push_san(token).uci())
            except ValueError:
                raise OpeningError(f"illegal or unknown move {token!r} in {line!r}") from None
        return cls(line, fen, tuple(moves))


def parse_epd(text: str, where: str = "EPD") -> list[Opening]:
    """Positions of an EPD suite, named by their `id` (or `c0`) operation.

    >>> parse_epd('4k3/8/8/8/8/8/4P3/4K3 w - - id "KPK";')
    [Opening(name='KPK', fen='4k3/8/8/8/8/8/4P3/4K3 w - - 0 1', moves=())]
    """
    openings = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            board, ops = chess.Board.from_epd(line)
        except ValueError as exc:
            raise OpeningError(
                f"{where}: line {number}: not a valid EPD position ({exc})"
            ) from None
        if not board.is_valid():
            raise OpeningError(f"{where}: line {number}: an illegal position")
        name = ops.get("id") or ops.get("c0") or f"{where}:{number}"
        eco = ops.get("eco")
        openings.append(Opening(str(name), board.fen(), eco=None if eco is None else str(eco)))
    if not openings:
        raise OpeningError(f"{where}: no positions in the file")
    return openings


def parse_pgn(text: str, where: str = "PGN") -> list[Opening]:
    """Move lines of a PGN suite, named by their Opening (or Event) tag.

    >>> parse_pgn('[Opening "Italian"]\\n\\n1. e4 e5 2. Nf3 Nc6 3. Bc4 *')[0].moves
    ('e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4')
    """
    openings = []
    stream = io.StringIO(text)
    number = 0
    while True:
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        number += 1
        if game.errors:
            raise OpeningError(f"{where}: game {number}: {game.errors[0]}")
        fen = game.headers.get("FEN")
        moves = tuple(m.uci() for m in game.mainline_moves())
        name = game.headers.get("Opening") or game.headers.get("Event") or f"{where}:{number}"
        if name == "?":
            name = f"{where}:{number}"
        eco, variation = game.headers.get("ECO"), game.headers.get("Variation")
        openings.append(Opening(name, fen, moves, eco if eco != "?" else None, variation or None))
    if not openings:
        raise OpeningError(f"{where}: no games in the file")
    return openings


def parse_suite(text: str, where: str) -> list[Opening]:
    """EPD or PGN, by the file name's ending.

    >>> [o.name for o in parse_suite("1. d4 d5 *", "book.pgn")]
    ['book.pgn:1']
    """
    if where.lower().endswith(".pgn"):
        return parse_pgn(text, where)
    return parse_epd(text, where)


def choose(openings: list[Opening], index: int, rng_seed: int, order: str = "random") -> Opening:
    """The opening of the `index`-th pair of an event (both games of a pair share it).

    "sequential" walks the suite in order; "random" walks a permutation of it drawn from
    `rng_seed`, so every opening is used once before any repeats and a resumed event
    repeats the same choices.

    >>> suite = [Opening(name) for name in "abc"]
    >>> [choose(suite, i, 1, "sequential").name for i in range(4)]
    ['a', 'b', 'c', 'a']
    >>> sorted(choose(suite, i, 1).name for i in range(3))
    ['a', 'b', 'c']
    """
    n = len(openings)
    cycle, at = divmod(index, n)
    if order == "sequential":
        return openings[at]
    permutation = list(range(n))
    random.Random(f"{rng_seed}:{cycle}").shuffle(permutation)
    return openings[permutation[at]]


#: a game without an opening starts from the standard position, with no book moves
START = Opening(START_NAME)
