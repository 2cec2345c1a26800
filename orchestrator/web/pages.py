"""HTML pages as pure functions of the JSON data the API serves; every text is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
nav{background:#263238;padding:.6em 1em}
nav a{color:#fff;margin-right:1.2em;text-decoration:none}
main{padding:1em 1.5em}table{border-collapse:collapse}
td,th{padding:.2em .6em;border-bottom:1px solid #ddd}
th{text-align:left}.bar{background:#eee;width:24em;height:1em}
.bar div{background:#43a047;height:1em}
.moves{max-height:26em;overflow-y:auto;width:22em;font-family:monospace}
.game{display:flex;gap:2em;flex-wrap:wrap}pre{font-size:.9em}
"""


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def layout(title: str, body: str, script: str = "") -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        "<nav><a href='/'>Overview</a><a href='/standings'>Standings</a>"
        "<a href='/crosstable'>Crosstable</a><a href='/rounds'>Rounds</a><a href='/log'>Log</a>"
        "<a href='/download/event.pgn'>Event PGN</a><a href='/download/archive.zip'>PGN archive</a>"
        f"</nav><main>{body}</main>{script}</body></html>"
    )


def overview(data: dict[str, Any]) -> str:
    total = data["games_total"] or 0
    done = data["games_finished"]
    share = 100 * done / total if total else 0
    state = "finished" if data["finished"] else f"round {data['round']} of {data['rounds']}"
    if data.get("paused"):
        state += " (paused)"
    if not data["finished"] and not data.get("daemon", {}).get("running", True):
        state += " (no daemon is running)"
    running = "".join(
        f"<li><a href='/games/{g['id']}'>{g['round']}.{g['number']} {_e(g['white'])} - "
        f"{_e(g['black'])}</a>: ply {g['plies']}</li>"
        for g in data["games_running"]
    )
    top = "".join(
        f"<tr><td>{_e(s['place'])}</td><td>{_e(s['name'])}</td><td>{s['score']:g}</td></tr>"
        for s in data["top"]
    )
    body = (
        f"<h1>{_e(data['event'])}</h1><p>{_e(state)}: {done} of {total} games played</p>"
        f"<div class='bar' title='{share:.0f}%'><div style='width:{share:.1f}%'></div></div>"
        f"<h2>Playing now</h2><ul id='running'>{running or '<li>nothing</li>'}</ul>"
        f"<h2>Leaders</h2><table>{top}</table>"
        "<h2>Score by round</h2><img src='/progress.svg' alt='score by round'>"
    )
    return layout(data["event"], body)


def standings(data: dict[str, Any]) -> str:
    lines = data["standings"]
    order = list(lines[0]["tiebreaks"]) if lines else []
    head = "".join(f"<th>{_e(tb)}</th>" for tb in order)
    rows = "".join(
        f"<tr><td>{_e(s['place'])}</td><td>{_e(s['name'])}</td><td>{s['score']:g}</td>"
        f"<td>{s['games']}</td><td>{s['wins']}</td><td>{s['draws']}</td><td>{s['losses']}</td>"
        f"<td>{s['byes']}</td>"
        + "".join(f"<td>{s['tiebreaks'][tb]:g}</td>" for tb in order)
        + f"<td>{s.get('strikes', 0)}</td><td>{_withdrawn(s.get('withdrawn_after'))}</td></tr>"
        for s in lines
    )
    provisional = " (provisional)" if data.get("provisional") else ""
    body = (
        f"<h1>Standings after {data['rounds']} round(s){provisional}</h1>"
        "<table id='standings'><tr><th>Place</th><th>Engine</th><th>Score</th><th>Games</th>"
        f"<th>+</th><th>=</th><th>-</th><th>BYE</th>{head}<th>Strikes</th><th>Withdrawn</th>"
        f"</tr>{rows}</table>"
    )
    return layout(f"{data['event']}: standings", body)


def _withdrawn(after: int | None) -> str:
    return "" if after is None else f"after round {after}"


def audit(event: str, entries: list[dict[str, Any]]) -> str:
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


def crosstable(event: str, text: str) -> str:
    return layout(f"{event}: crosstable", f"<h1>Crosstable</h1><pre>{_e(text)}</pre>")


def rounds(event: str, numbers: list[int]) -> str:
    items = "".join(
        f"<li><a href='/rounds/{n}'>Round {n}</a> (<a href='/download/rounds/{n}.pgn'>PGN</a>)</li>"
        for n in numbers
    )
    return layout(f"{event}: rounds", f"<h1>Rounds</h1><ul>{items}</ul>")


def _voided(attempts: list[dict[str, Any]]) -> str:
    return "".join(
        f"<br><small>attempt {a['attempt']} voided: {_e(a['reason'])}</small>" for a in attempts
    )


def round_page(event: str, data: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{g['number']}</td><td><a href='/games/{g['id']}'>{_e(g['white'])} - "
        f"{_e(g['black'])}</a></td><td>{_e(g['result'] or g['status'])}"
        f"{' (forfeit)' if g.get('forfeit') else ''}</td>"
        f"<td>{_e(g['reason'])}{_voided(g.get('voided', []))}</td><td>{_e(g['opening'])}</td></tr>"
        for g in data["games"]
    )
    bye = f"<p>BYE: {_e(data['bye'])}</p>" if data["bye"] else ""
    body = (
        f"<h1>Round {data['round']}</h1>{bye}<table><tr><th>#</th><th>Game</th><th>Result</th>"
        f"<th>Reason</th><th>Opening</th></tr>{rows}</table>"
    )
    return layout(f"{event}: round {data['round']}", body)


GAME_SCRIPT = """<script>
const id = %d;
async function refresh() {
  const r = await fetch('/api/games/' + id);
  if (!r.ok) return;
  const g = await r.json();
  const list = document.getElementById('moves');
  list.textContent = '';
  for (const m of g.moves) {
    const li = document.createElement('li');
    li.textContent = m.san + (m.book ? ' {book}' : '');
    list.appendChild(li);
  }
  document.getElementById('status').textContent = g.result || g.status;
  for (const side of ['white', 'black']) {
    const m = g.last[side];
    const score = !m ? '' : m.score_mate !== null ? 'M' + m.score_mate :
      m.score_cp === null ? '-' : (m.score_cp / 100).toFixed(2);
    const clock = !m || m.clock_ms === null ? '-' : (m.clock_ms / 1000).toFixed(1) + 's';
    document.getElementById(side + '-info').textContent =
      m ? `score ${score} (own view), depth ${m.depth}, clock ${clock}` : '';
  }
  document.getElementById('board').src = '/games/' + id + '/board.svg?' + g.moves.length;
  document.getElementById('eval').src = '/games/' + id + '/eval.svg?' + g.moves.length;
  if (g.status !== 'finished') setTimeout(refresh, 1000);
}
refresh();
</script>"""


def game_page(event: str, game: dict[str, Any]) -> str:
    body = (
        f"<h1>{_e(game['white'])} - {_e(game['black'])}</h1>"
        f"<p>Round {game['round']}.{game['number']}: <span id='status'>"
        f"{_e(game['result'] or game['status'])}</span> {_e(game['reason'])}"
        f" (<a href='/download/games/{game['id']}.pgn'>PGN</a>)</p>"
        "<div class='game'><div><img id='board' width='360' height='360' "
        f"src='/games/{game['id']}/board.svg' alt='board'>"
        f"<p>White {_e(game['white'])}: <span id='white-info'></span></p>"
        f"<p>Black {_e(game['black'])}: <span id='black-info'></span></p></div>"
        "<div><h2>Moves</h2><ol id='moves' class='moves'></ol></div></div>"
        f"<h2>Evaluation</h2><img id='eval' src='/games/{game['id']}/eval.svg' alt='evaluation'>"
    )
    return layout(f"{event}: {game['white']} - {game['black']}", body, GAME_SCRIPT % game["id"])
