"""The engine log of a game: both engines' lines, in order, with time stamps, bounded."""

from __future__ import annotations

import re

import chess
import chess.engine
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orchestrator.config.model import EngineConfig
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.engines.adapter import MAX_LINE, _Uci
from orchestrator.engines.journal import LOG_CAP, NOTE_KEPT, NOTES_ROOM, Journal
from orchestrator.game.game import GameSpec, play_game
from tests.support.engines import scripted

LIMIT = Adjudication(win=None, draw=None, max_moves=6)
ONE_LINE = st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",))
LINE = re.compile(r" *(\d+\.\d{3}) ([<>!])(\w+): (.*)")


async def logged(white: EngineConfig, black: EngineConfig) -> tuple[GameRecord, str, list[str]]:
    """Play a game; its whole log, and the log as it stood at each move's `on_move`."""
    chunks: list[str] = []
    at_moves: list[str] = []

    def on_move(move: MoveRecord, ply: int, mover: chess.Color) -> None:
        at_moves.append("".join(chunks))

    spec = GameSpec(white, black, TimeControl.parse("30+0"), None, LIMIT)
    record = await play_game(spec, on_move=on_move, on_log=chunks.append)
    return record, "".join(chunks), at_moves


def parsed(log: str) -> list[tuple[float, str, str, str]]:
    """The engine lines of a log: (seconds, sign, engine, text)."""
    out = []
    for line in log.splitlines():
        if line.startswith("#"):
            continue
        found = LINE.fullmatch(line)
        assert found, line
        out.append((float(found[1]), found[2], found[3], found[4]))
    return out


async def test_the_log_holds_both_engines_lines_in_order_with_times() -> None:
    record, log, at_moves = await logged(scripted("W", protocol="xboard"), scripted("B"))
    assert record.plies == 12
    first, *_, last = log.splitlines()
    assert first.startswith("# W (White) - B (Black), 30, from the starting position")
    lines = parsed(log)
    # a line an engine printed carries the time it wrote it (the kernel's stamp), a line
    # written to it the time it was sent: each stream is in time order
    for stream in {(sign, engine) for _, sign, engine, _ in lines}:
        times = [t for t, sign, engine, _ in lines if (sign, engine) == stream]
        assert times == sorted(times) and times[0] >= 0, stream
    # and every answer is stamped after the go it answers by the time that was charged
    go_at = [t for t, sign, _, text in lines if sign == ">" and text.startswith("go")]
    answered_at = [
        t
        for t, sign, _, text in lines
        if sign == "<" and (text.startswith("bestmove") or text.startswith("move "))
    ]
    charged = [m.time_ms for m in record.moves]
    for go, answer, ms in zip(go_at, answered_at, charged, strict=True):
        assert abs((answer - go) * 1000 - ms) <= 1.5, (go, answer, ms)
    said = [(sign, engine, text) for _, sign, engine, text in lines]
    # the handshakes, each engine's own protocol
    assert (">", "W", "xboard") in said and (">", "B", "uci") in said
    assert ("<", "B", "uciok") in said
    # every move: the mover is asked, then answers with it, before the other is asked
    asked = [(e, i) for i, (s, e, t) in enumerate(said) if s == ">" and t.startswith("go")]
    answers = [
        (e, i, t.split()[1])
        for i, (s, e, t) in enumerate(said)
        if s == "<" and (t.startswith("bestmove") or t.startswith("move "))
    ]
    assert [e for e, _ in asked] == [e for e, *_ in answers] == ["W", "B"] * 6
    assert all(a < b for (_, a), (_, b, _) in zip(asked, answers, strict=True))
    assert all(b < a for (_, b, _), (_, a) in zip(answers, asked[1:], strict=False))
    board = chess.Board()
    for move, (_, _, text) in zip(record.moves, answers, strict=True):
        assert text in (move.uci, board.xboard(chess.Move.from_uci(move.uci)))
        board.push_uci(move.uci)
    # each move's answer is in the log handed on before the move is
    for n, (move, so_far) in enumerate(zip(record.moves, at_moves, strict=True)):
        assert so_far.count("bestmove") + so_far.count("<W: move ") == n + 1, move
    # how the game ended, then the engines' quit
    ending = log.index(f"# {record.result}: {record.reason}")
    assert log.index(">W: quit") > ending and log.index(">B: quit") > ending
    assert last.endswith("quit")


async def test_an_engine_that_writes_in_pieces_is_read_whole() -> None:
    """Engines that do not buffer their lines (Debian's Glaurung writes a word at a time):
    ``bestmove`` itself split between writes.  Every line is read whole, each move is the
    one the engine named, and the time charged is from the go to the write that ended its
    bestmove line."""
    record, log, _ = await logged(scripted("W", "--pieces", "3"), scripted("B", "--pieces", "7"))
    assert record.fault is None and record.plies == 12
    lines = parsed(log)
    answers = [(t, text.split()[1]) for t, s, _, text in lines if text.startswith("bestmove")]
    assert [uci for _, uci in answers] == [move.uci for move in record.moves]
    infos = [text for _, s, _, text in lines if s == "<" and text.startswith("info")]
    whole = re.compile(
        r"info depth 5 seldepth 7 score cp -?\d+ nodes \d+ nps \d+ tbhits 0 "
        r"hashfull 1 time \d+ pv( [a-h][1-8][a-h][1-8][qrbn]?)+"
    )
    assert len(infos) == 12 and all(whole.fullmatch(text) for text in infos), infos
    go_at = [t for t, s, _, text in lines if s == ">" and text.startswith("go")]
    for go, (answer, _), move in zip(go_at, answers, record.moves, strict=True):
        assert abs((answer - go) * 1000 - move.time_ms) <= 1.5, (go, answer, move.time_ms)


async def test_a_flooding_engine_is_counted_not_kept() -> None:
    """20 MB of `info string` lines at one move: the log stops at its cap and says how much
    it left out; the game goes on (a chatty engine is not at fault).  The guarantee: the
    whole log, the runner's notes included, is at most `LOG_CAP` bytes, and the engines'
    lines fill it to within one line of the room kept for the notes."""
    flooding = scripted("W", "--spam-at", "2", "--spam-mb", "20")
    record, log, _ = await logged(flooding, scripted("B"))
    assert record.fault is None and record.plies == 12
    size = len(log.encode())
    longest = max(len(line.encode()) + 1 for line in log.splitlines() if not line.startswith("#"))
    notes = sum(len(line.encode()) + 1 for line in log.splitlines() if line.startswith("#"))
    assert LOG_CAP - NOTES_ROOM - longest < size - notes
    assert size <= LOG_CAP
    left_out = re.search(r"# (\d+) more lines not kept: a game's log keeps (\d+) bytes", log)
    assert left_out and int(left_out[2]) == LOG_CAP
    spam_lines = 20 * ((1 << 20) // 201)  # the scripted engine writes 201-byte lines
    kept = log.count("<W: info string yyy")
    assert kept + int(left_out[1]) >= spam_lines > kept > 0
    assert f"# {record.result}: {record.reason}" in log  # the runner's notes are always kept


class _Killable:
    """A transport that only counts its kills."""

    def __init__(self) -> None:
        self.kills = 0

    def kill(self) -> None:
        self.kills += 1


async def test_a_megabyte_at_once_is_handed_to_python_chess_a_line_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """python-chess's splitter copies the rest of its buffer at every line: handed 20 MB of
    short lines in a few writes it kept the loop for a minute, and the engine, its output
    unread, lost on time (CI).  The adapter hands it one line at a time, and a line over
    `MAX_LINE` in the middle of a write is caught there, not after it."""
    pieces: list[bytes] = []
    handed = chess.engine.Protocol.pipe_data_received

    def spy(self: chess.engine.Protocol, fd: int, data: bytes | str) -> None:
        pieces.append(bytes(data, "utf-8") if isinstance(data, str) else data)
        handed(self, fd, data)

    monkeypatch.setattr(chess.engine.Protocol, "pipe_data_received", spy)
    engine = _Uci()
    received: list[str] = []
    engine._line_received = received.append  # type: ignore[method-assign]
    engine.transport = _Killable()  # type: ignore[assignment]
    lines = [f"info string {n:05d} " + "y" * 180 for n in range(5000)]
    blob = "\n".join(lines).encode() + b"\n"
    engine.pipe_data_received(1, blob[:777_777])
    engine.pipe_data_received(1, blob[777_777:])
    assert received == lines
    assert all(piece.count(b"\n") <= 1 for piece in pieces)
    assert b"".join(pieces) == blob

    received.clear()
    engine.pipe_data_received(1, b"a\n" + b"x" * (MAX_LINE + 1) + b"\nb\n")
    assert received == ["a"] and engine.overlong and engine.transport.kills == 1
    assert len(engine.buffer[1]) == 0  # type: ignore[attr-defined]
    engine.pipe_data_received(1, b"c\n")  # nothing more is taken from a killed engine
    assert received == ["a"] and engine.transport.kills == 1


async def test_a_line_of_max_line_bytes_is_kept() -> None:
    """The bound is `MAX_LINE` bytes a line, its newline not counted, whether the line came
    in one write or in several."""
    engine = _Uci()
    received: list[str] = []
    engine._line_received = received.append  # type: ignore[method-assign]
    engine.transport = _Killable()  # type: ignore[assignment]
    line = b"y" * MAX_LINE
    engine.pipe_data_received(1, line + b"\n")
    engine.pipe_data_received(1, line[:1000])
    engine.pipe_data_received(1, line[1000:] + b"\nz\n")
    assert [len(text) for text in received] == [MAX_LINE, MAX_LINE, 1]
    assert not engine.overlong
    engine.pipe_data_received(1, line[:1000])
    engine.pipe_data_received(1, line[1000:] + b"y")
    assert engine.overlong and engine.transport.kills == 1


@given(
    lines=st.lists(st.text(ONE_LINE, max_size=600), max_size=60),
    notes=st.lists(st.text(ONE_LINE, max_size=900), max_size=2),
    room=st.integers(0, 3000),
)
def test_a_log_never_passes_its_cap_and_keeps_its_notes(
    lines: list[str], notes: list[str], room: int
) -> None:
    """Any lines (any characters, any length) and two notes (a game's), in any order, and
    the count of what was left out: the text handed on is at most the cap in bytes, and
    every note is in it."""
    cap = NOTES_ROOM + room
    journal = Journal(cap=cap, clock=lambda: 0.0)
    text = []
    for n, line in enumerate(lines):
        journal.line(0.0, "<", "E", line)
        if n < len(notes):
            journal.note(notes[n])
        text.append(journal.take())
    for note in notes[len(lines) :]:
        journal.note(note)
    text.append(journal.close())
    log = "".join(text)
    assert len(log.encode()) <= cap
    kept = [line for line in log.split("\n") if line.startswith("# ")]
    assert [line[2:] for line in kept[: len(notes)]] == [
        note.encode()[:NOTE_KEPT].decode(errors="ignore") for note in notes
    ]


@given(lines=st.lists(st.text(ONE_LINE, max_size=600), max_size=20), room=st.integers(0, 6000))
@example(lines=["x" * 600, "y" * 30], room=440)  # too long for the entry: line by line, cut once
def test_lines_logged_together_read_as_each_logged_alone(lines: list[str], room: int) -> None:
    """A move's lines in one entry (`Journal.stamped`, one format for them all) read as the
    lines `Journal.line` writes one by one: each with its own time, cut alike, near the cap
    too, whatever the engine's name holds."""
    times = [0.0015 * n for n in range(len(lines))]
    together = Journal(cap=NOTES_ROOM + room, clock=lambda: 0.0)
    together.stamped("<", "E%s", times, lines)
    alone = Journal(cap=NOTES_ROOM + room, clock=lambda: 0.0)
    for at, line in zip(times, lines, strict=True):
        alone.line(at, "<", "E%s", line)
    assert together.take() == alone.take()


@given(
    lines=st.lists(st.text(ONE_LINE, max_size=600), max_size=20),
    room=st.integers(0, 6000),
    at=st.floats(0, 1e7),
)
@example(lines=["x" * 600, "y" * 30], room=440, at=1.5)
def test_lines_of_one_write_read_as_each_logged_alone(
    lines: list[str], room: int, at: float
) -> None:
    """The lines of one write (`Journal.lines`, one time for them all) read as the lines
    `Journal.line` writes one by one, near the cap too, whatever the engine's name holds."""
    together = Journal(cap=NOTES_ROOM + room, clock=lambda: 0.0)
    together.lines(at, ">", "E%s", lines)
    alone = Journal(cap=NOTES_ROOM + room, clock=lambda: 0.0)
    for line in lines:
        alone.line(at, ">", "E%s", line)
    assert together.take() == alone.take()
