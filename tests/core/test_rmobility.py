"""R-mobility (TCEC wiki, "R-Mobility"): properties of the G-score over random games, and
the r-mobility points as a tiebreak.  The wiki's basic endgames are the module's doctests."""

from __future__ import annotations

import random
from collections.abc import Callable

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.event.model import Game, Player, Round, Rules, Tournament
from orchestrator.core.event.standings import standings
from orchestrator.core.game.rmobility import Goal, g_score, goal_at_end, parse, points


def _ending(board: chess.Board, test: Callable[[chess.Board], bool]) -> chess.Move | None:
    """A legal move after which `test` holds, if there is one."""
    for move in list(board.legal_moves):
        board.push(move)
        found = test(board)
        board.pop()
        if found:
            return move
    return None


def playout(seed: int, wanted: Callable[[chess.Board], bool], captures: bool) -> list[chess.Move]:
    """A random game from the start that plays a move reaching `wanted` as soon as it can
    (capturing first when `captures`), to its end or 600 plies."""
    rng, board = random.Random(seed), chess.Board()
    while len(board.move_stack) < 600 and not board.is_game_over(claim_draw=False):
        move = _ending(board, wanted)
        if move is None:
            legal = list(board.legal_moves)
            taking = [m for m in legal if board.is_capture(m)] if captures else []
            move = rng.choice(taking or legal)
        board.push(move)
    return board.move_stack


def ending_in(
    seed: int, wanted: Callable[[chess.Board], bool], captures: bool
) -> list[chess.Move] | None:
    """The first of ten playouts from `seed` that ends in `wanted`."""
    for attempt in range(10):
        moves = playout(seed * 10 + attempt, wanted, captures)
        board = chess.Board()
        for move in moves:
            board.push(move)
        if wanted(board):
            return moves
    return None


@given(st.integers(0, 10**6))
@settings(max_examples=30, deadline=None)
def test_a_mate_is_g0_achieved_by_the_winner(seed: int) -> None:
    moves = ending_in(seed, chess.Board.is_checkmate, captures=False)
    if moves is None:  # ten playouts without a mate: rare (most end in one)
        return
    goal = g_score(chess.Board(), moves)
    winner = chess.WHITE if len(moves) % 2 else chess.BLACK
    assert goal == Goal(0, True, winner)
    assert points(goal) == ((1.0, 0.0) if winner == chess.WHITE else (0.0, 1.0))


@given(st.integers(0, 10**6))
@settings(max_examples=20, deadline=None)
def test_a_stalemate_is_g0_5(seed: int) -> None:
    moves = ending_in(seed, chess.Board.is_stalemate, captures=True)
    if moves is None:
        return
    goal = g_score(chess.Board(), moves)
    assert goal.g == 0.5 and not goal.check
    assert goal.achiever == (chess.WHITE if len(moves) % 2 else chess.BLACK)  # who stalemated
    assert sorted(points(goal)) == [0.25, 0.75]


def mirrored(move: chess.Move) -> chess.Move:
    return chess.Move(
        chess.square_mirror(move.from_square), chess.square_mirror(move.to_square), move.promotion
    )


@given(st.integers(0, 10**6), st.booleans())
@settings(max_examples=40, deadline=None)
def test_the_score_is_symmetric_under_a_colour_flip(seed: int, captures: bool) -> None:
    """The same game with the colours swapped (the board mirrored, Black to move first)
    reaches the same goal, achieved by the other side: the G-score changes sign only, and
    the points change hands."""
    moves = playout(seed, lambda board: False, captures)
    goal = g_score(chess.Board(), moves)
    flipped = g_score(chess.Board().mirror(), [mirrored(m) for m in moves])
    assert (flipped.moves, flipped.check) == (goal.moves, goal.check)
    assert flipped.achiever == (not goal.achiever)
    assert str(flipped).lstrip("-") == str(goal).lstrip("-") and str(flipped) != str(goal)
    assert points(flipped) == points(goal)[::-1]
    assert parse(str(goal)) == goal


def test_r_mobility_points_break_a_tie_as_tcec_s_league_does() -> None:
    """A and B tie on score and Sonneborn-Berger (each beat C, each drew the other); A won
    by mate (G0.0), B by a position with three moves left (G3.5): `["sb", "rmobility"]` puts
    A first, and without it the tie stands."""
    players = tuple(Player(name, seed) for seed, name in enumerate("ABC", 1))
    rounds = (
        Round(1, (Game("A", "C", "1-0", rmobility="G0.0"),)),
        Round(2, (Game("C", "B", "0-1", rmobility="-G3.5"),)),
        Round(3, (Game("A", "B", "1/2-1/2", rmobility="G10.5"),)),
    )
    rules = Rules(format="single")
    t = Tournament(players, rounds, rules)
    with_mobility = standings(t, ("sb", "rmobility"))
    assert [line.name for line in with_mobility] == ["A", "B", "C"]
    assert [line.place for line in with_mobility][:2] == ["1", "2"]
    a, b = with_mobility[0], with_mobility[1]
    assert a.score == b.score and a.tiebreaks["sb"] == b.tiebreaks["sb"]
    assert a.rmobility > b.rmobility  # 1 + (1/2 - 1/2**22) against 1 - 1/2**8 + (1/2 + 1/2**22)
    assert [line.place for line in standings(t, ("sb",))][:2] == ["1-2", "1-2"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 160))
def test_the_goal_at_a_game_s_end_is_the_whole_game_s(seed: int, plies: int) -> None:
    """`g_score` and `goal_at_end` (the runner's), which count only from the last pawn move
    or capture, give the goal the definition gives counting every position; `goal_at_end`
    leaves the board as it was."""
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(plies):
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        if not moves:
            break
        board.push(rng.choice(moves))
    stack, fen = list(board.move_stack), board.fen()
    # the definition, every position counted: a pawn move or capture starts afresh
    replay = chess.Board()
    best = Goal(replay.legal_moves.count(), replay.is_check(), not replay.turn)
    for move in stack:
        reset = replay.is_zeroing(move)
        replay.push(move)
        goal = Goal(replay.legal_moves.count(), replay.is_check(), not replay.turn)
        if reset or goal.g < best.g:
            best = goal
    assert g_score(chess.Board(), stack) == best
    assert goal_at_end(board) == best
    assert board.move_stack == stack and board.fen() == fen
