"""The live view in real headless Chromium (Debian's, driven by Playwright) while an event of
scripted engines (printing full info lines) runs: a new move appears without a reload, a clock
ticks, the PV shows in SAN, a click on a move shows its position; the schedule, crosstable and
standings open; the event PGN downloads."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from tests.support.daemon import event_config
from tests.support.engines import kibitzers_toml
from tests.support.processes import free_port, wait_for

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def fetch_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as r:
        data: dict[str, Any] = json.load(r)
        return data


def fetch_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


def overview(base: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"{base}/api/overview", timeout=2) as r:
            data: dict[str, object] = json.load(r)
            return data
    except OSError:
        return None


@pytest.fixture
def live_event(tmp_path: Path) -> Iterator[str]:
    """A daemon running a slow event and serving its web view; the base URL."""
    assert shutil.which(CHROMIUM), "Debian's chromium is not installed (./tasks.sh installs it)"
    # games of 16 moves at 700 ms a move: long enough to watch a clock tick between moves
    config = event_config(
        tmp_path,
        rounds=2,
        delay_ms=700,
        concurrency=1,
        adjudication="win = false\ndraw = false\nmax_moves = 16",
        extra=f'live_dir = "{tmp_path / "live"}"',
    )
    config.write_text(config.read_text() + kibitzers_toml(["Kibitzer", "Second opinion"]))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(config), "--http", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: (o := overview(base)) is not None and o["games_running"])
        yield base
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=30)


async def until(check: Callable[[], bool]) -> None:
    """Poll another process's state (nothing in this loop could signal an Event)."""
    for _ in range(300):
        if await asyncio.to_thread(check):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("timed out")


SAN = re.compile(r"^(O-O(-O)?|[KQRBN]?[a-h]?[1-8]?x?[a-h][1-8](=[QRBN])?)[+#]?$")
#: where the screenshots go: a temporary folder, or docs/ with SCREENSHOTS=docs
SHOTS = os.environ.get("SCREENSHOTS")


async def wait_js(page: Page, expression: str, within: float = 20.0) -> float:
    """Poll `expression` in the page until it is true; the seconds it took. (Playwright's
    wait_for_function evaluates a string in the page, which the view's CSP forbids.)"""
    start = time.monotonic()
    while not await page.evaluate(expression):
        if time.monotonic() - start > within:
            raise AssertionError(f"timed out: {expression}")
        await asyncio.sleep(0.05)
    return time.monotonic() - start


async def _moves(page: Page) -> int:
    return int(await page.evaluate("document.querySelectorAll('#moves a').length"))


async def test_live_view_in_chromium(live_event: str, tmp_path: Path) -> None:
    base = live_event
    shots = Path(SHOTS) if SHOTS else tmp_path / "screenshots"
    shots.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = await browser.new_page(
            accept_downloads=True, viewport={"width": 1100, "height": 900}
        )
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

        # the overview follows the running game's plies by itself
        await page.goto(f"{base}/")
        plies = page.locator("[data-plies-of]").first
        before = await plies.text_content()
        await wait_js(
            page,
            f"document.querySelector('[data-plies-of]') && "
            f"document.querySelector('[data-plies-of]').textContent !== '{before}'",
            20.0,
        )
        await page.screenshot(path=str(shots / "overview.png"), full_page=True)

        await page.locator("#running a").first.click()
        await page.wait_for_url("**/games/*")
        await page.evaluate("window.notReloaded = true")
        await wait_js(page, "document.querySelectorAll('#moves a').length > 1")

        # a new move appears in under 2 s, pushed: no reload
        first = await _moves(page)
        await wait_js(page, f"document.querySelectorAll('#moves a').length > {first}", 2.0)
        assert await page.evaluate("window.notReloaded === true")

        # the clock of the engine to move ticks between two moves
        ticked = False
        for _ in range(40):
            side = await page.evaluate(
                "document.querySelector('.engine.to-move')?.id.replace('panel-', '') || ''"
            )
            count = await _moves(page)
            if side:
                start = await page.text_content(f"#{side}-clock")
                await page.wait_for_timeout(300)
                end = await page.text_content(f"#{side}-clock")
                if count == await _moves(page) and start != end:
                    assert start is not None and end is not None and end < start
                    ticked = True
                    break
            await page.wait_for_timeout(100)
        assert ticked, "no clock ticked"

        # the PV is in SAN, and the panel shows the search
        pv = (await page.text_content("#white-pv")) or ""
        assert pv and all(SAN.match(move) for move in pv.split()), pv
        assert (await page.text_content("#white-depth")) not in ("", "-")
        assert (await page.text_content("#white-speed") or "").endswith("n/s")

        # a click on move 3 (White's third move) shows that position
        game_id = page.url.rsplit("/", 1)[1]
        await wait_js(page, "document.querySelectorAll('#moves li').length >= 4")
        await page.locator("#moves li").nth(2).locator("a").first.click()
        game = await asyncio.to_thread(fetch_json, f"{base}/api/games/{game_id}")
        third = next(m for m in game["moves"] if m["side"] == "white" and m["ply"] == 5)
        assert await page.get_attribute("#board", "data-fen") == third["fen"]
        assert (await page.text_content("#position") or "").startswith("after 3. ")
        # the board is python-chess's picture, the expected reply an arrow on it
        src = await page.get_attribute("#board", "src") or ""
        assert src.startswith("board.svg?") and third.get("expected")
        await wait_js(page, "document.getElementById('board').naturalWidth > 0")
        svg = await asyncio.to_thread(fetch_text, f"{base}/{src}")
        assert svg.startswith("<svg") and 'class="arrow"' in svg and "lastmove" in svg
        # the kibitzers' panels follow the live game
        await page.click("#live")
        await wait_js(page, "document.getElementById('kib0-eval').textContent !== '-'", 20.0)
        await wait_js(page, "document.getElementById('kib1-eval').textContent !== '-'", 20.0)
        await wait_js(page, "document.querySelectorAll('#eval polyline').length === 4")
        await page.screenshot(path=str(shots / "live-game.png"), full_page=True)
        await page.click("#live")

        await page.click("text=Schedule")
        await page.wait_for_selector("#schedule")
        assert await page.locator("#schedule tr").count() > 1
        await page.screenshot(path=str(shots / "schedule.png"), full_page=True)

        await page.click("text=Standings")
        await page.wait_for_selector("#standings")
        assert await page.locator("#standings tr").count() == 1 + 10
        await page.screenshot(path=str(shots / "standings.png"), full_page=True)

        await until(lambda: bool((o := overview(base)) and o["games_finished"]))
        await page.click("text=Crosstable")
        await page.wait_for_selector("#crosstable a[href^='games/']")
        await page.screenshot(path=str(shots / "crosstable.png"), full_page=True)
        async with page.expect_download() as info:
            await page.click("text=Event PGN")
        download = await info.value
        saved = tmp_path / download.suggested_filename
        await download.save_as(saved)
        assert saved.name == "Daemon_Test.pgn" and '[Event "Daemon Test"]' in saved.read_text()
        await browser.close()
    assert not errors, errors
    assert {"overview.png", "live-game.png", "schedule.png", "standings.png", "crosstable.png"} <= {
        p.name for p in shots.iterdir()
    }


def test_a_season_view_leads_to_each_event_live_in_chromium(tmp_path: Path) -> None:
    """`season run --http`: the season's page links the event being played, whose pages are
    served under its name; its game page follows the moves live there (the view's script
    reads and listens relative to the event's `<base>`), with no error in the console."""
    from tests.support.paths import SCRIPTED

    engines = "".join(
        f'[[engine]]\nname = "{n}"\ncommand = '
        f"{json.dumps([sys.executable, str(SCRIPTED), '--name', n, '--delay', '400'])}\n\n"
        for n in ("A", "B", "C")
    )
    rules = """[event.tournament]
system = "match"
system_options = { games = 2, shared = true }
tc = "60+1"
[event.adjudication]
win = false
draw = false
max_moves = 30
"""
    season = tmp_path / "season.toml"
    season.write_text(
        f'[season]\nname = "Web Season"\n\n{engines}'
        f'[[event]]\nname = "Qualifier"\nfield = ["A", "B"]\n{rules}\n'
        f'[[event]]\nname = "Final"\nfield = ["C", {{ top = 1, of = "Qualifier" }}]\n{rules}'
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "orchestrator", "season", "run", str(season)]
    runner = subprocess.Popen(
        [*command, "--http", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: (o := overview(f"{base}/Qualifier")) is not None and o["games_running"])
        asyncio.run(_follow_the_season(base))
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=30)


async def _follow_the_season(base: str) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: errors.append(r.url) if r.status >= 400 else None)
        await page.goto(f"{base}/")
        assert await page.locator("#season tr[data-state='running']").count() == 1
        assert await page.locator("#season tr[data-state='pending']").count() == 1
        await page.click("text=Qualifier")
        await page.wait_for_url(f"{base}/Qualifier/")
        await page.locator("#running a").first.click()
        await page.wait_for_url(f"{base}/Qualifier/games/*")
        await page.evaluate("window.notReloaded = true")
        await wait_js(page, "document.querySelectorAll('#moves a').length > 1")
        first = await _moves(page)
        await wait_js(page, f"document.querySelectorAll('#moves a').length > {first}", 5.0)
        assert await page.evaluate("window.notReloaded === true")
        await wait_js(page, "document.getElementById('board').naturalWidth > 0")
        await page.click("text=Standings")
        await page.wait_for_url(f"{base}/Qualifier/standings")
        await page.click("text=Season")
        await page.wait_for_url(f"{base}/")
        await browser.close()
    assert not errors, errors
