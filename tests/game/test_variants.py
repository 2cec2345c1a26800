"""Chess variants: python-chess's seven variants of the rules played through `orchestrator
run` (Fairy-Stockfish where Debian's build has the variant, scripted UCI and XBoard engines
for atomic), the variant told to each engine before its first search, the PGN that re-reads
with python-chess to its recorded result, and an engine that does not declare the variant
refused in one line."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import sqlite3
import sys
from pathlib import Path

import chess
import chess.pgn
import chess.variant
import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.game.endings import Ended, ending_of
from orchestrator.core.game.openings import OpeningError, parse_suite
from orchestrator.core.game.variants import RULES, new_board, variant_name
from orchestrator.event.api import GameJSON
from orchestrator.event.read import game_json, view_of
from orchestrator.game.game import rules_outcome
from orchestrator.store.database import Store
from orchestrator.web import charts
from tests.support.daemon import run_daemon
from tests.support.paths import SCRIPTED

FAIRY = "/usr/games/fairy-stockfish"
#: the seven variants, with python-chess's names as a config may give them
SEVEN = {
    "atomic": "Atomic",
    "crazyhouse": "crazyhouse",
    "3check": "Three-check",
    "kingofthehill": "KOTH",
    "antichess": "antichess",
    "horde": "Horde",
    "racingkings": "Racing Kings",
}


@pytest.mark.parametrize(("name", "stored"), [*((v, k) for k, v in SEVEN.items())])
def test_python_chess_s_names_and_aliases(name: str, stored: str) -> None:
    assert variant_name(name) == stored
    assert stored in RULES


@pytest.mark.parametrize("name", ["shogi", "xiangqi", "", "chess 960"])
def test_a_name_that_is_not_a_variant_lists_the_variants(name: str) -> None:
    with pytest.raises(ValueError, match="is not a variant; the variants are standard, chess960"):
        variant_name(name)


def test_openings_are_read_by_the_variant_s_rules() -> None:
    """A three-check EPD keeps its check counts; a crazyhouse PGN line drops a piece; a
    racing-kings position with a king in check is refused, naming the line."""
    [three] = parse_suite(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 1+2", "t.epd", "3check"
    )
    assert three.rules == "3check" and three.board().remaining_checks == [2, 1]  # type: ignore[attr-defined]
    [house] = parse_suite("1. e4 d5 2. exd5 Qxd5 3. P@e6 *", "zh.pgn", "crazyhouse")
    assert house.moves[-1] == "P@e6" and house.rules == "crazyhouse"
    assert house.after_book().fen().startswith("rnb1kbnr/ppp1pppp/4P3/3q4/")
    with pytest.raises(OpeningError, match=r"r\.epd: line 2: an illegal position"):
        parse_suite(
            "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - -\n8/8/8/8/8/8/k6R/7K w - -", "r.epd", "racingkings"
        )


@pytest.mark.parametrize(
    ("rules", "fen", "uci", "details"),
    [
        (
            "3check",
            "4k3/8/8/8/8/8/8/4KQ2 w - - 1+3 0 1",
            "f1f7",
            "White wins by the rules of Three-check",
        ),
        (
            "kingofthehill",
            "4k3/8/8/8/8/4K3/8/8 w - - 0 1",
            "e3d4",
            "White wins by the rules of King of the Hill",
        ),
        (
            "racingkings",
            "8/1K6/8/8/8/8/k7/8 w - - 0 1",
            "b7b8",
            "White wins by the rules of Racing Kings",
        ),
        ("atomic", "4k3/4q3/8/8/8/8/8/3QK3 w - - 0 1", "d1d8", None),
        ("atomic", "4k3/3q4/8/8/8/8/8/3QK3 w - - 0 1", "d1d7", "White wins by the rules of Atomic"),
        ("antichess", "8/8/8/8/8/8/1p6/1R6 b - - 0 1", "b2b1q", None),
        ("antichess", "8/8/8/8/8/8/1p6/R7 w - - 0 1", "a1a2", None),
        ("antichess", "8/8/8/8/8/8/pR6/8 b - - 0 1", "a2b1q", None),
        ("horde", "8/8/8/8/8/8/1q6/P7 b - - 0 1", "b2a1", "Black wins by the rules of Horde"),
    ],
)
def test_a_variant_game_ends_by_its_own_rules(
    rules: str, fen: str, uci: str, details: str | None
) -> None:
    """The runner's end of a game is python-chess's by the variant's rules."""
    board = new_board(fen, rules=rules)
    san = board.san_and_push(chess.Move.from_uci(uci))
    verdict = rules_outcome(board, san)
    outcome = board.outcome()
    assert (verdict is None) == (outcome is None)
    if verdict is not None and outcome is not None:
        assert verdict.result == outcome.result()
        if details is not None:
            assert verdict.details == details
            assert ending_of(Ended("A", "B", "normal", details)) == "variant"  # its own tally


def test_a_crazyhouse_position_and_drop_are_drawn() -> None:
    svg = charts.board(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[N] w KQkq - 0 1",
        "N@f3",
        "",
        False,
        "crazyhouse",
    )
    assert svg.startswith("<svg") and "lastmove" in svg


def variant_config(
    folder: Path, variant: str, engines: dict[str, list[str]], extra: str = ""
) -> Path:
    blocks = "".join(
        f'\n[[engine]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'
        + ('protocol = "xboard"\n' if "xboard" in command else "")
        + ('tc = "inf"\nnodes = 2000\n' if command == [FAIRY] else "")
        for name, command in engines.items()
    )
    config = folder / "v.toml"
    config.write_text(
        f"""[tournament]
name = "Variant"
variant = "{variant}"
format = "double"
rounds = 1
tc = "5+0.1"
random_seed = 3
database = "v.sqlite"
pgn_dir = "pgn"
live_dir = "live"
{extra}
[adjudication]
win = false
draw = false
max_moves = 100
{blocks}"""
    )
    return config


def scripted(name: str, protocol: str, log: Path) -> list[str]:
    return [
        sys.executable, str(SCRIPTED), "--protocol", protocol, "--name", name,
        "--variants", "atomic", "--seed", str(len(name)), "--log", str(log),
    ]  # fmt: skip


async def game_state(db: Path) -> GameJSON:
    """The state JSON of the event's first game (`/api/games/ID`)."""
    store = await Store.open(db, readonly=True)
    try:
        view = await view_of(store)
        return await game_json(view, store, view.rounds[0].games[0])
    finally:
        await store.close()


def told_before_search(lines: list[str], told: str, search: str) -> bool:
    """Whether `told` comes in `lines` before the first `search`."""
    first = next(i for i, line in enumerate(lines) if line.startswith(search))
    return any(line == told for line in lines[:first])


@pytest.mark.parametrize("stored", list(SEVEN))
def test_each_variant_plays_an_event(stored: str, tmp_path: Path) -> None:
    """Two engines play a game each way; every game re-read from the PGN with python-chess
    (by its Variant tag) replays legally to the database's result, and to the end the
    variant's rules give where it ended by them (one game at least does: only `max_moves`
    adjudicates); each engine was told the variant before its
    first search; TCEC's live PGN and our state JSON name it."""
    if stored == "atomic":  # Debian's Fairy-Stockfish 11.1 has no atomic
        engines = {
            "UCI": scripted("UCI", "uci", tmp_path / "uci.log"),
            "XBoard": scripted("XBoard", "xboard", tmp_path / "xboard.log"),
        }
    else:
        engines = {"Fairy A": [FAIRY], "Fairy B": [FAIRY]}  # 2,000 nodes a move
    config = variant_config(tmp_path, SEVEN[stored], engines)
    out = run_daemon(config, timeout=240)
    assert out.returncode == 0, out.stderr + out.stdout[-2000:]
    with sqlite3.connect(tmp_path / "v.sqlite") as conn:
        rows = conn.execute("SELECT id, result, termination, opening, pgn FROM games").fetchall()
    assert len(rows) == 2
    board_type, endings = RULES[stored], []
    for game_id, result, termination, opening, pgn in rows:
        assert json.loads(opening)["rules"] == stored
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None and not game.errors, pgn
        assert game.headers["Variant"] == board_type.aliases[0]
        assert game.headers["Result"] == result
        board = game.board()
        assert type(board) is board_type
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)
        endings.append(termination)
        if termination == "normal":
            verdict = rules_outcome(board)
            assert verdict is not None and verdict.result == result, (board.fen(), result)
        else:
            assert termination == "adjudication" and rules_outcome(board) is None
        with gzip.open(
            tmp_path / "v.sqlite.logs" / f"game-{game_id}.attempt-{game_id}.log.gz", "rt"
        ) as f:
            log = f.read().splitlines()
        if stored != "atomic":
            for name in engines:
                sent = [line.partition(f">{name}: ")[2] for line in log if f">{name}: " in line]
                assert told_before_search(sent, f"setoption name UCI_Variant value {stored}", "go")
    assert "normal" in endings  # a game the rules ended (no score adjudication is on)
    if stored == "atomic":
        uci = (tmp_path / "uci.log").read_text().splitlines()
        assert told_before_search(uci, "setoption name UCI_Variant value atomic", "go")
        xboard = (tmp_path / "xboard.log").read_text().splitlines()
        assert told_before_search(xboard, "variant atomic", "go")
        assert told_before_search(xboard, "variant atomic", "usermove")
    live = json.loads((tmp_path / "live" / "live.json").read_text())
    assert live["Headers"]["Variant"] == board_type.aliases[0]
    assert asyncio.run(game_state(tmp_path / "v.sqlite"))["variant"] == stored
    db = str(tmp_path / "v.sqlite")
    status = CliRunner().invoke(app, ["status", "--db", db, "--json"])
    assert json.loads(status.stdout)["variant"] == stored
    assert f"Variant ({stored}): finished" in CliRunner().invoke(app, ["status", "--db", db]).stdout
    epd = CliRunner().invoke(app, ["export", "--epd", "--db", str(tmp_path / "v.sqlite")])
    assert epd.exit_code == 0, epd.output
    for line in epd.stdout.splitlines():
        board_type.from_epd(line)  # each final position reads back by the variant's rules


def test_an_engine_without_the_variant_is_refused(tmp_path: Path) -> None:
    """Stockfish has no UCI_Variant, Debian's Fairy-Stockfish no atomic: `check` names the
    engine and what it lacks in one line, exit 2, and no game starts."""
    cases = {
        "crazyhouse": ("Stockfish", "/usr/games/stockfish", "no UCI_Variant option"),
        "atomic": ("Fairy", FAIRY, "no atomic among its UCI_Variant values"),
    }
    for variant, (name, command, lacks) in cases.items():
        config = variant_config(tmp_path, variant, {name: [command], "Other": [command]})
        result = CliRunner().invoke(app, ["check", str(config)])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f'orchestrator: error: {config}: [[engine]] "{name}": the engine does not declare '
            f"{variant} ({lacks}), so it cannot play a {variant} event"
        )
        assert not (tmp_path / "v.sqlite").exists()
