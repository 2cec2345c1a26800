"""SVG pictures, as pure functions of plain data: a game's evaluation graph, the score
progress of every engine by round, and a position as python-chess draws it.  Every text is
escaped."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from html import escape

import chess
import chess.svg

from orchestrator.core.game.variants import new_board
from orchestrator.event.api import GameJSON, MoveJSON, Side

WIDTH, HEIGHT, PAD = 640, 240, 30
COLOURS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def _pawns(move: MoveJSON) -> float | None:
    """A move's score from white's side, in pawns, clipped to +-10."""
    mate, cp = move.get("score_mate"), move.get("score_cp")
    if mate is not None:
        value = 10.0 if mate > 0 else -10.0
    elif cp is not None:
        value = max(-10.0, min(10.0, cp / 100))
    else:
        return None
    return value if move["side"] == "white" else -value


def eval_graph(game: GameJSON) -> str:
    """Both engines' scores (white's view) by ply."""
    moves = [m for m in game["moves"] if not m["book"]]
    last_ply = max((m["ply"] for m in moves), default=1)
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def x(ply: int) -> float:
        return PAD + inner_w * ply / max(last_ply, 1)

    def y(pawns: float) -> float:
        return PAD + inner_h * (10 - pawns) / 20

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img">',
        f"<title>{escape(game['white'])} - {escape(game['black'])}: evaluation</title>",
        f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" fill="#fafafa" '
        'stroke="#ccc"/>',
        f'<line x1="{PAD}" y1="{y(0)}" x2="{WIDTH - PAD}" y2="{y(0)}" stroke="#999"/>',
    ]
    sides: tuple[tuple[Side, str], ...] = (("white", "#1f77b4"), ("black", "#d62728"))
    for side, colour in sides:
        points = [
            f"{x(m['ply']):.1f},{y(p):.1f}"
            for m in moves
            if m["side"] == side and (p := _pawns(m)) is not None
        ]
        if points:
            parts.append(
                f'<polyline class="eval-{side}" fill="none" stroke="{colour}" stroke-width="2" '
                f'points="{" ".join(points)}"/>'
            )
        name = escape(game["white"] if side == "white" else game["black"])
        parts.append(
            f'<text x="{PAD + (0 if side == "white" else inner_w / 2)}" y="{PAD - 8}" '
            f'fill="{colour}" font-size="12">{name} ({side})</text>'
        )
    parts.append(f'<text x="4" y="{y(10) + 4}" font-size="10">+10</text>')
    parts.append(f'<text x="4" y="{y(-10) + 4}" font-size="10">-10</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def progress_chart(names: Sequence[str], scores: dict[str, list[float]]) -> str:
    """Each engine's cumulative score after each round."""
    rounds = max((len(v) for v in scores.values()), default=0)
    top = max((v[-1] for v in scores.values() if v), default=1.0) or 1.0
    inner_w, inner_h = WIDTH - 2 * PAD - 140, HEIGHT - 2 * PAD

    def x(r: int) -> float:
        return PAD + inner_w * r / max(rounds, 1)

    def y(score: float) -> float:
        return PAD + inner_h * (1 - score / top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img"><title>Score by round</title>',
        f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" fill="#fafafa" '
        'stroke="#ccc"/>',
    ]
    for i, name in enumerate(names):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join(
            f"{x(r):.1f},{y(s):.1f}" for r, s in enumerate([0.0, *scores.get(name, [])])
        )
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>'
        )
        parts.append(
            f'<text x="{PAD + inner_w + 8}" y="{PAD + 12 + 14 * i}" fill="{colour}" '
            f'font-size="11">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


#: a move in UCI, the only form a board picture takes (a crazyhouse drop: "N@f3")
_UCI = re.compile(r"^([a-h][1-8]|[PNBRQ]@)[a-h][1-8][qrbnk]?$")


@functools.lru_cache(maxsize=4096)
def board(
    fen: str, last: str = "", arrow: str = "", chess960: bool = False, rules: str = "chess"
) -> str:
    """A position as python-chess draws it: the board, the `last` move marked, and the
    `arrow` of the move expected next.  Every viewer of a position asks for the same picture,
    so it is drawn once.  A `ValueError` for a position or move that is not one.  A
    variant's position (`rules`) is read by its rules: a crazyhouse FEN has its pockets.

    >>> svg = board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "e2e4", "e7e5")
    >>> svg.startswith("<svg"), 'class="arrow"' in svg, "lastmove" in svg
    (True, True, True)
    >>> board("not a position")
    Traceback (most recent call last):
    ...
    ValueError: expected 'w' or 'b' for turn part of fen: 'not a position'
    >>> zh = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1"
    >>> board(zh, "N@f3", rules="crazyhouse")[:4]
    '<svg'
    """
    position = new_board(fen, chess960, rules)
    moves = []
    for text in (last, arrow):
        if text and not _UCI.match(text):
            raise ValueError(f"not a move: {text!r}")
        moves.append(chess.Move.from_uci(text) if text else None)
    lastmove, expected = moves
    arrows = [chess.svg.Arrow(expected.from_square, expected.to_square)] if expected else []
    return chess.svg.board(position, size=360, lastmove=lastmove, arrows=arrows)
