"""TCEC's live files, as plain data: `live.json` and `live.pgn` (the game being played),
`schedule.json` and `crosstable.json` (the event).

The field names are those TCEC's runner writes and its viewer (TCEC-Chess/tcecgui) reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple, TypedDict

import chess
import chess.pgn

from orchestrator.config.model import OptionValue
from orchestrator.core.event.model import Game
from orchestrator.core.event.standings import mark, standings
from orchestrator.core.game.clock import hms
from orchestrator.core.game.fields import Annotated, options_comment
from orchestrator.core.game.openings import opening_tags
from orchestrator.core.game.variants import display_name
from orchestrator.event.export import round_tag, slug
from orchestrator.event.read import EventView
from orchestrator.store.database import GameRow

#: a PV longer than this is cut in the live files (each of its moves carries a FEN)
PV_SHOWN = 24


#: a move of a PV in `live.json`: SAN, squares, and the position after it
LivePvMove = TypedDict("LivePvMove", {"m": str, "from": str, "to": str, "fen": str})


class LivePv(TypedDict):
    San: str
    Moves: list[LivePvMove]


#: an entry of `live.json`'s `Moves`: every move has the first five keys; an engine's move
#: its PV and TCEC's fields (docs/pgn.md), all strings
LiveMove = TypedDict(
    "LiveMove",
    {"m": str, "from": str, "to": str, "book": bool, "fen": str, "pv": LivePv, "d": str,
     "sd": str, "pd": str, "mt": str, "tl": str, "s": str, "n": str, "tb": str, "h": str,
     "ph": str, "wv": str, "R50": str, "Rd": str, "Rr": str, "mb": str},
    total=False,
)  # fmt: skip


class EngineOption(TypedDict):
    Name: str
    Value: OptionValue


class ScheduleRow(TypedDict, total=False):
    """A row of `schedule.json`: `Game`, `White` and `Black` always, the rest once known."""

    Game: int
    White: str
    Black: str
    Start: str
    Result: str
    Termination: str
    Duration: str | None
    Moves: int
    FinalFen: str | None
    Opening: str
    ECO: str
    RMobilityResult: str  # its r-mobility G-score ("G1.5", "-G8.5")
    WhiteEv: str  # each engine's last score, from White's side
    BlackEv: str


def live_move(annotated: Annotated) -> LiveMove:
    """One entry of `live.json`'s `Moves`.

    >>> from orchestrator.core.game.adjudication import Adjudication
    >>> from orchestrator.core.game.record import Cp, MoveRecord
    >>> from orchestrator.core.game.fields import Annotator
    >>> annotator = Annotator(chess.Board(), Adjudication())
    >>> move = live_move(annotator.add(MoveRecord("e2e4", "e4", score=Cp(25), depth=20,
    ...                                           pv=("e2e4", "e7e5"))))
    >>> move["m"], move["from"], move["to"], move["d"], move["wv"], move["pv"]["San"]
    ('e4', 'e2', 'e4', '20', '0.25', 'e4 e5')
    >>> [m["m"] for m in move["pv"]["Moves"]]
    ['e4', 'e5']
    """
    move, board = annotated.move, annotated.board_before.copy(stack=False)
    played = chess.Move.from_uci(move.uci)
    entry: LiveMove = {
        "m": move.san,
        "from": chess.square_name(played.from_square),
        "to": chess.square_name(played.to_square),
        "book": move.book,
    }
    board.push(played)
    entry["fen"] = board.fen()
    if move.book:
        return entry
    fields = annotated.fields
    pv = annotated.board_before.copy(stack=False)
    shown: list[LivePvMove] = []
    for san in fields["pv"].split()[:PV_SHOWN]:
        step = pv.parse_san(san)
        pv.push(step)
        shown.append(
            {
                "m": san,
                "from": chess.square_name(step.from_square),
                "to": chess.square_name(step.to_square),
                "fen": pv.fen(),
            }
        )
    entry["pv"] = {"San": fields["pv"], "Moves": shown}
    for key, value in fields.items():  # TCEC's fields (core/game/fields.py), the PV above
        if key != "pv":
            entry[key] = value  # type: ignore[literal-required]
    return entry


def engine_options(options: Mapping[str, OptionValue]) -> list[EngineOption]:
    """An engine's options as TCEC lists them.

    >>> engine_options({"Hash": 64, "Threads": 1})
    [{'Name': 'Hash', 'Value': 64}, {'Name': 'Threads', 'Value': 1}]
    """
    return [{"Name": name, "Value": value} for name, value in options.items()]


def live_headers(
    name: str, tc: str, game: GameRow, site: str, started: datetime, black_tc: str | None = None
) -> dict[str, str]:
    """The PGN tags of a game being played, as `live.json` and `live.pgn` give them: `tc`
    both sides' time control, or White's where Black has its own (`black_tc`, time odds:
    then no TimeControl tag, as in the game's PGN).

    >>> from datetime import UTC
    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> game = view.rounds[0].games[1]
    >>> headers = live_headers("E", "60+1", game, "?", datetime(2026, 1, 2, tzinfo=UTC))
    >>> headers["Round"], headers["White"], headers["Result"], headers["Date"]
    ('1.2', 'B', '*', '2026.01.02')
    """
    headers = {
        "Event": name,
        "Site": site,
        "Date": started.strftime("%Y.%m.%d"),
        "Round": round_tag(game.round, game),
        "White": game.white,
        "Black": game.black,
        "Result": "*",
        "TimeControl": tc,
        "WhiteTimeControl": tc,
        "BlackTimeControl": black_tc or tc,
        "GameStartTime": started.isoformat(timespec="seconds"),
    }
    if black_tc is not None and black_tc != tc:
        del headers["TimeControl"]
    opening = game.opening
    if opening is not None:
        headers |= opening_tags(opening.name, opening.variation, opening.eco)
        if opening.fen:
            headers["FEN"], headers["SetUp"] = opening.fen, "1"
        if opening.chess960:
            headers["Variant"] = "Chess960"
        elif opening.rules != "chess":  # the variant's FEN, even of its own start
            headers["Variant"] = display_name(opening.rules)
            headers["FEN"], headers["SetUp"] = opening.board().fen(), "1"
    return headers


def live_json(
    headers: dict[str, str],
    moves: list[LiveMove],
    options: tuple[Mapping[str, OptionValue], Mapping[str, OptionValue]],
) -> dict[str, object]:
    """`live.json`: the tags, the moves so far, and each side's engine options, as TCEC's
    viewer reads them (`WhiteEngineOptions`, `BlackEngineOptions`: `[{Name, Value}]`).

    >>> data = live_json({"White": "A", "Black": "B"}, [], ({"Hash": 1}, {}))
    >>> sorted(data)
    ['BlackEngineOptions', 'Headers', 'Moves', 'WhiteEngineOptions']
    >>> data["WhiteEngineOptions"]
    [{'Name': 'Hash', 'Value': 1}]
    """
    white, black = options
    return {
        "Headers": headers,
        "Moves": moves,
        "WhiteEngineOptions": engine_options(white),
        "BlackEngineOptions": engine_options(black),
    }


def live_pgn(
    headers: dict[str, str],
    plies: list[Annotated],
    reason: str | None = None,
    options: tuple[Mapping[str, OptionValue], Mapping[str, OptionValue]] | None = None,
) -> str:
    """`live.pgn`: the game so far with TCEC's comments (python-chess writes it), the
    engines' `options` in its first comment.

    >>> from orchestrator.core.game.adjudication import Adjudication
    >>> from orchestrator.core.game.record import MoveRecord
    >>> from orchestrator.core.game.fields import Annotator
    >>> annotator = Annotator(chess.Board(), Adjudication())
    >>> plies = [annotator.add(MoveRecord("e2e4", "e4", book=True))]
    >>> print(live_pgn({"Event": "E", "Result": "*"}, plies).splitlines()[-1])
    1. e4 { book } *
    """
    game = chess.pgn.Game()
    for name, value in headers.items():
        game.headers[name] = value
    node: chess.pgn.GameNode = game
    if plies:
        start = plies[0].board_before
        if "FEN" in headers:
            game.setup(start)
            game.headers["SetUp"], game.headers["FEN"] = "1", start.fen()
    if options is not None:
        game.comment = options_comment(*options)
    for i, ply in enumerate(plies):
        comment = ply.comment()
        if reason and i == len(plies) - 1:
            comment += f", {reason}"
        node = node.add_variation(chess.Move.from_uci(ply.move.uci), comment=comment)
    return str(game) + "\n"


def schedule_json(view: EventView) -> list[ScheduleRow]:
    """`schedule.json`: every game paired so far in playing order, with its result once
    played.

    >>> from orchestrator.event.sample import sample_view
    >>> rows = schedule_json(sample_view())
    >>> [(r["Game"], r["White"], r.get("Result")) for r in rows[:2]]
    [(1, 'D', '1-0'), (2, 'B', None)]
    """
    rows = []
    for number, game in enumerate((g for r in view.rounds for g in r.games), start=1):
        row: ScheduleRow = {"Game": number, "White": game.white, "Black": game.black}
        if game.started_at:
            start = datetime.fromisoformat(game.started_at)
            row["Start"] = start.strftime("%H:%M:%S on %Y.%m.%d")
        if game.status == "finished" and game.result:
            row["Result"] = game.result
            row["Termination"] = game.details or game.reason or game.termination or ""
            row["Duration"] = None if game.duration_s is None else hms(game.duration_s)
            row["Moves"] = ((game.plies or 0) + 1) // 2
            row["FinalFen"] = game.final_fen
            if game.rmobility is not None:
                row["RMobilityResult"] = game.rmobility
            if game.white_ev is not None:
                row["WhiteEv"] = game.white_ev
            if game.black_ev is not None:
                row["BlackEv"] = game.black_ev
        if game.opening is not None:
            name = game.opening.name
            if game.opening.variation:
                name += f", {game.opening.variation}"
            row["Opening"] = name
            if game.opening.eco:
                row["ECO"] = game.opening.eco
        rows.append(row)
    return rows


class CrossScore(TypedDict):
    Game: int  # the game's number in the schedule
    Result: float  # the points scored in it
    Winner: str  # "White", "Black" or "None"


class CrossResult(TypedDict):
    H2h: float
    Text: str  # e.g. "1=0"
    Scores: list[CrossScore]


class CrossRow(TypedDict):
    Abbreviation: str  # unique in the event: the viewer keys its crosstable columns by it
    Rank: int
    Rating: float
    Score: float
    Games: int
    GamesAsWhite: int
    GamesAsBlack: int
    WinsAsWhite: int
    WinsAsBlack: int
    LossAsWhite: int
    LossAsBlack: int
    Neustadtl: float
    Strikes: int
    Performance: float
    RMobilityScore: float  # r-mobility points (`core/game/rmobility.py`)
    Results: dict[str, CrossResult]


class CrosstableJSON(TypedDict):
    """`crosstable.json`, as TCEC writes it and its viewer reads it."""

    Event: str
    Order: list[str]
    Table: dict[str, CrossRow]


def abbreviations(names: list[str]) -> dict[str, str]:
    """A short name for every engine, unique in the event, as TCEC's crosstable gives them
    (`Abbreviation`): the first two letters of its name, else its first letter and a later
    one, else a number.

    >>> abbreviations(["Stockfish", "Stoofvlees", "Ethereal", "LCZero", "Leela"])
    {'Stockfish': 'St', 'Stoofvlees': 'So', 'Ethereal': 'Et', 'LCZero': 'Lc', 'Leela': 'Le'}
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        letters = [c for c in name if c.isalnum()] or ["E"]
        first = letters[0].upper()
        tries = [first + c.lower() for c in letters[1:]] + [
            f"{first}{n}" for n in range(1, len(names) + 2)
        ]
        short = next(t for t in tries if t.lower() not in taken)
        taken.add(short.lower())
        out[name] = short
    return out


def crosstable_json(view: EventView) -> CrosstableJSON:
    """`crosstable.json`: the engines in standings order, each with its record (counted by
    `core.event.standings`) and its results against every opponent (`Scores` name the games
    by their schedule number).

    >>> from orchestrator.event.sample import sample_view
    >>> data = crosstable_json(sample_view())
    >>> data["Order"][0], data["Table"]["D"]["Score"], data["Table"]["D"]["Results"]["C"]
    ('D', 1.0, {'H2h': 1.0, 'Text': '1', 'Scores': [{'Game': 1, 'Result': 1.0, 'Winner': 'White'}]})
    """
    ratings = view.settings.ratings
    played = view.standings_tournament()
    lines = standings(played, view.settings.tiebreaks)
    sb = {line.name: line.tiebreaks["sb"] for line in standings(played, ["sb"])}
    strikes = view.strikes()
    table: dict[str, CrossRow] = {}
    short = abbreviations([p.name for p in played.by_seed()])
    for rank, line in enumerate(lines, start=1):
        won = sum(points for _, points in line.results)
        table[line.name] = {
            "Abbreviation": short[line.name],
            "Rank": rank,
            "Rating": ratings.get(line.name, 0),
            "Score": line.score,
            "Games": line.games,
            "GamesAsWhite": line.by_colour[0],
            "GamesAsBlack": line.by_colour[1],
            "WinsAsWhite": line.wins_by_colour[0],
            "WinsAsBlack": line.wins_by_colour[1],
            "LossAsWhite": line.losses_by_colour[0],
            "LossAsBlack": line.losses_by_colour[1],
            "Neustadtl": sb.get(line.name, 0.0),
            "Strikes": len(strikes.get(line.name, ())),
            "Performance": round(100.0 * won / line.games, 1) if line.games else 0.0,
            "RMobilityScore": round(line.rmobility, 4),
            "Results": {},
        }
    games = (g for r in view.rounds for g in r.games)
    for number, row in enumerate(games, start=1):
        if row.status != "finished" or row.result is None:
            continue
        game = Game(row.white, row.black, row.result)
        white = game.points(game.white)
        winner = "White" if white == 1.0 else "Black" if white == 0.0 else "None"
        for name in (game.white, game.black):
            if name not in table or game.opponent(name) not in table:
                continue
            points = game.points(name)
            result = table[name]["Results"].setdefault(
                game.opponent(name), {"H2h": 0.0, "Text": "", "Scores": []}
            )
            result["H2h"] += points
            result["Text"] += mark(points)
            result["Scores"].append({"Game": number, "Result": points, "Winner": winner})
    return {"Event": view.name, "Order": [line.name for line in lines], "Table": table}


class CupEntry(TypedDict):
    """An engine of a first-stage match, as the viewer's bracket reads it (`teams`)."""

    name: str
    winner: bool  # it won a match (the viewer marks it the winner where it scored more)
    score: float
    flag: str  # the short name its logo is found by


class CupResult(TypedDict):
    """An engine of a played match (`matchresults`): its points (`origscore`), whether it
    leads an unfinished match (1), trails it (0), or the match is over (-1)."""

    name: str
    lead: int
    score: float
    manual: int
    origscore: float


class CupMatch(TypedDict):
    """A row of the viewer's event table (`EventTable`)."""

    Engines: str
    Winner: str
    Runner: str
    Games: int
    Points: str
    Crashes: str
    Score: str
    Gamesno: str


class EventCrosstableJSON(TypedDict):
    """`Eventcrosstable.json`: a knockout as TCEC's Cup viewer reads it (tcecgui
    `create_cup`, `create_bracket`; written by its `crosscupnew.js`)."""

    EventTable: dict[str, CupMatch]
    teams: list[list[CupEntry]]
    matchresults: list[list[CupResult]]
    results: list[list[list[list[float]]]]


def eventcrosstable_json(view: EventView) -> EventCrosstableJSON:
    """`Eventcrosstable.json` of a knockout: the first stage's matches in bracket order
    (`teams`), every match begun with its points (`matchresults`, and `EventTable`, whose
    `Gamesno` are schedule numbers), and each stage's results in bracket order (`results`:
    [upper, lower] for a match that is over, [0, 0] for one that is not).

    >>> from orchestrator.event.sample import sample_view
    >>> data = eventcrosstable_json(sample_view())  # not a knockout: empty
    >>> data["teams"], data["results"]
    ([], [[]])
    """
    from orchestrator.core.pairing.knockout import bracket, stages_of
    from orchestrator.core.pairing.registry import lookup

    out: EventCrosstableJSON = {"EventTable": {}, "teams": [], "matchresults": [], "results": [[]]}
    if view.settings.system != "knockout":
        return out
    schedule = {
        (g.stage, g.slot, g.match_game): number
        for number, g in enumerate((g for r in view.rounds for g in r.games), start=1)
    }
    played = view.standings_tournament()
    b = bracket(played, lookup("knockout").parse(played.rules.system_options))
    won = {m.winner for stage in b.stages for m in stage if m.winner}
    out["teams"] = [
        [_cup_entry(m.upper, m.points[0], won), _cup_entry(m.lower, m.points[1], won)]
        for m in b.stages[0]
    ]
    for stage in b.stages:
        results: list[list[float]] = []
        for m in stage:
            over = m.winner is not None and m.upper is not None and m.lower is not None
            results.append([*m.points] if over else [0.0, 0.0])
            if m.upper is None or m.lower is None or not m.games:
                continue
            upper, lower = m.points
            out["matchresults"].append(
                [_cup_result(m.upper, upper, lower, over), _cup_result(m.lower, lower, upper, over)]
            )
            first, second = (m.lower, m.upper) if m.winner == m.lower else (m.upper, m.lower)
            numbers = [schedule.get((m.stage, m.number, k)) for k in range(1, len(m.games) + 1)]
            out["EventTable"][f"Match {len(out['matchresults'])}"] = {
                "Engines": f"{m.upper} v {m.lower}",
                "Winner": first,
                "Runner": second,
                "Games": len(m.games),
                "Points": f"{upper:g}-{lower:g}",
                "Crashes": "0-0",
                "Score": "".join(mark(g.points(first)) for g in m.games),
                "Gamesno": ",".join(str(n) for n in numbers if n is not None),
            }
        out["results"][0].append(results)
    for _ in range(len(b.stages), stages_of(len(played.players))):  # the stages to come
        out["results"][0].append([])
    return out


def _cup_entry(name: str | None, points: float, won: set[str]) -> CupEntry:
    return {
        "name": name or "",
        "winner": name is not None and name in won,
        "score": points,
        "flag": (name or "").split(" ")[0],
    }


def _cup_result(name: str, points: float, other: float, over: bool) -> CupResult:
    return {
        "name": name,
        "lead": -1 if over else int(points > other),
        "score": -1 if over else points,
        "manual": 0,
        "origscore": points,
    }


class TournamentJSON(TypedDict):
    """`tournament.json`, as TCEC's viewer reads it (tcecgui `analyse_tournament`: `cup`,
    whose 6 and over draw a Cup's bracket in the equal-distance order)."""

    name: str
    url: str
    cup: int
    frc: int
    system: str
    rounds: int
    games: int
    twitchaccount: str


def tournament_json(view: EventView) -> TournamentJSON:
    """`tournament.json`: the event, and whether it is a Cup (a knockout) or Chess960.

    >>> from orchestrator.event.sample import sample_view
    >>> data = tournament_json(sample_view())
    >>> data["cup"], data["frc"], data["url"]
    (0, 0, 'Sample')
    """
    settings = view.settings
    cup, frc = archive_flags(settings.system, settings.system_options, settings.variant)
    return {
        "name": view.name,
        "url": slug(view.name),
        "cup": cup,
        "frc": frc,
        "system": settings.system,
        "rounds": settings.rounds,
        "games": view.tournament.games_planned(),
        "twitchaccount": "",
    }


def archive_flags(system: str, options: Mapping[str, Any], variant: str) -> tuple[int, int]:
    """An event's `cup` and `frc` as TCEC's viewer reads them: `cup` 6 for a knockout seeded
    at equal distances, 5 for one seeded otherwise (the viewer's `calculate_seeds` modes),
    0 for any other event; `frc` 1 for Chess960.

    >>> archive_flags("knockout", {}, "standard"), archive_flags("swiss", {}, "chess960")
    ((6, 0), (0, 1))
    """
    cup = 0
    if system == "knockout":
        cup = 6 if options.get("bracket", "equal-distance") == "equal-distance" else 5
    return cup, int(variant != "standard")


class ArchiveEvent(NamedTuple):
    """An event of a season's archive menu: its full name, its name in the menu."""

    name: str  # "TCEC Season 20 - League 2"
    menu: str  # "League 2"
    cup: int
    frc: int


class ArchiveMenu(NamedTuple):
    """The events that `gamelist.json` lists, under one season's key."""

    season: str
    events: tuple[ArchiveEvent, ...]

    @staticmethod
    def key(name: str) -> str:
        """A season's key in `gamelist.json`: its number where its name ends in one (the
        viewer shows "Season 20"), else its name (shown as it is).

        >>> ArchiveMenu.key("TCEC Season 20"), ArchiveMenu.key("Autumn cup")
        ('20', 'Autumn cup')
        """
        number = re.search(r"(\d+)\s*$", name)
        return number.group(1) if number else name


def event_menu(view: EventView) -> ArchiveMenu:
    """The archive menu of an event outside a season: itself, as season "1".

    >>> from orchestrator.event.sample import sample_view
    >>> event_menu(sample_view())
    ArchiveMenu(season='1', events=(ArchiveEvent(name='Sample', menu='Sample', cup=0, frc=0),))
    """
    tour = tournament_json(view)
    return ArchiveMenu("1", (ArchiveEvent(view.name, view.name, tour["cup"], tour["frc"]),))


def gamelist_json(menu: ArchiveMenu) -> dict[str, object]:
    """`gamelist.json`, the viewer's archive menu (tcecgui `analyse_seasons`, `open_event`:
    `Seasons`, each with its `sub` events, each with `id`, `abb`, `url`, `menu`, `no`, `dno`,
    `cup`, `frc` and `eventtag`): an event alone (`event_menu`), or every event of a season
    so far.

    >>> from orchestrator.event.sample import sample_view
    >>> gamelist_json(event_menu(sample_view()))["Seasons"]["1"]["sub"][0]["menu"]
    'Sample'
    >>> menu = ArchiveMenu("20", (ArchiveEvent("S20 - L2", "L2", 0, 0),
    ...                           ArchiveEvent("S20 - Cup", "Cup", 6, 0)))
    >>> [e["abb"] for e in gamelist_json(menu)["Seasons"]["20"]["sub"]]
    ['S20_-_L2', 'S20_-_Cup']
    """
    entries = []
    for number, event in enumerate(menu.events):
        abb = slug(event.name)
        entries.append(
            {
                "id": abb.lower(),
                "abb": abb,
                "url": abb,
                "menu": event.menu,
                "no": menu.season,
                "dno": f"{number:04d}",
                "cup": event.cup,
                "frc": event.frc,
                "eventtag": abb if event.cup else "",
            }
        )
    return {"Seasons": {menu.season: {"sub": entries}}}


class KibitzEntry(TypedDict, total=False):
    """A kibitzer's analysis of a position, as TCEC's `data.json` gives it (tcecgui
    `update_live_eval`): `pv` in SAN with move numbers (its first number says the ply),
    `eval` from White's side, `depth` as "depth/seldepth"; `game` is ours (the game id)."""

    engine: str
    desc: str
    eval: float | str
    depth: str
    nodes: int
    speed: str
    tbhits: int
    pv: str
    round: str
    ply: int
    wdl: str
    game: int


def kibitz_entry(
    board: chess.Board,
    info: Mapping[str, Any],
    *,
    engine: str,
    desc: str,
    round_tag: str,
    game: int,
) -> KibitzEntry | None:
    """A kibitzer's `info` (python-chess's, of the position `board`) as a `data.json`
    entry; None while it has no scored PV.

    >>> import chess.engine
    >>> info = {"score": chess.engine.PovScore(chess.engine.Cp(-30), chess.BLACK), "depth": 12,
    ...         "seldepth": 18, "nodes": 120000, "nps": 60000, "tbhits": 0,
    ...         "pv": [chess.Move.from_uci("e7e5"), chess.Move.from_uci("g1f3")]}
    >>> board = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    >>> entry = kibitz_entry(board, info, engine="K", desc="", round_tag="1.1", game=3)
    >>> entry["pv"], entry["eval"], entry["depth"], entry["speed"], entry["ply"]
    ('1...e5 2. Nf3', 0.3, '12/18', '60.0kn/s', 1)
    """
    score, pv = info.get("score"), info.get("pv")
    if score is None or not pv:
        return None
    white = score.white()
    mate = white.mate()
    value: float | str = (
        (f"M{mate}" if mate > 0 else f"-M{-mate}")
        if mate is not None
        else round(white.score() / 100, 2)
    )
    legal: list[chess.Move] = []
    probe = board.copy(stack=False)
    for move in pv:
        if not probe.is_legal(move):
            break
        legal.append(move)
        probe.push(move)
    if not legal:
        return None
    depth = info.get("depth")
    nps = info.get("nps")
    entry: KibitzEntry = {
        "engine": engine,
        "desc": desc,
        "eval": value,
        "depth": f"{depth or '-'}/{info.get('seldepth') or depth or '-'}",
        "nodes": int(info.get("nodes") or 0),
        "speed": "-" if nps is None else _speed(int(nps)),
        "tbhits": int(info.get("tbhits") or 0),
        "pv": board.variation_san(legal),
        "round": round_tag,
        "ply": board.ply(),
        "game": game,
    }
    wdl = info.get("wdl")
    if wdl is not None:
        entry["wdl"] = " ".join(str(part) for part in wdl.white())
    return entry


def _speed(nps: int) -> str:
    """Nodes per second as TCEC writes them: 33kn/s, 1.2Mn/s."""
    if nps >= 1_000_000:
        return f"{nps / 1_000_000:.1f}Mn/s"
    if nps >= 1000:
        return f"{nps / 1000:.1f}kn/s"
    return f"{nps}n/s"


def liveeval_json(
    history: list[KibitzEntry], *, engine: str, desc: str, round_tag: str, game: int
) -> dict[str, object]:
    """`liveeval.json`: a kibitzer's last analysis of every position of the game so far,
    which the viewer's chart draws (its `moves` give the score from the side to move:
    the viewer turns Black's around).

    >>> entry = {"pv": "1... e5", "eval": 0.3, "ply": 1}
    >>> liveeval_json([entry], engine="K", desc="", round_tag="1.1", game=3)["moves"][0]["eval"]
    -0.3
    """
    moves = []
    for entry in history:
        value = entry.get("eval")
        if entry.get("ply", 0) % 2 and isinstance(value, float):
            value = 0.0 - value  # from the side to move, as the viewer reads a history
        elif entry.get("ply", 0) % 2 and isinstance(value, str):
            value = value[1:] if value.startswith("-") else "-" + value
        moves.append({**entry, "eval": value})
    return {"engine": engine, "desc": desc, "round": round_tag, "game": game, "moves": moves}
