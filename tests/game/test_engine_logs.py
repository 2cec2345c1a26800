"""The engine log of a game: both engines' lines, in order, with time stamps, bounded."""

from __future__ import annotations

import re

import chess

from orchestrator.config.model import EngineConfig
from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.record import GameRecord, MoveRecord
from orchestrator.engines.journal import LOG_CAP
from orchestrator.game.game import GameSpec, play_game
from tests.support.engines import scripted

LIMIT = Adjudication(win=None, draw=None, max_moves=6)
LINE = re.compile(r" *(\d+\.\d{3}) ([<>!])(\w+): (.*)")


async def logged(white: EngineConfig, black: EngineConfig) -> tuple[GameRecord, str, list[str]]:
    """Play a game; its whole log, and the log as it stood at each move's `on_move`."""
    chunks: list[str] = []
    at_moves: list[str] = []

    async def on_move(move: MoveRecord, board: chess.Board) -> None:
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
    times = [t for t, *_ in lines]
    assert times == sorted(times) and times[0] >= 0
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


async def test_a_flooding_engine_is_counted_not_kept() -> None:
    """20 MB of `info string` lines at one move: the log stops at its cap and says how much
    it left out; the game goes on (a chatty engine is not at fault)."""
    flooding = scripted("W", "--spam-at", "2", "--spam-mb", "20")
    record, log, _ = await logged(flooding, scripted("B"))
    assert record.fault is None and record.plies == 12
    size = len(log.encode())
    assert LOG_CAP - 1000 < size <= LOG_CAP + 200
    left_out = re.search(r"# (\d+) more lines not kept: a game's log keeps (\d+) bytes", log)
    assert left_out and int(left_out[2]) == LOG_CAP
    spam_lines = 20 * ((1 << 20) // 201)  # the scripted engine writes 201-byte lines
    kept = log.count("<W: info string yyy")
    assert kept + int(left_out[1]) >= spam_lines > kept > 0
    assert f"# {record.result}: {record.reason}" in log  # the runner's notes are always kept
