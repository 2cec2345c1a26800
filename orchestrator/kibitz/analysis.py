"""A kibitzer's engine analysing a position: what the kibitz process (`follow.py`) and a
game host that runs a kibitzer (`remote.py`) both do with the engine they have."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import chess
import chess.engine

from orchestrator.engines.adapter import Engine

__all__ = ["analyse"]


async def analyse(
    engine: Engine, board: chess.Board
) -> AsyncGenerator[chess.engine.InfoDict, None]:
    """`engine`'s analysis of `board` without a limit, one info at a time, until the engine
    stops by itself (or the caller closes the generator, which stops the engine)."""
    analysis = await engine.protocol.analysis(board)
    try:
        while True:
            try:
                yield await analysis.get()
            except chess.engine.AnalysisComplete:
                return
    finally:
        analysis.stop()
