"""The console output of fastchess and cutechess-cli, which engine-testing frameworks read
(fishtest's worker, `worker/games.py`; OpenBench's client, `Client/worker.py`).

- A line when each game starts, `Started game N of M (A vs B)`, and when it ends,
  `Finished game N (A vs B): 1-0 {White mates}`, in those runners' words for each ending
  (`loses on time`, `disconnects`, `'s connection stalls`, `makes an illegal move`, `wins by
  adjudication`): both frameworks count crashes, time losses and illegal moves from them.
- A result block of a two-engine event, from the first engine's side: fastchess's `Games:
  ..., Wins: ..., Losses: ..., Draws: ..., Points: ... (... %)` and `Ptnml(0-2): [...]`
  over the complete game pairs (fishtest requires the games to be twice the pairs), or
  cutechess's `Score of A vs B: W - L - D  [0.xxx] N` over every game; the Elo line, and the
  SPRT line of a test.

Pure functions over plain data; `daemon/console.py` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from orchestrator.core.game.endings import Ending
from orchestrator.core.stats.elo import penta_counts, pentanomial, trinomial
from orchestrator.core.stats.sprt import SprtState

__all__ = [
    "FORMS",
    "Form",
    "Score",
    "cutechess_block",
    "fastchess_block",
    "finished_line",
    "runner_words",
    "started_line",
    "unreadable",
]

Form = Literal["fastchess", "cutechess"]
FORMS: tuple[Form, ...] = get_args(Form)

RULE = "-" * 50


#: what the frameworks' readers find in a console line, so no engine's name may hold it: the
#: marks of its structure, "(A vs B): 1-0 {...}" and "Score of A vs B: ...", and the words
#: fishtest's worker counts in any line ("stall" and "disconnect" as crashes, "on time" and
#: "timeout" as time losses)
MARKS = ("(", ")", "{", "}", ":", " vs ", "stall", "disconnect", "on time", "timeout")


def unreadable(name: str) -> str | None:
    """What of `name` a console line cannot carry unambiguously (None: nothing).

    >>> unreadable("Stockfish 17"), unreadable("New (v1.0) vs Old"), unreadable("Installer")
    (None, '(', 'stall')
    """
    return next((mark for mark in MARKS if mark in name), None)


def started_line(number: int, total: int | None, white: str, black: str) -> str:
    """A game starts.

    >>> started_line(3, 100, "New", "Base")
    'Started game 3 of 100 (New vs Base)'
    """
    return f"Started game {number} of {total or number} ({white} vs {black})"


def runner_words(ending: Ending, result: str) -> str:
    """How fastchess and cutechess word an ending of `result`.

    >>> runner_words("mate", "0-1"), runner_words("stall", "1-0")
    ('Black mates', "Black's connection stalls")
    >>> runner_words("adjudicated_win", "1-0"), runner_words("tablebase", "1/2-1/2")
    ('White wins by adjudication', 'Draw by adjudication')
    """
    winner, loser = ("White", "Black") if result == "1-0" else ("Black", "White")
    draws = {
        "stalemate": "Draw by stalemate",
        "repetition": "Draw by 3-fold repetition",
        "fifty_moves": "Draw by fifty moves rule",
        "insufficient_material": "Draw by insufficient mating material",
    }
    if ending in draws:
        return draws[ending]
    if ending == "variant":
        who = "Draw" if result == "1/2-1/2" else f"{winner} wins"
        return f"{who} by variant rules"
    if result == "1/2-1/2":
        return "Draw by adjudication"
    words: dict[str, str] = {
        "mate": f"{winner} mates",
        "resign": f"{loser} resigns",
        "time_loss": f"{loser} loses on time",
        "stall": f"{loser}'s connection stalls",
        "illegal_move": f"{loser} makes an illegal move",
        "disconnect": f"{loser} disconnects",
        "forfeit": f"{loser} forfeits",
        "director": "User adjudication",
    }
    return words.get(ending, f"{winner} wins by adjudication")


def finished_line(number: int, white: str, black: str, result: str, ending: Ending) -> str:
    """A game ends.

    >>> finished_line(3, "New", "Base", "1-0", "time_loss")
    'Finished game 3 (New vs Base): 1-0 {Black loses on time}'
    """
    return (
        f"Finished game {number} ({white} vs {black}): {result} {{{runner_words(ending, result)}}}"
    )


@dataclass(frozen=True)
class Score:
    """A two-engine event's finished games from `first`'s side: each game's pair (the games
    that play one opening with colours reversed) and `first`'s points, in the order played."""

    first: str
    second: str
    games: tuple[tuple[int, float], ...]

    def pairs(self) -> list[tuple[float, float]]:
        """`first`'s points in the two games of each complete pair, in the order played.

        >>> Score("A", "B", ((1, 1.0), (2, 0.5), (1, 0.5))).pairs()
        [(1.0, 0.5)]
        """
        seen: dict[int, list[float]] = {}
        for pair, points in self.games:
            seen.setdefault(pair, []).append(points)
        return [(p[0], p[1]) for p in seen.values() if len(p) == 2]


def _wld(points: Sequence[float]) -> tuple[int, int, int]:
    return points.count(1.0), points.count(0.0), points.count(0.5)


def _figure(value: float | None, digits: int = 2, score: float = 1.0) -> str:
    """A figure, or where a score of 0 or 1 leaves it unbounded, `inf` of its sign."""
    if value is None:
        return "-inf" if score < 0.5 else "inf" if score > 0.5 else f"{0:.{digits}f}"
    return f"{value:.{digits}f}"


def _los(value: float | None, score: float) -> float:
    """LOS in %, also where the result has no spread (all wins, all draws, all losses)."""
    if value is not None:
        return 100 * value
    return 100.0 if score > 0.5 else 0.0 if score < 0.5 else 50.0


def fastchess_block(score: Score, tc: str, sprt: SprtState | None = None) -> list[str]:
    """fastchess's result block, over the complete game pairs.

    >>> print("\\n".join(fastchess_block(Score("A", "B", ((1, 1.0), (1, 0.5), (2, 0.0), (2, 0.5),
    ...     (3, 1.0))), "10+0.1")))
    --------------------------------------------------
    Results of A vs B (10+0.1):
    Elo: 0.00 +/- 296.58, nElo: 0.00 +/- 340.48
    LOS: 50.00 %, DrawRatio: 0.00 %, PairsRatio: 1.00
    Games: 4, Wins: 1, Losses: 1, Draws: 2, Points: 2.0 (50.00 %)
    Ptnml(0-2): [0, 1, 0, 1, 0], WL/DD Ratio: 0.00
    --------------------------------------------------
    """
    pairs = score.pairs()
    points = [p for pair in pairs for p in pair]
    wins, losses, draws = _wld(points)
    counts = penta_counts(a + b for a, b in pairs)
    estimate = pentanomial(counts)
    share = estimate["score"]
    games = len(points)
    total = wins + draws / 2
    percent = 100 * total / games if games else 0.0
    wl = sum(1 for a, b in pairs if {a, b} == {0.0, 1.0})
    dd = sum(1 for a, b in pairs if a == b == 0.5)
    ratio = wl / dd if dd else None if wl else 0.0  # None: WL pairs and no DD pair
    draw_ratio = 100 * counts[2] / len(pairs) if pairs else 0.0
    pairs_ratio = (counts[3] + counts[4]) / (counts[0] + counts[1]) if counts[0] + counts[1] else 0
    lines = [
        RULE,
        f"Results of {score.first} vs {score.second} ({tc}):",
        f"Elo: {_figure(estimate['elo'], score=share)} +/- {_figure(estimate['elo_error'])}, "
        f"nElo: {_figure(estimate['nelo'], score=share)} +/- "
        f"{_figure(estimate['nelo_error'])}",
        f"LOS: {_los(estimate['los'], share):.2f} %, "
        f"DrawRatio: {draw_ratio:.2f} %, PairsRatio: {pairs_ratio:.2f}",
        f"Games: {games}, Wins: {wins}, Losses: {losses}, Draws: {draws}, "
        f"Points: {total:.1f} ({percent:.2f} %)",
        f"Ptnml(0-2): [{', '.join(map(str, counts))}], WL/DD Ratio: {_figure(ratio)}",
    ]
    if sprt is not None:
        lines.append(f"LLR: {sprt.llr:.2f} ({sprt.lower:.2f}, {sprt.upper:.2f})")
    return [*lines, RULE]


def cutechess_block(score: Score, sprt: SprtState | None = None) -> list[str]:
    """cutechess-cli's result lines, over every finished game.

    >>> print("\\n".join(cutechess_block(Score("A", "B", ((1, 1.0), (1, 0.5), (2, 1.0))))))
    Score of A vs B: 2 - 0 - 1  [0.833] 3
    Elo difference: 279.6 +/- inf, LOS: 99.3 %, DrawRatio: 33.3 %
    """
    points = [p for _, p in score.games]
    wins, losses, draws = _wld(points)
    games = len(points)
    estimate = trinomial(wins, draws, losses)
    share = (wins + draws / 2) / games if games else 0.0
    lines = [
        f"Score of {score.first} vs {score.second}: {wins} - {losses} - {draws}  "
        f"[{share:.3f}] {games}",
        f"Elo difference: {_figure(estimate['elo'], 1, share)} +/- "
        f"{_figure(estimate['elo_error'], 1)}, LOS: {_los(estimate['los'], share):.1f} %, "
        f"DrawRatio: {100 * draws / games if games else 0.0:.1f} %",
    ]
    if sprt is not None:
        lines.append(f"SPRT: llr {sprt.llr:.2f}, lbound {sprt.lower:.2f}, ubound {sprt.upper:.2f}")
    return lines
