"""The web view of a season (`orchestrator season serve`, `season run --http`): its page at
`/`, each event's whole view (`web/app.py`) under its name (`/League_2/`), the season's PGN,
and `gamelist.json` listing its events for TCEC's viewer.  It only reads: the season's store
and its events' databases."""

from __future__ import annotations

import json

from aiohttp import web

from orchestrator.config.season import Season
from orchestrator.core.codec import to_builtins
from orchestrator.event.export import event_pgn
from orchestrator.event.export import slug as pgn_name
from orchestrator.event.read import load_view
from orchestrator.event.season import (
    SeasonStatus,
    archive_menu,
    begun,
    season_status,
)
from orchestrator.event.tcec_files import gamelist_json
from orchestrator.store.database import StoreError
from orchestrator.web import pages
from orchestrator.web.app import PGN_TYPE, favicon, make_app, security_headers, style

__all__ = ["make_season_app"]

SEASON = web.AppKey("season", Season)


async def _status(request: web.Request) -> SeasonStatus:
    return await season_status(request.app[SEASON])


async def season_page(request: web.Request) -> web.Response:
    text = pages.season_page(await _status(request))
    return web.Response(text=text, content_type="text/html", charset="utf-8")


async def api_season(request: web.Request) -> web.Response:
    """The season's status as JSON: what its page shows."""
    return web.json_response(
        to_builtins(await _status(request)), dumps=lambda d: json.dumps(d, indent=1)
    )


async def gamelist(request: web.Request) -> web.Response:
    """TCEC's `gamelist.json`, every event of the season that has begun."""
    season = request.app[SEASON]
    started = begun(season)
    if not started:
        return web.json_response({"Seasons": {}})
    return web.json_response(gamelist_json(archive_menu(season, started[-1])))


async def season_pgn(request: web.Request) -> web.Response:
    """Every game of the season, event after event, each event's as its own PGN has it."""
    season = request.app[SEASON]
    texts = []
    for event in (await _status(request)).events:
        if event.state == "pending":
            continue
        try:
            view = await load_view(season.database(event.name), pgn=True)
        except StoreError:
            continue
        texts.append(event_pgn(view.rounds))
    name = f"{pgn_name(season.name)}.pgn"
    return web.Response(
        body="".join(texts).encode(),
        content_type=PGN_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def make_season_app(season: Season) -> web.Application:
    """The season's web view; each event's pages are mounted under its files' name."""
    app = web.Application()
    app.on_response_prepare.append(security_headers)
    app[SEASON] = season
    app.router.add_get("/", season_page)
    app.router.add_get("/api/season", api_season)
    app.router.add_get("/gamelist.json", gamelist)
    app.router.add_get("/download/season.pgn", season_pgn)
    app.router.add_get("/static/app.css", style)
    app.router.add_get("/favicon.ico", favicon)
    for event in season.events:
        root = f"/{season.stem(event.name)}"
        app.add_subapp(root + "/", make_app(season.database(event.name), root=root))
    return app
