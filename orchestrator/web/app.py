"""The read-only web view (aiohttp): pages, a JSON API, SVG charts and PGN downloads.

It only reads the database, so the view works with the daemon running or stopped: one reader
per server follows it for the live push (`web/push.py`), pages share one view of the event
per change of its games and rounds (`PushHub.view`), and a request that reads a game's moves
opens a read-only connection of its own.  No route reads a file a request names: downloads
are built from the database with the same functions that write `pgn_out/`, so they are
byte-equal to those files; the only files read are the kibitzers' (`data.json`,
`liveeval.json`, by their fixed names in the event's `live_dir`); and a path that is not one
of the routes below (`../`, encoded forms, absolute paths) is a 404.
"""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import chess
import chess.svg
from aiohttp import web
from prometheus_client import CollectorRegistry

from orchestrator.core.event.standings import scores_by_round
from orchestrator.core.game.variants import RULES, new_board
from orchestrator.event.api import GameJSON, RoundJSON
from orchestrator.event.audit import audit_log
from orchestrator.event.export import crosstable, event_pgn, round_pgn, slug
from orchestrator.event.health import decode as decode_health
from orchestrator.event.read import (
    EventView,
    game_json,
    load_view,
    overview_json,
    round_json,
    schedule_data,
    standings_json,
)
from orchestrator.event.tcec_files import crosstable_json
from orchestrator.store.database import RoundRow, Store, StoreError
from orchestrator.store.logs import find_log, logs_folder
from orchestrator.web import charts, pages, static
from orchestrator.web.metrics import registry as metrics_registry
from orchestrator.web.push import HUB, PushHub, push_context

DB = web.AppKey("db", Path)
#: where the event's pages are mounted: "" alone, "/League_2" under a season's view
ROOT = web.AppKey("root", str)
METRICS = web.AppKey("metrics", CollectorRegistry)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PGN_TYPE = "application/x-chess-pgn"


def _number(request: web.Request, key: str) -> int:
    return int(request.match_info[key])


async def _view(request: web.Request) -> EventView:
    try:
        return await request.app[HUB].view()
    except StoreError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from None


@asynccontextmanager
async def _reading(request: web.Request) -> AsyncIterator[tuple[EventView, Store]]:
    """The event and a read-only connection, for handlers that read more (a game's moves)."""
    view = await _view(request)
    try:
        store = await Store.open(request.app[DB], readonly=True)
    except StoreError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from None
    try:
        yield view, store
    except sqlite3.DatabaseError as exc:  # a damaged file: 503, never a traceback
        raise web.HTTPServiceUnavailable(text=f"the database cannot be read: {exc}") from None
    finally:
        await store.close()


def _html(request: web.Request, text: str) -> web.Response:
    """A page, its links resolved from where the event is mounted (its `<base>`)."""
    text = pages.mounted(text, request.app[ROOT])
    return web.Response(text=text, content_type="text/html", charset="utf-8")


def _rooted(request: web.Request, url: str | None) -> str | None:
    """A URL of the event's (`/download/games/3.log`) as seen from the server's root."""
    return None if url is None else request.app[ROOT] + url


def _svg(text: str) -> web.Response:
    return web.Response(text=text, content_type="image/svg+xml", charset="utf-8")


def _json(data: object) -> web.Response:
    return web.json_response(data, dumps=lambda d: json.dumps(d, indent=1))


def _download(body: bytes, filename: str, content_type: str) -> web.Response:
    return web.Response(
        body=body,
        content_type=content_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


async def _game(request: web.Request) -> tuple[str, GameJSON]:
    """The event's name, and the game of the request."""
    wanted = _number(request, "id")
    async with _reading(request) as (view, store):
        game = view.game(wanted)
        if game is None:
            raise web.HTTPNotFound(text=f"no game {wanted}")
        data = await game_json(view, store, game)
        data["log"] = _rooted(request, data["log"])
        return view.name, data


def _round_json(request: web.Request, view: EventView) -> RoundJSON:
    """The round of the request, its fault logs' URLs seen from the server's root."""
    data = round_json(view, _round(view, _number(request, "n")))
    for game in data["games"]:
        game["fault_log"] = _rooted(request, game["fault_log"])
    return data


def _round(view: EventView, number: int) -> RoundRow:
    for rnd in view.rounds:
        if rnd.number == number:
            return rnd
    raise web.HTTPNotFound(text=f"no round {number}")


# pages ---------------------------------------------------------------------------------


async def overview_page(request: web.Request) -> web.Response:
    async with _reading(request) as (view, store):
        return _html(request, pages.overview(await overview_json(view, store)))


async def standings_page(request: web.Request) -> web.Response:
    view = await _view(request)
    return _html(request, pages.standings(standings_json(view)))


async def crosstable_page(request: web.Request) -> web.Response:
    view = await _view(request)
    ids = [g.id for r in view.rounds for g in r.games]
    text = crosstable(view.standings_tournament(), view.settings.tiebreaks)
    return _html(request, pages.crosstable(view.name, crosstable_json(view), ids, text))


async def schedule_page(request: web.Request) -> web.Response:
    view = await _view(request)
    return _html(request, pages.schedule(schedule_data(view, datetime.now(UTC))))


async def api_schedule(request: web.Request) -> web.Response:
    view = await _view(request)
    return _json(schedule_data(view, datetime.now(UTC)))


async def api_crosstable(request: web.Request) -> web.Response:
    view = await _view(request)
    return _json(crosstable_json(view))


async def script(request: web.Request) -> web.Response:
    return web.Response(
        text=static.SCRIPT, content_type="text/javascript", charset="utf-8", headers=CACHED
    )


async def favicon(request: web.Request) -> web.Response:
    return web.Response(status=204, headers=CACHED)  # no icon, and no 404 in the console


async def style(request: web.Request) -> web.Response:
    return web.Response(text=static.STYLE, content_type="text/css", charset="utf-8", headers=CACHED)


async def log_page(request: web.Request) -> web.Response:
    view = await _view(request)
    try:
        entries = await audit_log(request.app[DB])
    except StoreError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from None
    return _html(request, pages.audit(view.name, entries))


async def rounds_page(request: web.Request) -> web.Response:
    view = await _view(request)
    return _html(request, pages.rounds(view.name, [r.number for r in view.rounds]))


async def round_page(request: web.Request) -> web.Response:
    view = await _view(request)
    return _html(request, pages.round_page(view.name, _round_json(request, view)))


async def game_page(request: web.Request) -> web.Response:
    event, game = await _game(request)
    return _html(request, pages.game_page(event, game))


async def board_svg(request: web.Request) -> web.Response:
    _, game = await _game(request)
    board = new_board(game["fen"], game["chess960"], game["variant"])
    lastmove = None
    if game["moves"]:
        lastmove = chess.Move.from_uci(game["moves"][-1]["uci"])
    return _svg(chess.svg.board(board, size=360, lastmove=lastmove))


async def position_svg(request: web.Request) -> web.Response:
    """`/board.svg?fen=...&last=e2e4&arrow=e7e5&chess960=1&variant=crazyhouse`: a position
    as python-chess
    draws it, with the last move and the expected reply; the same for every viewer, so it
    is drawn once and cached."""
    query = request.query
    fen = query.get("fen", "")
    if not 0 < len(fen) <= 100:
        raise web.HTTPBadRequest(text="fen: a FEN of up to 100 characters")
    rules = query.get("variant", "chess")
    if rules != "chess" and rules not in RULES:
        raise web.HTTPBadRequest(text=f"variant: one of {', '.join(RULES)} (or chess)")
    try:
        svg = charts.board(
            fen,
            query.get("last", ""),
            query.get("arrow", ""),
            query.get("chess960") == "1",
            rules,
        )
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    return web.Response(
        text=svg,
        content_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400, immutable"},
    )


async def eval_svg(request: web.Request) -> web.Response:
    return _svg(charts.eval_graph((await _game(request))[1]))


async def progress_svg(request: web.Request) -> web.Response:
    view = await _view(request)
    return _svg(
        charts.progress_chart(
            [p.name for p in view.tournament.by_seed()], scores_by_round(view.tournament)
        )
    )


# the JSON API (the shapes of the CLI's --json) -----------------------------------------


async def api_overview(request: web.Request) -> web.Response:
    async with _reading(request) as (view, store):
        return _json(await overview_json(view, store))


async def api_standings(request: web.Request) -> web.Response:
    view = await _view(request)
    return _json(standings_json(view))


async def api_round(request: web.Request) -> web.Response:
    view = await _view(request)
    return _json(_round_json(request, view))


async def api_game(request: web.Request) -> web.Response:
    _, game = await _game(request)
    return _json(game)


async def metrics(request: web.Request) -> web.Response:
    """The event's metrics in Prometheus's text format (`web/metrics.py`), read at each
    scrape in a worker thread: nothing waits for the database on the server's loop."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    body = await asyncio.to_thread(generate_latest, request.app[METRICS])
    response = web.Response(body=body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


async def healthz(request: web.Request) -> web.Response:
    try:
        view = await load_view(request.app[DB])
    except StoreError as exc:
        return web.json_response({"ok": False, "error": str(exc)}, status=503)
    if not view.finished and not view.running:
        error = "no daemon runs this unfinished event"
        return web.json_response({"ok": False, "event": view.name, "error": error}, status=503)
    health = decode_health(view.daemon.health if view.daemon is not None else None)
    if view.running and health.disk_full is not None:
        error = f"the disk is full ({health.disk_full}): the event waits for space"
        state = {"disk_full": health.disk_full, "disk_free_bytes": health.disk_free}
        return web.json_response(
            {"ok": False, "event": view.name, "error": error, **state}, status=503
        )
    return web.json_response({"ok": True, "event": view.name, "finished": view.finished})


# downloads -----------------------------------------------------------------------------


async def game_pgn(request: web.Request) -> web.Response:
    event, game = await _game(request)
    pgn = game.get("pgn")
    if not pgn:
        raise web.HTTPNotFound(text="the game is not finished")
    name = f"{slug(event)}-{game['round']}.{game['number']}.pgn"
    return _download((pgn + "\n").encode(), name, PGN_TYPE)


async def game_log(request: web.Request) -> web.StreamResponse:
    """A game's engine log: the compressed file once the game has ended (`.log.gz`), the
    plain one while it is played."""
    wanted = _number(request, "id")
    view = await _view(request)
    game = view.game(wanted)
    path = find_log(logs_folder(request.app[DB]), wanted)
    if game is None or path is None:
        raise web.HTTPNotFound(text=f"no engine log of game {wanted}")
    ending = ".log.gz" if path.suffix == ".gz" else ".log"
    name = f"{slug(view.name)}-{game.round}.{game.number}{ending}"
    content_type = "application/gzip" if ending == ".log.gz" else "text/plain"
    return web.FileResponse(
        path,
        headers={
            "Content-Type": content_type,
            "Content-Disposition": f'attachment; filename="{name}"',
        },
    )


async def _view_with_pgn(request: web.Request) -> EventView:
    """The event with its games' PGN texts, read for this request (downloads only: the
    view the pages share leaves the texts out)."""
    try:
        return await load_view(request.app[DB], pgn=True)
    except StoreError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from None


async def round_download(request: web.Request) -> web.Response:
    number = _number(request, "n")
    _round(await _view(request), number)  # 404 for a round that does not exist
    async with _reading(request) as (_, store):
        rnd = (await store.rounds(number, pgn=True))[0]
    return _download(round_pgn(rnd).encode(), f"round-{rnd.number:02d}.pgn", PGN_TYPE)


async def event_download(request: web.Request) -> web.Response:
    view = await _view_with_pgn(request)
    return _download(event_pgn(view.rounds).encode(), f"{slug(view.name)}.pgn", PGN_TYPE)


async def archive_download(request: web.Request) -> web.Response:
    view = await _view_with_pgn(request)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for rnd in view.rounds:
            archive.writestr(f"round-{rnd.number:02d}.pgn", round_pgn(rnd))
        archive.writestr(f"{slug(view.name)}.pgn", event_pgn(view.rounds))
    return _download(buffer.getvalue(), f"{slug(view.name)}-pgn.zip", "application/zip")


#: on every response: no framing by other sites, no referrer sent on, no content sniffing,
#: and no script but the view's own (`/static/app.js`): no inline script runs
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
}
#: the script and style change only with the orchestrator: a short cache keeps pages quick
CACHED = {"Cache-Control": "max-age=300"}


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def make_app(db: Path, root: str = "") -> web.Application:
    """The web view of the event in `db`, served at `root` ("" alone; a season's view mounts
    each event's under its own, `/League_2`)."""
    app = web.Application()
    app.on_response_prepare.append(security_headers)
    app[DB] = db
    app[ROOT] = root
    app[HUB] = hub = PushHub(db)
    app[METRICS] = metrics_registry(db)
    app.cleanup_ctx.append(push_context)
    routes: list[tuple[str, Handler]] = [
        ("/", overview_page),
        ("/standings", standings_page),
        ("/bracket", standings_page),  # a knockout's standings are its bracket
        ("/crosstable", crosstable_page),
        ("/schedule", schedule_page),
        ("/api/schedule", api_schedule),
        ("/api/crosstable", api_crosstable),
        ("/static/app.js", script),
        ("/static/app.css", style),
        ("/favicon.ico", favicon),
        ("/rounds", rounds_page),
        ("/log", log_page),
        (r"/rounds/{n:\d{1,18}}", round_page),
        (r"/games/{id:\d{1,18}}", game_page),
        (r"/games/{id:\d{1,18}}/board.svg", board_svg),
        (r"/games/{id:\d{1,18}}/eval.svg", eval_svg),
        ("/progress.svg", progress_svg),
        ("/board.svg", position_svg),
        ("/api/overview", api_overview),
        ("/api/live", hub.stream),
        ("/api/standings", api_standings),
        (r"/api/rounds/{n:\d{1,18}}", api_round),
        (r"/api/games/{id:\d{1,18}}", api_game),
        ("/healthz", healthz),
        ("/metrics", metrics),
        (r"/download/games/{id:\d{1,18}}.pgn", game_pgn),
        (r"/download/games/{id:\d{1,18}}.log", game_log),
        (r"/download/rounds/{n:\d{1,18}}.pgn", round_download),
        ("/download/event.pgn", event_download),
        ("/download/archive.zip", archive_download),
    ]
    for path, handler in routes:
        app.router.add_get(path, handler)
    return app
