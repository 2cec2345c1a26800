"""The PGN files (`daemon/outputs.py`: `PgnFiles`): a round's file appended to while its
games end in playing order, the event's file rewritten from the round files at a round's end
only when its games were appended out of playing order."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from orchestrator.daemon import outputs
from orchestrator.daemon.outputs import PgnFiles
from orchestrator.event.export import event_pgn, round_pgn
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


async def test_a_round_s_file_is_appended_to_while_its_games_end_in_playing_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = PgnFiles(tmp_path, "Match")
    made: list[str] = []  # the files made anew (a temporary file renamed into place)
    atomic = outputs.atomic

    def counted(path: Path, *, durable: bool = True) -> object:
        made.append(path.name)
        return atomic(path, durable=durable)

    monkeypatch.setattr(outputs, "atomic", counted)
    done: list[RoundRow] = []
    for rnd, order in ((1, (1, 2)), (2, (2, 1))):
        for n, number in enumerate(order):
            now = round_row(rnd, *order[: n + 1])
            pgn = next(g.pgn for g in now.games if g.number == number)
            assert pgn is not None
            await files.game_finished(now, pgn)
            assert files.round_file(rnd).read_text() == round_pgn(now)
        whole = round_row(rnd, 1, 2)
        done.append(whole)
        await files.round_finished(whole, [r.number for r in done])
        assert files.round_file(rnd).read_text() == round_pgn(whole)
    # round 1: made by its first game, appended to by its second, whole at its end; round
    # 2's second game comes first in playing order: its file is made again
    assert [name for name in made if name.startswith("round")] == [
        "round-01.pgn",
        "round-02.pgn",
        "round-02.pgn",
    ]
    await files.write_round(done[0])  # a daemon's start: written anew
    assert made[-1] == "round-01.pgn"
    assert files.round_file(1).read_text() == round_pgn(done[0])
