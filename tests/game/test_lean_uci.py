"""The lean UCI move (`engines/adapter.py`: `_Uci.play_lean`, `uci_info`): what python-chess
would have made of the same bytes, for less."""

from __future__ import annotations

import asyncio
import socket
import struct
import time

import chess
import chess.engine
import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.engines.adapter import (
    INFO_NUMBERS,
    NAP_SHARE,
    TAIL_LINES,
    Engine,
    _Answer,
    _Uci,
    uci_info,
)
from orchestrator.engines.journal import Journal
from orchestrator.engines.output import SO_TIMESTAMPNS, Answer, Record, StampedOutput, stamps
from tests.support.engines import scripted

WORDS = sorted(INFO_NUMBERS | {"time", "score", "cp", "mate", "lowerbound", "upperbound"})
WORDS += ["pv", "e2e4", "wdl", "currmove", "-3", "0", "17", "x", "1.5", "ebf", "string"]


@given(st.lists(st.sampled_from(WORDS), max_size=14), st.booleans())
def test_uci_info_reads_a_line_as_python_chess_does(words: list[str], turn: bool) -> None:
    """Any info line: the fields a record keeps, exactly as python-chess's own parse gives
    them with INFO_BASIC | INFO_SCORE."""
    line = " ".join(["info", *words])
    board = chess.Board()
    board.turn = turn
    theirs = chess.engine._parse_uci_info(
        line.partition(" ")[2], board, chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
    )
    kept = {k: v for k, v in theirs.items() if k not in ("string", "ebf", "currmove")}
    assert uci_info(line, turn) == kept


@pytest.mark.parametrize(
    "pieces",
    [
        (  # lines split anywhere, a carriage return
            b"info depth 1 score cp 5\ninfo dep",
            b"th 2 score cp 7 pv e2e4 e7e5\ninfo nodes 90 nps 10\nbestm",
            b"ove e2e4 ponder e7e5\r\nreadyok\n",
        ),
        (  # the answer's write ends in a line's first piece, which the next one ends
            b"info depth 1 score cp 5\ninfo depth 2 score cp 7 pv e2e4 e7e5\n",
            b"info nodes 90 nps 10\nbestmove e2e4 ponder e7e5\nread",
            b"yok\n",
        ),
        (  # whole lines, the answer amid a write
            b"info depth 1 score cp 5\n",
            b"info depth 2 score cp 7 pv e2e4 e7e5\ninfo nodes 90 nps 10\n",
            b"bestmove e2e4 ponder e7e5\nreadyok\n",
        ),
    ],
)
async def test_a_move_read_in_pieces_is_the_same_move(pieces: tuple[bytes, ...]) -> None:
    """Bytes that split lines anywhere (an engine on a pipe), or whole lines: the answer
    is the bestmove line, the info kept is the last scored line, every line is in the log,
    and what came after the answer goes on to python-chess's reading."""
    proto = _Uci()
    journal = Journal()
    proto.attach(journal)
    proto.go_at = 1.0
    answer = proto._answer = _Answer()
    proto.kept = []  # a lean move is searched
    for piece in pieces:
        proto.arrived = 2.0
        proto.pipe_data_received(1, piece)
    assert answer.settled and answer.line == "bestmove e2e4 ponder e7e5"
    assert proto.answered_at == 2.0
    info, pv = proto.last_info(chess.Board())
    assert info["score"] == chess.engine.PovScore(chess.engine.Cp(7), chess.WHITE)
    assert info["depth"] == 2 and pv == ("e2e4", "e7e5")
    log = journal.take()
    for line in ("info depth 1", "info depth 2", "info nodes 90", "bestmove e2e4", "readyok"):
        assert f": {line}" in log, line
    assert list(proto.tail)[-1] == "readyok"


async def test_what_follows_the_answer_goes_on_in_order() -> None:
    """Records looked at together: the answer's record ends in a line's first piece and
    the next record ends that line.  python-chess reads the line whole, after the answer."""
    proto = _Uci()
    proto.go_at = 1.0
    answer = proto._answer = _Answer()
    proto.kept = [
        (b"info depth 2 score cp 7 pv e2e4\nbestmove e2e4\nread", []),
        (b"yok\n", []),
    ]
    proto._look(2.0)
    assert answer.line == "bestmove e2e4" and proto.answered_at == 2.0
    assert list(proto.tail)[-2:] == ["bestmove e2e4", "readyok"]


def _stamped(lines: list[bytes], apart: float = 0.05) -> list[Record]:
    """Records of one line each, as the kernel stamps them: the last written now, each
    one before it `apart` seconds earlier."""
    now = time.time()
    return [
        (
            line,
            [(socket.SOL_SOCKET, SO_TIMESTAMPNS, struct.pack("@ll", int(at), int(at % 1 * 1e9)))],
        )
        for n, line in enumerate(lines)
        for at in [now - (len(lines) - 1 - n) * apart]
    ]


@pytest.mark.parametrize(
    "lines",
    [
        [  # a line a record, the answer alone in the last: read together
            b"info depth 1 score cp 5\n",
            b"info depth 2 score cp 7 pv e2e4 e7e5\n",
            b"info nodes 90 nps 10\n",
            b"bestmove e2e4 ponder e7e5\n",
        ],
        [  # the answer's word before the answer: read a record at a time
            b"info string bestmove soon\n",
            b"info depth 2 score cp 7 pv e2e4 e7e5\n",
            b"info nodes 90 nps 10\n",
            b"bestmove e2e4 ponder e7e5\n",
        ],
    ],
)
async def test_each_line_of_a_move_is_logged_with_its_own_write_s_stamp(
    lines: list[bytes],
) -> None:
    """However the records are read, each line's time in the log is its own write's stamp,
    the answer's stamp stops the clock, the last scored line is the move's info, and the
    tail ends with the move's lines."""
    proto = _Uci()
    journal = Journal(clock=lambda: 0.0)
    proto.attach(journal)
    proto.go_at = time.monotonic() - 10
    answer = proto._answer = _Answer()
    records = _stamped(lines)
    received = time.monotonic()
    times = stamps(records, received)
    assert times == sorted(times) and len(set(times)) == len(times)
    proto.kept = list(records)
    proto._look(received)
    assert answer.settled and answer.line == "bestmove e2e4 ponder e7e5"
    assert proto.answered_at == times[-1]
    texts = [line.decode().rstrip("\n") for line in lines]
    assert journal.take() == "".join(
        f"{at:10.3f} <engine: {text}\n" for at, text in zip(times, texts, strict=True)
    )
    assert list(proto.tail)[-len(texts) :] == texts
    info, pv = proto.last_info(chess.Board())
    assert info["depth"] == 2 and pv == ("e2e4", "e7e5")


async def test_the_tail_keeps_the_last_lines_of_many_moves() -> None:
    """The tail is taken only when read: after moves of a few lines each, it holds the
    last `TAIL_LINES` lines, in order, an engine's stderr line in its place."""
    proto = _Uci()
    proto.attach(Journal())
    written: list[str] = []
    for move in range(6):
        proto.go_at, proto.answered_at = time.monotonic(), None
        proto._answer = _Answer()
        lines = [f"info depth {d} score cp {move}" for d in (1, 2)] + [f"bestmove m{move}"]
        proto.kept = [(f"{line}\n".encode(), []) for line in lines]
        proto._look(time.monotonic())
        written += lines
        if move == 3:
            proto.error_line_received("warning")
            written.append("[stderr] warning")
    assert list(proto.tail) == written[-TAIL_LINES:]


async def test_the_lean_move_writes_position_and_go_at_once_and_plays() -> None:
    """A scripted engine's moves through the lean path: each `position` with its `go`, the
    ponder move kept only when legal, the score from the last scored line."""
    config = scripted("S")
    journal = Journal()
    engine = await Engine.start(config, journal)
    try:
        board = chess.Board()
        await engine.new_game("g", board)
        limit = chess.engine.Limit(white_clock=10, black_clock=10, white_inc=0.1, black_inc=0.1)
        for _ in range(4):
            engine.protocol.arm()
            played = await engine.play(board, limit, game="g", info=0, ponder=False, deadline=60)
            assert played.move is not None and played.move in board.legal_moves
            info, _ = engine.move_info(board, played)
            assert "score" in info
            board.push(played.move)
        assert engine.protocol._answer is None and engine.protocol.kept is None
        written = [line.split(maxsplit=1) for line in journal.take().splitlines() if ">S:" in line]
        gos = [n for n, (_, line) in enumerate(written) if line.startswith(">S: go ")]
        assert len(gos) == 4
        for n in gos:  # one write: the same stamp
            assert written[n - 1][1].startswith(">S: position ")
            assert written[n - 1][0] == written[n][0]
    finally:
        await engine.close()


async def test_init_lines_go_after_the_handshake_before_any_game() -> None:
    """`init`: each line written once, after `uciok` and the options, and taken in (the
    engine answered `isready`) before the engine is handed over."""
    journal = Journal()
    engine = await Engine.start(scripted("S", init=("debug off", "setoption name X")), journal)
    await engine.close()
    lines = [line.split(maxsplit=1)[1] for line in journal.take().splitlines()]
    written = [line for line in lines if line.startswith(">S: ")]
    assert written.index(">S: debug off") == written.index(">S: setoption name X") - 1
    assert lines.index("<S: uciok") < lines.index(">S: debug off")
    assert written[written.index(">S: setoption name X") + 1] == ">S: isready"
    assert lines.index(">S: setoption name X") < lines.index("<S: readyok")


async def test_a_game_on_an_idle_loop_waits_outside_it_and_the_loop_keeps_its_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lean move on a loop with nothing else to do is waited for outside it
    (`StampedOutput.wait_here`); a task that ticks every 10 ms beside the game is never held
    up by a move (each move takes the engine 30 ms): the loop gets its turn back at each tick."""
    waited: list[bool] = []
    naps: list[float] = []
    searched: list[float] = []  # the engine's last search, when each wait started
    wait_here = StampedOutput.wait_here

    def counted(self: StampedOutput, until: float, answer: Answer, nap: float = 0.0) -> bool:
        naps.append(nap)
        searched.append(getattr(self.receiver, "last_search_s"))  # noqa: B009 - a _Uci's
        waited.append(wait_here(self, until, answer, nap))
        return waited[-1]

    monkeypatch.setattr(StampedOutput, "wait_here", counted)
    engine = await Engine.start(scripted("S", "--delay", "30"))
    late: list[float] = []
    ticking = True

    async def ticker() -> None:
        while ticking:
            due = time.monotonic() + 0.01
            await asyncio.sleep(0.01)
            late.append(time.monotonic() - due)

    try:
        board = chess.Board()
        await engine.new_game("g", board)
        assert waited == [True]  # its readyok too
        waited.clear()
        limit = chess.engine.Limit(nodes=1000)
        for _ in range(4):  # no other work: each move waited for outside the loop
            engine.protocol.arm()
            played = await engine.play(board, limit, game="g", info=0, ponder=False, deadline=60)
            assert played.move is not None
            board.push(played.move)
        assert waited == [True] * 4
        # each move naps a share of the engine's last search, go to answer (none before
        # its first): a search of 30 ms at least
        assert naps[:2] == [0.0, 0.0] and all(nap >= NAP_SHARE * 0.03 for nap in naps[2:])
        assert naps[1:] == [NAP_SHARE * search for search in searched[1:]]
        task = asyncio.ensure_future(ticker())
        for _ in range(4):
            engine.protocol.arm()
            played = await engine.play(board, limit, game="g", info=0, ponder=False, deadline=60)
            assert played.move is not None
            board.push(played.move)
        ticking = False
        await task
        assert late and max(late) < 5  # each tick on the loop, not after a move (a loaded machine)
        assert len(late) >= 4 * 30 // 10 // 2
    finally:
        await engine.close()


async def test_two_engines_that_played_are_ready_together_for_their_next_game() -> None:
    """Both engines' ``isready`` are waited for at once (a game's start): the one that is
    not waited for outside the loop is read by the loop, even after a move of its own was
    waited for outside it (which left its output unread by the loop)."""
    engines = [await Engine.start(scripted(name, startup_timeout=5)) for name in "AB"]
    try:
        for key, (white, black) in (("g1", engines), ("g2", engines[::-1])):
            board = chess.Board()
            began = time.monotonic()
            await asyncio.gather(white.new_game(key, board), black.new_game(key, board))
            assert time.monotonic() - began < 2, key
            for _ in range(4):
                engine = white if board.turn == chess.WHITE else black
                engine.protocol.arm()
                limit = chess.engine.Limit(nodes=1000)
                played = await engine.play(board, limit, game=key, info=0, ponder=False, deadline=5)
                assert played.move is not None
                board.push(played.move)
    finally:
        for engine in engines:
            await engine.close()


async def test_the_position_line_goes_on_after_moves_taken_back_and_played_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """python-chess's `is_repetition` takes moves back and plays them again (new `Move`
    objects of the same value), as the end by the rules asks it after a move: the next
    `position` line still goes on from the last one, never rebuilt from the root (a FEN and
    every move of the game again)."""
    proto = _Uci()
    board = chess.Board()
    lines: list[str] = []

    def sent() -> str:
        proto._capture = []
        proto._position(board, keep=False)
        line, proto._capture = proto._capture[-1], None
        lines.append(line)
        return line

    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"):
        board.push_uci(uci)
    assert sent() == "position startpos moves g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1"

    def rebuilt(self: object, board: chess.Board) -> None:
        raise AssertionError("the position line was rebuilt from the root")

    monkeypatch.setattr(chess.engine.UciProtocol, "_position", rebuilt)
    board.push_uci("f6g8")
    before = list(board.move_stack)
    assert board.is_repetition(3)  # the start a third time: it took the moves back to see
    assert board.move_stack == before and board.move_stack[-1] is not before[-1]
    assert sent() == lines[0] + " f6g8"
    board.push(board.pop())  # a new object for the same move
    board.push_uci("g1f3")
    assert sent() == lines[1] + " g1f3"
