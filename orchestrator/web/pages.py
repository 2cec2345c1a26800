"""HTML pages as pure functions of the JSON data the API serves; every text is escaped."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from orchestrator.core.game.clock import hms
from orchestrator.core.game.endings import ENDINGS, HEADS
from orchestrator.event.api import (
    AuditEntry,
    BracketJSON,
    BracketMatchJSON,
    EndingsJSON,
    GameJSON,
    GauntletJSON,
    HeadToHeadJSON,
    OverviewJSON,
    RoundGameJSON,
    RoundJSON,
    ScheduleGame,
    ScheduleJSON,
    StandingJSON,
    StandingsJSON,
    TeamStandingJSON,
    VoidedJSON,
    sprt_outcome,
)
from orchestrator.event.season import SeasonStatus
from orchestrator.event.tcec_files import CrosstableJSON


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


#: every page's `<base>`, which `base` replaces where the event's view is mounted elsewhere
BASE = "<base href='/'>"


def mounted(page: str, root: str) -> str:
    """An event's `page` where its view is mounted at `root` under a season's: its links
    resolve from there (its `<base>`), and its navigation leads back to the season.

    >>> page = mounted(layout("E", ""), "/League_2")
    >>> "<base href='/League_2/'>" in page, "<nav><a href='/'>Season</a>" in page
    (True, True)
    """
    if not root:
        return page
    page = page.replace(BASE, f"<base href='{_e(root)}/'>", 1)
    return page.replace("<nav>", "<nav><a href='/'>Season</a>", 1)


def layout(title: str, body: str, *, live: bool = True, game: int | None = None) -> str:
    """A page: the navigation, `body`, and the live view's script, which keeps a `live` page
    up to date (or follows `game`)."""
    attrs = f" data-game='{game}'" if game is not None else (" data-live='1'" if live else "")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"{BASE}<title>{_e(title)}</title><link rel='stylesheet' href='static/app.css'>"
        "<script src='static/app.js' defer></script></head><body>"
        "<nav><a href='./'>Overview</a><a href='schedule'>Schedule</a>"
        "<a href='standings'>Standings</a><a href='crosstable'>Crosstable</a>"
        "<a href='rounds'>Rounds</a><a href='log'>Log</a>"
        "<a href='download/event.pgn'>Event PGN</a><a href='download/archive.zip'>PGN archive</a>"
        f"</nav><main{attrs}>{body}</main></body></html>"
    )


def overview(data: OverviewJSON) -> str:
    total = data["games_total"] or 0
    done = data["games_finished"]
    share = 100 * done / total if total else 0
    state = "finished" if data["finished"] else f"round {data['round']} of {data['rounds']}"
    if data.get("paused"):
        state += " (paused)"
    if not data["finished"] and not data.get("daemon", {}).get("running", True):
        state += " (no daemon is running)"
    running = "".join(
        f"<li><a href='games/{g['id']}'>{g['round']}.{g['number']} {_e(g['white'])} - "
        f"{_e(g['black'])}</a>: ply <span data-plies-of='{g['id']}'>{g['plies']}</span></li>"
        for g in data["games_running"]
    )
    top = "".join(
        f"<tr><td>{_e(s['place'])}</td><td>{_e(s['name'])}</td><td>{s['score']:g}</td></tr>"
        for s in data["top"]
    )
    teams = "".join(
        f"<tr><td>{_e(t['place'])}</td><td>{_e(t['name'])}</td><td>{t['match_points']:g}</td>"
        f"<td>{t['board_points']:g}</td></tr>"
        for t in data.get("top_teams", ())
    )
    body = (
        f"<h1>{_e(data['event'])}</h1><p>{_e(state)}: {done} of {total} games played</p>"
        f"<progress max='{max(total, 1)}' value='{done}' title='{share:.0f}%'></progress>"
        f"<h2>Playing now</h2><ul id='running'>{running or '<li>nothing</li>'}</ul>"
        + (
            "<h2>Leading teams</h2><table id='top-teams'><tr><th></th><th>Team</th>"
            f"<th>Match points</th><th>Board points</th></tr>{teams}</table>"
            if teams
            else ""
        )
        + f"<h2>Leaders</h2><table>{top}</table>"
        "<h2>Score by round</h2><img src='progress.svg' alt='score by round'>"
    )
    return layout(data["event"], body)


def standings(data: StandingsJSON) -> str:
    lines = data["standings"]
    order = list(lines[0]["tiebreaks"]) if lines else []
    head = "".join(f"<th>{_e(tb)}</th>" for tb in order)
    rows = "".join(
        f"<tr><td>{_e(s['place'])}</td><td>{_e(s['name'])}</td><td>{s['score']:g}</td>"
        f"<td>{s['games']}</td><td>{s['wins']}</td><td>{s['draws']}</td><td>{s['losses']}</td>"
        f"<td>{s['byes']}</td>"
        + "".join(f"<td>{s['tiebreaks'][tb]:g}</td>" for tb in order)
        + _rating_cells(s)
        + f"<td>{s.get('strikes', 0)}</td><td>{_withdrawn(s.get('withdrawn_after'))}</td></tr>"
        for s in lines
    )
    provisional = " (provisional)" if data.get("provisional") else ""
    teams = _teams(data["teams"]) + "<h2>Boards</h2>" if "teams" in data else ""
    if "bracket" in data:
        teams = bracket(data["bracket"]) + "<h2>Engines</h2>" + teams
    if "match" in data:
        teams = head_to_head(data["match"]) + teams
    if "gauntlet" in data:
        teams = gauntlet(data["gauntlet"]) + "<h2>Engines</h2>" + teams
    body = (
        f"<h1>Standings after {data['rounds']} round(s){provisional}</h1>{teams}"
        "<table id='standings'><tr><th>Place</th><th>Engine</th><th>Score</th><th>Games</th>"
        f"<th>+</th><th>=</th><th>-</th><th>BYE</th>{head}"
        "<th title='fitted over every game, the field&#39;s mean at 0'>Elo</th><th>95%</th>"
        "<th title='likelihood of superiority over the next engine'>LOS</th>"
        "<th>Strikes</th><th>Withdrawn</th>"
        f"</tr>{rows}</table>{endings(data['endings'])}"
    )
    return layout(f"{data['event']}: standings", body)


def endings(data: EndingsJSON) -> str:
    """How the games ended: a row per engine and the event's, a column per ending that
    happened (`standings --json`'s `endings`)."""
    event = data["event"]
    kinds = [k for k in ENDINGS if event.get(k)]
    if not kinds:
        return ""
    head = "".join(f"<th>{_e(HEADS[k])}</th>" for k in kinds)

    def row(name: str, counts: Mapping[str, object]) -> str:
        over = counts.get("overstep_ms_max")
        cells = "".join(f"<td>{counts.get(k, 0)}</td>" for k in kinds)
        shown = "-" if over is None else f"{over}"
        return f"<tr><td>{_e(name)}</td><td>{counts['games']}</td>{cells}<td>{shown}</td></tr>"

    rows = "".join(row(n, c) for n, c in data["engines"].items()) + row("All", event)
    return (
        "<h2>Endings</h2><p>A fault counts against the engine at fault.</p>"
        f"<table id='endings'><tr><th>Engine</th><th>Games</th>{head}"
        f"<th>Overstep ms</th></tr>{rows}</table>"
    )


def _rating_cells(line: StandingJSON) -> str:
    """An engine's fitted Elo, its 95 % interval and LOS over the next ("-": unbounded)."""
    elo, low, high, los = line["elo"], line["elo_low"], line["elo_high"], line["los_next"]
    if elo is None or low is None or high is None:
        return "<td>-</td><td>-</td><td>-</td>"
    shown = "-" if los is None else f"{100 * los:.0f} %"
    return f"<td>{elo:+.0f}</td><td>{low:+.0f} … {high:+.0f}</td><td>{shown}</td>"


def bracket(data: BracketJSON) -> str:
    """A knockout's bracket: a column per stage, each match with its engines (seeds),
    points and links to its games; then the final places."""
    columns = []
    for stage in data["stages"]:
        cards = "".join(
            _match_card(m, stage["stage"] == data["current"] and not data["places"])
            for m in stage["matches"]
        )
        columns.append(f"<div class='stage'><h3>{_e(stage['name'])}</h3>{cards}</div>")
    places = "".join(
        f"<tr><td>{_e(p['place'])}</td><td>{_e(p['name'])}</td></tr>" for p in data["places"]
    )
    return f"<h2>Bracket</h2><div class='bracket' id='bracket'>{''.join(columns)}</div>" + (
        f"<h2>Final places</h2><table id='places'>{places}</table>" if places else ""
    )


def _match_card(m: BracketMatchJSON, current: bool) -> str:
    def side(name: str | None, seed: int | None, points: float) -> str:
        if name is None:
            shown = "BYE" if m["winner"] else "?"
            return f"<div class='who out'><span>{shown}</span><span></span></div>"
        state = " won" if m["winner"] == name else " out" if m["loser"] == name else ""
        return (
            f"<div class='who{state}'><span>{_e(name)} ({seed})</span><span>{points:g}</span></div>"
        )

    games = "".join(f"<a href='games/{game}'>{k}</a>" for k, game in enumerate(m["games"], start=1))
    now = " now" if current and not m["winner"] and m["upper"] and m["lower"] else ""
    return (
        f"<div class='match{now}' data-match='{m['match']}'><small>{_e(m['name'])}</small>"
        + side(m["upper"], m["upper_seed"], m["points"][0])
        + side(m["lower"], m["lower_seed"], m["points"][1])
        + f"<div class='games'>{games}</div></div>"
    )


def head_to_head(data: HeadToHeadJSON) -> str:
    """A two-engine match: its score and the Elo difference with its margin."""
    first, second = data["engines"]
    elo = "unbounded" if data["elo"] is None else f"{data['elo']:+.1f}"
    margin = "" if data["margin"] is None else f" ± {data['margin']:.1f} (95%, {data['model']})"
    if data["nelo"] is not None and data["nelo_error"] is not None and data["los"] is not None:
        margin += (
            f"; nElo {data['nelo']:+.1f} ± {data['nelo_error']:.1f}; LOS {100 * data['los']:.1f} %"
        )
    if data["model"] == "pentanomial":
        margin += f"; game pairs scoring 0, ½, 1, 1½, 2: {' '.join(map(str, data['penta']))}"
    tiebreaks = "".join(
        f"<p class='tiebreak'>Tiebreak {n}{' at ' + _e(t['tc']) if t['tc'] else ''}: "
        f"{_e(first)} {t['points'][0]:g} - {t['points'][1]:g} {_e(second)} after "
        f"{t['games']} of {t['planned']} games</p>"
        for n, t in enumerate(data["tiebreaks"], 1)
    )
    ending = ""
    if "sprt" in data:
        test = data["sprt"]
        ending += (
            f"<p id='sprt'>SPRT: LLR {test['llr']:.2f} "
            f"({test['lower']:.2f}, {test['upper']:.2f}): {sprt_outcome(test)}</p>"
        )
    if data["winner"]:
        ending += f"<p id='winner'>Winner: {_e(data['winner'])}</p>"
    elif data["shared"]:
        ending += "<p id='winner'>Shared: the match ended tied</p>"
    return (
        f"<h2>Match</h2><p id='match'>{_e(first)} {data['points'][0]:g} - "
        f"{data['points'][1]:g} {_e(second)} after {data['games']} of "
        f"{data['planned']} games (+{data['wins']} ={data['draws']} -{data['losses']}); "
        f"Elo difference {elo}{margin}</p>{tiebreaks}{ending}"
    )


def gauntlet(data: GauntletJSON) -> str:
    """A gauntlet: a row per pair of a gauntlet engine and an opponent, with the Elo
    difference it implies; with `sprt`, each gauntlet engine's test."""

    def number(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    rows = "".join(
        f"<tr><td>{_e(p['engines'][0])}</td><td>{_e(p['engines'][1])}</td><td>{p['games']}</td>"
        f"<td>{p['points'][0]:g} - {p['points'][1]:g}</td>"
        f"<td>+{p['wdl'][0]} ={p['wdl'][1]} -{p['wdl'][2]}</td>"
        f"<td>{' '.join(map(str, p['penta'])) if p['model'] == 'pentanomial' else '-'}</td>"
        f"<td>{number(p['elo'], '+.1f')} ± {number(p['elo_error'], '.1f')}</td>"
        f"<td>{number(p['nelo'], '+.1f')} ± {number(p['nelo_error'], '.1f')}</td>"
        f"<td>{number(None if p['los'] is None else 100 * p['los'], '.1f')} %</td></tr>"
        for p in data["pairs"]
    )
    tests = "".join(
        f"<p class='sprt'>SPRT of {_e(name)} against the field: LLR {t['llr']:.2f} "
        f"({t['lower']:.2f}, {t['upper']:.2f}): "
        f"{sprt_outcome(t)}</p>"
        for name, t in data.get("sprt", {}).items()
    )
    return (
        "<h2>Gauntlet</h2><table id='gauntlet'><tr><th>Engine</th><th>Opponent</th>"
        "<th>Games</th><th>Score</th><th>W/D/L</th>"
        "<th title='game pairs scoring 0, ½, 1, 1½, 2'>Pairs</th><th>Elo (95%)</th>"
        f"<th>nElo</th><th>LOS</th></tr>{rows}</table>{tests}"
    )


def _teams(lines: list[TeamStandingJSON]) -> str:
    """A team Swiss's team standings: match points, then board points."""
    rows = "".join(
        f"<tr><td>{_e(t['place'])}</td><td title='{_e(', '.join(t['players']))}'>"
        f"{_e(t['name'])}</td><td>{t['match_points']:g}</td><td>{t['board_points']:g}</td>"
        f"<td>{t['matches']}</td><td>{t['won']}</td><td>{t['drawn']}</td><td>{t['lost']}</td>"
        f"<td>{t['byes']}</td></tr>"
        for t in lines
    )
    return (
        "<h2>Teams</h2><table id='teams'><tr><th>Place</th><th>Team</th>"
        "<th title='2 for a won match, 1 for a drawn one'>Match points</th>"
        "<th>Board points</th><th>Matches</th><th>+</th><th>=</th><th>-</th><th>BYE</th></tr>"
        f"{rows}</table>"
    )


def _withdrawn(after: int | None) -> str:
    return "" if after is None else f"after round {after}"


def audit(event: str, entries: list[AuditEntry]) -> str:
    """The audit log: controls, faults and strikes, withdrawals, engine updates."""
    rows = "".join(
        f"<tr><td>{_e(e['at'])}</td><td>{_e(e['what'])}</td><td>{_e(e['text'])}</td></tr>"
        for e in entries
    )
    body = (
        "<h1>Audit log</h1><table id='log'><tr><th>When</th><th>What</th><th></th></tr>"
        f"{rows or '<tr><td colspan=3>nothing yet</td></tr>'}</table>"
    )
    return layout(f"{event}: log", body)


def crosstable(event: str, data: CrosstableJSON, ids: list[int], text: str) -> str:
    """The crosstable as a grid (TCEC's `crosstable.json` data): each cell lists the games
    of a pair, each linking to its game page; the text table follows."""
    order = data["Order"]
    head = "".join(f"<th title='{_e(name)}'>{i}</th>" for i, name in enumerate(order, 1))
    rows = []
    for i, name in enumerate(order, 1):
        row = data["Table"][name]
        cells = []
        for opponent in order:
            if opponent == name:
                cells.append("<td class='self'></td>")
                continue
            met = row["Results"].get(opponent)
            scores = met["Scores"] if met else []
            links = "".join(
                f"<a href='games/{ids[s['Game'] - 1]}' class='{_outcome(s['Result'])}' "
                f"title='game {ids[s['Game'] - 1]}'>{_points(s['Result'])}</a>"
                for s in scores
            )
            cells.append(f"<td>{links}</td>")
        rows.append(
            f"<tr><td>{i}</td><td>{_e(name)}</td><td>{row['Score']:g}</td>"
            f"<td>{row['Games']}</td><td>{row['Neustadtl']:g}</td>{''.join(cells)}</tr>"
        )
    body = (
        "<h1>Crosstable</h1><table class='cross' id='crosstable'><tr><th>#</th><th>Engine</th>"
        f"<th>Score</th><th>Games</th><th>SB</th>{head}</tr>{''.join(rows)}</table>"
        f"<h2>As text</h2><pre>{_e(text)}</pre>"
    )
    return layout(f"{event}: crosstable", body)


def _outcome(points: float) -> str:
    return {1.0: "win", 0.0: "loss"}.get(points, "draw")


def _points(points: float) -> str:
    return {1.0: "1", 0.0: "0"}.get(points, "\u00bd")


def schedule(data: ScheduleJSON) -> str:
    """Past games with their results, the games to come with estimated starts, and the
    rounds not yet paired."""
    rows = "".join(
        f"<tr><td>{g['round']}.{g['number']}</td><td><a href='games/{g['id']}'>"
        f"{_e(g['white'])} - {_e(g['black'])}</a></td>"
        f"<td>{_e(g['result'] or g['status'])}</td>"
        f"<td>{_e(_when(g))}</td><td>{_e(_duration(g['duration_s']))}</td>"
        f"<td>{_e(g['opening'])}</td></tr>"
        for g in data["games"]
    )
    coming = "".join(
        f"<tr><td>{r['round']}</td><td>not paired yet</td><td></td>"
        f"<td>~ {_e(_short(r['estimated_start']))}</td><td></td><td></td></tr>"
        for r in data["coming_rounds"]
    )
    earlier = (
        f"<p id='earlier'>{data['earlier_games']} earlier games are not listed here: the "
        "event's PGN has them all (<a href='download/event.pgn'>download</a>).</p>"
        if data["earlier_games"]
        else ""
    )
    later = (
        f"<p id='later'>and {data['later_rounds']} more rounds.</p>" if data["later_rounds"] else ""
    )
    body = (
        f"<h1>Schedule</h1><p>A game takes {_duration(data['mean_game_s'])} on average; the "
        f"times to come are estimates.</p>{earlier}<table id='schedule'><tr><th>Game</th>"
        "<th>Pairing</th><th>Result</th><th>Start</th><th>Duration</th><th>Opening</th></tr>"
        f"{rows}{coming}</table>{later}"
    )
    return layout(f"{data['event']}: schedule", body)


def _short(iso: str | None) -> str:
    return "" if not iso else iso[:16].replace("T", " ") + " UTC"


def _when(game: ScheduleGame) -> str:
    if game["started_at"]:
        return _short(game["started_at"])
    if game["estimated_start"]:
        return "~ " + _short(game["estimated_start"])
    return ""


def _duration(seconds: float | None) -> str:
    return "" if seconds is None else hms(seconds)


def rounds(event: str, numbers: list[int]) -> str:
    items = "".join(
        f"<li><a href='rounds/{n}'>Round {n}</a> (<a href='download/rounds/{n}.pgn'>PGN</a>)</li>"
        for n in numbers
    )
    return layout(f"{event}: rounds", f"<h1>Rounds</h1><ul>{items}</ul>")


def _voided(attempts: list[VoidedJSON]) -> str:
    return "".join(
        f"<br><small>attempt {a['attempt']} voided: {_e(a['reason'])}</small>" for a in attempts
    )


def _host(host: str | None) -> str:
    """Where a game ran, as the game page says it.

    >>> _host("gpu-1"), _host(None)
    ('played on gpu-1', '')
    """
    return f"played on {host}" if host else ""


def _log_link(url: str | None) -> str:
    """A faulted game's engine log, linked from its reason."""
    return f" (<a href='{_e(url)}'>engine log</a>)" if url else ""


def round_page(event: str, data: RoundJSON) -> str:
    """A round's games in playing order; in a team Swiss, match by match, each with its
    score and its games board by board."""
    hosts = any(g.get("host") for g in data["games"])  # a column only where games ran elsewhere
    boards = "matches" in data
    columns = 6 + hosts + boards

    def row(g: RoundGameJSON) -> str:
        return (
            f"<tr><td>{g['number']}</td>"
            + (f"<td>{g['board']}</td>" if boards else "")
            + f"<td><a href='games/{g['id']}'>{_e(g['white'])} - "
            f"{_e(g['black'])}</a></td><td>{_e(g['result'] or g['status'])}"
            f"{' (forfeit)' if g.get('forfeit') else ''}</td>"
            f"<td>{_e(g['reason'])}{_log_link(g.get('fault_log'))}{_voided(g.get('voided', []))}"
            f"</td><td>{_e(g['opening'])}</td>"
            + (f"<td>{_e(g.get('host'))}</td>" if hosts else "")
            + "</tr>"
        )

    if boards:
        by_id = {g["id"]: g for g in data["games"]}
        rows = "".join(
            f"<tr class='match'><th colspan='{columns}'>{_e(m['team1'])} - {_e(m['team2'])}: "
            f"{_score(m['points1'])} - {_score(m['points2'])}"
            f"{'' if m['result'] else ' (playing)'}</th></tr>"
            + "".join(row(by_id[i]) for i in m["games"])
            for m in data["matches"]
        )
    else:
        rows = "".join(row(g) for g in data["games"])
    bye = f"<p>BYE: {_e(data['bye'])}</p>" if data["bye"] else ""
    body = (
        f"<h1>Round {data['round']}</h1>{bye}<table id='games'><tr><th>#</th>"
        f"{'<th>Board</th>' if boards else ''}<th>Game</th><th>Result</th>"
        f"<th>Reason</th><th>Opening</th>{'<th>Host</th>' if hosts else ''}</tr>{rows}</table>"
    )
    return layout(f"{event}: round {data['round']}", body)


def _score(points: float) -> str:
    """Board points as people write them.

    >>> _score(2.5), _score(0.5), _score(3.0)
    ('2\u00bd', '\u00bd', '3')
    """
    whole, half = int(points), points % 1 == 0.5
    return f"{whole if whole or not half else ''}{chr(0xBD) if half else ''}"


def _engine(side: str, name: str) -> str:
    fields = [
        ("eval", "Eval"),
        ("depth", "Depth"),
        ("nodes", "Nodes"),
        ("speed", "Speed"),
        ("tb", "TB hits"),
        ("hash", "Hash"),
    ]
    rows = "".join(f"<dt>{label}</dt><dd id='{side}-{key}'>-</dd>" for key, label in fields)
    return (
        f"<section class='engine' id='panel-{side}'><h3><span>{_e(name)}</span>"
        f"<span class='clock' id='{side}-clock'>-</span></h3><dl>{rows}</dl>"
        f"<div>PV: <span class='pv' id='{side}-pv'></span></div></section>"
    )


def _kibitzer(index: int, name: str, desc: str) -> str:
    """A kibitzer's panel: what it says of the current position."""
    fields = [("eval", "Eval"), ("depth", "Depth"), ("nodes", "Nodes"), ("speed", "Speed")]
    rows = "".join(f"<dt>{label}</dt><dd id='kib{index}-{key}'>-</dd>" for key, label in fields)
    return (
        f"<section class='engine kibitzer' id='kibitzer-{index}'><h3><span>{_e(name)}</span>"
        f"<small>{_e(desc)}</small></h3><dl>{rows}</dl>"
        f"<div>PV: <span class='pv' id='kib{index}-pv'></span></div></section>"
    )


def game_page(event: str, game: GameJSON) -> str:
    """A game, live while it is played: both engines' panels (evaluation, depth, nodes,
    speed, tablebase hits, hash, PV in SAN, a ticking clock), the board (python-chess's
    picture: the last move marked, the expected reply as an arrow), the moves in pairs (a
    click shows that position), a panel per kibitzer, and the evaluation graph."""
    body = (
        f"<h1>{_e(game['white'])} - {_e(game['black'])}</h1>"
        + (
            f"<p>Board {game['board']}: {_e(game['white_team'])} - {_e(game['black_team'])}</p>"
            if "board" in game
            else ""
        )
        + f"<p>Round {game['round']}.{game['number']}: <span id='status'>"
        f"{_e(game['result'] or game['status'])}</span> <span id='reason'>{_e(game['reason'])}"
        f"</span> <span id='host'>{_e(_host(game.get('host')))}</span>"
        f" (<a href='download/games/{game['id']}.pgn'>PGN</a>"
        + (f", <a id='log' href='{_e(game['log'])}'>engine log</a>" if game.get("log") else "")
        + ")</p>"
        "<div class='game'><div class='side'>"
        f"{_engine('black', game['black'])}"
        "<img id='board' class='board' width='360' height='360' alt='the position'>"
        f"{_engine('white', game['white'])}</div>"
        "<div><h2>Moves</h2><p>Position: <span id='position'>live</span> "
        "<button id='live' type='button'>back to live</button></p>"
        "<ol id='moves' class='moves'></ol></div>"
        + "".join(_kibitzer(k["index"], k["engine"], k["desc"]) for k in game["kibitzers"])
        + "</div><h2>Evaluation (White's view, pawns, by move)</h2>"
        "<svg id='eval' width='600' height='200' viewBox='0 0 600 200'></svg>"
    )
    return layout(f"{event}: {game['white']} - {game['black']}", body, game=game["id"])


def season_page(status: SeasonStatus) -> str:
    """A season: each event with its state, its progress, its leaders or final places and
    who moves up or down, linked to the event's own pages (served under its name)."""
    rows = []
    for event in status.events:
        name = _e(event.name)
        if event.state != "pending":
            name = f"<a href='{_e(event.slug)}/'>{name}</a>"
        if event.state == "pending":
            state = "pending" + (f" (after {_e(', '.join(event.after))})" if event.after else "")
        elif event.state == "running":
            state = f"playing: {event.games_finished} of {event.games_total or '?'} games"
        else:
            state = f"finished: {event.games_finished} games"
        places = event.places if event.state == "finished" else event.places[:3]
        shown = ", ".join(f"{p} {n}" for p, n in places[:8])
        shown += ", ..." if len(places) > 8 else ""
        field = ", ".join(event.field)
        if event.field_by_director:
            field += " (set by a director)"
        moves = "".join(
            f"<div class='{cls}'>{word}: {_e(', '.join(names))}</div>"
            for cls, word, names in (("up", "up", event.up), ("down", "down", event.down))
            if names
        )
        if event.undecided:
            moves += f"<div class='undecided'>undecided: {_e(event.undecided)}</div>"
        downloads = (
            f"<a href='{_e(event.slug)}/download/event.pgn'>PGN</a>"
            if event.state != "pending"
            else ""
        )
        rows.append(
            f"<tr data-state='{event.state}'><td>{name}</td><td>{_e(event.system)}</td>"
            f"<td>{state}</td><td>{_e(field)}</td><td>{_e(shown)}{moves}</td>"
            f"<td>{downloads}</td></tr>"
        )
    held = (
        f"<p class='held'>Held before its next event: {_e(status.held)}</p>"
        if status.held is not None
        else ""
    )
    body = (
        f"<h1>{_e(status.name)}</h1>{held}<table id='season'><tr><th>Event</th><th>System</th>"
        "<th>State</th><th>Field</th><th>Places (leaders while it plays)</th><th></th></tr>"
        f"{''.join(rows)}</table>"
        "<p><a href='download/season.pgn'>The whole season's PGN</a>"
        " · <a href='gamelist.json'>gamelist.json</a> (TCEC's archive menu)</p>"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"{BASE}<title>{_e(status.name)}</title><link rel='stylesheet' href='static/app.css'>"
        "</head><body><nav><a href='./'>Season</a></nav>"
        f"<main>{body}</main></body></html>"
    )
