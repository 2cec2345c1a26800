"""The event's PGN file at a round's end (`daemon/outputs.py`: `PgnFiles`): rewritten from
the round files only when its games were appended out of playing order."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.daemon.outputs import PgnFiles
from orchestrator.event.export import event_pgn
from orchestrator.event.sample import sample_view
from orchestrator.store.database import GameRow, RoundRow

TEMPLATE = sample_view().rounds[0].games[0]


def game(number: int, rnd: int, finished: bool = True) -> GameRow:
    return replace(
        TEMPLATE,
        id=10 * rnd + number,
        round=rnd,
        number=number,
        status="finished" if finished else "running",
        pgn=f'[Round "{rnd}.{number}"]\n\n1-0\n' if finished else None,
    )


def round_row(rnd: int, *finished: int) -> RoundRow:
    """Round `rnd` of two games, those numbered in `finished` over."""
    return RoundRow(rnd, None, 0, "", None, tuple(game(n, rnd, n in finished) for n in (1, 2)))


async def test_a_round_whose_games_ended_in_order_is_not_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = PgnFiles(tmp_path, "Match")
    rewrites: list[tuple[int, ...]] = []
    rewrite = files._rewrite_event

    def counted(rounds: tuple[int, ...]) -> None:
        rewrites.append(tuple(rounds))
        rewrite(rounds)

    monkeypatch.setattr(files, "_rewrite_event", counted)
    done: list[RoundRow] = []
    for rnd, order in ((1, (1, 2)), (2, (1, 2)), (3, (2, 1)), (4, (1, 2))):
        for n, number in enumerate(order):
            now = round_row(rnd, *order[: n + 1])
            pgn = next(g.pgn for g in now.games if g.number == number)
            assert pgn is not None
            await files.game_finished(now, pgn)
        whole = round_row(rnd, 1, 2)
        done.append(whole)
        await files.round_finished(whole, [r.number for r in done])
        assert files.event_file.read_text() == event_pgn(done)
    # the first game makes the file (and its round's end puts it in order), round 3's games
    # ended out of order; rounds 2 and 4 were appended as a rewrite would write them
    assert rewrites == [(1,), (1,), (1, 2, 3)]
