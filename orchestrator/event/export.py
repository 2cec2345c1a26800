"""What people and tools read of an event, rendered as text: file names, the PGN of a round
and of the event, standings and crosstables as text and JSON.  Pure: the daemon writes these
to files, the web view serves them, the CLI prints them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from orchestrator.core.event.model import Game, Tournament
from orchestrator.core.event.standings import (
    TIEBREAKS,
    Entry,
    Line,
    Tiebreak,
    mark,
    standings,
)
from orchestrator.core.game.endings import ENDINGS, HEADS, Tally
from orchestrator.core.game.openings import START
from orchestrator.core.pairing.gauntlet import games_of, gauntlet_tests, match_state, pair_points
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.teams import team_standings
from orchestrator.core.stats.elo import penta_counts, pentanomial, trinomial
from orchestrator.core.stats.ratings import Rating, unrated
from orchestrator.core.stats.sprt import SprtState
from orchestrator.event.api import (
    BracketJSON,
    BracketMatchJSON,
    GauntletJSON,
    HeadToHeadJSON,
    PairJSON,
    PlacedJSON,
    SprtJSON,
    StageJSON,
    StandingJSON,
    TeamStandingJSON,
    TiebreakJSON,
    sprt_outcome,
)
from orchestrator.store.database import GameRow, RoundRow
from orchestrator.store.logs import find_log


def slug(name: str) -> str:
    """A folder and file name for an event name.

    >>> slug("TCEC Swiss 7: Final!"), slug("..")
    ('TCEC_Swiss_7_Final', 'event')
    """
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
    return cleaned if cleaned.strip(".") else "event"


def export_logs(folder: Path, rounds: Sequence[RoundRow], target: Path, event: str) -> list[Path]:
    """Copy the engine logs of `rounds`' finished games from `folder` (`logs_folder`) into
    `target`, one file a game named by the event, its round and number and its engines
    (``TCEC_S1-3.4-Stockfish-Ethereal.log.gz``); the files written.

    >>> import tempfile
    >>> from orchestrator.event.sample import sample_view
    >>> folder, target = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> _ = (folder / "game-1.attempt-1.log.gz").write_bytes(b"")
    >>> [p.name for p in export_logs(folder, sample_view().rounds, target, "Sample")]
    ['Sample-1.1-D-C.log.gz']
    """
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for rnd in rounds:
        for game in rnd.games:
            source = find_log(folder, game.id) if game.status == "finished" else None
            if source is None:
                continue
            ending = ".log.gz" if source.suffix == ".gz" else ".log"
            name = f"{slug(event)}-{rnd.number}.{game.number}-{slug(game.white)}-{slug(game.black)}"
            shutil.copyfile(source, target / (name + ending))
            written.append(target / (name + ending))
    return written


def round_tag(round_number: int, game: GameRow) -> str:
    """A game's PGN `Round` tag: `round.game`, or a knockout's `stage.match.game`.

    >>> from orchestrator.event.sample import sample_view
    >>> game = sample_view().rounds[0].games[1]
    >>> round_tag(1, game)
    '1.2'
    """
    if game.stage is not None:
        return f"{game.stage}.{game.slot}.{game.match_game}"
    return f"{round_number}.{game.number}"


def round_pgn(rnd: RoundRow) -> str:
    """The finished games of a round, in playing order, each followed by a blank line.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> round_pgn(view.rounds[0])
    '[Result "1-0"]\\n\\n1. e4 e5 1-0\\n\\n'
    """
    return "".join((g.pgn or "") + "\n" for g in rnd.games if g.status == "finished")


def final_epd(rounds: Sequence[RoundRow]) -> str:
    """Each finished game's last position as an EPD line (python-chess's), with its game's
    id: ``id "<game id>"`` (`export --epd`, cutechess's ``-epdout``); a game forfeited
    before a move, its starting position.

    >>> from orchestrator.event.sample import sample_view
    >>> print(final_epd(sample_view().rounds), end="")
    rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id "1";
    """
    lines = []
    for rnd in rounds:
        for game in rnd.games:
            if game.status != "finished":
                continue
            board = (game.opening or START).board()  # its rules, and Chess960 or not
            if game.final_fen is not None:
                board.set_fen(game.final_fen)
            lines.append(board.epd(id=str(game.id)) + "\n")
    return "".join(lines)


def event_pgn(rounds: Sequence[RoundRow]) -> str:
    """The finished games of the event, in round and playing order.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> event_pgn(view.rounds).count("[Result ")
    1
    """
    return "".join(round_pgn(r) for r in rounds)


def standings_text(
    tournament: Tournament,
    order: Sequence[Tiebreak],
    notes: dict[str, str] | None = None,
    anchor: tuple[str, float] | None = None,
    endings: tuple[Tally, dict[str, Tally]] | None = None,
) -> str:
    """`standings.txt`: the standings table, `notes` on players (strikes, withdrawals), how
    the games ended (`endings`, where given: `endings_text`), then the crosstable.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, (Game("A", "B", "0-1"),)),))
    >>> print(standings_text(t, [], {"A": "withdrawn after round 1"}).splitlines()[7])
    A: withdrawn after round 1
    """
    listed = "".join(f"{name}: {note}\n" for name, note in (notes or {}).items())
    table = standings_table(tournament, order, anchor)
    if tournament.teams:
        table = f"{team_table(tournament)}\nBoards\n\n{table}"
    system = tournament.rules.system
    if system == "knockout":
        table = bracket_text(bracket_data(tournament)) + "\n" + table
    elif system == "match":
        table = head_to_head_text(head_to_head(tournament)) + "\n" + table
    elif system == "gauntlet":
        table = gauntlet_text(gauntlet_data(tournament)) + "\n" + table
    ended = f"\n{endings_text(*endings)}" if endings and endings[0].games else ""
    return table + (f"\n{listed}" if listed else "") + ended + "\n" + crosstable(tournament, order)


def endings_text(event: Tally, engines: Mapping[str, Tally]) -> str:
    """How the games ended: a row per engine (a fault counts against the engine at fault
    only) and the event's; a column for each ending that happened, and the largest
    overstep of a loss on time.

    >>> from orchestrator.core.game.endings import Ended, tally, time_loss_detail
    >>> games = [Ended("A", "B", "normal", "White mates"),
    ...          Ended("B", "A", "time forfeit", "White loses on time", "B", "time_forfeit",
    ...                time_loss_detail(1030, 1000))]
    >>> print(endings_text(*tally(games)))
    Endings (a fault counts against the engine at fault)
    <BLANKLINE>
    Engine  Games  Mate  Time  Overstep ms
    ------  -----  ----  ----  -----------
    A           2     1     0            -
    B           2     1     1           30
    All         2     1     1           30
    <BLANKLINE>
    """
    kinds = [k for k in ENDINGS if event.counts[k]]
    rows = [
        [
            name,
            str(mine.games),
            *(str(mine.counts[k]) for k in kinds),
            str(max(mine.overstep_ms)) if mine.overstep_ms else "-",
        ]
        for name, mine in [*engines.items(), ("All", event)]
    ]
    header = ["Engine", "Games", *(HEADS[k] for k in kinds), "Overstep ms"]
    text = _table(header, rows, left=0)
    return f"Endings (a fault counts against the engine at fault)\n\n{text}"


def bracket_data(
    tournament: Tournament, ids: Mapping[tuple[int, int, int], int] | None = None
) -> BracketJSON:
    """A knockout's bracket as the `--json` outputs give it: every stage (those to come
    with their engines not yet known), each match's points and game ids (from `ids`, by
    stage, match and game number), and the final places once it is over.

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABC", 1))
    >>> one = Round(1, (Game("C", "B", "0-1"),))
    >>> data = bracket_data(Tournament(players, (one,), Rules(system="knockout")))
    >>> [(m["upper"], m["lower"], m["points"], m["winner"]) for m in data["stages"][0]["matches"]]
    [('A', None, [0.0, 0.0], 'A'), ('B', 'C', [1.0, 0.0], None)]
    >>> [m["name"] for m in data["stages"][1]["matches"]], data["current"]
    (['Final'], 1)
    """
    from orchestrator.core.pairing.knockout import KnockoutOptions, bracket, stage_name, stages_of

    options: KnockoutOptions = lookup("knockout").parse(tournament.rules.system_options)
    played = bracket(tournament, options)
    seeds = {p.name: p.seed for p in tournament.players}
    stages = stages_of(len(tournament.players))
    ids = ids or {}
    out: list[StageJSON] = []  # the stages played, then those to come
    for number in range(1, stages + 1):
        last = number == stages
        if number <= len(played.stages):
            matches: list[BracketMatchJSON] = []
            for m in played.stages[number - 1]:
                points = [*m.points] if m.upper and m.lower else [0.0, 0.0]
                keys = [(number, m.number, k) for k in range(1, len(m.games) + 1)]
                matches.append(
                    {
                        "match": m.number,
                        "name": _match_name(number, stages, m.number),
                        "upper": m.upper,
                        "lower": m.lower,
                        "upper_seed": seeds.get(m.upper or ""),
                        "lower_seed": seeds.get(m.lower or ""),
                        "points": points,
                        "games": [ids[key] for key in keys if key in ids],
                        "winner": m.winner,
                        "loser": m.loser,
                    }
                )
        else:
            count = 2 ** (stages - number) + (1 if last and options.bronze_games else 0)
            matches = [
                {
                    "match": k,
                    "name": _match_name(number, stages, k),
                    "upper": None,
                    "lower": None,
                    "upper_seed": None,
                    "lower_seed": None,
                    "points": [0.0, 0.0],
                    "games": [],
                    "winner": None,
                    "loser": None,
                }
                for k in range(1, count + 1)
            ]
        out.append({"stage": number, "name": stage_name(number, stages), "matches": matches})
    return {
        "stages": out,
        "current": played.current,
        "places": [{"place": place, "name": name} for place, name in played.places],
    }


def _match_name(stage: int, stages: int, number: int) -> str:
    if stage == stages:
        return "Final" if number == 1 else "Bronze"
    return f"Match {number}"


def bracket_text(data: BracketJSON) -> str:
    """A knockout's bracket as text: stage by stage, each match's engines (with their seeds)
    and score, who goes on; then the final places.

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> players = (Player("A", 1), Player("B", 2))
    >>> played = (Round(1, (Game("B", "A", "0-1"),)), Round(2, (Game("A", "B", "1/2-1/2"),)))
    >>> print(bracket_text(bracket_data(Tournament(players, played, Rules(system="knockout")))))
    Final
      Final: A (1) 1.5 - 0.5 B (2): A goes on
    <BLANKLINE>
    Places: 1 A, 2 B
    <BLANKLINE>
    """
    lines = []
    for stage in data["stages"]:
        lines.append(stage["name"])
        for m in stage["matches"]:
            upper = f"{m['upper']} ({m['upper_seed']})" if m["upper"] else "BYE"
            lower = f"{m['lower']} ({m['lower_seed']})" if m["lower"] else "BYE"
            if m["upper"] is None and m["lower"] is None:
                upper = lower = "?"
            score = " - ".join(_num(p) for p in m["points"])
            if "BYE" in (upper, lower):
                score = "-"
            goes = f": {m['winner']} goes on" if m["winner"] else ""
            lines.append(f"  {m['name']}: {upper} {score} {lower}{goes}")
        lines.append("")
    if data["places"]:
        lines.append("Places: " + ", ".join(f"{p['place']} {p['name']}" for p in data["places"]))
        lines.append("")
    return "\n".join(lines)


def head_to_head(tournament: Tournament) -> HeadToHeadJSON:
    """A two-engine match's score from the first seed's side and the Elo difference.

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> games = (Game("A", "B", "1-0"), Game("B", "A", "1/2-1/2"))
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, games),), Rules(system="match"))
    >>> data = head_to_head(t)
    >>> data["points"], data["wins"], data["draws"], data["losses"], data["planned"]
    ([1.5, 0.5], 1, 1, 0, 2)
    >>> data["penta"], data["model"]
    ([0, 0, 0, 1, 0], 'pentanomial')
    """
    options = lookup("match").parse(tournament.rules.system_options)
    state = match_state(tournament, options)
    first, second = state.first, state.second
    figures = pair_figures(state.regulation, first, second)
    wins, draws, losses = figures["wdl"]
    tiebreaks: list[TiebreakJSON] = [
        {
            "games": len(games),
            "planned": stage.games,
            "tc": stage.tc,
            "points": [sum(g.points(first) for g in games), sum(g.points(second) for g in games)],
        }
        for stage, games in state.tiebreaks
    ]
    places = dict(state.places)
    out: HeadToHeadJSON = {
        "engines": [first, second],
        "points": figures["points"],
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "games": figures["games"],
        "planned": options.games,
        "wdl": figures["wdl"],
        "penta": figures["penta"],
        "model": figures["model"],
        "elo": figures["elo"],
        "elo_error": figures["elo_error"],
        "margin": figures["elo_error"],
        "nelo": figures["nelo"],
        "nelo_error": figures["nelo_error"],
        "los": figures["los"],
        "tiebreaks": tiebreaks,
        "winner": places.get("1"),
        "shared": "1-2" in places,
    }
    if state.sprt is not None:
        out["sprt"] = _sprt_json(state.sprt, bool(state.places))
    return out


def _sprt_json(state: SprtState, over: bool) -> SprtJSON:
    return {
        "llr": round(state.llr, 3),
        "lower": round(state.lower, 3),
        "upper": round(state.upper, 3),
        "verdict": state.verdict,
        "over": over,
    }


def pair_figures(games: Sequence[Game], first: str, second: str) -> PairJSON:
    """`first`'s results against `second` in `games` (theirs, in the order played), and the
    Elo difference they imply: pentanomial over the game pairs (two games one after the
    other, colours reversed) where there are any, trinomial otherwise.

    >>> from orchestrator.core.event.model import Game
    >>> games = (Game("A", "B", "1-0"), Game("B", "A", "1/2-1/2"), Game("A", "B", "0-1"))
    >>> figures = pair_figures(games, "A", "B")
    >>> figures["wdl"], figures["penta"], figures["model"], figures["points"]
    ([1, 1, 1], [0, 0, 0, 1, 0], 'pentanomial', [1.5, 1.5])
    """
    points = [g.points(first) for g in games]
    wins, draws, losses = points.count(1.0), points.count(0.5), points.count(0.0)
    pairs = pair_points(tuple(games), first)
    counts = penta_counts(pairs)
    elo = pentanomial(counts) if pairs else trinomial(wins, draws, losses)
    return {
        "engines": [first, second],
        "games": len(points),
        "points": [wins + draws / 2, losses + draws / 2],
        "wdl": [wins, draws, losses],
        "penta": list(counts),
        "model": "pentanomial" if pairs else "trinomial",
        "elo": _round(elo["elo"]),
        "elo_error": _round(elo["elo_error"]),
        "nelo": _round(elo["nelo"]),
        "nelo_error": _round(elo["nelo_error"]),
        "los": _round(elo["los"], 4),
    }


def gauntlet_data(tournament: Tournament) -> GauntletJSON:
    """A gauntlet's figures for every pair of a gauntlet engine and an opponent it played,
    and with `sprt` each gauntlet engine's test.

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> players = tuple(Player(n, s) for s, n in enumerate("ABC", 1))
    >>> one = Round(1, (Game("A", "C", "1-0"), Game("C", "A", "1/2-1/2")))
    >>> data = gauntlet_data(Tournament(players, (one,), Rules(system="gauntlet")))
    >>> [(p["engines"], p["wdl"], p["penta"]) for p in data["pairs"]]
    [(['A', 'C'], [1, 1, 0], [0, 0, 0, 1, 0])]
    """
    options = lookup("gauntlet").parse(tournament.rules.system_options)
    seeded = [p.name for p in tournament.by_seed()]
    pairs = []
    for name in seeded[: options.gauntlets]:
        for other in seeded:
            games = games_of(tournament, name, other) if other != name else ()
            if games:
                pairs.append(pair_figures(games, name, other))
    out: GauntletJSON = {"pairs": pairs}
    tests = gauntlet_tests(tournament, options)
    if tests:
        over = sum(1 for _ in tournament.finished_games()) >= tournament.games_planned()
        out["sprt"] = {name: _sprt_json(state, over) for name, state in tests.items()}
    return out


def gauntlet_text(data: GauntletJSON) -> str:
    """A gauntlet's pairs as text, each as a match's figures read.

    >>> print(gauntlet_text({"pairs": [{"engines": ["A", "C"], "games": 2, "points": [1.5, 0.5],
    ...     "wdl": [1, 1, 0], "penta": [0, 0, 0, 1, 0], "model": "pentanomial", "elo": 190.8,
    ...     "elo_error": None, "nelo": None, "nelo_error": None, "los": 0.8413}],
    ...     "sprt": {"A": {"llr": 0.1, "lower": -2.94, "upper": 2.94, "verdict": None,
    ...     "over": False}}}))
    Gauntlet
      A 1.5 - 0.5 C after 2 games (+1 =1 -0)
        Elo difference: +190.8
        Game pairs scoring 0, 1/2, 1, 3/2, 2: 0 0 0 1 0
      SPRT of A against the field: LLR 0.10 (-2.94, 2.94): running
    <BLANKLINE>
    """
    lines = ["Gauntlet"]
    for pair in data["pairs"]:
        a, b = pair["engines"]
        wins, draws, losses = pair["wdl"]
        score = " - ".join(_num(p) for p in pair["points"])
        lines.append(f"  {a} {score} {b} after {pair['games']} games (+{wins} ={draws} -{losses})")
        figures = _figure_lines(
            pair["elo"], pair["elo_error"], pair["model"], pair["nelo"],
            pair["nelo_error"], pair["los"], pair["penta"],
        )  # fmt: skip
        lines += ["    " + line for line in figures]
    for name, test in data.get("sprt", {}).items():
        lines.append("  " + _sprt_line(f"SPRT of {name} against the field", test))
    return "\n".join(lines) + "\n"


def head_to_head_text(data: HeadToHeadJSON) -> str:
    """A match's score as text, with the Elo difference it implies.

    >>> print(head_to_head_text({"engines": ["A", "B"], "points": [5.5, 4.5], "wins": 3,
    ...     "draws": 5, "losses": 2, "games": 10, "planned": 100, "elo": 34.9, "margin": 141.2,
    ...     "tiebreaks": [], "winner": None, "shared": False}))
    Match: A 5.5 - 4.5 B after 10 of 100 games (+3 =5 -2)
    Elo difference: +34.9 +/- 141.2 (95%)
    <BLANKLINE>
    >>> print(head_to_head_text({"engines": ["A", "B"], "points": [1, 1], "wins": 0,
    ...     "draws": 2, "losses": 0, "games": 2, "planned": 2, "elo": 0.0, "margin": None,
    ...     "tiebreaks": [{"games": 2, "planned": 2, "tc": "300+2", "points": [1.5, 0.5]}],
    ...     "winner": "A", "shared": False}))
    Match: A 1 - 1 B after 2 of 2 games (+0 =2 -0)
    Tiebreak 1 at 300+2: A 1.5 - 0.5 B after 2 of 2 games
    Winner: A
    Elo difference: +0.0
    <BLANKLINE>
    """
    first, second = data["engines"]
    a, b = (_num(p) for p in data["points"])
    lines = [
        f"Match: {first} {a} - {b} {second} after {data['games']} of {data['planned']} games "
        f"(+{data['wins']} ={data['draws']} -{data['losses']})"
    ]
    for n, tiebreak in enumerate(data["tiebreaks"], 1):
        a, b = (_num(p) for p in tiebreak["points"])
        tc = f" at {tiebreak['tc']}" if tiebreak["tc"] else ""
        lines.append(
            f"Tiebreak {n}{tc}: {first} {a} - {b} {second} after {tiebreak['games']} of "
            f"{tiebreak['planned']} games"
        )
    if data["winner"]:
        lines.append(f"Winner: {data['winner']}")
    elif data["shared"]:
        lines.append("Shared: the match ended tied")
    lines += _figure_lines(
        data["elo"], data["margin"], data.get("model"), data.get("nelo"),
        data.get("nelo_error"), data.get("los"), data.get("penta"),
    )  # fmt: skip
    if "sprt" in data:
        lines.append(_sprt_line("SPRT", data["sprt"]))
    return "\n".join(lines) + "\n"


def _figure_lines(
    elo: float | None,
    margin: float | None,
    model: str | None,
    nelo: float | None,
    nelo_error: float | None,
    los: float | None,
    penta: list[int] | None,
) -> list[str]:
    """The Elo difference of a pair of engines, as the standings' text shows it."""
    shown = "unbounded" if elo is None else f"{elo:+.1f}"
    if margin is not None:
        shown += f" +/- {margin:.1f} (95%{', ' + model if model else ''})"
    lines = [f"Elo difference: {shown}"]
    if nelo is not None and nelo_error is not None and los is not None:
        lines.append(f"nElo: {nelo:+.1f} +/- {nelo_error:.1f}; LOS: {100 * los:.1f} %")
    if model == "pentanomial" and penta is not None:
        lines.append(f"Game pairs scoring 0, 1/2, 1, 3/2, 2: {' '.join(map(str, penta))}")
    return lines


def _sprt_line(label: str, test: SprtJSON) -> str:
    shown = f"LLR {test['llr']:.2f} ({test['lower']:.2f}, {test['upper']:.2f})"
    return f"{label}: {shown}: {sprt_outcome(test)}"


_SHORT = {
    "sb": "SB",
    "wins": "Wins",
    "black": "Black",
    "direct": "DE",
    "buchholz": "Buch",
    "median-buchholz": "MBuch",
    "rmobility": "RMob",
}


def _num(x: float) -> str:
    return f"{x:g}"


def _placed(line: Entry) -> PlacedJSON:
    return {"place": line.place, "name": line.name, "seed": line.seed, "byes": line.byes}


def standings_data(
    tournament: Tournament,
    order: Sequence[Tiebreak],
    strikes: Mapping[str, int] | None = None,
    withdrawn: Mapping[str, int] | None = None,
    anchor: tuple[str, float] | None = None,
    *,
    ratings: bool = True,
) -> list[StandingJSON]:
    """The standings as the `--json` outputs give them, with each engine's `strikes` and
    the round after which it `withdrawn`, where given.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, (Game("A", "B", "1-0"),)),))
    >>> [(d["place"], d["name"], d["score"]) for d in standings_data(t, ["sb"])]
    [('1', 'A', 1.0), ('2', 'B', 0.0)]
    """
    strikes, withdrawn = strikes or {}, withdrawn or {}
    lines = standings(tournament, order)
    if ratings:
        fitted = {r["name"]: r for r in event_ratings(tournament, anchor)}
    else:  # no fit (the overview's top of the standings): no Elo, the draw ratio alone
        fitted = {
            line.name: unrated(
                line.name, line.games, line.score, line.draws / line.games if line.games else 0.0
            )
            for line in lines
        }
    rounded = _round
    return [
        {
            **_placed(line),
            "score": line.score,
            "games": line.games,
            "wins": line.wins,
            "draws": line.draws,
            "losses": line.losses,
            "tiebreaks": {tb: line.tiebreaks[tb] for tb in order},
            "strikes": strikes.get(line.name, 0),
            "withdrawn_after": withdrawn.get(line.name),
            "elo": rounded(fitted[line.name]["elo"]),
            "elo_low": rounded(fitted[line.name]["elo_low"]),
            "elo_high": rounded(fitted[line.name]["elo_high"]),
            "performance": rounded(fitted[line.name]["performance"]),
            "draw_ratio": round(fitted[line.name]["draw_ratio"], 3),
            "los_next": rounded(fitted[line.name]["los_next"], 3),
        }
        for line in lines
    ]


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def event_ratings(tournament: Tournament, anchor: tuple[str, float] | None = None) -> list[Rating]:
    """Every engine's Elo fitted over the event's played games (forfeits and BYEs out),
    best first (`core/stats/ratings.py`), the field's mean at 0 or `anchor` (an engine at
    its rating).

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> games = (Game("A", "B", "1-0"), Game("B", "A", "1/2-1/2"))
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, games),))
    >>> [(r["name"], round(r["elo"], 1)) for r in event_ratings(t)]
    [('A', 95.4), ('B', -95.4)]
    """
    from orchestrator.core.stats.ratings import fit_ratings  # numpy and scipy: only here

    points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
    games = [
        (g.white, g.black, points[g.result])
        for r in tournament.rounds
        for g in r.games
        if g.result in points and not g.forfeit
    ]
    return fit_ratings(games, names=[p.name for p in tournament.players], anchor=anchor)


def standings_table(
    tournament: Tournament, order: Sequence[Tiebreak], anchor: tuple[str, float] | None = None
) -> str:
    """The standings as a text table with a legend of the tiebreaks.

    >>> from orchestrator.core.event.model import Game, Player, Round
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, (Game("A", "B", "1-0"),)),))
    >>> print(standings_table(t, []))
    Place  Engine  Seed  Score  Games  +  =  -  BYE  Elo  95%
    -----  ------  ----  -----  -----  -  -  -  ---  ---  ---
        1  A          1      1      1  1  0  0    0    -    -
        2  B          2      0      1  0  0  1    0    -    -
    <BLANKLINE>
    Elo: fitted over every game, the field's mean at 0; 95%: its interval
    <BLANKLINE>
    """
    lines: list[Line] = standings(tournament, order)
    ratings = {r["name"]: r for r in event_ratings(tournament, anchor)}
    header = ["Place", "Engine", "Seed", "Score", "Games", "+", "=", "-", "BYE"]
    header += [_SHORT[tb] for tb in order] + ["Elo", "95%"]
    rows = [
        [
            line.place,
            line.name,
            str(line.seed),
            _num(line.score),
            str(line.games),
            str(line.wins),
            str(line.draws),
            str(line.losses),
            str(line.byes),
            *(_num(line.tiebreaks[tb]) for tb in order),
            *_elo_cells(ratings[line.name], signed=anchor is None),
        ]
        for line in lines
    ]
    legend = ", ".join(f"{_SHORT[tb]} = {TIEBREAKS[tb]}" for tb in order)
    return (
        _table(header, rows)
        + (f"\nTiebreaks: {legend}\n" if order else "")
        + f"\nElo: fitted over every game, {_anchored(anchor)}; 95%: its interval\n"
    )


def _anchored(anchor: tuple[str, float] | None) -> str:
    return "the field's mean at 0" if anchor is None else f"{anchor[0]} at {anchor[1]:g}"


def _elo_cells(rating: Rating, signed: bool = True) -> list[str]:
    """The Elo and its 95 % interval as the text table shows them ("-" when unbounded):
    signed around the field's mean, plain beside an anchored engine's rating."""
    elo, low, high = rating["elo"], rating["elo_low"], rating["elo_high"]
    if elo is None or low is None or high is None:
        return ["-", "-"]
    form = "+.0f" if signed else ".0f"
    return [format(elo, form), f"{format(low, form)}..{format(high, form)}"]


def team_data(tournament: Tournament) -> list[TeamStandingJSON]:
    """A team Swiss's team standings as the `--json` outputs give them.

    >>> from orchestrator.core.event.model import Game, Player, Round, Team
    >>> teams = (Team("A", ("a",)), Team("B", ("b",)))
    >>> t = Tournament((), (Round(1, (Game("b", "a", "1/2-1/2"),)),), teams=teams)
    >>> [(d["place"], d["name"], d["match_points"], d["board_points"]) for d in team_data(t)]
    [('1-2', 'A', 1.0, 0.5), ('1-2', 'B', 1.0, 0.5)]
    """
    members = {team.name: list(team.members) for team in tournament.teams}
    return [
        {
            **_placed(line),
            "match_points": line.match_points,
            "board_points": line.board_points,
            "matches": line.games,
            "won": line.wins,
            "drawn": line.draws,
            "lost": line.losses,
            "players": members[line.name],
        }
        for line in team_standings(tournament)
    ]


def team_table(tournament: Tournament) -> str:
    """A team Swiss's team standings as a text table: match points, then board points.

    >>> from orchestrator.core.event.model import Game, Player, Round, Team
    >>> teams = (Team("A", ("a",)), Team("B", ("b",)))
    >>> print(team_table(Tournament((), (Round(1, (Game("b", "a", "1-0"),)),), teams=teams)))
    Place  Team  Seed  MP  BP  Matches  +  =  -  BYE
    -----  ----  ----  --  --  -------  -  -  -  ---
        1  B        2   2   1        1  1  0  0    0
        2  A        1   0   0        1  0  0  1    0
    <BLANKLINE>
    Match points (MP): 2 for a won match, 1 for a drawn one; then board points (BP).
    <BLANKLINE>
    """
    header = ["Place", "Team", "Seed", "MP", "BP", "Matches", "+", "=", "-", "BYE"]
    rows = [
        [
            d["place"],
            d["name"],
            str(d["seed"]),
            _num(d["match_points"]),
            _num(d["board_points"]),
            str(d["matches"]),
            str(d["won"]),
            str(d["drawn"]),
            str(d["lost"]),
            str(d["byes"]),
        ]
        for d in team_data(tournament)
    ]
    legend = "Match points (MP): 2 for a won match, 1 for a drawn one; then board points (BP)."
    return _table(header, rows) + f"\n{legend}\n"


def crosstable(tournament: Tournament, order: Sequence[Tiebreak]) -> str:
    """Rows by place; each cell the results against that opponent in order (1, =, 0).

    >>> from orchestrator.core.event.model import Game, Player, Round, Rules
    >>> games = (Game("A", "B", "1-0"), Game("B", "A", "1/2-1/2"))
    >>> t = Tournament((Player("A", 1), Player("B", 2)), (Round(1, games),), Rules())
    >>> print(crosstable(t, []))
    #  Engine  Score   1   2
    -  ------  -----  --  --
    1  A         1.5   *  1=
    2  B         0.5  0=   *
    <BLANKLINE>
    """
    lines = standings(tournament, order)
    number = {line.name: i + 1 for i, line in enumerate(lines)}
    cells: dict[tuple[str, str], str] = {}
    for line in lines:
        for opponent, pts in line.results:
            cells[line.name, opponent] = cells.get((line.name, opponent), "") + mark(pts)
    header = ["#", "Engine", "Score", *(str(i + 1) for i in range(len(lines)))]
    rows = []
    for line in lines:
        row = [str(number[line.name]), line.name, _num(line.score)]
        for other in lines:
            row.append("*" if other is line else cells.get((line.name, other.name), ""))
        rows.append(row)
    return _table(header, rows)


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Columns two spaces apart, numbers to the right, column `left` (the names) to the
    left."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i == left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(header), rule, *(fmt(r) for r in rows)]) + "\n"
