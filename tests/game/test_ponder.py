"""Pondering: an engine thinks on the opponent's time, and is charged only for its own.

The scripted engine ponders as UCI says (`go ponder`, then `ponderhit` or `stop`); with a
think time of 40 ms against an opponent's 300 ms, any of the opponent's time charged to it
would show in every one of its moves.
"""

from __future__ import annotations

from pathlib import Path

import chess

from orchestrator.core.game.adjudication import Adjudication
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.fields import annotate
from orchestrator.core.game.record import GameRecord
from orchestrator.game.game import GameSpec, play_game
from tests.support.engines import scripted
from tests.support.processes import descendants

LIMIT = Adjudication(win=None, draw=None, max_moves=8)
OWN_MS, OPPONENT_MS = 40, 300


async def pondered_game(tmp_path: Path, *flags: str) -> tuple[GameRecord, list[str]]:
    log = tmp_path / "ponderer.log"
    ponderer = scripted("P", "--delay", str(OWN_MS), "--log", str(log), *flags)
    opponent = scripted("O", "--delay", str(OPPONENT_MS))
    spec = GameSpec(ponderer, opponent, TimeControl.parse("30+0"), None, LIMIT, ponder=True)
    record = await play_game(spec)
    assert not descendants(), "an engine process was left behind"
    return record, log.read_text().splitlines()


def own_moves(record: GameRecord) -> list[int]:
    return [m.time_ms for m in record.moves[0::2]]


async def test_a_ponder_hit_is_charged_from_ponderhit_to_bestmove(tmp_path: Path) -> None:
    record, lines = await pondered_game(tmp_path, "--ponder")
    assert record.plies == 16
    assert "setoption name Ponder value true" in lines
    assert lines.count("ponderhit") == 7  # every reply was the one it pondered on
    assert sum(line.startswith("go ponder") for line in lines) == 8  # the last one stopped
    assert "stop" in lines  # the game's end stopped the last ponder search
    # every move but the first (a plain go) was a ponder hit: its own 40 ms, never the
    # opponent's 300 ms it pondered through
    times = own_moves(record)
    assert all(OWN_MS <= t < OWN_MS + 150 for t in times), times
    reported = [m.reported_ms or 0 for m in record.moves[0::2]]
    assert all(abs(t - r) <= 100 for t, r in zip(times, reported, strict=True))
    assert sum(m.time_ms for m in record.moves[1::2]) >= 8 * OPPONENT_MS
    # the ponder move is recorded, and TCEC's pd / ph fields say so: all of them hit
    white = [a for a in annotate(chess.Board(), record.moves, LIMIT) if a.white_moved]
    assert all(a.move.ponder for a in white)
    assert [a.fields["ph"] for a in white] == ["0.0"] + ["100.0"] * 7
    assert (
        white[0].fields["pd"]
        == chess.Board()
        .variation_san(
            [chess.Move.from_uci(record.moves[0].uci), chess.Move.from_uci(record.moves[1].uci)]
        )
        .split()[-1]
    )


async def test_a_ponder_miss_is_charged_from_its_go(tmp_path: Path) -> None:
    record, lines = await pondered_game(tmp_path, "--ponder-miss")
    assert record.plies == 16
    assert "ponderhit" not in lines
    assert lines.count("stop") == 8  # each ponder search stopped (the last by the game's end)
    times = own_moves(record)
    assert all(OWN_MS <= t < OWN_MS + 150 for t in times), times
    white = [a for a in annotate(chess.Board(), record.moves, LIMIT) if a.white_moved]
    assert [a.fields["ph"] for a in white] == ["0.0"] * 8


async def test_without_ponder_the_engine_is_never_asked_to(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = scripted("P", "--ponder", "--log", str(log))
    spec = GameSpec(engine, scripted("O"), TimeControl.parse("30+0"), None, LIMIT)
    record = await play_game(spec)
    assert record.plies == 16
    lines = log.read_text().splitlines()
    assert not any(line.startswith("go ponder") for line in lines)
    assert "setoption name Ponder value true" not in lines
    assert all(m.ponder for m in record.moves[0::2])  # its ponder moves are still recorded


async def test_an_engine_s_own_ponder_overrides_the_tournament_s(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = scripted("P", "--ponder", "--log", str(log), ponder=False)
    spec = GameSpec(engine, scripted("O"), TimeControl.parse("30+0"), None, LIMIT, ponder=True)
    await play_game(spec)
    assert not any(line.startswith("go ponder") for line in log.read_text().splitlines())
    assert spec.ponders(chess.BLACK) and not spec.ponders(chess.WHITE)
