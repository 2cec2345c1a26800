"""The web view in real headless Chromium (Debian's, driven by Playwright) while an event runs:
a live game's move list grows without a reload; standings open; the event PGN downloads."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from tests.test_daemon import event_config
from tests.test_daemon_control import wait_for

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    # games of 40 moves at 250 ms a move: long enough to watch, even on a loaded machine
    config = event_config(
        tmp_path,
        rounds=2,
        delay_ms=250,
        concurrency=1,
        adjudication="win = false\ndraw = false\nmax_moves = 40",
    )
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


async def test_live_game_standings_and_download_in_chromium(
    live_event: str, tmp_path: Path
) -> None:
    base = live_event
    shots = tmp_path / "screenshots"
    shots.mkdir()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = await browser.new_page(
            accept_downloads=True, viewport={"width": 1100, "height": 800}
        )
        await page.goto(f"{base}/")
        await page.screenshot(path=str(shots / "overview.png"), full_page=True)
        await page.locator("#running a").first.click()
        await page.wait_for_url("**/games/*")
        await page.evaluate("window.notReloaded = true")
        await page.wait_for_function("document.querySelectorAll('#moves li').length > 0")
        first = await page.locator("#moves li").count()
        await page.wait_for_function(
            f"document.querySelectorAll('#moves li').length > {first}", timeout=20_000
        )
        assert await page.evaluate("window.notReloaded === true")  # grew in place
        await page.screenshot(path=str(shots / "live-game.png"), full_page=True)
        await page.click("text=Standings")
        await page.wait_for_selector("#standings")
        assert await page.locator("#standings tr").count() == 1 + 10
        await page.screenshot(path=str(shots / "standings.png"), full_page=True)
        await until(lambda: bool((o := overview(base)) and o["games_finished"]))
        async with page.expect_download() as info:
            await page.click("text=Event PGN")
        download = await info.value
        saved = tmp_path / download.suggested_filename
        await download.save_as(saved)
        assert saved.name == "Daemon_Test.pgn" and '[Event "Daemon Test"]' in saved.read_text()
        await browser.close()
    assert {p.name for p in shots.iterdir()} == {"overview.png", "live-game.png", "standings.png"}
