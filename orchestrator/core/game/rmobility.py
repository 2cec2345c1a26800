"""R-mobility (reset-mobility), TCEC's tiebreak and schedule column (TCEC wiki, "R-Mobility").

A game's goal is reached in the position, since the last pawn move or capture, where the
side to move has the fewest legal moves, not being in check counting as half a move more;
the first position to reach that minimum takes precedence, and the other side achieved it.
Its G-score is ``Gn.m``: n the legal moves, .5 when not in check (mate is G0.0, stalemate
G0.5, one legal move in check G1.0), with a minus when Black achieved it.  R-mobility points
are ½ + ½^(1+2G) for the side that achieved the goal and ½ - ½^(1+2G) for the other: a mate
is worth a whole point, a stalemate ¾.

The wiki's basic endgames, from the side to move's point of view:

>>> import chess
>>> def after(fen, *moves):
...     board = chess.Board(fen)
...     return g_score(board, [chess.Move.from_uci(m) for m in moves])

KvK: a bare king is held to one square in a corner (G1.5), never checked.

>>> str(after("k7/2K5/8/8/8/8/8/8 b - - 0 1"))
'G1.5'

KBvK and KNvK: no mate, but a stalemate (G0.5) is the best goal.

>>> str(after("k7/2K5/8/8/8/8/8/6B1 w - - 0 1", "g1d4"))
'G0.5'
>>> str(after("k7/2K5/8/8/8/2N5/8/8 w - - 0 1", "c3b5"))
'G0.5'

KPvK: a pawn move resets the goals; the defender then holds its king in front of the pawn.

>>> goal = after("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", "e2e4", "e5e4")
>>> str(goal), goal.achiever
('-G5.5', False)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the standings read G-scores without loading python-chess (`pair`)
    import chess

WHITE, BLACK = True, False  # python-chess's colours

__all__ = ["Goal", "g_score", "goal_at_end", "parse", "points"]


@dataclass(frozen=True, slots=True)
class Goal:
    """The best goal of a game: the fewest legal moves of the side to move (`moves`),
    whether it was in check, and which side achieved it (the other one: `achiever` is True
    for White)."""

    moves: int
    check: bool
    achiever: chess.Color

    @property
    def g(self) -> float:
        """n, or n.5 when not in check.

        >>> Goal(0, True, WHITE).g, Goal(1, False, BLACK).g
        (0.0, 1.5)
        """
        return self.moves + (0.0 if self.check else 0.5)

    def __str__(self) -> str:
        """The G-score as TCEC writes it (`RMobilityResult`).

        >>> str(Goal(8, False, BLACK)), str(Goal(0, True, WHITE))
        ('-G8.5', 'G0.0')
        """
        return f"{'' if self.achiever == WHITE else '-'}G{self.g:.1f}"


def _goal(board: chess.Board, below: float = math.inf) -> Goal | None:
    """The goal of `board`'s position if its G is below `below`, else None: its legal moves
    are then counted only until they are too many (a game's end counts many positions, and
    the best goal so far is mostly a few moves).

    >>> import chess
    >>> str(_goal(chess.Board())), _goal(chess.Board(), 20.5), str(_goal(chess.Board(), 20.6))
    ('-G20.5', None, '-G20.5')
    """
    check = board.is_check()
    most = below - (0.0 if check else 0.5)  # fewer moves than this, or it is no better
    moves = 0
    for _ in board.generate_legal_moves():
        moves += 1
        if moves >= most:
            return None
    return Goal(moves, check, not board.turn)


def g_score(start: chess.Board, moves: Iterable[chess.Move]) -> Goal:
    """The best goal of the game from `start` through `moves`: over the positions since
    the last pawn move or capture, the fewest legal moves of the side to move (not in
    check counting half a move more), the first to reach it taking precedence.

    >>> import chess
    >>> board = chess.Board()
    >>> fools = [chess.Move.from_uci(m) for m in ("f2f3", "e7e5", "g2g4", "d8h4")]
    >>> str(g_score(board, fools))  # Black mates
    '-G0.0'
    """
    board = start.copy(stack=False)
    for move in moves:
        board.push(move)
    return goal_at_end(board)


def goal_at_end(board: chess.Board) -> Goal:
    """`g_score` of the game that `board`'s move stack holds, from its last pawn move or
    capture (the runner's board at a game's end: only those positions are counted; the
    board is left as it was).

    >>> import chess
    >>> board = chess.Board()
    >>> for m in ("f2f3", "e7e5", "g2g4", "d8h4"):
    ...     _ = board.push_uci(m)
    >>> str(goal_at_end(board)), len(board.move_stack)
    ('-G0.0', 4)
    """
    undone: list[chess.Move] = []
    while board.move_stack:
        move = board.pop()
        undone.append(move)
        if board.is_zeroing(move):
            board.push(undone.pop())
            break
    best = _goal(board)
    assert best is not None  # (below nothing: always a goal)
    while undone:
        board.push(undone.pop())
        goal = _goal(board, best.g)
        if goal is not None:
            best = goal
    return best


def points(goal: Goal) -> tuple[float, float]:
    """R-mobility points of (White, Black): ½ ± ½^(1+2G), the plus for the side that
    achieved the goal.

    >>> points(Goal(0, True, WHITE)), points(Goal(0, False, BLACK))
    ((1.0, 0.0), (0.25, 0.75))
    """
    bonus = 0.5 ** (1 + 2 * goal.g)
    mine, theirs = 0.5 + bonus, 0.5 - bonus
    return (mine, theirs) if goal.achiever == WHITE else (theirs, mine)


def parse(text: str) -> Goal:
    """A G-score as written (`G1.5`, `-G8.5`) back as a goal (the check/not-in-check
    half read from the fraction).

    >>> parse("-G8.5") == Goal(8, False, BLACK), str(parse("G0.0"))
    (True, 'G0.0')
    """
    black = text.startswith("-")
    value = float(text.lstrip("-").removeprefix("G"))
    moves = int(value)
    return Goal(moves, value == moves, BLACK if black else WHITE)
