"""The variant an event plays: standard chess, its start-position variants (Chess960, double
Chess960), or one of python-chess's variants of the rules (atomic, crazyhouse, three-check,
king of the hill, antichess, horde, racing kings, suicide, giveaway).

An event's variant is one name (`variant_name`); a game's board carries the rules
(`new_board`), and python-chess's board class decides legality and the game's end.
"""

from __future__ import annotations

import functools

import chess
import chess.variant

#: standard rules, from the standard position or from one of the Chess960 positions
START_VARIANTS = ("standard", "chess960", "dfrc")
#: python-chess's board of each variant of the rules, by its UCI name
RULES: dict[str, type[chess.Board]] = {
    str(board.uci_variant): board for board in chess.variant.VARIANTS if board is not chess.Board
}
#: every name an event's `variant` is stored as
VARIANT_NAMES = START_VARIANTS + tuple(RULES)
_ALIASES = {
    "fischerandom": "chess960",
    "fischer random": "chess960",
    "frc": "chess960",
    "960": "chess960",
    "double chess960": "dfrc",
    "double fischer random": "dfrc",
}


def variant_name(text: str) -> str:
    """The stored name of a variant named as python-chess names it (or by an alias); a
    `ValueError` that lists the names otherwise.

    >>> variant_name("Three-check"), variant_name("KOTH"), variant_name("normal")
    ('3check', 'kingofthehill', 'standard')
    >>> variant_name("Fischerandom"), variant_name("dfrc")
    ('chess960', 'dfrc')
    >>> variant_name("shogi")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'shogi' is not a variant; the variants are standard, chess960, dfrc, suicide, ...
    """
    lowered = text.strip().lower()
    if lowered in VARIANT_NAMES:
        return lowered
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    try:
        board = chess.variant.find_variant(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is not a variant; the variants are {', '.join(VARIANT_NAMES)}"
        ) from None
    return "standard" if board is chess.Board else str(board.uci_variant)


def rules_of(variant: str) -> str:
    """The rules a variant's games follow, as UCI's ``UCI_Variant`` names them ("chess" for
    standard chess and the Chess960 variants).

    >>> rules_of("crazyhouse"), rules_of("dfrc")
    ('crazyhouse', 'chess')
    """
    return variant if variant in RULES else "chess"


def rules_on(board: chess.Board) -> str:
    """The rules `board` plays by (its UCI name).

    >>> rules_on(chess.Board()), rules_on(chess.variant.AtomicBoard())
    ('chess', 'atomic')
    """
    return type(board).uci_variant or "chess"


def is_960(variant: str) -> bool:
    """Whether the variant starts its games from Chess960 positions.

    >>> is_960("dfrc"), is_960("standard"), is_960("atomic")
    (True, False, False)
    """
    return variant in ("chess960", "dfrc")


def board_class(rules: str) -> type[chess.Board]:
    """python-chess's board for `rules` (`rules_of`).

    >>> board_class("3check").__name__, board_class("chess").__name__
    ('ThreeCheckBoard', 'Board')
    """
    return RULES.get(rules, chess.Board)


def new_board(fen: str | None = None, chess960: bool = False, rules: str = "chess") -> chess.Board:
    """A board with `rules` from `fen` (None: the rules' own start position, which for horde
    and racing kings is not the standard one): a copy of one read once (a game reads its
    opening's FEN several times; python-chess's parse of a FEN costs fifty copies).

    >>> new_board(rules="racingkings").fen()
    '8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1'
    >>> new_board(rules="3check").fen()
    'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1'
    >>> board = new_board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    >>> _ = board.push_uci("e2e4")
    >>> new_board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").move_stack
    []
    """
    return _read_board(fen, chess960, rules).copy()


@functools.lru_cache(maxsize=1024)
def _read_board(fen: str | None, chess960: bool, rules: str) -> chess.Board:
    """The board `new_board` copies (never handed out itself)."""
    board = board_class(rules)
    return board(fen or board.starting_fen, chess960=chess960)


def display_name(rules: str) -> str:
    """The variant's name as a PGN's ``Variant`` tag gives it.

    >>> display_name("kingofthehill"), display_name("chess")
    ('King of the Hill', 'Standard')
    """
    return board_class(rules).aliases[0]
