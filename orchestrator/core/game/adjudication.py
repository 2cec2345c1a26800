"""TCEC-style adjudication as a pure state machine fed one ply at a time.

* win: both engines score at least `score` pawns for the same side for `plies` consecutive
  plies (so each engine agrees `plies / 2` times);
* draw: from move `from_move` on, both engines' scores within +-`score` for `plies`
  consecutive plies with no capture or pawn move among them;
* resign (off by default; cutechess's and fastchess's `-resign`): one-sided, an engine
  whose own last `plies` scores are all at or below -`score` pawns (a mate against it counts
  whatever `score` is) loses, whatever its opponent says;
* tablebases: the runner probes Syzygy and passes the verdict in;
* maximum moves: a draw once both sides have made `max_moves` moves.

A ply without a score (a book move, an engine that reports none) breaks the streaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from orchestrator.core.event.model import Result
from orchestrator.core.game.record import Score, score_pawns

Plies = Annotated[int, msgspec.Meta(ge=1, description="an integer >= 1")]
Pawns = Annotated[float, msgspec.Meta(ge=0, lt=1e9, description="a finite number >= 0")]


class WinRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Both engines score at least `score` pawns for one side for `plies` plies."""

    plies: Plies = 10
    score: Pawns = 10.0


class DrawRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """From move `from_move`, both engines within +-`score` for `plies` quiet plies."""

    from_move: Plies = 35
    plies: Plies = 10
    score: Pawns = 0.15


TbAdjudicate = Literal["both", "win-loss", "draw"]


class ResignRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One engine's own last `plies` scores all at or below -`score` pawns: it loses."""

    plies: Plies = 3
    score: Pawns = 6.0


class Adjudication(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The adjudication rules of an event (`[adjudication]`); TCEC's by default.  None turns
    a rule off (`false` in engines.toml); the one-sided `resign` rule is off unless given."""

    win: WinRule | None = WinRule()
    draw: DrawRule | None = DrawRule()
    resign: ResignRule | None = None
    #: Syzygy folders (3-4-5, 6 and 7-piece sets often live apart); one may be given alone
    #: (`as_folders`)
    tablebases: tuple[Path, ...] | None = None
    tb_pieces: Annotated[int, msgspec.Meta(ge=3, description="an integer >= 3")] = 6
    #: which tablebase verdicts end a game: "both", "win-loss" (wins only), "draw"
    tb_adjudicate: TbAdjudicate = "both"
    #: a cursed win (or blessed loss) counts as a win (a loss), the fifty-move rule aside
    tb_ignore50: bool = False
    max_moves: Annotated[int, msgspec.Meta(ge=0, description="an integer >= 0")] = 0  # 0: none

    def tablebase_folders(self) -> tuple[Path, ...]:
        """The Syzygy folders, however many were given.

        >>> Adjudication(tablebases=(Path("/tb"),)).tablebase_folders()
        (PosixPath('/tb'),)
        >>> Adjudication().tablebase_folders()
        ()
        """
        return self.tablebases or ()


def as_folders(value: object) -> object:
    """`tablebases` as written (one folder, a list of them, "" or null for none) in the
    schema's form: a list, or None.

    >>> as_folders("/tb"), as_folders(["/a", "/b"]), as_folders(""), as_folders(None)
    (['/tb'], ['/a', '/b'], None, None)
    """
    if value == "":
        return None
    return [value] if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class Verdict:
    result: Result
    reason: str
    #: the ending in TCEC's words (its PGNs' TerminationDetails): `core/game/record.py`
    details: str = ""


#: the move limit (`max_moves`) in TCEC's words: an adjudication by the event's rules
MOVE_LIMIT_WORDS = "TCEC Adjudication"
#: the one-sided resign rule's ending (TerminationDetails)
RESIGN_WORDS = "Resign rule"


@dataclass
class Adjudicator:
    rules: Adjudication
    win_streak: int = 0
    win_side: int = 0  # +1 white, -1 black
    draw_streak: int = 0
    #: each side's own scores in a row at or below the resign rule's (+1 white, -1 black)
    resign_streaks: dict[int, int] = field(default_factory=lambda: {1: 0, -1: 0})

    def after_ply(
        self,
        *,
        white_moved: bool,
        score: Score | None,
        fullmove: int,
        zeroing: bool,
        moves_played: int,
    ) -> Verdict | None:
        """Take in one engine ply; return a verdict when a rule ends the game.

        `fullmove` is the move number of the ply, `zeroing` whether it captured or moved a
        pawn, `moves_played` the full moves completed after it.

        >>> from orchestrator.core.game.record import Cp
        >>> judge = Adjudicator(Adjudication(win=WinRule(plies=2), draw=None))
        >>> judge.after_ply(white_moved=True, score=Cp(1200), fullmove=40, zeroing=False,
        ...                 moves_played=39)
        >>> verdict = judge.after_ply(white_moved=False, score=Cp(-1100), fullmove=40,
        ...                           zeroing=False, moves_played=40)
        >>> verdict.result, verdict.reason.endswith(">= 10.00 for 2 plies")
        ('1-0', True)
        """
        pawns = None if score is None else score_pawns(score)
        white_pov = None if pawns is None else (pawns if white_moved else -pawns)
        verdict = (
            self._win(white_pov)
            or self._resign(white_moved, score)
            or self._draw(white_pov, fullmove, zeroing)
        )
        if verdict:
            return verdict
        limit = self.rules.max_moves
        if limit and moves_played >= limit:
            return Verdict(
                "1/2-1/2", f"Draw by adjudication: the {limit}-move limit", MOVE_LIMIT_WORDS
            )
        return None

    def _win(self, white_pov: float | None) -> Verdict | None:
        rule = self.rules.win
        if rule is None:
            return None
        side = 0
        if white_pov is not None and abs(white_pov) >= rule.score:
            side = 1 if white_pov > 0 else -1
        if side and side == self.win_side:
            self.win_streak += 1
        else:
            self.win_side, self.win_streak = side, 1 if side else 0
        if self.win_streak >= rule.plies:
            winner = "White" if side > 0 else "Black"
            return Verdict(
                "1-0" if side > 0 else "0-1",
                f"{winner} wins by adjudication: both engines scored >= {rule.score:.2f} "
                f"for {rule.plies} plies",
                "TCEC win rule",
            )
        return None

    def _resign(self, white_moved: bool, score: Score | None) -> Verdict | None:
        """The side that just moved, by its own score alone.

        >>> from orchestrator.core.game.record import Cp, Mate
        >>> judge = Adjudicator(Adjudication(win=None, draw=None, resign=ResignRule(2, 5.0)))
        >>> judge._resign(True, Cp(-600)), judge._resign(False, Cp(0))
        (None, None)
        >>> verdict = judge._resign(True, Mate(-9))
        >>> verdict.result, verdict.details
        ('0-1', 'Resign rule')
        """
        rule = self.rules.resign
        if rule is None:
            return None
        side = 1 if white_moved else -1
        mate = None if score is None else score.mate()
        lost = score is not None and (
            (mate is not None and mate < 0) or score_pawns(score) <= -rule.score
        )
        self.resign_streaks[side] = self.resign_streaks[side] + 1 if lost else 0
        if self.resign_streaks[side] < rule.plies:
            return None
        loser, winner = ("White", "Black") if white_moved else ("Black", "White")
        return Verdict(
            "0-1" if white_moved else "1-0",
            f"{winner} wins by adjudication: {loser} scored <= -{rule.score:.2f} for its "
            f"last {rule.plies} moves",
            RESIGN_WORDS,
        )

    def _draw(self, white_pov: float | None, fullmove: int, zeroing: bool) -> Verdict | None:
        rule = self.rules.draw
        if rule is None:
            return None
        quiet = white_pov is not None and abs(white_pov) <= rule.score and not zeroing
        if quiet and fullmove >= rule.from_move:
            self.draw_streak += 1
        else:
            self.draw_streak = 0
        if self.draw_streak >= rule.plies:
            return Verdict(
                "1/2-1/2",
                f"Draw by adjudication: both engines scored within +-{rule.score:.2f} for "
                f"{rule.plies} plies without a capture or pawn move",
                "TCEC draw rule",
            )
        return None


def tablebase_verdict(
    wdl: int, white_to_move: bool, mode: TbAdjudicate = "both", ignore50: bool = False
) -> Verdict | None:
    """A Syzygy WDL (from the side to move) as a verdict, or None where `mode` leaves the
    game to be played on ("win-loss" ends only won games, "draw" only drawn ones).  A cursed
    win or blessed loss (WDL +-1) is a draw by the fifty-move rule, or a win (a loss) with
    `ignore50`.

    >>> tablebase_verdict(2, white_to_move=False).result, tablebase_verdict(1, True).result
    ('0-1', '1/2-1/2')
    >>> tablebase_verdict(1, True, ignore50=True).result
    '1-0'
    >>> tablebase_verdict(0, True, "win-loss"), tablebase_verdict(-2, True, "draw")
    (None, None)
    """
    if ignore50 and abs(wdl) == 1:
        wdl *= 2
    if wdl == 0 or abs(wdl) == 1:  # draws, and wins or losses spoiled by the 50-move rule
        if mode == "win-loss":
            return None
        return Verdict("1/2-1/2", "Draw by adjudication: Syzygy tablebase", "SyzygyTB")
    if mode == "draw":
        return None
    white_wins = (wdl > 0) == white_to_move
    return Verdict(
        "1-0" if white_wins else "0-1",
        f"{'White' if white_wins else 'Black'} wins by adjudication: Syzygy tablebase",
        "SyzygyTB",
    )
