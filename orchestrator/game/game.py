"""Play one game between two engines and return its complete record.

No database and no scheduling here: the caller says who plays, from which opening, at which
time control, and may watch each move through `on_move`.  Whatever the engines do, the
result is a `GameRecord`; engine misbehaviour becomes a loss for the engine at fault.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import chess
import chess.engine
import chess.syzygy

from orchestrator.config.model import EngineConfig
from orchestrator.core.errors import DaemonFault
from orchestrator.core.event.model import Result
from orchestrator.core.game.adjudication import (
    Adjudication,
    Adjudicator,
    Verdict,
    tablebase_verdict,
)
from orchestrator.core.game.book import Book
from orchestrator.core.game.clock import Clock, TimeControl
from orchestrator.core.game.endings import VARIANT_WORDS, time_loss_detail
from orchestrator.core.game.openings import START, Opening
from orchestrator.core.game.record import (
    Cp,
    Fault,
    FaultKind,
    GameRecord,
    MoveRecord,
    Score,
    Termination,
)
from orchestrator.core.game.rmobility import goal_at_end
from orchestrator.engines.adapter import MAX_LINE, Engine, EngineFault
from orchestrator.engines.affinity import pin
from orchestrator.engines.journal import Journal
from orchestrator.engines.pool import EnginePool
from orchestrator.game.pgn import PgnSpec

UNTIMED_DEADLINE_S = 60.0  # nodes= and depth= games: how long a move may take at most
INFO_XBOARD = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE | chess.engine.INFO_PV

#: sees each engine move: its record, its ply (the moves on the board since the start
#: position, book moves and this one included) and the side that played it; it must not wait
#: (the game waits for it)
OnMove = Callable[[MoveRecord, int, chess.Color], None]
#: takes the game's engine log, a chunk with each move and the last at the end (`Journal`)
OnLog = Callable[[str], None]


@dataclass(frozen=True)
class GameSpec:
    white: EngineConfig
    black: EngineConfig
    tc: TimeControl
    opening: Opening | None = None
    adjudication: Adjudication = field(default_factory=Adjudication)
    timemargin_ms: int = 100
    game_key: str = ""  # distinct per game: engines kept running get ucinewgame/new
    #: engines think on the opponent's time, unless an engine's own `ponder` says otherwise
    ponder: bool = False
    #: pinned cores (`affinity`): the CPUs of White's engine and of Black's, every thread
    cpus: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    #: pinned cores on a game host: the CPUs each engine needs; the host gives `cpus`
    pin_threads: int | None = None
    #: how its PGN is written, where a game host writes it (`executor/worker.py`)
    pgn: PgnSpec | None = None
    #: the engines' own `tc` apply (not in a game of a time control of its own: a tiebreak)
    own_tc: bool = True

    def engine(self, colour: chess.Color) -> EngineConfig:
        return self.white if colour == chess.WHITE else self.black

    def tc_of(self, colour: chess.Color) -> TimeControl:
        """`colour`'s time control: its engine's own (time odds), else the game's."""
        return self.engine(colour).own_tc(self.tc) if self.own_tc else self.tc

    def margin_of(self, colour: chess.Color) -> int:
        """`colour`'s time margin (ms): its engine's own `timemargin`, else the game's."""
        own = self.engine(colour).timemargin_ms
        return self.timemargin_ms if own is None else own

    def tc_text(self) -> str:
        """The game's time control as the log says it: one, or White's / Black's.

        >>> from orchestrator.config.model import EngineConfig
        >>> fast = EngineConfig(name="A", command=("a",), tc=TimeControl.parse("30+0.3"))
        >>> slow = EngineConfig(name="B", command=("b",))
        >>> GameSpec(fast, slow, TimeControl.parse("60+0.6")).tc_text()
        '30+0.3 / 60+0.6'
        """
        white, black = self.tc_of(chess.WHITE), self.tc_of(chess.BLACK)
        return str(white) if white == black else f"{white} / {black}"

    def ponders(self, colour: chess.Color) -> bool:
        """Whether `colour`'s engine ponders: its own `ponder`, else the game's."""
        own = (self.white if colour == chess.WHITE else self.black).ponder
        return self.ponder if own is None else own


@dataclass
class _Ended(Exception):
    """Raised inside the move loop to end the game."""

    result: Result
    termination: Termination
    reason: str
    fault: Fault | None = None
    details: str = ""  # in TCEC's words (TerminationDetails)


def _now() -> datetime:
    return datetime.now(UTC)


def _colour_name(colour: chess.Color) -> str:
    return "White" if colour == chess.WHITE else "Black"


def ended_words(colour: chess.Color, kind: FaultKind) -> str:
    """How TCEC's PGNs word a game lost by `colour`'s engine fault (TerminationDetails).

    >>> ended_words(chess.WHITE, "crash"), ended_words(chess.BLACK, "stall")
    ('White disconnects', 'Black loses on time')
    """
    side = _colour_name(colour)
    return {
        "startup": f"{side} disconnects",
        "crash": f"{side} disconnects",
        "stall": f"{side} loses on time",
        "time_forfeit": f"{side} loses on time",
        "illegal_move": f"{side} makes an illegal move",
        "garbage": f"{side} makes an illegal move",
    }[kind]


def _lost_by(colour: chess.Color) -> Result:
    return "0-1" if colour == chess.WHITE else "1-0"


MAX_MATE_DISTANCE = 500


def _score(relative: Score) -> Score:
    """An engine's score; a mate too far to be real (engines with their own mate scales,
    such as Sjeng's +-1000000) counts as a decisive +-100 pawns."""
    mate = relative.mate()
    if mate is not None and abs(mate) > MAX_MATE_DISTANCE:
        return Cp(10000 if mate > 0 else -10000)
    return relative


def rules_outcome(board: chess.Board, san: str = "") -> Verdict | None:
    """The game's end by the rules of chess, if it has ended; `san` is the last move's SAN,
    whose sign says whether it checked or mated (the legal moves are then not looked for).

    >>> board = chess.Board("7k/8/8/8/8/8/8/K5R1 w - - 0 1")
    >>> san = board.san_and_push(chess.Move.from_uci("g1h1"))
    >>> rules_outcome(board, san) is None, rules_outcome(board) is None
    (True, True)
    >>> board = chess.Board("7k/8/6Q1/8/8/8/8/K7 w - - 0 1")
    >>> san = board.san_and_push(chess.Move.from_uci("g6f7"))
    >>> rules_outcome(board, san).details, rules_outcome(board).details
    ('Stalemate', 'Stalemate')

    A variant's board ends by its own rules too (`variant_outcome`).
    """
    if board.uci_variant != "chess":
        return variant_outcome(board)
    sign = san[-1:]
    if sign == "#" or (sign != "+" and not any(board.generate_legal_moves())):
        if sign == "#" or board.is_check():
            winner = not board.turn
            mates = f"{_colour_name(winner)} mates"
            return Verdict("1-0" if winner else "0-1", mates, mates)
        return Verdict("1/2-1/2", "Draw by stalemate", "Stalemate")
    if board.is_insufficient_material():
        return Verdict("1/2-1/2", "Draw by insufficient mating material", "Insufficient material")
    return rules_draw(board)


def variant_outcome(board: chess.Board) -> Verdict | None:
    """The end of a game on a variant's board: python-chess's outcome by the variant's rules,
    and the draws by the fifty-move rule and threefold repetition.

    >>> import chess.variant
    >>> board = chess.variant.ThreeCheckBoard("4k3/8/8/8/8/8/8/4KQ2 w - - 1+3 0 1")
    >>> _ = board.push_uci("f1f7")
    >>> variant_outcome(board).details
    'White wins by the rules of Three-check'
    >>> board = chess.variant.KingOfTheHillBoard("4k3/8/8/8/8/4K3/8/8 w - - 0 1")
    >>> variant_outcome(board) is None
    True
    >>> _ = board.push_uci("e3e4")
    >>> variant_outcome(board).result
    '1-0'
    """
    outcome = board.outcome()
    variant = type(board).aliases[0]
    if outcome is None or outcome.termination in (
        chess.Termination.FIFTY_MOVES,
        chess.Termination.THREEFOLD_REPETITION,
    ):
        return rules_draw(board)
    if outcome.winner is not None:
        winner = _colour_name(outcome.winner)
        if outcome.termination == chess.Termination.CHECKMATE:
            words = f"{winner} mates"
        else:
            words = f"{winner} wins{VARIANT_WORDS}{variant}"
        return Verdict("1-0" if outcome.winner else "0-1", words, words)
    if outcome.termination == chess.Termination.STALEMATE:
        return Verdict("1/2-1/2", "Draw by stalemate", "Stalemate")
    if outcome.termination == chess.Termination.INSUFFICIENT_MATERIAL:
        return Verdict("1/2-1/2", "Draw by insufficient mating material", "Insufficient material")
    if outcome.termination in (
        chess.Termination.SEVENTYFIVE_MOVES,
        chess.Termination.FIVEFOLD_REPETITION,
    ):
        return rules_draw(board)
    words = f"Draw{VARIANT_WORDS}{variant}"
    return Verdict("1/2-1/2", words, words)


def rules_draw(board: chess.Board) -> Verdict | None:
    """The draw by the fifty-move rule or threefold repetition, where the game has come to
    one (the runner claims it for the players).

    >>> rules_draw(chess.Board("7k/8/8/8/8/8/8/K7 w - - 100 80")).details
    'Fifty moves rule'
    """
    if board.halfmove_clock >= 100:
        return Verdict("1/2-1/2", "Draw by fifty moves rule", "Fifty moves rule")
    # a position seen three times needs at least 8 plies since the last irreversible move
    if board.halfmove_clock >= 8 and board.is_repetition(3):
        return Verdict("1/2-1/2", "Draw by 3-fold repetition", "3-fold repetition")
    return None


def _end_by_rules(board: chess.Board, san: str = "") -> None:
    verdict = rules_outcome(board, san)
    if verdict:
        raise _Ended(verdict.result, "normal", verdict.reason, details=verdict.details)


def _flag(board: chess.Board, loser: chess.Color, engine: str, how: str) -> _Ended:
    """A loss on time, or a draw if the opponent cannot mate by any legal sequence."""
    words = ended_words(loser, "time_forfeit")
    if board.has_insufficient_material(not loser):
        return _Ended(
            "1/2-1/2",
            "time forfeit",
            f"Draw: {engine} {how}, but {_colour_name(not loser)} cannot mate",
            details=words,
        )
    return _Ended(
        _lost_by(loser),
        "time forfeit",
        f"{_colour_name(not loser)} wins: {engine} {how}",
        details=words,
    )


_TERMINATION: dict[FaultKind, Termination] = {
    "startup": "abandoned",
    "crash": "abandoned",
    "stall": "time forfeit",
    "time_forfeit": "time forfeit",
    "illegal_move": "rules infraction",
    "garbage": "rules infraction",
}


class _Game:
    def __init__(
        self, spec: GameSpec, pool: EnginePool, on_move: OnMove | None, on_log: OnLog | None
    ) -> None:
        self.spec = spec
        self.pool = pool
        self.on_move = on_move
        self.on_log = on_log
        self.journal = Journal() if on_log is not None else None
        self.opening = spec.opening or START
        self.board = self.opening.after_book()  # the book moves are on its move stack
        self.moves: list[MoveRecord] = []
        self.clocks = {c: Clock.start(spec.tc_of(c)) for c in chess.COLORS}
        self.adjudicator = Adjudicator(spec.adjudication)
        self.engines: dict[chess.Color, Engine] = {}
        self.tablebase: chess.syzygy.Tablebase | None = None
        self.books: dict[chess.Color, Book] = {}  # each side's own (`[[engine]] book`)
        #: each side's search limit and deadline where it has no clock (`_limit`)
        self._fixed_limits: dict[chess.Color, tuple[chess.engine.Limit, float]] = {}
        self.key: object = spec.game_key or id(self)
        # what python-chess parses as it goes: nothing for UCI (the runner parses the last
        # scored info line once); XBoard engines think aloud only when asked ("post")
        self.info = {
            c: chess.engine.INFO_NONE if self.config(c).protocol == "uci" else INFO_XBOARD
            for c in chess.COLORS
        }

    def config(self, colour: chess.Color) -> EngineConfig:
        return self.spec.white if colour == chess.WHITE else self.spec.black

    async def play(self) -> GameRecord:
        started = _now()
        self.moves.extend(self.opening.book())
        faulted: set[chess.Color] = set()
        if self.journal is not None:
            start = self.spec.opening.name if self.spec.opening else "the starting position"
            self.journal.note(
                f"{self.spec.white.name} (White) - {self.spec.black.name} (Black), "
                f"{self.spec.tc_text()}, from {start}, started "
                f"{started.isoformat(timespec='seconds')}"
            )
        try:
            try:
                _end_by_rules(self.board)  # an opening may already be over
                self._open_books()
                await self._start_engines()
                self._open_tablebases()
                while True:
                    await self._one_ply()
            except _Ended as ended:
                outcome = ended
            except EngineFault as fault:  # pragma: no cover - every fault is mapped in _one_ply
                outcome = self._fault(fault, chess.WHITE)
            if outcome.fault is not None:
                faulted.add(
                    chess.WHITE if outcome.fault.engine == self.spec.white.name else chess.BLACK
                )
            if self.journal is not None:
                self.journal.note(f"{outcome.result}: {outcome.reason}")
        finally:
            await self._release(faulted)
            if self.on_log is not None and self.journal is not None:
                self.on_log(self.journal.close())
        return GameRecord(
            white=self.spec.white.name,
            black=self.spec.black.name,
            result=outcome.result,
            termination=outcome.termination,
            reason=outcome.reason,
            details=outcome.details,
            moves=tuple(self.moves),
            started_at=started,
            ended_at=_now(),
            time_control=str(self.spec.tc_of(chess.WHITE)),
            black_time_control=(
                str(black)
                if (black := self.spec.tc_of(chess.BLACK)) != self.spec.tc_of(chess.WHITE)
                else None
            ),
            start_fen=self.opening.fen,
            chess960=self.opening.chess960,
            rules=self.opening.rules,
            opening=self.opening.name if self.opening.name != START.name else None,
            eco=self.spec.opening.eco if self.spec.opening else None,
            variation=self.spec.opening.variation if self.spec.opening else None,
            fault=outcome.fault,
            rmobility=str(goal_at_end(self.board)),
            final_fen=self.board.fen(),
        )

    async def _start_engines(self) -> None:
        colours = (chess.WHITE, chess.BLACK)
        starting = [
            asyncio.ensure_future(self.pool.acquire(self.config(c), self.journal)) for c in colours
        ]
        try:
            started = await asyncio.gather(*starting, return_exceptions=True)
        except asyncio.CancelledError:
            # an engine that had started before the game was cancelled is closed here: it
            # is in neither `self.engines` nor the pool, and would outlive the game
            for leftover in await asyncio.gather(*starting, return_exceptions=True):
                if isinstance(leftover, Engine):
                    await leftover.close()
            raise
        failed: EngineFault | None = None
        for colour, item in zip(colours, started, strict=True):
            if isinstance(item, Engine):
                self.engines[colour] = item
                if self.spec.cpus is not None:  # before any clock runs
                    pin(item.pid, self.spec.cpus[0 if colour == chess.WHITE else 1])
            elif isinstance(item, EngineFault):
                failed = failed or item
            elif isinstance(item, BaseException):
                raise item
        if failed is None:
            # ucinewgame / new and the wait for the engine to be ready: before any clock runs
            ready = await asyncio.gather(
                *(
                    engine.new_game(self.key, self.board, self._opponent(colour))
                    for colour, engine in self.engines.items()
                ),
                return_exceptions=True,
            )
            for outcome in ready:
                if isinstance(outcome, EngineFault):
                    failed = failed or outcome
                elif isinstance(outcome, BaseException):
                    raise outcome
        if failed is not None:
            colour = chess.WHITE if failed.engine == self.spec.white.name else chess.BLACK
            raise self._fault(failed, colour)

    def _opponent(self, colour: chess.Color) -> EngineConfig | None:
        """Who the opponent is, for UCI engines (UCI_Opponent, where declared).  XBoard
        engines get nothing: python-chess would send "computer", which some (Phalanx)
        reject."""
        return self.config(not colour) if self.config(colour).protocol == "uci" else None

    def _open_tablebases(self) -> None:
        first, *more = self.spec.adjudication.tablebase_folders() or (None,)
        if first is not None:
            self.tablebase = chess.syzygy.open_tablebase(str(first))
            for folder in more:
                self.tablebase.add_directory(str(folder))

    def _open_books(self) -> None:
        """Each side's own book; one that cannot be opened now (it was checked at the
        start) is the machine's trouble, not the engine's."""
        for colour in chess.COLORS:
            config = self.config(colour)
            if config.book is not None:
                try:
                    self.books[colour] = Book(config.book, config.book_depth)
                except OSError as exc:
                    raise DaemonFault(
                        f"{config.name}'s book {str(config.book)!r}: {exc.strerror or exc}"
                    ) from None

    def _book_move(self, colour: chess.Color) -> bool:
        """Play the side's move from its own book while it has one; whether it did (the
        engine is not asked, and no clock runs)."""
        book, board = self.books.get(colour), self.board
        if book is None or len(board.move_stack) >= book.depth:
            return False
        move = book.move(board, f"{self.key}:{len(board.move_stack)}")
        if move is None:
            return False
        san = board.san_and_push(move)
        self._played(MoveRecord(uci=move.uci(), san=san, book=True), colour)
        return True

    def _played(self, record: MoveRecord, colour: chess.Color) -> None:
        """`colour`'s move, on the board already: recorded, shown to `on_move`, and the
        game ended if the rules of chess end it."""
        self.moves.append(record)
        if self.on_move is not None:
            self.on_move(record, len(self.board.move_stack), colour)
        _end_by_rules(self.board, record.san)

    async def _release(self, faulted: set[chess.Color]) -> None:
        for colour, engine in self.engines.items():
            healthy = colour not in faulted
            if healthy and self.spec.ponders(colour) and engine.alive:
                healthy = await engine.settle()  # a ponder search may outlive the game
            await self.pool.release(engine, healthy=healthy)
        if self.tablebase is not None:
            self.tablebase.close()
        for book in self.books.values():
            book.close()

    def _fault(self, fault: EngineFault, colour: chess.Color) -> _Ended:
        record = fault.fault
        termination = _TERMINATION[fault.kind]
        what = {
            "startup": "did not start",
            "crash": "crashed",
            "stall": "stalled",
            "time_forfeit": "lost on time",
            "illegal_move": "made an illegal move",
            "garbage": "printed garbage",
        }[fault.kind]
        winner = _colour_name(not colour)
        if fault.kind == "stall":
            ended = _flag(self.board, colour, fault.engine, f"{what} ({fault.detail})")
            ended.fault = record
            return ended
        return _Ended(
            _lost_by(colour),
            termination,
            f"{winner} wins: {fault.engine} {what}: {fault.detail}",
            record,
            ended_words(colour, fault.kind),
        )

    def _limit(self, colour: chess.Color) -> tuple[chess.engine.Limit, float]:
        """The search limit for the side to move and the deadline (s) for its answer: its
        own time control, each side's clock that has one (`wtime`, `btime`, each side's
        increment of its period), and its engine's own node or depth cap.  Without a clock
        the limit is the same for every move: made once (`_Uci.play_lean` then makes its
        `go` line once)."""
        fixed = self._fixed_limits.get(colour)
        if fixed is not None:
            return fixed
        spec, config = self.spec, self.config(colour)
        tc, margin = spec.tc_of(colour), spec.margin_of(colour) / 1000
        grace = config.move_grace_ms / 1000
        caps = {"nodes": config.nodes, "depth": config.depth}
        if tc.kind == "movetime":
            limit = chess.engine.Limit(time=tc.limit / 1000, **caps)
            fixed = self._fixed_limits[colour] = (limit, tc.limit / 1000 + margin + grace)
            return fixed
        if tc.kind != "clock":  # nodes=, depth= or inf: no clock
            if tc.kind == "nodes":
                caps["nodes"] = tc.limit
            elif tc.kind == "depth":
                caps["depth"] = tc.limit
            limit = chess.engine.Limit(**caps)
            fixed = self._fixed_limits[colour] = (limit, UNTIMED_DEADLINE_S + grace)
            return fixed
        told: dict[chess.Color, tuple[float | None, float | None]] = {}
        for side in chess.COLORS:
            own = spec.tc_of(side)
            if own.kind == "clock":
                clock = self.clocks[side]
                period = own.periods[min(clock.period, len(own.periods) - 1)]
                told[side] = (clock.told_ms() / 1000, period.inc_ms / 1000)
            else:
                told[side] = (None, None)
        mine = self.clocks[colour]
        limit = chess.engine.Limit(
            white_clock=told[chess.WHITE][0],
            black_clock=told[chess.BLACK][0],
            white_inc=told[chess.WHITE][1],
            black_inc=told[chess.BLACK][1],
            remaining_moves=mine.moves_to_go or None,
            **caps,
        )
        return limit, mine.remaining_ms / 1000 + margin + grace

    async def _one_ply(self) -> None:
        board = self.board
        colour = board.turn
        if self.books and self._book_move(colour):
            return
        engine = self.engines[colour]
        proto = engine.protocol
        limit, deadline = self._limit(colour)
        started = time.monotonic()
        try:
            played = await engine.play(
                board,
                limit,
                game=self.key,
                info=self.info[colour],
                ponder=self.spec.ponders(colour),
                deadline=deadline,
            )
        except TimeoutError:
            engine.kill()
            raise self._fault(
                engine.fault("stall", f"no move within {deadline:.1f}s"), colour
            ) from None
        except chess.engine.EngineTerminatedError:
            if proto.overlong:
                fault = engine.fault("garbage", f"a line longer than {MAX_LINE} bytes")
                raise self._fault(fault, colour) from None
            code = proto.returncode
            detail = f"exit code {code.result()}" if code.done() else "the process died"
            raise self._fault(engine.fault("crash", detail), colour) from None
        except chess.engine.EngineError as exc:
            raise self._fault(engine.fault("illegal_move", str(exc)), colour) from None
        measured = proto.move_time_ms()
        used_ms = measured if measured is not None else int((time.monotonic() - started) * 1000)
        if played.resigned:
            raise _Ended(
                _lost_by(colour),
                "normal",
                f"{_colour_name(not colour)} wins: {engine.name} resigns",
                details=f"{_colour_name(colour)} resigns",
            )
        move = played.move
        # python-chess parsed the move against this position, and a move it accepts is
        # legal (push_uci / push_xboard), except the null move "0000"
        if not move:
            raise self._fault(engine.fault("illegal_move", f"no legal move given ({move})"), colour)
        clock_after = self._charge(colour, used_ms, engine.name)
        info, pv = engine.move_info(board, played)
        pov = info.get("score")
        if pov is not None and colour == chess.BLACK and self.config(colour).white_pov:
            pov = chess.engine.PovScore(-pov.relative, pov.turn)  # it said White's view
        score = None if pov is None else _score(pov.pov(colour))
        reported = info.get("time")
        fullmove = board.fullmove_number
        zeroing = board.is_zeroing(move)
        san = board.san_and_push(move)  # one push: SAN's check and mate signs come from it
        record = MoveRecord(
            uci=move.uci(),
            san=san,
            score=score,
            depth=info.get("depth"),
            seldepth=info.get("seldepth"),
            nodes=info.get("nodes"),
            time_ms=used_ms,
            clock_ms=clock_after,
            reported_ms=None if reported is None else round(reported * 1000),
            pv=pv,
            nps=info.get("nps"),
            tbhits=info.get("tbhits"),
            hashfull=info.get("hashfull"),
            ponder=played.ponder.uci() if played.ponder else None,
        )
        if self.on_log is not None and self.journal is not None:
            self.on_log(self.journal.take())
        self._played(record, colour)  # the rules of chess come before any adjudication
        verdict = self._tablebase() or self.adjudicator.after_ply(
            white_moved=colour == chess.WHITE,
            score=score,
            fullmove=fullmove,
            zeroing=zeroing,
            moves_played=board.fullmove_number - 1,
        )
        if verdict:
            raise _Ended(verdict.result, "adjudication", verdict.reason, details=verdict.details)

    def _charge(self, colour: chess.Color, used_ms: int, name: str) -> int | None:
        """Charge the move's time: a loss on time when it took longer than the time left
        plus the margin; otherwise the clock after the move (`Clock.after_move`)."""
        tc, margin = self.spec.tc_of(colour), self.spec.margin_of(colour)
        if tc.kind == "movetime":
            if used_ms > tc.limit + margin:
                raise self._fault_time(
                    colour, name, time_loss_detail(used_ms, tc.limit, clock=False)
                )
            return None
        if tc.kind != "clock":
            return None
        clock = self.clocks[colour]
        if clock.flags(used_ms, margin):
            raise self._fault_time(colour, name, time_loss_detail(used_ms, clock.remaining_ms))
        self.clocks[colour] = clock.after_move(tc, used_ms)
        return self.clocks[colour].remaining_ms

    def _fault_time(self, colour: chess.Color, name: str, detail: str) -> _Ended:
        ended = _flag(self.board, colour, name, f"lost on time ({detail})")
        ended.fault = Fault(name, "time_forfeit", detail, self.engines[colour].output())
        return ended

    def _tablebase(self) -> Verdict | None:
        rules, board = self.spec.adjudication, self.board
        if self.tablebase is None or chess.popcount(board.occupied) > rules.tb_pieces:
            return None
        if board.uci_variant != "chess":  # Syzygy's tables are of standard chess
            return None
        if board.castling_rights:
            return None
        try:
            wdl = self.tablebase.probe_wdl(board)
        except (KeyError, chess.syzygy.MissingTableError):
            return None
        return tablebase_verdict(
            wdl, board.turn == chess.WHITE, rules.tb_adjudicate, rules.tb_ignore50
        )


async def play_game(
    spec: GameSpec,
    *,
    pool: EnginePool | None = None,
    on_move: OnMove | None = None,
    on_log: OnLog | None = None,
) -> GameRecord:
    """Play one game; engines come from `pool` (a private one, closed at the end, if None).
    `on_move` sees each engine move; `on_log` takes the engines' log (`Journal`) in chunks:
    one before each move's `on_move`, and the last one when the engines are released."""
    own = pool is None
    pool = pool or EnginePool()
    try:
        return await _Game(spec, pool, on_move, on_log).play()
    finally:
        if own:
            await pool.close()
