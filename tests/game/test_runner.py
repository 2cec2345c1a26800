"""The game runner with scripted engines: every ending, every fault, the record and its PGN."""

from __future__ import annotations

import asyncio
import io
import re
import struct
import time
from pathlib import Path
from typing import Any, Literal

import chess
import chess.pgn
import chess.polyglot
import pytest

from orchestrator.config.model import EngineConfig
from orchestrator.core.game.adjudication import Adjudication, DrawRule, ResignRule, WinRule
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.endings import Ended, ending_of
from orchestrator.core.game.openings import Opening
from orchestrator.core.game.record import GameRecord
from orchestrator.engines.pool import EnginePool
from orchestrator.game.game import GameSpec, play_game
from orchestrator.game.pgn import to_pgn
from tests.support.engines import scripted
from tests.support.processes import descendants, process_alive

NO_ADJUDICATION = Adjudication(win=None, draw=None)
#: how TCEC's PGNs word each way a game ends (TerminationDetails); the tests below play one
#: game for each way the runner knows, and check its own words
TCEC_WORDS = {
    *(f"{side} {how}" for side in ("White", "Black") for how in (
        "mates", "resigns", "loses on time", "disconnects", "makes an illegal move")),
    "Stalemate", "3-fold repetition", "Fifty moves rule", "Insufficient material",
    "TCEC win rule", "TCEC draw rule", "SyzygyTB", "TCEC Adjudication",
    "Resign rule",  # the one-sided resign rule, which TCEC does not use
}  # fmt: skip


def spec(
    white: EngineConfig,
    black: EngineConfig,
    tc: str = "10+0.1",
    opening: Opening | None = None,
    adjudication: Adjudication = NO_ADJUDICATION,
    **kw: Any,
) -> GameSpec:
    return GameSpec(white, black, TimeControl.parse(tc), opening, adjudication, **kw)


async def play(*args: Any, **kw: Any) -> GameRecord:
    record = await play_game(spec(*args, **kw))
    pgn = to_pgn(record, event="Test", round_tag="1.1")
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in record.moves]
    assert game.headers["Result"] == record.result
    assert game.headers["Termination"] == record.termination
    assert game.headers["PlyCount"] == str(record.plies)
    # every ending in TCEC's words, as its PGNs and live files give it (TerminationDetails)
    assert record.details in TCEC_WORDS, record.details
    assert game.headers["TerminationDetails"] == record.details
    assert not descendants(), "an engine process was left behind"
    return record


async def test_checkmate() -> None:
    r = await play(scripted("W", "--moves", "f2f3 g2g4"), scripted("B", "--moves", "e7e5 d8h4"))
    assert (r.result, r.termination, r.reason) == ("0-1", "normal", "Black mates")
    assert r.details == "Black mates"
    assert [m.san for m in r.moves] == ["f3", "e5", "g4", "Qh4#"]
    assert r.fault is None


async def test_stalemate() -> None:
    opening = Opening("stalemate", "7k/8/5K2/8/8/8/8/6Q1 w - - 0 1")
    r = await play(scripted("W", "--moves", "g1g6"), scripted("B"), opening=opening)
    assert (r.result, r.reason, r.details) == ("1/2-1/2", "Draw by stalemate", "Stalemate")


async def test_threefold_repetition() -> None:
    shuffle = "g1f3 f3g1 g1f3 f3g1"
    r = await play(
        scripted("W", "--moves", shuffle), scripted("B", "--moves", "g8f6 f6g8 g8f6 f6g8")
    )
    assert (r.result, r.reason, r.plies) == ("1/2-1/2", "Draw by 3-fold repetition", 8)
    assert r.details == "3-fold repetition"


async def test_fifty_moves() -> None:
    opening = Opening("fifty", "8/8/8/4k3/8/8/8/R3K3 w - - 99 80")
    r = await play(scripted("W", "--moves", "a1a2"), scripted("B"), opening=opening)
    assert (r.result, r.reason, r.plies) == ("1/2-1/2", "Draw by fifty moves rule", 1)
    assert r.details == "Fifty moves rule"


async def test_insufficient_material() -> None:
    opening = Opening("bare kings", "8/8/8/4k3/8/8/3r4/4K3 w - - 0 1")
    r = await play(scripted("W", "--moves", "e1d2"), scripted("B"), opening=opening)
    assert (r.result, r.reason) == ("1/2-1/2", "Draw by insufficient mating material")
    assert r.details == "Insufficient material"


async def test_win_adjudication_needs_both_engines_for_ten_plies() -> None:
    rules = Adjudication(win=WinRule(plies=10, score=10.0), draw=None)
    r = await play(
        scripted("W", "--score", "1200"), scripted("B", "--score", "-1200"), adjudication=rules
    )
    assert (r.result, r.termination, r.plies) == ("1-0", "adjudication", 10)
    assert r.reason == "White wins by adjudication: both engines scored >= 10.00 for 10 plies"
    assert r.details == "TCEC win rule"
    # one engine alone claiming a win is not enough
    r = await play(
        scripted("W", "--score", "1200"),
        scripted("B", "--score", "0"),
        adjudication=Adjudication(win=WinRule(), draw=None, max_moves=12),
    )
    assert r.termination == "adjudication" and r.result == "1/2-1/2"


async def test_draw_adjudication_from_move_and_quiet_plies() -> None:
    rules = Adjudication(win=None, draw=DrawRule(from_move=2, plies=6, score=0.15))
    quiet_white, quiet_black = "g1f3 b1c3 a1b1 f3g5", "g8f6 b8c6 a8b8 f6g4"
    r = await play(
        scripted("W", "--moves", quiet_white),
        scripted("B", "--moves", quiet_black),
        adjudication=rules,
    )
    # plies from move 2 on: b1c3 b8c6 a1b1 a8b8 f3g5 f6g4
    assert (r.result, r.termination, r.plies) == ("1/2-1/2", "adjudication", 8)
    assert "within +-0.15 for 6 plies" in r.reason
    assert r.details == "TCEC draw rule"


async def test_max_moves() -> None:
    r = await play(scripted("W"), scripted("B"), adjudication=Adjudication(None, None, max_moves=3))
    assert (r.result, r.termination, r.plies) == ("1/2-1/2", "adjudication", 6)
    assert r.reason == "Draw by adjudication: the 3-move limit"
    assert r.details == "TCEC Adjudication"


async def test_tablebase_adjudication(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    probed: list[str] = []

    class FakeTablebase:
        def probe_wdl(self, board: chess.Board) -> int:
            probed.append(board.fen())
            return -2  # the side to move (black) loses

        def close(self) -> None:
            pass

    monkeypatch.setattr(chess.syzygy, "open_tablebase", lambda path: FakeTablebase())
    opening = Opening("KQK", "4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    r = await play(
        scripted("W", "--moves", "d1d2"),
        scripted("B"),
        opening=opening,
        adjudication=Adjudication(None, None, tablebases=(tmp_path,), tb_pieces=3),
    )
    assert (r.result, r.termination, r.plies) == ("1-0", "adjudication", 1)
    assert r.reason == "White wins by adjudication: Syzygy tablebase"
    assert r.details == "SyzygyTB"
    assert probed


@pytest.mark.parametrize(
    ("wdl", "mode", "ignore50", "ended"),
    [
        (0, "both", False, "1/2-1/2"),
        (0, "win-loss", False, None),  # a drawn ending is played on
        (0, "draw", False, "1/2-1/2"),
        (-2, "draw", False, None),  # a won ending is played on
        (-2, "win-loss", False, "1-0"),
        (-1, "both", False, "1/2-1/2"),  # a blessed loss: drawn by the fifty-move rule
        (-1, "both", True, "1-0"),  # ... or lost, the fifty-move rule ignored
    ],
)
async def test_tablebase_modes(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    wdl: int,
    mode: Literal["both", "win-loss", "draw"],
    ignore50: bool,
    ended: str | None,
) -> None:
    folders: list[str] = []

    class FakeTablebase:
        def probe_wdl(self, board: chess.Board) -> int:
            return wdl  # for black, the side to move after White's move

        def add_directory(self, folder: str) -> None:
            folders.append(folder)

        def close(self) -> None:
            pass

    def opened(folder: str) -> FakeTablebase:
        folders.append(folder)
        return FakeTablebase()

    monkeypatch.setattr(chess.syzygy, "open_tablebase", opened)
    six, seven = tmp_path / "6", tmp_path / "7"
    rules = Adjudication(
        None,
        None,
        tablebases=(six, seven),
        tb_pieces=3,
        tb_adjudicate=mode,
        tb_ignore50=ignore50,
        max_moves=2,
    )
    opening = Opening("KQK", "4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    r = await play(scripted("W"), scripted("B"), opening=opening, adjudication=rules)
    assert folders == [str(six), str(seven)]  # every folder, in order
    if ended is None:  # played on to the move limit
        assert (r.details, r.plies) == ("TCEC Adjudication", 4)
    else:
        assert (r.result, r.details, r.plies) == (ended, "SyzygyTB", 1)


async def test_time_forfeit_after_a_late_move() -> None:
    r = await play(scripted("W", "--delay", "700"), scripted("B"), tc="0.5+0", timemargin_ms=50)
    assert (r.result, r.termination) == ("0-1", "time forfeit")
    assert r.fault is not None and (r.fault.engine, r.fault.kind) == ("W", "time_forfeit")
    assert "W lost on time" in r.reason
    assert r.details == "White loses on time"


async def test_time_forfeit_is_a_draw_when_the_opponent_cannot_mate() -> None:
    opening = Opening("lone king", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = await play(scripted("W", "--delay", "700"), scripted("B"), tc="0.5+0", opening=opening)
    assert (r.result, r.termination) == ("1/2-1/2", "time forfeit")
    assert "Black cannot mate" in r.reason
    assert r.details == "White loses on time"


async def test_stall_is_killed_and_lost() -> None:
    black = scripted("B", "--stall-at", "2", move_grace_ms=200)
    r = await play(scripted("W"), black, tc="st=0.3")
    assert (r.result, r.termination) == ("1-0", "time forfeit")
    assert r.fault is not None and (r.fault.engine, r.fault.kind) == ("B", "stall")
    assert r.plies == 3  # W, B, W; then B stalls
    assert r.details == "Black loses on time"


async def test_crash() -> None:
    r = await play(scripted("W", "--crash-at", "2"), scripted("B"))
    assert (r.result, r.termination) == ("0-1", "abandoned")
    assert r.fault is not None and (r.fault.engine, r.fault.kind) == ("W", "crash")
    assert "exit code 3" in r.fault.detail
    assert any("bestmove" in line for line in r.fault.output)
    assert r.details == "White disconnects"


async def test_illegal_move() -> None:
    r = await play(scripted("W"), scripted("B", "--illegal-at", "1"))
    assert (r.result, r.termination) == ("1-0", "rules infraction")
    assert r.fault is not None and (r.fault.engine, r.fault.kind) == ("B", "illegal_move")
    assert "illegal" in r.fault.detail
    assert r.details == "Black makes an illegal move"


async def test_unparseable_output() -> None:
    r = await play(scripted("W", "--garbage-at", "1"), scripted("B"))
    assert (r.result, r.termination) == ("0-1", "rules infraction")
    assert r.fault is not None and "zz99" in r.fault.detail
    assert any("zz99" in line for line in r.fault.output)
    assert r.details == "White makes an illegal move"


async def test_slow_start_and_missing_binary() -> None:
    slow = scripted("Slow", "--slow-start", "5", startup_timeout=0.5)
    r = await play(scripted("W"), slow)
    assert (r.result, r.termination, r.plies) == ("1-0", "abandoned", 0)
    assert r.fault is not None and r.fault.kind == "startup" and "handshake" in r.fault.detail
    assert r.details == "Black disconnects"
    ghost = EngineConfig(name="Ghost", command=("/nonexistent/engine",))
    r = await play(ghost, scripted("B"))
    assert (r.result, r.fault and r.fault.kind) == ("0-1", "startup")
    assert "cannot run '/nonexistent/engine'" in r.reason


async def test_unknown_option_is_a_startup_fault_naming_it() -> None:
    r = await play(scripted("W", options={"Hash": 16}), scripted("B"))
    assert r.fault is not None and r.fault.kind == "startup"
    assert "no option 'Hash'" in r.fault.detail
    r = await play(
        scripted("W", "--option", "Hash", options={"Hash": 16}),
        scripted("B"),
        adjudication=Adjudication(None, None, max_moves=1),
    )
    assert r.fault is None


async def test_xboard_engines_play_and_resign() -> None:
    r = await play(
        scripted("W", "--moves", "f2f3 g2g4", protocol="xboard"),
        scripted("B", "--moves", "e7e5 d8h4", protocol="xboard"),
    )
    assert (r.result, r.reason) == ("0-1", "Black mates")
    r = await play(scripted("W", "--resign-at", "2", protocol="xboard"), scripted("B"))
    assert (r.result, r.termination, r.reason) == ("0-1", "normal", "Black wins: W resigns")
    assert r.details == "White resigns"


@pytest.mark.parametrize("protocol", ["xboard", "uci"])
async def test_white_pov_scores_are_turned_to_the_movers(protocol: str) -> None:
    """Two engines that both say +1.20 from White's side: with `white_pov`, Black's moves
    are recorded at -1.20 (its own view), White's at +1.20; without it, as said."""
    args = ("--score", "120", "--moves", "e2e4 e7e5 g1f3 b8c6")
    turned = await play(
        scripted("W", *args, protocol=protocol, white_pov=True),
        scripted("B", *args, protocol=protocol, white_pov=True),
        adjudication=Adjudication(win=None, draw=None, max_moves=2),
    )
    said = await play(
        scripted("W", *args, protocol=protocol),
        scripted("B", *args, protocol=protocol),
        adjudication=Adjudication(win=None, draw=None, max_moves=2),
    )
    assert [m.score.score() for m in turned.moves if m.score] == [120, -120, 120, -120]
    assert [m.score.score() for m in said.moves if m.score] == [120, 120, 120, 120]


async def test_an_engines_stderr_goes_to_its_file_with_its_game(tmp_path: Path) -> None:
    """`stderr`: the engine's stderr lines appended to its file, each after the game it
    played, two games of a reused engine one after the other; the game's log has them too."""
    errors = tmp_path / "w.err"
    pool = EnginePool()
    white = scripted("W", "--stderr-at", "2", reuse=True, stderr=errors)
    try:
        for key in ("Event:1", "Event:2"):
            game = spec(white, scripted("B"), game_key=key)
            logs: list[str] = []
            await play_game(game, pool=pool, on_log=logs.append)
            assert "!W: warning 2 from W" in "".join(logs)
    finally:
        await pool.close()
    assert errors.read_text() == "Event:1: warning 2 from W\nEvent:2: warning 2 from W\n"


def polyglot(path: Path, lines: dict[str, str]) -> Path:
    """A Polyglot book of one move for each position (moves from the start, in UCI)."""
    entries = []
    for played, reply in lines.items():
        board = chess.Board()
        for uci in played.split():
            board.push_uci(uci)
        move = chess.Move.from_uci(reply)
        raw = move.to_square | move.from_square << 6
        entries.append(struct.pack(">QHHI", chess.polyglot.zobrist_hash(board), raw, 1, 0))
    path.write_bytes(b"".join(sorted(entries)))
    return path


async def test_an_engines_own_book_plays_its_moves_off_the_clock(tmp_path: Path) -> None:
    """White's own book has 1. e4 and, after 1... e5, 2. Nf3: both are played from it (book
    moves, no time, no `go` for them), Black's from its engine; past `book_depth` (3 plies)
    White's engine plays."""
    book = polyglot(
        tmp_path / "w.bin", {"": "e2e4", "e2e4 e7e5": "g1f3", "e2e4 e7e5 g1f3 b8c6": "f1b5"}
    )
    white = scripted("W", book=book, book_depth=3)
    logs: list[str] = []
    record = await play_game(
        spec(white, scripted("B", "--moves", "e7e5 b8c6"), adjudication=NO_ADJUDICATION),
        on_log=logs.append,
    )
    first = record.moves[:5]
    assert [(m.uci, m.book) for m in first[:4]] == [
        ("e2e4", True), ("e7e5", False), ("g1f3", True), ("b8c6", False)
    ]  # fmt: skip
    assert first[0].time_ms == 0 and first[0].clock_ms is None
    assert not first[4].book  # ply 5: past the depth, though the book has a move
    goes = [line for line in "".join(logs).splitlines() if ">W: go " in line]
    assert len(goes) == sum(1 for m in record.moves[::2] if not m.book)  # White's own


async def test_book_moves_and_fen_in_the_pgn() -> None:
    opening = Opening.from_san("1. e4 e5 2. Nf3")
    r = await play(
        scripted("W"),
        scripted("B"),
        opening=opening,
        adjudication=Adjudication(None, None, max_moves=4),
    )
    assert [m.book for m in r.moves[:4]] == [True, True, True, False]
    pgn = to_pgn(r, event="Test")
    assert "1. e4 { book } 1... e5 { book } 2. Nf3 { book }" in pgn
    assert "Draw by adjudication: the 4-move limit [%clk " in pgn
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    r = await play(
        scripted("W"),
        scripted("B"),
        opening=Opening("pos", fen),
        adjudication=Adjudication(None, None, max_moves=2),
    )
    pgn = to_pgn(r, event="Test")
    assert f'[FEN "{fen}"]' in pgn and '[SetUp "1"]' in pgn


async def test_record_has_scores_depths_and_clocks() -> None:
    r = await play(
        scripted("W", "--scores", "35,40", "--depth", "20"),
        scripted("B", "--mate", "-3"),
        adjudication=Adjudication(None, None, max_moves=2),
    )
    first, second = r.moves[0], r.moves[1]
    assert (first.score and first.score.score(), first.depth, first.seldepth) == (35, 20, 22)
    assert second.score is not None and second.score.mate() == -3
    assert first.clock_ms is not None and 9_000 < first.clock_ms <= 10_100
    assert first.comment().startswith("+0.35/20 ")
    assert second.comment().startswith("-M3/5 ")
    assert r.ended_at >= r.started_at
    # the PV from the position moved from (the move and two replies), and the search figures
    assert len(first.pv) == 3 and first.pv[0] == first.uci
    board = chess.Board()
    for uci in first.pv:
        board.push_uci(uci)  # legal, in order
    assert first.nodes == 1000 and first.nps and first.nps > 0
    assert (first.tbhits, first.hashfull) == (0, 1)
    assert first.reported_ms is not None


async def test_xboard_post_lines_give_the_pv() -> None:
    r = await play(
        scripted("W", "--protocol", "xboard", "--scores", "35", "--depth", "9", protocol="xboard"),
        scripted("B", "--protocol", "xboard", protocol="xboard"),
        adjudication=Adjudication(None, None, max_moves=2),
    )
    first = r.moves[0]
    assert (first.depth, first.nodes, len(first.pv)) == (9, 1000, 3) and first.pv[0] == first.uci


async def test_reused_engine_gets_ucinewgame(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    white = scripted("W", "--log", str(log), reuse=True)
    pool = EnginePool()
    rules = Adjudication(None, None, max_moves=2)
    try:
        one = await play_game(
            spec(white, scripted("B"), adjudication=rules, game_key="1"), pool=pool
        )
        pid = pool._idle["W"].pid
        two = await play_game(
            spec(white, scripted("B"), adjudication=rules, game_key="2"), pool=pool
        )
        assert pool._idle["W"].pid == pid
    finally:
        await pool.close()
    assert one.fault is None and two.fault is None
    assert log.read_text().splitlines().count("ucinewgame") == 2
    assert not descendants()


async def test_group_kill_reaps_engines_that_ignore_quit() -> None:
    stubborn = scripted("W", "--ignore-quit", "--spawn-child")
    r = await play(stubborn, scripted("B"), adjudication=Adjudication(None, None, max_moves=1))
    assert r.fault is None  # play() asserts that nothing is left behind


async def test_cancelled_games_leave_no_process() -> None:
    seen: list[int] = []
    for i in range(6):
        stubborn = scripted("W", "--ignore-quit", "--spawn-child", "--delay", "50")
        task = asyncio.create_task(play_game(spec(stubborn, scripted("B", "--delay", "50"))))
        await asyncio.sleep(0.4 + 0.1 * i)
        seen.extend(pid for pid, _, _ in descendants())
        assert not task.done(), task.result().reason
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen, "the games never started engines"
    assert not descendants()
    assert not any(process_alive(pid) for pid in seen)


async def test_a_game_cancelled_while_its_engines_start_leaves_none_running() -> None:
    """White is up at once, Black takes 3 s over its handshake: a game cancelled meanwhile
    (a director's pause --now, a game host's daemon gone) closes White too, although it is
    neither in the game nor in the pool yet."""
    pool = EnginePool()
    fast = scripted("W", reuse=True)
    task = asyncio.create_task(play_game(spec(fast, scripted("B", "--slow-start", "3")), pool=pool))
    for _ in range(400):  # until both processes run (20 s at most)
        if len(descendants()) >= 2:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # White's handshake is done by now, Black's is not
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not descendants()  # the pool was not closed: nothing waits there either


async def test_a_clock_inside_the_margin_gets_its_increment_back() -> None:
    """W thinks for its whole clock plus 100 ms on its third move (the margin is 1 s, so
    that load on the machine cannot flag it), then moves at once: the increment brings its
    clock back above zero, and it does not lose on time."""
    white = scripted("W", "--overstep-at", "3", "--overstep-ms", "100")
    r = await play(
        white,
        scripted("B"),
        tc="1+0.1",
        timemargin_ms=1000,
        adjudication=Adjudication(None, None, max_moves=12),
    )
    assert r.fault is None and r.termination == "adjudication", r.reason
    mine = r.moves[::2]
    over = mine[2]
    before = mine[1].clock_ms
    assert before is not None and over.clock_ms is not None
    assert over.time_ms > before  # past its clock ...
    assert over.clock_ms == before - over.time_ms + 100  # ... and the increment still added
    assert mine[-1].clock_ms is not None and mine[-1].clock_ms > 0  # recovered
    game = chess.pgn.read_game(io.StringIO(to_pgn(r, event="Test")))
    assert game is not None
    clocks = [node.clock() for node in game.mainline() if node.turn() == chess.BLACK]
    assert clocks[2] == max(0, over.clock_ms) / 1000  # never a negative [%clk]
    assert clocks[-1] is not None and clocks[-1] > 0


@pytest.mark.parametrize("protocol", ["uci", "xboard"])
async def test_new_game_time_is_never_charged(protocol: str) -> None:
    """ucinewgame / new taking 3 s (a hash clear) at 1+0.1: not charged, no loss on time."""
    slow = scripted("W", "--newgame-delay", "3", protocol=protocol)
    r = await play(
        slow, scripted("B"), tc="1+0.1", adjudication=Adjudication(None, None, max_moves=3)
    )
    assert r.fault is None and r.termination == "adjudication", r.reason
    assert r.moves[0].time_ms < 900 and r.moves[0].clock_ms is not None
    assert r.moves[0].clock_ms > 200


async def test_an_engine_not_ready_for_a_new_game_in_time_is_a_startup_fault() -> None:
    """``isready`` after ``ucinewgame`` unanswered within `startup_timeout` (its readyok is
    read as a lean move's answer is): a startup fault that says so, at the timeout."""
    slow = scripted("W", "--newgame-delay", "3", startup_timeout=0.5)
    began = time.monotonic()
    r = await play(slow, scripted("B"))
    assert time.monotonic() - began < 2.5
    assert (r.result, r.termination, r.plies) == ("0-1", "abandoned", 0)
    assert r.fault is not None and r.fault.kind == "startup"
    assert r.fault.detail == "not ready for a new game within 0.5s"


async def test_the_record_keeps_measured_and_reported_times() -> None:
    r = await play(
        scripted("W", "--delay", "120"),
        scripted("B"),
        adjudication=Adjudication(None, None, max_moves=2),
    )
    white = r.moves[0]
    assert white.reported_ms is not None and white.reported_ms >= 120
    # measured at the pipe, around the search: never less, but each is rounded to whole ms
    # on its own (121.4 charged and 121.5 reported are 121 and 122)
    assert white.time_ms >= white.reported_ms - 1
    game = chess.pgn.read_game(io.StringIO(to_pgn(r, event="Test")))
    assert game is not None
    first = game.next()
    assert first is not None and first.emt() == white.time_ms / 1000
    assert first.clock() == (white.clock_ms or 0) / 1000


async def test_pgn_tag_values_are_escaped() -> None:
    """The PGN standard: a quote or a backslash in a tag value is preceded by a backslash
    (python-chess writes them raw, which ends the tag early)."""
    r = await play(
        scripted('Quo"te\\Engine'),
        scripted("B"),
        adjudication=Adjudication(None, None, max_moves=1),
    )
    pgn = to_pgn(r, event='The "Big" Event', site="C:\\chess")
    assert '[White "Quo\\"te\\\\Engine"]' in pgn
    assert '[Event "The \\"Big\\" Event"]' in pgn and '[Site "C:\\\\chess"]' in pgn
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and len(list(game.mainline_moves())) == 2


async def test_a_line_without_end_is_garbage_and_kept_small() -> None:
    """20 MB without a newline: the engine is stopped once a line passes 1 MiB, the game is
    lost by a `garbage` fault, and its record keeps a few KiB of output at most."""
    r = await play(scripted("W", "--flood-at", "2", "--flood-mb", "20"), scripted("B"))
    assert (r.result, r.termination) == ("0-1", "rules infraction")
    assert r.fault is not None and (r.fault.engine, r.fault.kind) == ("W", "garbage")
    assert sum(len(line) for line in r.fault.output) < 8192


#: TCEC's order (its PGNs; `pd`, the ponder move, only where the engine pondered)
TCEC_FIELDS = [
    "d",
    "sd",
    "mt",
    "tl",
    "s",
    "n",
    "pv",
    "tb",
    "h",
    "ph",
    "wv",
    "R50",
    "Rd",
    "Rr",
    "mb",
]


async def test_tcec_comments_carry_every_field_and_read_back() -> None:
    r = await play(
        scripted("W", "--scores", "35,40,45", "--depth", "20"),
        scripted("B", "--scores", "-30"),
        adjudication=Adjudication(None, None, max_moves=4),
    )
    pgn = to_pgn(r, event="Test", comments="tcec", rules=Adjudication())
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and not game.errors
    assert game.headers["WhiteTimeControl"] == game.headers["BlackTimeControl"] == "10+0.1"
    assert re.fullmatch(r"\d\d:\d\d:\d\d", game.headers["GameDuration"])
    nodes = list(game.mainline())
    assert len(nodes) == len(r.moves) == 8
    for node, move in zip(nodes, r.moves, strict=True):
        assert "[%" not in node.comment  # TCEC's viewer reads every word as its fields
        text = node.comment.split(", W")[0].split(", D")[0]  # the last one carries the reason
        fields = dict(part.split("=", 1) for part in text.split(", "))
        assert list(fields) == TCEC_FIELDS
        assert fields["pv"].split()[0] == node.san()
        assert int(fields["mt"]) == move.time_ms and int(fields["tl"]) == move.clock_ms
        assert fields["R50"].isdigit() and fields["Rd"] == fields["Rr"] == "-11"
        assert fields["sd"] and re.fullmatch(r"([+-]\d+){5}", fields["mb"])
    assert nodes[0].comment.split("wv=")[1].startswith("0.35")
    assert nodes[1].comment.split("wv=")[1].startswith("0.30")  # Black's -0.30, White's view


def test_every_ending_in_tcec_words_has_its_own_kind_in_the_tally() -> None:
    kinds = {ending_of(Ended("A", "B", "normal", words)) for words in TCEC_WORDS}
    faults = {"loses on time", "disconnects", "makes an illegal move"}
    fault_free = {w for w in TCEC_WORDS if not any(w.endswith(f) for f in faults)}
    assert "director" not in {ending_of(Ended("A", "B", "normal", w)) for w in fault_free}
    assert len(kinds) >= 12


async def test_the_resign_rule_is_one_sided() -> None:
    rules = Adjudication(None, None, resign=ResignRule(plies=3, score=5.0), max_moves=30)
    # White's own scores say it is lost from its second move on, Black's that all is level:
    # White loses after its third such move (its fourth move, the game's seventh ply)
    r = await play(
        scripted("W", "--scores", "0,-600,-700,-800,-900"),
        scripted("B", "--scores", "0"),
        adjudication=rules,
    )
    assert (r.result, r.termination, r.details) == ("0-1", "adjudication", "Resign rule")
    assert r.plies == 7
    assert r.reason == "Black wins by adjudication: White scored <= -5.00 for its last 3 moves"
    # the winner's scores alone never end it; a streak broken by a better score starts again
    r = await play(
        scripted("W", "--scores=-600,-600,0,-600,-600,0"),
        scripted("B", "--scores", "900"),
        adjudication=Adjudication(None, None, resign=ResignRule(plies=3, score=5.0), max_moves=6),
    )
    assert (r.result, r.details) == ("1/2-1/2", "TCEC Adjudication")
    # a mate against the engine counts, whatever the rule's score
    r = await play(
        scripted("W", "--mate", "-5"),
        scripted("B"),
        adjudication=Adjudication(None, None, resign=ResignRule(plies=2, score=50.0), max_moves=30),
    )
    assert (r.result, r.details, r.plies) == ("0-1", "Resign rule", 3)
