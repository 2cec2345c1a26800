"""Integration: the Debian engines (installed by ./tasks.sh) play real games through the runner.

These must run in CI: a missing engine is a failure, not a skip.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config.model import EngineConfig
from orchestrator.core.game.adjudication import Adjudication, DrawRule, WinRule
from orchestrator.core.game.clock import TimeControl
from orchestrator.core.game.openings import Opening
from orchestrator.game.game import GameSpec, play_game
from orchestrator.game.pgn import to_pgn
from tests.support.paths import ROOT
from tests.support.processes import descendants

UCI = {
    "Stockfish": "/usr/games/stockfish",
    "Ethereal": "/usr/games/ethereal-chess",
    "Toga II": "/usr/games/toga2",
    "Glaurung": "/usr/games/glaurung",
    "Fairy-Stockfish": "/usr/games/fairy-stockfish",
}
XBOARD = {
    "Phalanx": "/usr/games/phalanx",
    "Sjeng": "/usr/games/sjeng",
    "HoiChess": "/usr/games/hoichess",
}
PAIRS = [
    ("Stockfish", "Ethereal"),
    ("Toga II", "Glaurung"),
    ("Fairy-Stockfish", "Phalanx"),
    ("Sjeng", "HoiChess"),
    ("Phalanx", "Stockfish"),
]


def engine(name: str) -> EngineConfig:
    command = UCI.get(name) or XBOARD[name]
    assert shutil.which(command), f"{command} is not installed (./tasks.sh installs it)"
    protocol = "uci" if name in UCI else "xboard"
    return EngineConfig(name=name, command=(command,), protocol=protocol)


@pytest.mark.parametrize(("white", "black"), PAIRS)
async def test_real_engines_play_a_short_game(white: str, black: str) -> None:
    """Every engine plays a correct game through the runner.  The margin is wide on purpose:
    on a loaded machine an engine's own time management may overstep a bullet clock, and
    flag rates are the business of bench/runner.py, not of this test."""
    rules = Adjudication(win=WinRule(), draw=DrawRule(from_move=15), max_moves=25)
    spec = GameSpec(
        engine(white),
        engine(black),
        TimeControl.parse("2+0.05"),
        adjudication=rules,
        timemargin_ms=2000,
    )
    record = await play_game(spec)
    if record.fault is not None:  # an engine's own time management may fail under load,
        fault = record.fault  # but a loss on time must be a true one
        assert fault.kind == "time_forfeit", fault
        took, left = (int(word) for word in re.findall(r"-?\d+", fault.detail)[:2])
        assert took - left > spec.timemargin_ms
    assert record.plies >= 2
    board = chess.Board()
    for move in record.moves:
        board.push_uci(move.uci)  # every move legal
    scored = [m for m in record.moves if m.score is not None]
    if white in UCI and black in UCI:
        assert len(scored) == record.plies
    game = chess.pgn.read_game(io.StringIO(to_pgn(record, event="Integration")))
    assert game is not None and game.headers["Result"] == record.result
    assert game.end().board() == board
    assert not descendants()


async def test_stockfish_and_ethereal_ponder_without_losing_on_time() -> None:
    """`ponder = true` at 2+0.05: both engines think on the other's time (each on a core of
    its own, so no other game runs beside them), the PGN carries TCEC's `pd` and `ph`, and
    no clock is charged with pondering.  The margin covers a CI machine's other load."""
    rules = Adjudication(win=WinRule(), draw=DrawRule(from_move=30), max_moves=40)
    hits = 0
    for white, black in (("Stockfish", "Ethereal"), ("Ethereal", "Stockfish")):
        spec = GameSpec(
            engine(white),
            engine(black),
            TimeControl.parse("2+0.05"),
            adjudication=rules,
            timemargin_ms=1000,
            ponder=True,
        )
        record = await play_game(spec)
        assert record.fault is None, record.fault
        assert record.plies >= 20
        assert all(m.clock_ms is not None and m.clock_ms >= 0 for m in record.moves)
        named = [m for m in record.moves if m.ponder]
        assert len(named) >= record.plies - 2, "both engines name their ponder moves"
        pgn = to_pgn(record, event="Ponder", comments="tcec", rules=rules)
        assert len(re.findall(r"\bpd=\S", pgn)) >= record.plies - 2
        rates = [float(rate) for rate in re.findall(r"\bph=(\d+\.\d)", pgn)]
        assert len(rates) == record.plies
        hits += sum(
            record.moves[i + 1].uci == m.ponder for i, m in enumerate(record.moves[:-1]) if m.ponder
        )
        assert max(rates) > 0 or not hits
    assert hits > 0, "in two games, some ponder move was played"
    assert not descendants()


FAIRYMAX = EngineConfig(name="Fairy-Max", command=("/usr/games/fairymax",), protocol="xboard")


async def test_fairymax_plays_without_setboard_except_from_a_fen() -> None:
    """Debian's Fairy-Max declares setboard=0: it plays every game from the standard
    position (book moves included), and only a game from a FEN is a startup fault."""
    assert shutil.which("/usr/games/fairymax")
    rules = Adjudication(win=WinRule(), draw=DrawRule(from_move=15), max_moves=20)
    for white, black in ((FAIRYMAX, engine("Phalanx")), (engine("Phalanx"), FAIRYMAX)):
        spec = GameSpec(
            white,
            black,
            TimeControl.parse("2+0.05"),
            Opening.from_san("e4 e5 Nf3"),
            rules,
            timemargin_ms=2000,
        )
        record = await play_game(spec)
        assert record.fault is None, record.fault
        assert record.plies > 10
    kpk = Opening("KPK", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    spec = GameSpec(FAIRYMAX, engine("Phalanx"), TimeControl.parse("2+0.05"), kpk, rules)
    record = await play_game(spec)
    assert record.fault is not None and record.fault.kind == "startup"
    assert "setboard" in record.fault.detail and record.plies == 0
    assert not descendants()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


SHORT_EVENT = """
[tournament]
name = "Short"
[adjudication]
max_moves = 12
[[engine]]
name = "Stockfish"
command = "/usr/games/stockfish"
options = { Hash = 16 }
[[engine]]
name = "Sjeng"
command = "/usr/games/sjeng"
protocol = "xboard"
[[engine]]
name = "Toga II"
command = "/usr/games/toga2"
[[engine]]
name = "Glaurung"
command = "/usr/games/glaurung"
"""


def test_play_command_prints_a_pgn(tmp_path: Path) -> None:
    config = tmp_path / "short.toml"
    config.write_text(SHORT_EVENT)
    out = run(
        "play",
        str(config),
        "--white",
        "Stockfish",
        "--black",
        "Sjeng",
        "--tc",
        "2+0.02",
        "--moves",
        "e4 e5 Nf3",
    )
    assert out.returncode == 0, out.stderr
    game = chess.pgn.read_game(io.StringIO(out.stdout))
    assert game is not None
    assert game.headers["White"] == "Stockfish" and game.headers["TimeControl"] == "2+0.02"
    assert game.headers["Event"] == "Short"
    assert [m.uci() for m in game.mainline_moves()][:3] == ["e2e4", "e7e5", "g1f3"]
    target = tmp_path / "game.pgn"
    out = run(
        "play",
        str(config),
        "--white",
        "Toga II",
        "--black",
        "Glaurung",
        "--tc",
        "st=0.05",
        "--fen",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        "-o",
        str(target),
    )
    assert out.returncode == 0, out.stderr
    assert '[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]' in target.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--white", "Nobody", "--black", "Sjeng"], "no engine named 'Nobody'"),
        (["--white", "Stockfish", "--black", "Sjeng", "--tc", "fast"], "bad time control"),
        (
            ["--white", "Stockfish", "--black", "Sjeng", "--moves", "e4 e4"],
            "illegal or unknown move",
        ),
    ],
)
def test_play_usage_errors(args: list[str], message: str) -> None:
    out = run("play", "engines.toml", *args)
    assert out.returncode == 2 and message in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_play_reports_an_unknown_option_before_play(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        '[[engine]]\nname = "SF"\ncommand = "/usr/games/stockfish"\noptions = { Hsh = 16 }\n'
        '[[engine]]\nname = "Toga"\ncommand = "/usr/games/toga2"\n'
    )
    out = run("play", str(config), "--white", "SF", "--black", "Toga")
    assert out.returncode == 2 and out.stdout == ""
    assert f"{config}: [[engine]] \"SF\": the engine has no option 'Hsh'" in out.stderr


FAIRYMAX_EVENT = """
[tournament]
name = "Fairy"
tc = "3+0.05"
timemargin = 2000
rounds = 1
openings = "{openings}"
database = "{db}"
pgn_dir = "{pgn}"
[adjudication]
max_moves = 20
[[engine]]
name = "Fairy-Max"
command = "/usr/games/fairymax"
protocol = "xboard"
[[engine]]
name = "Phalanx"
command = "/usr/games/phalanx"
protocol = "xboard"
"""


def test_fairymax_plays_through_play_and_the_daemon(tmp_path: Path) -> None:
    suite = tmp_path / "book.pgn"
    suite.write_text('[Event "a"]\n\n1. d4 d5 *\n')
    config = tmp_path / "fairy.toml"
    config.write_text(
        FAIRYMAX_EVENT.format(openings=suite, db=tmp_path / "t.sqlite", pgn=tmp_path / "pgn")
    )
    out = run("play", str(config), "--white", "Fairy-Max", "--black", "Phalanx")
    assert out.returncode == 0, out.stderr
    game = chess.pgn.read_game(io.StringIO(out.stdout))
    assert game is not None and game.headers["Termination"] != "abandoned", out.stdout
    out = run("run", str(config))
    assert out.returncode == 0, out.stderr
    out = run("pairings", "--config", str(config), "--json")
    games = json.loads(out.stdout)["games"]
    assert len(games) == 2 and all(g["result"] for g in games)
    assert all(g["termination"] != "abandoned" for g in games), games
    # from a FEN it cannot play: check names the engine in one line, exit 2
    suite.write_text('4k3/8/8/8/8/8/4P3/4K3 w - - id "KPK";\n')
    config.write_text(config.read_text().replace("book.pgn", "book.epd"))
    suite.rename(tmp_path / "book.epd")
    out = run("check", str(config))
    assert out.returncode == 2, out.stdout
    assert out.stderr.strip().count("\n") == 0
    assert '[[engine]] "Fairy-Max": this XBoard engine has no setboard' in out.stderr
    assert "KPK" in out.stderr


def test_check_starts_a_large_field_a_few_at_a_time(tmp_path: Path) -> None:
    """`check` of 200 engines under a limit of 256 descriptors: they are started a few at a
    time, so none fails for this machine's limits, and the output is one line."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    engines = "".join(
        f'[[engine]]\nname = "F{i:03d}"\ncommand = "/usr/games/fairymax"\nprotocol = "xboard"\n'
        for i in range(200)
    )
    config = tmp_path / "field.toml"
    config.write_text(
        '[tournament]\nname = "Field"\ntc = "10+0.1"\ndatabase = "e.sqlite"\n' + engines
    )
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "check", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=limit,
    )
    assert (out.returncode, out.stderr) == (0, ""), out.stderr[-2000:]
    assert out.stdout == f"{config}: ok: 200 engines started and configured\n"


def test_a_limit_of_the_machine_in_check_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.engines import adapter

    async def no_descriptors(cls: object, config: EngineConfig) -> object:
        raise adapter.DaemonFault(f"cannot start {config.name}: Too many open files")

    monkeypatch.setattr(adapter.Engine, "start", classmethod(no_descriptors))
    config = tmp_path / "one.toml"
    config.write_text(
        '[tournament]\nname = "One"\ntc = "10+0.1"\ndatabase = "e.sqlite"\n'
        '[[engine]]\nname = "F"\ncommand = "/usr/games/fairymax"\nprotocol = "xboard"\n'
        '[[engine]]\nname = "G"\ncommand = "/usr/games/fairymax"\nprotocol = "xboard"\n'
    )
    result = CliRunner().invoke(app, ["check", str(config)])
    assert result.exit_code == 1
    assert result.stderr == (
        "orchestrator: error: cannot start F: Too many open files "
        "(a limit of this machine, not a fault of the engine)\n"
    )
