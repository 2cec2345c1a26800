"""A game record as PGN (docs/pgn.md), written by python-chess."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import chess
import chess.pgn

from orchestrator.core.event.model import Result
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl, hms
from orchestrator.core.game.fields import annotate, options_comment
from orchestrator.core.game.openings import opening_tags
from orchestrator.core.game.record import GameRecord, Termination

#: the per-move PGN comments: cutechess's, or TCEC's fields
CommentStyle = Literal["cutechess", "tcec"]


class _Exporter(chess.pgn.StringExporter):
    """python-chess's exporter, with tag values escaped as the PGN standard says (a quote
    and a backslash are preceded by a backslash); python-chess writes them raw.  Given the
    game's moves in SAN with their comments (`moves`, as the runner found them when they
    were played, from `start`), it writes those after the game's own comment, as
    python-chess writes a game's main line, instead of walking a tree of nodes and playing
    each move on a board twice to find what it already has."""

    def __init__(
        self, moves: list[tuple[str, str]] | None = None, start: chess.Board | None = None
    ) -> None:
        super().__init__(headers=True, variations=False, comments=True)
        self.sans: Iterator[str] | None = None
        self.moves = moves
        self.start = start

    def visit_result(self, result: str) -> None:
        if self.moves is not None and self.start is not None:
            turn, number = self.start.turn, self.start.fullmove_number
            self.sans = (san for san, _ in self.moves)
            for _, comment in self.moves:
                self.visit_move(_Turn(turn, number), chess.Move.null())
                if comment:
                    self.visit_comment(comment)
                number += turn == chess.BLACK
                turn = not turn
        super().visit_result(result)

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, tagvalue.replace("\\", "\\\\").replace('"', '\\"'))

    def visit_move(self, board: chess.Board | _Turn, move: chess.Move) -> None:
        if self.sans is None or self.variation_depth:
            assert isinstance(board, chess.Board)
            super().visit_move(board, move)
            return
        # python-chess's move numbers (`StringExporterMixin.visit_move`), the SAN known
        if board.turn == chess.WHITE:
            self.write_token(f"{board.fullmove_number}. ")
        elif self.force_movenumber:
            self.write_token(f"{board.fullmove_number}... ")
        self.write_token(next(self.sans) + " ")
        self.force_movenumber = False


@dataclass(frozen=True, slots=True)
class _Turn:
    """What a move's number in PGN needs of the board it is played on."""

    turn: chess.Color
    fullmove_number: int


@dataclass(frozen=True)
class PgnSpec:
    """Everything a game's PGN needs besides its record (`to_pgn`'s arguments), so that it
    can be written where the game ran (a game host) as well as in the daemon.

    >>> from datetime import datetime, UTC
    >>> now = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = GameRecord("A", "B", "1-0", "normal", "White mates", (), now, now, "60+1")
    >>> PgnSpec("Event").render(record).splitlines()[0]
    '[Event "Event"]'
    """

    event: str
    site: str = "?"
    round_tag: str = "1.1"
    options: tuple[dict[str, Any], dict[str, Any]] | None = None
    comments: CommentStyle = "cutechess"
    rules: Adjudication | None = None
    tags: Mapping[str, str] = field(default_factory=dict)

    def render(self, record: GameRecord) -> str:
        return to_pgn(
            record,
            event=self.event,
            site=self.site,
            round_tag=self.round_tag,
            options=self.options,
            comments=self.comments,
            rules=self.rules,
            tags=self.tags,
        )


def side_tc(text: str) -> str:
    """A side's time control as TCEC's WhiteTimeControl and BlackTimeControl tags give it:
    a clock as the PGN standard writes it, any other control as the config does.

    >>> side_tc("40/7200, 900+30"), side_tc("nodes=1000"), side_tc("60+1")
    ('40/7200:900+30', 'nodes=1000', '60+1')
    """
    tc = TimeControl.parse(text)
    return tc.pgn_tag() if tc.kind == "clock" else str(tc)


def to_pgn(
    record: GameRecord,
    *,
    event: str,
    site: str = "?",
    round_tag: str = "1.1",
    details: str | None = None,
    options: tuple[dict[str, Any], dict[str, Any]] | None = None,
    comments: CommentStyle = "cutechess",
    rules: Adjudication | None = None,
    tags: Mapping[str, str] | None = None,
) -> str:
    """The game's PGN (docs/pgn.md), with its ending in TCEC's words as TerminationDetails
    (`details` where the director decided it), and the
    engines' `options` (white's, black's) in a first comment, as TCEC writes them; `tags`
    (the engines' `WhiteElo` and `BlackElo`, a team Swiss's Board, WhiteTeam and BlackTeam)
    follow the seven-tag roster.

    `comments` chooses the per-move comments: cutechess's `{+0.35/20 1.2s}`, or TCEC's
    fields (`core/tcec.py`, whose countdowns follow the adjudication `rules`).

    >>> from datetime import datetime, UTC
    >>> from orchestrator.core.game.record import Cp, MoveRecord
    >>> moves = (MoveRecord("e2e4", "e4", book=True),
    ...          MoveRecord("e7e5", "e5", score=Cp(-20), depth=12, time_ms=1500,
    ...                     clock_ms=58500, pv=("e7e5", "g1f3")))
    >>> start = datetime(2026, 1, 1, 12, tzinfo=UTC)
    >>> end = datetime(2026, 1, 1, 13, 2, 5, tzinfo=UTC)
    >>> record = GameRecord("A", "B", "1/2-1/2", "adjudication", "Draw", moves, start, end,
    ...                     "60+1", opening="King's Pawn", eco="C20")
    >>> pgn = to_pgn(record, event="E", comments="tcec")
    >>> print(pgn[pgn.index("[GameDuration") : pgn.index("1. e4")])
    [GameDuration "01:02:05"]
    [RMobilityResult "-G29.5"]
    [WhiteTimeControl "60+1"]
    [BlackTimeControl "60+1"]
    [Opening "King's Pawn"]
    [ECO "C20"]
    <BLANKLINE>
    <BLANKLINE>
    >>> comment = pgn[pgn.index("{ d=") : pgn.index(", Draw")].split(", ")
    >>> comment[:5], comment[-5:]
    (['{ d=12', 'sd=12', 'mt=1500', 'tl=58500', 's='], ['wv=0.20', 'R50=50', 'Rd=-11', \
'Rr=-11', 'mb=+0+0+0+0+0'])
    """
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = event
    h["Site"] = site
    h["Date"] = record.started_at.strftime("%Y.%m.%d")
    h["Round"] = round_tag
    h["White"] = record.white
    h["Black"] = record.black
    h["Result"] = record.result
    h.update(tags or {})
    white_tc = black_tc = side_tc(record.time_control)
    if record.black_time_control is None:
        h["TimeControl"] = TimeControl.parse(record.time_control).pgn_tag()
    else:  # time odds: each side's own, as cutechess and fastchess write them
        black_tc = side_tc(record.black_time_control)
    h["Termination"] = record.termination
    h["PlyCount"] = str(record.plies)
    h["GameStartTime"] = record.started_at.isoformat(timespec="seconds")
    h["GameEndTime"] = record.ended_at.isoformat(timespec="seconds")
    if details or record.details:
        h["TerminationDetails"] = details or record.details
    h["GameDuration"] = hms((record.ended_at - record.started_at).total_seconds())
    h["RMobilityResult"] = record.rmobility_result()
    h["WhiteTimeControl"], h["BlackTimeControl"] = white_tc, black_tc
    if record.host:
        h["GameHost"] = record.host
    h.update(opening_tags(record.opening, record.variation, record.eco))
    start = record.start()
    if record.start_fen or record.chess960 or record.rules != "chess":
        game.setup(start)  # FEN and SetUp, and Variant ("Chess960", "Atomic", ...)
    if record.chess960:  # the start position even where it is the standard one
        h["SetUp"], h["FEN"] = "1", start.fen()
    if comments == "tcec":
        texts = [a.comment() for a in annotate(start, record.moves, rules or Adjudication())]
    else:
        texts = [move.comment() for move in record.moves]
    moves: list[tuple[str, str]] = []
    stamped = chess.pgn.Game()  # python-chess writes a comment's [%clk] and [%emt] here
    last = len(record.moves) - 1
    for i, move in enumerate(record.moves):
        comment = texts[i] + (f", {record.reason}" if i == last else "")
        if not move.book and comments != "tcec":
            # [%clk] and [%emt], as lichess and ChessBase read them (TCEC's fields have tl and
            # mt, and its viewer reads every word of the comment as a field)
            stamped.comment = comment
            if move.clock_ms is not None:
                stamped.set_clock(move.clock_ms / 1000)
            stamped.set_emt(move.time_ms / 1000)
            comment = stamped.comment
        moves.append((move.san, comment))
    if not moves:
        game.comment = record.reason
    if options is not None:
        first = options_comment(*options)
        game.comment = f"{first} {game.comment}" if game.comment else first
    return game.accept(_Exporter(moves, start)) + "\n"


def elo_tags(white: float | None, black: float | None) -> dict[str, str]:
    """`WhiteElo` and `BlackElo` of rated engines (TCEC's viewer shows them).

    >>> elo_tags(3500, None)
    {'WhiteElo': '3500'}
    """
    ratings = {"WhiteElo": white, "BlackElo": black}
    return {tag: f"{rating:g}" for tag, rating in ratings.items() if rating is not None}


def amend(pgn: str, result: Result, termination: Termination, details: str) -> str:
    """A finished game's PGN with its result corrected by the director.

    >>> print(amend('[Result "1-0"]\\n\\n1. e4 e5 1-0\\n', "0-1", "adjudication", "Director"))
    [Event "?"]
    [Site "?"]
    [Date "????.??.??"]
    [Round "?"]
    [White "?"]
    [Black "?"]
    [Result "0-1"]
    [Termination "adjudication"]
    [TerminationDetails "Director"]
    <BLANKLINE>
    1. e4 e5 0-1
    <BLANKLINE>
    """
    game = chess.pgn.read_game(io.StringIO(pgn))
    if game is None:
        raise ValueError("not a PGN game")
    for name, value in list(game.headers.items()):  # python-chess does not unescape them
        game.headers[name] = re.sub(r"\\(.)", r"\1", value)
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    game.headers["TerminationDetails"] = details
    return game.accept(_Exporter()) + "\n"
