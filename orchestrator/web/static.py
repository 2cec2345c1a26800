"""The live view's script and style, served from the package (no file system route): with a
Content-Security-Policy of `script-src 'self'`, no page carries a script of its own."""

from __future__ import annotations

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
nav{background:#263238;padding:.6em 1em}
nav a{color:#fff;margin-right:1.2em;text-decoration:none}
main{padding:1em 1.5em}table{border-collapse:collapse}
td,th{padding:.2em .6em;border-bottom:1px solid #ddd}
th{text-align:left}progress{width:24em}
.game{display:flex;gap:1.5em;flex-wrap:wrap;align-items:flex-start}
.side{display:flex;flex-direction:column;gap:.6em}
.engine{border:1px solid #ccc;border-radius:6px;padding:.5em .8em;width:24em;background:#fafafa}
.engine h3{margin:0 0 .3em 0;display:flex;justify-content:space-between}
.engine .clock{font-family:monospace;font-size:1.2em}
.engine.to-move{border-color:#43a047;box-shadow:0 0 0 2px #43a04755}
.engine dl{display:grid;grid-template-columns:6em 1fr;margin:0;font-size:.9em}
.engine dd{margin:0;font-family:monospace}.engine .pv{font-family:monospace;font-size:.85em}
.board{border:2px solid #455a64;width:360px;height:360px;display:block}
.kibitzer{border-style:dashed}.kibitzer small{color:#777;font-weight:normal}
.moves{max-height:30em;overflow-y:auto;width:16em;font-family:monospace;padding-left:0;
list-style:none;margin:0}
.moves li{padding:.1em .3em}.moves .num{color:#777;display:inline-block;width:3em}
.moves a{cursor:pointer;padding:0 .3em;display:inline-block;min-width:4em}
.moves a.book{color:#777}.moves a.selected{background:#fdd835}
.cross td{text-align:center}.cross td a{margin:0 .1em;text-decoration:none}
.cross .win{color:#2e7d32;font-weight:bold}.cross .loss{color:#c62828}.cross .self{background:#eee}
#eval{background:#fcfcfc;border:1px solid #ddd}pre{font-size:.9em}
.bracket{display:flex;gap:1.5em;align-items:stretch;overflow-x:auto}
.stage{display:flex;flex-direction:column;justify-content:space-around;gap:.6em;min-width:15em}
.stage h3{margin:0 0 .3em 0}
.match{border:1px solid #ccc;border-radius:6px;padding:.3em .5em;background:#fafafa}
.match .who{display:flex;justify-content:space-between;gap:1em}
.match .won{font-weight:bold;color:#2e7d32}.match .out{color:#999}
.match .games a{font-size:.8em;margin-right:.3em}.match.now{border-color:#43a047}
"""

SCRIPT = r"""'use strict';
(() => {
const main = document.querySelector('main');
const byId = (id) => document.getElementById(id);

// the position as python-chess draws it (/board.svg, the same picture for every viewer):
// the last move marked, the reply its engine expects as an arrow
function drawBoard(img, fen, uci, expected, chess960, variant) {
  const query = new URLSearchParams({fen: fen});
  if (uci) query.set('last', uci);
  if (expected) query.set('arrow', expected);
  if (chess960) query.set('chess960', '1');
  if (variant && variant !== 'chess') query.set('variant', variant);
  const src = 'board.svg?' + query.toString();
  if (img.getAttribute('src') !== src) img.setAttribute('src', src);
  img.dataset.fen = fen;
  img.dataset.arrow = expected || '';
}

function clockText(ms) {
  if (ms === null || ms === undefined) return '-';
  const tenths = Math.max(0, Math.floor(ms / 100));
  const s = Math.floor(tenths / 10);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}.${tenths % 10}`;
}

function count(n) {
  if (n === null || n === undefined) return '-';
  if (n >= 1e9) return (n / 1e9).toFixed(2) + 'G';
  if (n >= 1e6) return (n / 1e6).toFixed(2) + 'M';
  if (n >= 1e3) return (n / 1e3).toFixed(1) + 'k';
  return String(n);
}

function evalNumber(wv) {
  if (!wv) return null;
  if (wv.includes('M')) return wv.startsWith('-') ? -8 : 8;
  return Math.max(-8, Math.min(8, Number(wv)));
}

function gamePage(id) {
  const state = {game: null, selected: null, clocks: {white: null, black: null},
    since: performance.now()};

  function panel(side) {
    const g = state.game, m = g.last[side];
    const set = (key, text) => { byId(`${side}-${key}`).textContent = text; };
    set('eval', m ? (m.wv || '-') : '-');
    set('depth', m ? `${m.depth ?? '-'}/${m.seldepth ?? '-'}` : '-');
    set('nodes', m ? count(m.nodes) : '-');
    set('speed', m && m.nps ? count(m.nps) + 'n/s' : '-');
    set('tb', m ? count(m.tbhits) : '-');
    set('hash', m && m.hashfull !== null ? (m.hashfull / 10).toFixed(1) + '%' : '-');
    set('pv', m && m.pv ? m.pv.join(' ') : '');
    byId(`panel-${side}`).classList.toggle('to-move',
      g.status === 'running' && g.turn === side);
  }

  function tick() {
    const g = state.game;
    if (!g) return;
    for (const side of ['white', 'black']) {
      let ms = state.clocks[side];
      if (ms !== null && g.status === 'running' && g.turn === side) {
        ms -= performance.now() - state.since;
      }
      byId(`${side}-clock`).textContent = clockText(ms);
    }
  }

  function moveList() {
    const list = byId('moves');
    list.textContent = '';
    let li = null;
    state.game.moves.forEach((m, i) => {
      const number = Math.floor((startPly() + i) / 2) + 1;
      if (m.side === 'white' || li === null) {
        li = document.createElement('li');
        const num = document.createElement('span');
        num.className = 'num';
        num.textContent = m.side === 'white' ? `${number}.` : `${number}...`;
        li.appendChild(num);
        list.appendChild(li);
      }
      const a = document.createElement('a');
      a.textContent = m.san;
      a.dataset.index = i;
      a.className = (m.book ? 'book' : '') + (state.selected === i ? ' selected' : '');
      li.appendChild(a);
    });
    if (state.selected === null) list.scrollTop = list.scrollHeight;
  }

  function startPly() {
    const fen = state.game.start_fen.split(' ');
    return (Number(fen[5]) - 1) * 2 + (fen[1] === 'b' ? 1 : 0);
  }

  function showBoard() {
    const g = state.game;
    const i = state.selected === null ? g.moves.length - 1 : state.selected;
    const m = g.moves[i];
    drawBoard(byId('board'), m ? m.fen : g.start_fen, m ? m.uci : null,
      m ? m.expected : null, g.chess960, g.variant);
    const number = Math.floor((startPly() + i) / 2) + 1;
    const label = m ? `${number}${m.side === 'white' ? '.' : '...'} ${m.san}` : '';
    byId('position').textContent = state.selected === null ? 'live' : 'after ' + label;
  }

  function kibitzer(k) {
    const c = k.current;
    const set = (key, text) => {
      const el = byId(`kib${k.index}-${key}`);
      if (el) el.textContent = text;
    };
    set('eval', c ? String(c.eval) : '-');
    set('depth', c ? c.depth : '-');
    set('nodes', c ? count(c.nodes) : '-');
    set('speed', c ? c.speed : '-');
    set('pv', c ? c.pv : '');
  }

  function graph() {
    const svg = byId('eval');
    const width = 600, height = 200, mid = height / 2;
    const series = {white: [], black: []};
    state.game.moves.forEach((m, i) => {
      const v = evalNumber(m.wv);
      if (v === null) return;
      series[m.side].push([(startPly() + i) / 2, v]);
    });
    const lines = [['white', '#1e88e5', series.white], ['black', '#212121', series.black]];
    (state.game.kibitzers || []).forEach((k, i) => {
      const points = k.history.map((p) => [p.ply / 2, evalNumber(String(p.eval))])
        .filter(([, v]) => v !== null);
      lines.push([k.engine, ['#43a047', '#fb8c00'][i % 2], points]);
    });
    const last = Math.max(10, ...state.game.moves.map((m, i) => (startPly() + i) / 2));
    const x = (n) => 30 + (n / last) * (width - 40);
    const y = (v) => mid - (v / 8) * (mid - 10);
    let out = `<line x1="30" y1="${mid}" x2="${width - 10}" y2="${mid}" stroke="#999"/>`;
    lines.forEach(([name, colour, points], i) => {
      const drawn = points.map(([n, v]) => `${x(n).toFixed(1)},${y(v).toFixed(1)}`);
      const title = document.createElement('title');
      title.textContent = name;  // an engine's name, escaped
      out += `<polyline fill="none" stroke="${colour}" stroke-width="2" data-line="${i}" ` +
        `points="${drawn.join(' ')}">${title.outerHTML}</polyline>`;
    });
    for (let n = 10; n <= last; n += 10) {
      out += `<text x="${x(n)}" y="${height - 2}" font-size="10">${n}</text>`;
    }
    svg.innerHTML = out;
  }

  function render() {
    const g = state.game;
    byId('status').textContent = g.result || g.status;
    byId('reason').textContent = g.reason || '';
    byId('host').textContent = g.host ? 'played on ' + g.host : '';
    state.clocks = {white: g.last.white ? g.last.white.clock_ms : g.clock_start_ms,
      black: g.last.black ? g.last.black.clock_ms : g.clock_start_ms};
    redraw(true);
    tick();
  }

  // the panels, the moves and the graph after a change; the board unless a past position
  // is shown (`always`: a new game state shows the board anyway)
  function redraw(always) {
    state.since = performance.now();
    panel('white');
    panel('black');
    (state.game.kibitzers || []).forEach(kibitzer);
    moveList();
    if (always || state.selected === null) showBoard();
    graph();
  }

  async function load() {
    const r = await fetch('api/games/' + id);
    if (!r.ok) return;
    state.game = await r.json();
    render();
  }

  byId('moves').addEventListener('click', (e) => {
    const a = e.target.closest('a[data-index]');
    if (!a) return;
    const i = Number(a.dataset.index);
    state.selected = i === state.game.moves.length - 1 ? null : i;
    moveList();
    showBoard();
  });
  byId('live').addEventListener('click', () => { state.selected = null; moveList(); showBoard(); });

  const source = new EventSource('api/live?game=' + id);
  source.addEventListener('move', (e) => {
    const m = JSON.parse(e.data), g = state.game;
    if (!g) return;
    const engineMoves = g.moves.filter((x) => !x.book);
    const lastPly = engineMoves.length ? engineMoves[engineMoves.length - 1].ply : 0;
    if (m.ply !== lastPly + 1 || (g.attempt && m.attempt !== g.attempt)) { load(); return; }
    g.attempt = m.attempt;
    g.moves.push(m);
    g.last[m.side] = m;
    g.turn = m.side === 'white' ? 'black' : 'white';
    g.fen = m.fen;
    g.status = 'running';
    state.clocks[m.side] = m.clock_ms;
    redraw(false);
  });
  source.addEventListener('kibitz', (e) => {
    const entry = JSON.parse(e.data), g = state.game;
    if (!g || entry.game !== g.id) return;
    const k = (g.kibitzers || []).find((x) => x.index === entry.kibitzer);
    if (!k) return;
    k.current = entry;
    k.history = k.history.filter((p) => p.ply !== entry.ply);
    k.history.push({ply: entry.ply, eval: entry.eval});
    kibitzer(k);
    graph();
  });
  source.addEventListener('game', () => load());
  setInterval(tick, 100);
  load();
}

function refreshing() {
  let timer = null;
  const refresh = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const r = await fetch(location.href);
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
      const fresh = doc.querySelector('main');
      if (fresh) main.innerHTML = fresh.innerHTML;
    }, 300);
  };
  const source = new EventSource('api/live');
  source.addEventListener('game', refresh);
  source.addEventListener('round', refresh);
  source.addEventListener('move', (e) => {
    const m = JSON.parse(e.data);
    const el = document.querySelector(`[data-plies-of="${m.game}"]`);
    if (el) el.textContent = m.ply;
  });
}

if (main.dataset.game) gamePage(Number(main.dataset.game));
else if (main.dataset.live) refreshing();
})();
"""
