"""Opening suites: EPD and PGN parsing, errors, and the seeded choice."""

from __future__ import annotations

import pytest

from orchestrator.core.game.openings import Opening, OpeningError, choose, parse_pgn, parse_suite

EPD = """
# two positions
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id "King pawn";
r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - c0 "Two knights";
"""

PGN = """[Event "Sicilian"]
[Opening "Najdorf"]

1. e4 c5 2. Nf3 d6 *

[Event "From a position"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]
[SetUp "1"]

1. e4 Kd7 *
"""


def test_epd() -> None:
    suite = parse_suite(EPD, "book.epd")
    assert [o.name for o in suite] == ["King pawn", "Two knights"]
    assert suite[0].fen and suite[0].fen.split()[1] == "b" and suite[0].moves == ()


def test_pgn() -> None:
    suite = parse_suite(PGN, "book.pgn")
    assert suite[0] == Opening("Najdorf", None, ("e2e4", "c7c5", "g1f3", "d7d6"))
    assert suite[1].fen == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1" and suite[1].moves == ("e2e4", "e8d7")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("not a position\n", "x.epd", "x.epd: line 1: not a valid EPD"),
        ("8/8/8/8/8/8/8/8 w - -\n", "x.epd", "x.epd: line 1: an illegal position"),
        ("", "x.epd", "no positions"),
        ("1. e4 e4 *\n", "x.pgn", "x.pgn: game 1"),
        ("", "x.pgn", "no games"),
    ],
)
def test_errors_say_where(text: str, where: str, message: str) -> None:
    with pytest.raises(OpeningError, match=message):
        parse_suite(text, where)


def test_from_san() -> None:
    assert Opening.from_san("1. e4 e5 2. Nf3").moves == ("e2e4", "e7e5", "g1f3")
    with pytest.raises(OpeningError, match="Nf6"):
        Opening.from_san("e4 Nf6 Nf6")


def test_choice_is_seeded_and_covers_the_suite() -> None:
    suite = parse_pgn("\n\n".join(f'[Event "o{i}"]\n\n1. e4 *' for i in range(7)))
    first = [choose(suite, i, rng_seed=5).name for i in range(7)]
    assert sorted(first) == sorted(o.name for o in suite)  # each once per cycle
    assert first == [choose(suite, i, rng_seed=5).name for i in range(7)]
    assert first != [choose(suite, i, rng_seed=6).name for i in range(7)]
    assert [choose(suite, i, 1, "sequential").name for i in range(8)][-2:] == ["o6", "o0"]
