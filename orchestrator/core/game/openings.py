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
from orchestrator.core.game.variants import board_class, display_name, is_960, new_board, rules_of


class OpeningError(OrchestratorError, ValueError):
    """An opening suite that does not parse; the message says where."""


START_NAME = "start position"
#: the event's variant (`core/game/variants.py`): standard chess, Chess960 (both sides share
#: one of the 960 start positions), double Chess960 ("dfrc": each side's back rank chosen on
#: its own), or a variant of the rules ("atomic", "crazyhouse", "3check", ...)
Variant = str
#: the standard start position's number among the 960 (Scharnagl's numbering)
STANDARD_960 = 518


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
    #: a Chess960 game: castling is king-takes-rook, the FEN's castling rights name rooks
    chess960: bool = field(default=False, repr=False)
    #: the variant of the rules its games follow (`variants.rules_of`; "chess": standard)
    rules: str = field(default="chess", repr=False)

    def board(self) -> chess.Board:
        """The start position (the book moves are not yet played).

        >>> Opening("KPK", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").board().fen()
        '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1'
        >>> position(1, "chess960").board().chess960
        True
        >>> Opening("start", rules="horde").board().uci_variant
        'horde'
        """
        return new_board(self.fen, self.chess960, self.rules)

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
    def from_san(
        cls, line: str, fen: str | None = None, chess960: bool = False, rules: str = "chess"
    ) -> Opening:
        """An opening from a line of SAN moves such as "e4 e5 Nf3" (move numbers allowed).

        >>> Opening.from_san("1. e4 e5 2. Nf3").moves
        ('e2e4', 'e7e5', 'g1f3')
        """
        board = new_board(fen, chess960, rules)
        moves = []
        for token in line.split():
            if token.rstrip(".").isdigit() or token.endswith("."):
                continue
            try:
                moves.append(board.push_san(token).uci())
            except ValueError:
                raise OpeningError(f"illegal or unknown move {token!r} in {line!r}") from None
        return cls(line, fen, tuple(moves), chess960=chess960, rules=rules)

    def cut(self, plies: int) -> Opening:
        """The opening's first `plies` book moves only (`opening_plies`), named by them.

        >>> Opening("book.pgn:7", None, ("e2e4", "e7e5", "g1f3")).cut(2)
        Opening(name='book.pgn:7, 2 plies', fen=None, moves=('e2e4', 'e7e5'))
        """
        return Opening(
            f"{self.name}, {plies} plies",
            self.fen,
            self.moves[:plies],
            chess960=self.chess960,
            rules=self.rules,
        )

    def with_moves(self, line: str) -> Opening:
        """This start position with the book moves of a SAN `line` after it.

        >>> position(518, "chess960").with_moves("1. e4 e5").moves
        ('e2e4', 'e7e5')
        """
        if not line.strip():
            return self
        played = Opening.from_san(line, self.fen, self.chess960, self.rules)
        return Opening(
            f"{self.name} {line}", self.fen, played.moves, chess960=self.chess960, rules=self.rules
        )


def position(number: int, variant: Variant, black: int | None = None) -> Opening:
    """Chess960 start position `number` (0 to 959, 518 the standard one), as python-chess
    numbers them; in double Chess960 with Black's back rank from position `black`.  The FEN
    carries the castling rights of every rook (X-FEN).

    >>> position(0, "chess960").fen
    'bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1'
    >>> dfrc = position(0, "dfrc", 959)
    >>> dfrc.name, dfrc.fen
    ('DFRC 0-959', 'rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1')
    """
    if not 0 <= number < 960 or not (black is None or 0 <= black < 960):
        shown = number if black is None else f"{number}-{black}"
        raise OpeningError(f"no Chess960 position {shown} (the positions are 0 to 959)")
    white = chess.Board.from_chess960_pos(number)
    if black is None or variant == "chess960":
        return Opening(f"Chess960 #{number}", white.fen(), chess960=True)
    board = chess.Board.from_chess960_pos(black)
    for square in chess.SquareSet(chess.BB_RANK_1 | chess.BB_RANK_2):
        board.set_piece_at(square, white.piece_at(square))
    board.castling_rights = (white.castling_rights & chess.BB_RANK_1) | (
        board.castling_rights & chess.BB_RANK_8
    )
    return Opening(f"DFRC {number}-{black}", board.fen(), chess960=True)


def parse_position(text: str, variant: Variant) -> Opening:
    """A start position by number: "518", or "123-456" (White's, then Black's) in double
    Chess960, with book moves in SAN after it.

    >>> parse_position("518 1. e4", "chess960").moves, parse_position("1-2", "dfrc").name
    (('e2e4',), 'DFRC 1-2')
    """
    head, _, line = text.strip().partition(" ")
    white, dash, black = head.partition("-")
    if not white.isdigit() or (dash and not black.isdigit()):
        raise OpeningError(f"{text!r} is not a position number (such as 518 or 123-456)")
    if dash and variant != "dfrc":
        raise OpeningError(f"{head!r}: a pair of back ranks is double Chess960 (variant dfrc)")
    numbers = int(white), int(black) if dash else int(white)
    opening = position(numbers[0], variant, numbers[1] if variant == "dfrc" else None)
    return opening.with_moves(line)


def draw_position(variant: Variant, seed: int, index: int) -> Opening:
    """The start position of an event's `index`-th pair when no suite is given: drawn from
    `seed`, the standard start position left out.  Chess960 walks a seeded permutation of
    the other 959 positions (each once before any repeats); double Chess960 draws each
    pair's two back ranks on their own.

    >>> draw_position("chess960", 1, 0) == draw_position("chess960", 1, 0)
    True
    >>> len({draw_position("chess960", 7, i).name for i in range(959)})
    959
    """
    if variant == "dfrc":
        rng = random.Random(f"{seed}:dfrc:{index}")
        while (pair := (rng.randrange(960), rng.randrange(960))) == (STANDARD_960,) * 2:
            pass
        return position(pair[0], variant, pair[1])
    cycle, at = divmod(index, 959)
    numbers = [n for n in range(960) if n != STANDARD_960]
    random.Random(f"{seed}:chess960:{cycle}").shuffle(numbers)
    return position(numbers[at], variant)


def parse_epd(text: str, where: str = "EPD", variant: Variant = "standard") -> list[Opening]:
    """Positions of an EPD suite, named by their `id` (or `c0`) operation.  In a Chess960
    event a line may also be a position number (`parse_position`).

    >>> parse_epd('4k3/8/8/8/8/8/4P3/4K3 w - - id "KPK";')
    [Opening(name='KPK', fen='4k3/8/8/8/8/8/4P3/4K3 w - - 0 1', moves=())]
    """
    openings = []
    chess960, rules = is_960(variant), rules_of(variant)
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head = line.partition(" ")[0]
        if chess960 and head[:1].isdigit() and "/" not in head:  # a number, not a FEN
            try:
                openings.append(parse_position(line, variant))
            except OpeningError as exc:
                raise OpeningError(f"{where}: line {number}: {exc}") from None
            continue
        try:
            board, ops = board_class(rules).from_epd(line, chess960=chess960)
        except ValueError as exc:
            raise OpeningError(
                f"{where}: line {number}: not a valid EPD position ({exc})"
            ) from None
        if not board.is_valid():
            raise OpeningError(f"{where}: line {number}: an illegal position")
        name = ops.get("id") or ops.get("c0") or f"{where}:{number}"
        eco = ops.get("eco")
        eco_name = None if eco is None else str(eco)
        openings.append(
            Opening(str(name), board.fen(), eco=eco_name, chess960=chess960, rules=rules)
        )
    if not openings:
        raise OpeningError(f"{where}: no positions in the file")
    return openings


def parse_pgn(text: str, where: str = "PGN", variant: Variant = "standard") -> list[Opening]:
    """Move lines of a PGN suite, named by their Opening (or Event) tag, read by the event's
    rules whatever their Variant tag says; in a Chess960 event each starts from its FEN
    (castling rights as X-FEN or Shredder-FEN).

    >>> parse_pgn('[Opening "Italian"]\\n\\n1. e4 e5 2. Nf3 Nc6 3. Bc4 *')[0].moves
    ('e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4')
    """
    openings = []
    stream = io.StringIO(text)
    number = 0
    chess960, rules = is_960(variant), rules_of(variant)
    tag = "Chess960" if chess960 else display_name(rules)
    while True:  # each game by the event's rules, whatever its Variant tag says
        game = chess.pgn.read_game(stream, Visitor=lambda: _ByRules(tag))
        if game is None:
            break
        number += 1
        if game.errors:
            raise OpeningError(f"{where}: game {number}: {game.errors[0]}")
        fen = game.board().fen() if chess960 else game.headers.get("FEN")
        moves = tuple(m.uci() for m in game.mainline_moves())
        name = game.headers.get("Opening") or game.headers.get("Event") or f"{where}:{number}"
        if name == "?":
            name = f"{where}:{number}"
        eco, variation = game.headers.get("ECO"), game.headers.get("Variation")
        eco_name = eco if eco != "?" else None
        openings.append(Opening(name, fen, moves, eco_name, variation or None, chess960, rules))
    if not openings:
        raise OpeningError(f"{where}: no games in the file")
    return openings


class _ByRules(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, with the game's Variant tag set to `tag` before its moves
    are read (by the rules the tag names)."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag

    def end_headers(self) -> None:
        self.game.headers["Variant"] = self.tag


def parse_suite(text: str, where: str, variant: Variant = "standard") -> list[Opening]:
    """EPD or PGN, by the file name's ending; in a Chess960 event, a list of position numbers
    may stand with (or instead of) EPD lines.

    >>> [o.name for o in parse_suite("1. d4 d5 *", "book.pgn")]
    ['book.pgn:1']
    >>> [o.name for o in parse_suite("518\\n12-345 1. e4", "frc.txt", "dfrc")]
    ['DFRC 518-518', 'DFRC 12-345 1. e4']
    """
    if where.lower().endswith(".pgn"):
        return parse_pgn(text, where, variant)
    return parse_epd(text, where, variant)


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
