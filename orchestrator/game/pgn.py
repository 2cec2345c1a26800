"""A game record as PGN (SPEC.md section 6), written by python-chess."""

from __future__ import annotations

import chess
import chess.pgn

from orchestrator.core.gamerecord import GameRecord
from orchestrator.core.timecontrol import TimeControl


def to_pgn(record: GameRecord, *, event: str, site: str = "?", round_tag: str = "1.1") -> str:
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = event
    h["Site"] = site
    h["Date"] = record.started_at.strftime("%Y.%m.%d")
    h["Round"] = round_tag
    h["White"] = record.white
    h["Black"] = record.black
    h["Result"] = record.result
    h["TimeControl"] = TimeControl.parse(record.time_control).pgn_tag()
    h["Termination"] = record.termination
    h["PlyCount"] = str(record.plies)
    h["GameStartTime"] = record.started_at.isoformat(timespec="seconds")
    h["GameEndTime"] = record.ended_at.isoformat(timespec="seconds")
    if record.opening:
        h["Opening"] = record.opening
    if record.start_fen:
        game.setup(chess.Board(record.start_fen))
    node: chess.pgn.GameNode = game
    last = len(record.moves) - 1
    for i, move in enumerate(record.moves):
        comment = move.comment() + (f", {record.reason}" if i == last else "")
        node = node.add_variation(chess.Move.from_uci(move.uci), comment=comment)
        if not move.book:
            # [%clk] and [%emt], as lichess and ChessBase read them
            if move.clock_ms is not None:
                node.set_clock(move.clock_ms / 1000)
            node.set_emt(move.time_ms / 1000)
    if node is game:
        game.comment = record.reason
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n"
