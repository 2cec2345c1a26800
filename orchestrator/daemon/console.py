"""`run --output fastchess|cutechess`: the daemon's games as those runners print them, on
standard output, for fishtest's worker and OpenBench's client (the log then goes to standard
error).  The lines are `core/event/console.py`'s; what they count comes from the store, so
a resumed event goes on counting where it stopped."""

from __future__ import annotations

import sys
from typing import TextIO

from orchestrator.config.model import Config
from orchestrator.core.event.console import (
    Form,
    Score,
    cutechess_block,
    fastchess_block,
    finished_line,
    started_line,
)
from orchestrator.core.game.endings import ended, ending_of
from orchestrator.core.game.record import GameRecord
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.stats.elo import penta_counts
from orchestrator.core.stats.sprt import SprtState
from orchestrator.store.database import Store


def _points(result: str, white: str, first: str) -> float:
    score = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    return score if white == first else 1.0 - score


class Console:
    """Prints each game's start and end, and every `rating_interval` games (and at the end)
    the result block of a two-engine event, from its first engine's side."""

    def __init__(self, form: Form, config: Config, out: TextIO | None = None) -> None:
        self.form = form
        self.config = config
        self.out = out or sys.stdout
        names = [e.name for e in config.engines]
        self.pair = (names[0], names[1]) if len(names) == 2 else None
        self.numbers: dict[int, int] = {}  # game id: its number in the event
        self.games: list[tuple[int, float]] = []  # (pair, first's points), as finished
        self.count = 0
        self.shown = -1  # the count of finished games the last block showed
        #: a two-engine event's game pairs, numbered as they come (see `number`)
        self.pairs: dict[int, int] = {}

    async def load(self, store: Store) -> None:
        """What a resumed event had finished (its blocks count those games too)."""
        for rnd in await store.rounds():
            for game in rnd.games:
                self.pairs.setdefault(game.pair, len(self.pairs) + 1)
                if game.status == "finished" and game.result is not None:
                    self._count(game.pair, game.white, game.result)

    def number(self, index: int, pair: int, white: str) -> int:
        """A game's number as the testing frameworks read it.  In a two-engine event, the
        two games of the k-th pair are 2k - 1 (the first engine White) and 2k: OpenBench
        counts a pair's pentanomial from the odd game's White side, so that must always be
        the first engine, whichever colour began the pair.  Otherwise its place in the
        event (`index`)."""
        if self.pair is None:
            return index
        k = self.pairs.setdefault(pair, len(self.pairs) + 1)
        return 2 * k - (1 if white == self.pair[0] else 0)

    def _count(self, pair: int, white: str, result: str) -> None:
        self.count += 1
        if self.pair is not None:
            self.games.append((pair, _points(result, white, self.pair[0])))

    def _print(self, *lines: str) -> None:
        self.out.write("".join(f"{line}\n" for line in lines))
        self.out.flush()

    def started(
        self, game: int, pair: int, index: int, total: int | None, white: str, black: str
    ) -> None:
        number = self.numbers[game] = self.number(index, pair, white)
        self._print(started_line(number, total, white, black))

    def finished(self, game: int, pair: int, record: GameRecord) -> None:
        ending = ending_of(
            ended(record.white, record.black, record.termination, record.details, record.fault)
        )
        number = self.numbers.pop(game, 0)
        self._print(finished_line(number, record.white, record.black, record.result, ending))
        self._count(pair, record.white, record.result)
        every = self.config.tournament.rating_interval
        if every and self.count % every == 0:
            self.block()

    def block(self) -> None:
        """The result block of a two-engine event (nothing for a larger field)."""
        if self.pair is None or self.shown == self.count:
            return
        self.shown = self.count
        score = Score(self.pair[0], self.pair[1], tuple(self.games))
        sprt = self._sprt(score)
        if self.form == "fastchess":
            self._print(*fastchess_block(score, str(self.config.tournament.tc), sprt))
        else:
            self._print(*cutechess_block(score, sprt))

    def _sprt(self, score: Score) -> SprtState | None:
        section = self.config.tournament
        if section.system not in ("match", "gauntlet"):
            return None
        options = lookup(section.system).parse(section.system_options)
        test = getattr(options, "sprt", None)
        if test is None:
            return None
        state: SprtState = test.state(penta=_penta(score))
        return state

    def done(self) -> None:
        """The event is over: the last block, and `Finished match`."""
        self.block()
        self._print("Finished match")


def _penta(score: Score) -> tuple[int, int, int, int, int]:
    return penta_counts(a + b for a, b in score.pairs())
