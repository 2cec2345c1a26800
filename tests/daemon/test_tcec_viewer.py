"""What TCEC's own viewer (TCEC-Chess/tcecgui at its master) reads from the live files, field
by field, checked against the files an event writes.

`VIEWER` is the list: each field with the file it is in, where in it, what the viewer needs
of it, and the tcecgui file and function that reads it.  An event with two kibitzers and an
opening book plays through `orchestrator run`; its live files are read while it plays (every
`live.json` and kibitzer file seen) and at its end, and every field of the list must be
present and well formed in every file it applies to.  A knockout (played in-process, with
the fake executor) gives the Cup's `Eventcrosstable.json`.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess

from tests.support.daemon import BOOK, event_config, run_daemon, run_in_process
from tests.support.engines import kibitzers_toml

#: tcecgui's TERMINATION_NORMALS (js/game.js): the endings its schedule does not mark red
TERMINATION_NORMALS = {
    "-",
    "",
    "3-fold repetition",
    "3-Fold repetition",
    "Black mates",
    "Black resigns",
    "Fifty moves rule",
    "in progress",
    "Manual adjudication",
    "Stalemate",
    "SyzygyTB",
    "TB position",
    "TCEC Adjudication",
    "TCEC draw rule",
    "TCEC win rule",
    "White mates",
    "White resigns",
}
RESULTS = {"1-0", "0-1", "1/2-1/2"}


def text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def integer_text(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"-?\d+", value) is not None


def number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def fen(value: Any) -> bool:
    try:
        chess.Board(value)
    except (TypeError, ValueError):
        return False
    return True


def square(value: Any) -> bool:
    return value in chess.SQUARE_NAMES


def evaluation(value: Any) -> bool:
    """An eval as the viewer's format_eval takes it: pawns, or M5 / -M5."""
    if isinstance(value, str):
        return re.fullmatch(r"-?(M\d+|\d+(\.\d+)?)", value) is not None
    return number(value)


def pv_ply(value: Any) -> bool:
    """A PV in SAN with move numbers, whose first number gives the ply (global.js
    split_move_string)."""
    return isinstance(value, str) and re.match(r"\d+\.(\.\.)? ?\S", value) is not None


def material(value: Any) -> bool:
    """`mb`, read two characters a piece kind (game.js update_materials)."""
    return isinstance(value, str) and re.fullmatch(r"([+-]\d){5}", value) is not None


@dataclass(frozen=True)
class Field:
    file: str
    path: str  # dots; `[]` every item of a list, `{}` every value of an object
    check: Callable[[Any], bool]
    viewer: str  # the tcecgui file and function that reads it
    optional: bool = False  # may be absent (the viewer has a fallback); checked when present


VIEWER: list[Field] = [
    # the live game: js/game.js update_pgn, update_overview_basic, update_overview_moves
    Field("live.json", "Headers.White", text, "js/game.js update_pgn"),
    Field("live.json", "Headers.Black", text, "js/game.js update_pgn"),
    Field("live.json", "Headers.Event", text, "js/game.js update_pgn, update_overview_basic"),
    Field("live.json", "Headers.Round", text, "js/game.js update_pgn (a new game: Round)"),
    Field("live.json", "Headers.TimeControl", text, "js/game.js update_overview_basic"),
    Field("live.json", "Headers.ECO", text, "js/game.js update_overview_basic"),
    Field("live.json", "Headers.Opening", text, "js/game.js update_overview_basic"),
    Field("live.json", "Headers.WhiteElo", integer_text, "js/game.js update_overview_basic"),
    Field("live.json", "Headers.BlackElo", integer_text, "js/game.js update_overview_basic"),
    Field("live.json", "Moves[].m", text, "js/board.js add_moves (via update_pgn)"),
    Field("live.json", "Moves[].from", square, "js/board.js add_moves"),
    Field("live.json", "Moves[].to", square, "js/board.js add_moves"),
    Field("live.json", "Moves[].fen", fen, "js/board.js add_moves; game.js update_overview_result"),
    Field(
        "live.json", "Moves[].book", lambda v: isinstance(v, bool), "js/game.js update_move_info"
    ),
    # an engine move's fields: js/game.js update_move_info, check_adjudication,
    # update_materials
    Field("live.json", "Moves[-].d", integer_text, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].sd", integer_text, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].wv", evaluation, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].n", integer_text, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].s", integer_text, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].tb", integer_text, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].tl", integer_text, "js/game.js update_move_info (clock)"),
    Field("live.json", "Moves[-].mt", integer_text, "js/game.js update_move_info (clock)"),
    Field("live.json", "Moves[-].pv.Moves[].m", text, "js/game.js update_move_info (PV board)"),
    Field("live.json", "Moves[-].pv.Moves[].fen", fen, "js/game.js update_move_info"),
    Field("live.json", "Moves[-].R50", integer_text, "js/game.js check_adjudication"),
    Field("live.json", "Moves[-].Rd", integer_text, "js/game.js check_adjudication"),
    Field("live.json", "Moves[-].Rr", integer_text, "js/game.js check_adjudication"),
    Field("live.json", "Moves[-].mb", material, "js/game.js update_materials"),
    Field(
        "live.json",
        "WhiteEngineOptions[].Name",
        text,
        "js/game.js update_options",
    ),
    Field("live.json", "WhiteEngineOptions[].Value", lambda v: v is not None, "update_options"),
    Field("live.json", "BlackEngineOptions[].Name", text, "js/game.js update_options"),
    # the game's end: js/game.js update_overview_moves (TerminationDetails stops the clock)
    Field("end.json", "Headers.Result", lambda v: v in RESULTS, "update_overview_moves"),
    Field("end.json", "Headers.Termination", text, "js/game.js update_overview_moves"),
    Field(
        "end.json",
        "Headers.TerminationDetails",
        lambda v: v in TERMINATION_NORMALS,
        "js/game.js update_overview_moves, update_overview_result",
    ),
    # standings and crosstable: js/game.js analyse_crosstable
    Field("crosstable.json", "Event", text, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Order[]", text, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Abbreviation", text, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Rank", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Score", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Rating", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Games", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.WinsAsWhite", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.WinsAsBlack", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.LossAsWhite", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.LossAsBlack", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.GamesAsWhite", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.GamesAsBlack", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.Neustadtl", number, "js/game.js analyse_crosstable (SB)"),
    Field("crosstable.json", "Table{}.Strikes", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.RMobilityScore", number, "analyse_crosstable"),
    Field("crosstable.json", "Table{}.Results{}.H2h", number, "js/game.js analyse_crosstable"),
    Field("crosstable.json", "Table{}.Results{}.Scores[].Game", number, "analyse_crosstable"),
    Field(
        "crosstable.json",
        "Table{}.Results{}.Scores[].Result",
        lambda v: v in (0, 0.5, 1),
        "js/game.js analyse_crosstable",
    ),
    Field(
        "crosstable.json",
        "Table{}.Results{}.Scores[].Winner",
        lambda v: v in ("White", "Black", "None"),
        "js/game.js analyse_crosstable",
    ),
    # the schedule: js/game.js update_table('sched'): keys through engine.js
    # create_field_value (WhiteEv -> white_ev), terminations against TERMINATION_NORMALS
    Field("schedule.json", "[].Game", number, "js/game.js update_table (sched)"),
    Field("schedule.json", "[].White", text, "js/game.js update_table (sched)"),
    Field("schedule.json", "[].Black", text, "js/game.js update_table (sched)"),
    Field("schedule.json", "[].Result", lambda v: v in RESULTS, "update_table (sched)"),
    Field(
        "schedule.json",
        "[].Termination",
        lambda v: v in TERMINATION_NORMALS,
        "js/game.js update_table (sched: not red)",
    ),
    Field("schedule.json", "[].Moves", number, "js/game.js update_table, calculate_event_stats"),
    Field("schedule.json", "[].Duration", text, "js/game.js update_table, calculate_estimates"),
    Field("schedule.json", "[].Start", text, "js/game.js update_table, calculate_estimates"),
    Field("schedule.json", "[].Opening", text, "js/game.js update_table (sched)"),
    Field("schedule.json", "[].ECO", text, "js/game.js update_table (sched)"),
    Field("schedule.json", "[].FinalFen", fen, "js/game.js update_table (sched: final_fen)"),
    Field("schedule.json", "[].WhiteEv", evaluation, "js/game.js update_table (white_ev)"),
    Field("schedule.json", "[].BlackEv", evaluation, "js/game.js update_table (black_ev)"),
    Field(
        "schedule.json",
        "[].RMobilityResult",
        lambda v: isinstance(v, str) and re.fullmatch(r"-?G\d+\.[05]", v) is not None,
        "js/game.js update_table (rmobility_result)",
    ),
    # the event: js/game.js analyse_tournament, analyse_seasons
    Field("tournament.json", "cup", lambda v: v in (0, 5, 6), "js/game.js analyse_tournament"),
    Field("tournament.json", "frc", lambda v: v in (0, 1), "js/game.js analyse_tournament"),
    Field("gamelist.json", "Seasons{}.sub[].url", text, "js/game.js analyse_seasons"),
    Field("gamelist.json", "Seasons{}.sub[].menu", text, "js/game.js analyse_seasons"),
    # the kibitzers: js/game.js update_live_eval
    Field("data.json", "engine", text, "js/game.js update_live_eval"),
    Field("data.json", "desc", lambda v: isinstance(v, str), "js/game.js update_live_eval"),
    Field("data.json", "eval", evaluation, "js/game.js update_live_eval"),
    Field(
        "data.json",
        "depth",
        lambda v: isinstance(v, str) and re.fullmatch(r"\d+/\d+", v) is not None,
        "update_live_eval",
    ),
    Field("data.json", "nodes", number, "js/game.js update_live_eval"),
    Field("data.json", "speed", text, "js/game.js update_live_eval"),
    Field("data.json", "tbhits", number, "js/game.js update_live_eval"),
    Field("data.json", "pv", pv_ply, "js/game.js update_live_eval, global.js split_move_string"),
    Field("data.json", "round", text, "js/game.js update_live_eval (== live Headers.Round)"),
    Field("data1.json", "engine", text, "js/game.js update_live_eval"),
    Field("data1.json", "pv", pv_ply, "js/game.js update_live_eval"),
    Field("liveeval.json", "round", text, "js/game.js update_live_eval"),
    Field("liveeval.json", "moves[].pv", pv_ply, "js/game.js update_live_eval (history)"),
    Field("liveeval.json", "moves[].eval", evaluation, "js/game.js update_live_eval"),
    Field("liveeval1.json", "moves[].pv", pv_ply, "js/game.js update_live_eval (history)"),
    # the Cup: js/game.js create_cup, create_bracket
    Field("Eventcrosstable.json", "teams[][].name", text, "js/game.js create_bracket"),
    Field("Eventcrosstable.json", "matchresults[][].name", text, "js/game.js create_bracket"),
    Field("Eventcrosstable.json", "matchresults[][].origscore", number, "create_bracket"),
    Field("Eventcrosstable.json", "results[][][][]", number, "js/game.js create_bracket"),
    Field("Eventcrosstable.json", "EventTable{}.Winner", text, "js/game.js create_cup"),
    Field("Eventcrosstable.json", "EventTable{}.Runner", text, "js/game.js create_cup"),
    Field("Eventcrosstable.json", "EventTable{}.Points", text, "js/game.js create_cup"),
    Field("Eventcrosstable.json", "EventTable{}.Score", text, "js/game.js create_cup"),
    Field("Eventcrosstable.json", "EventTable{}.Games", number, "js/game.js create_cup"),
]


def values(data: Any, path: str) -> Iterator[Any]:
    """Every value at `path` in `data` (`[]` each list item, `{}` each object value, `[-]`
    each engine move: a move that is not a book move)."""
    if not path:
        yield data
        return
    step, _, rest = path.partition(".")
    parsed = re.fullmatch(r"(\w*)((?:\[-?\]|\{\})*)", step)
    assert parsed, step
    key, marks = parsed[1], parsed[2]
    inner = data.get(key) if key else data
    if inner is None:
        return
    items = [inner]
    for mark in re.findall(r"\[-?\]|\{\}", marks):
        flat: list[Any] = []
        for item in items:
            if mark == "{}":
                flat.extend(item.values())
            elif mark == "[-]":
                flat.extend(m for m in item if not m.get("book"))
            else:
                flat.extend(item)
        items = flat
    for item in items:
        yield from values(item, rest)


class Watcher(threading.Thread):
    """Every distinct live.json and kibitzer file seen while the event plays."""

    NAMES = ("live.json", "data.json", "data1.json", "liveeval.json", "liveeval1.json")

    def __init__(self, folder: Path) -> None:
        super().__init__(daemon=True)
        self.folder = folder
        self.seen: dict[str, dict[str, Any]] = {}  # text: parsed, per file
        self.by_file: dict[str, list[Any]] = {name: [] for name in self.NAMES}
        # (a kibitzer's round, the live game's round last read before it)
        self.rounds: list[tuple[str, str]] = []
        self.done = threading.Event()

    def run(self) -> None:
        live_round = None
        while not self.done.is_set():
            for name in self.NAMES:
                try:
                    raw = (self.folder / name).read_text()
                except OSError:
                    continue
                if raw in self.seen:
                    continue
                data = json.loads(raw)  # always a whole file (written atomically)
                self.seen[raw] = data
                self.by_file[name].append(data)
                if name == "live.json":
                    live_round = data["Headers"]["Round"]
                elif name.startswith("data") and live_round is not None:
                    self.rounds.append((data["round"], live_round))
            time.sleep(0.02)


def check(files: dict[str, list[Any]]) -> list[str]:
    """The fields of `VIEWER` missing or malformed in `files` (each file's versions)."""
    problems = []
    for field in VIEWER:
        versions = files.get(field.file, [])
        if not versions:
            problems.append(f"{field.file}: never written ({field.viewer})")
            continue
        found = 0
        for data in versions:
            for value in values(data, field.path):
                found += 1
                if not field.check(value):
                    problems.append(f"{field.file} {field.path} = {value!r} ({field.viewer})")
                    break
        if not found and not field.optional:
            problems.append(f"{field.file} {field.path}: absent ({field.viewer})")
    return problems


def test_the_live_files_give_tcec_s_viewer_every_field_it_reads(tmp_path: Path) -> None:
    (tmp_path / "book.pgn").write_text(BOOK)
    extra = 'live_dir = "live"\npgn_comments = "tcec"\nopenings = "book.pgn"'
    config = event_config(
        tmp_path, players=["E01", "E02", "E03", "E04"], rounds=2, delay_ms=60, extra=extra
    )
    engines = config.read_text().replace('"--tag",', '"--option", "Hash", "--tag",')
    engines = engines.replace("reuse = true", "reuse = true\noptions = { Hash = 16 }")
    config.write_text(engines + kibitzers_toml(["K1", "K2"]))
    (tmp_path / "live").mkdir()
    watcher = Watcher(tmp_path / "live")
    watcher.start()
    try:
        run = run_daemon(config)
    finally:
        watcher.done.set()
        watcher.join()
    assert run.returncode == 0, run.stderr[-3000:]

    live = tmp_path / "live"
    files: dict[str, list[Any]] = {k: v for k, v in watcher.by_file.items() if v}
    for name in ("crosstable.json", "schedule.json", "tournament.json", "gamelist.json"):
        files[name] = [json.loads((live / name).read_text())]
    # the game's end: the last version of live.json of each game
    ends: dict[str, Any] = {}
    for data in watcher.by_file["live.json"]:
        ends[data["Headers"]["Round"]] = data
    files["end.json"] = [json.loads((live / "live.json").read_text()), *ends.values()]
    files["end.json"] = [d for d in files["end.json"] if "TerminationDetails" in d["Headers"]]
    files["Eventcrosstable.json"] = [cup(tmp_path / "cup")]

    problems = check(files)
    assert problems == [], "\n".join(problems)
    # kibitzers analyse the live game: the viewer drops a kibitzer's analysis of another
    # game.  Each analysis is of a game of the event, and mostly of the one live when it
    # was read (a kibitzer moves to the next game a moment after live.json does; a game
    # featured only for a moment, while another ends, may come and go between two of the
    # watcher's readings on a loaded machine, so "was live" is not asked of every one)
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        played = {f"{r}.{n}" for r, n in db.execute("SELECT round, number FROM games")}
    assert watcher.rounds and {k for k, _ in watcher.rounds} <= played
    assert sum(k == g for k, g in watcher.rounds) >= len(watcher.rounds) * 0.5


def cup(folder: Path) -> Any:
    """A 4-engine knockout with live files, played by the fake executor: its
    Eventcrosstable.json."""
    folder.mkdir()
    extra = (
        'system = "knockout"\nsystem_options = { stage_games = [2, 2], tiebreak_pairs = 1 }\n'
        f'live_dir = "{folder / "live"}"\n'
    )
    config = event_config(
        folder, players=["C1", "C2", "C3", "C4"], rounds=None, extra=extra, legs=False
    )
    asyncio.run(run_in_process(config))
    return json.loads((folder / "live" / "Eventcrosstable.json").read_text())


def test_the_field_list_checks_what_it_says() -> None:
    """The checker itself: a missing field, a malformed one and a red termination are
    reported with the viewer's function."""
    files: dict[str, list[Any]] = {
        "schedule.json": [[{"Game": 1, "White": "A", "Black": "B", "Termination": "odd"}]],
    }
    problems = check(files)
    assert "schedule.json [].Termination = 'odd' (js/game.js update_table (sched: not red))" in (
        problems
    )
    assert any(p.startswith("schedule.json [].Result: absent") for p in problems)
    assert any(p.startswith("live.json: never written") for p in problems)
    assert list(values({"Moves": [{"book": True, "d": "1"}, {"d": "2"}]}, "Moves[-].d")) == ["2"]
    assert list(values({"T": {"a": {"x": 1}, "b": {"x": 2}}}, "T{}.x")) == [1, 2]
