"""A kibitzer on a game host of its own (`requires`): a real Dask scheduler and workers as
separate processes, the kibitzer placed only on the worker with the resource, its engine at
its files written here, and a worker killed under it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import chess
import chess.engine
import msgspec
import pytest
import structlog
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config.model import KibitzerConfig
from orchestrator.event.settings import EventSettings
from orchestrator.kibitz.follow import Kibitzer, Position
from orchestrator.kibitz.remote import RemoteHosts
from tests.support.cluster import Cluster
from tests.support.paths import SCRIPTED
from tests.support.processes import engines_alive, wait_for


def kibitzer(marker: str, **requires: float) -> KibitzerConfig:
    return KibitzerConfig(
        name="Kib",
        desc="a host of its own",
        command=(sys.executable, str(SCRIPTED), "--name", marker, "--depth", "9"),
        requires=requires,
        startup_timeout=60,  # it starts at the lowest priority: slowly on a loaded machine
    )


def settings(cluster: Cluster) -> EventSettings:
    return EventSettings(name="Remote", players=("A", "B"), executor=cluster.url)


def kibitz_cluster(cluster: Cluster) -> None:
    cluster.scheduler()
    cluster.worker("games", "game=1")
    cluster.worker("kib", "kibitz=1")
    cluster.wait_for({"games", "kib"})


async def first_infos(infos: object, count: int) -> list[chess.engine.InfoDict]:
    got = []
    async for info in infos:  # type: ignore[attr-defined]
        got.append(info)
        if len(got) >= count:
            break
    return got


def test_a_kibitzer_that_requires_a_host_runs_there(cluster: Cluster, tmp_path: Path) -> None:
    kibitz_cluster(cluster)
    marker = f"remote-kib-{os.getpid()}"

    async def main() -> None:
        hosts = RemoteHosts(settings(cluster))
        try:
            analyser = await hosts.start(kibitzer(marker, kibitz=1))
            assert analyser.where["host"] == "kib"  # never the games' worker
            pid = analyser.where["pid"]
            assert isinstance(pid, int)  # started with idle=True: see test_kibitzers.py
            board = chess.Board()
            board.push_san("e4")
            infos = analyser.infos(board)
            got = await asyncio.wait_for(first_infos(infos, 2), 90)
            await infos.aclose()  # type: ignore[attr-defined]
            assert all(info.get("pv") for info in got)
            assert got[0]["pv"][0] in board.legal_moves  # analysed after 1. e4, Black to move
            await analyser.close()
            assert not engines_alive(marker)
        finally:
            await hosts.close()

    asyncio.run(main())

    # its files, written here from the host's analysis
    async def files() -> None:
        hosts = RemoteHosts(settings(cluster))
        k = Kibitzer(kibitzer(marker, kibitz=1), 0, tmp_path, start=hosts.start)
        board = chess.Board()
        board.push_san("d4")
        k.follow(Position(7, "1.1", board))
        task = asyncio.create_task(k.run())
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                data = tmp_path / "data.json"
                if data.exists() and json.loads(data.read_text()).get("pv"):
                    break
                await asyncio.sleep(0.1)
            assert (tmp_path / "data.json").exists(), logs
            shown = json.loads((tmp_path / "data.json").read_text())
            assert shown["engine"] == "Kib" and shown["desc"] == "a host of its own"
            assert shown["pv"].startswith("1...")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await hosts.close()
        assert not engines_alive(marker)

    with structlog.testing.capture_logs() as logs:
        asyncio.run(files())


def test_a_lost_host_ends_the_analysis_and_its_engine(cluster: Cluster) -> None:
    kibitz_cluster(cluster)
    marker = f"lost-kib-{os.getpid()}"
    thinking = msgspec.structs.replace(
        kibitzer(marker, kibitz=1),
        command=(*kibitzer(marker).command, "--stall-at", "1"),  # analyses until stopped
    )

    async def main() -> None:
        hosts = RemoteHosts(settings(cluster))
        try:
            analyser = await hosts.start(thinking)
            infos = analyser.infos(chess.Board())
            reading = asyncio.ensure_future(first_infos(infos, 1))
            await asyncio.sleep(1.0)
            assert not reading.done() and engines_alive(marker)
            cluster.kill("kib")
            cluster.processes.pop("kib")  # gone for good: `wait_for` must not wait on it
            with pytest.raises(chess.engine.EngineError, match="game host"):
                await asyncio.wait_for(reading, 30)
            await analyser.close()
            # the engine died with its host (and was never the daemon's to kill)
            await asyncio.to_thread(wait_for, lambda: not engines_alive(marker), 10)
            # another host with the resource takes the kibitzer when it starts again
            cluster.worker("kib2", "kibitz=1")
            await asyncio.to_thread(cluster.wait_for, {"games", "kib2"})
            again = await hosts.start(kibitzer(marker, kibitz=1))
            assert again.where["host"] == "kib2"
            await again.close()
        finally:
            await hosts.close()

    asyncio.run(main())


def test_a_host_kills_the_engine_of_a_kibitz_process_that_went_silent(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCHESTRATOR_KIBITZ_LEASE_S", "2")  # read by the workers as they start
    kibitz_cluster(cluster)
    marker = f"lease-kib-{os.getpid()}"

    async def main() -> None:
        hosts = RemoteHosts(settings(cluster))
        analyser = await hosts.start(kibitzer(marker, kibitz=1))
        assert engines_alive(marker)
        await hosts.close()  # the kibitz process gone without closing its kibitzer
        assert analyser.where["host"] == "kib"

    asyncio.run(main())
    wait_for(lambda: not engines_alive(marker), 30)


def test_an_engine_that_cannot_start_on_its_host_is_a_kibitzer_failure(cluster: Cluster) -> None:
    kibitz_cluster(cluster)
    broken = msgspec.structs.replace(kibitzer("broken", kibitz=1), command=("/nonexistent/kib",))

    async def main() -> None:
        hosts = RemoteHosts(settings(cluster))
        try:
            with pytest.raises(chess.engine.EngineError, match="on game host kib"):
                await hosts.start(broken)
        finally:
            await hosts.close()

    asyncio.run(main())


def test_check_tries_a_remote_kibitzer_on_its_host(cluster: Cluster, tmp_path: Path) -> None:
    kibitz_cluster(cluster)
    engines = "".join(
        f'\n[[engine]]\nname = "{n}"\ncommand = {json.dumps([sys.executable, str(SCRIPTED)])}\n'
        for n in ("A", "B")
    )

    def config(requires: str, command: list[str]) -> Path:
        path = tmp_path / "event.toml"
        path.write_text(
            f'[tournament]\nexecutor = "{cluster.url}"\nlive_dir = "live"\n{engines}'
            f'\n[[kibitzer]]\nname = "Kib"\ncommand = {json.dumps(command)}\n'
            f"requires = {requires}\n"
        )
        return path

    fine = CliRunner().invoke(
        app, ["check", str(config("{ kibitz = 1 }", [sys.executable, str(SCRIPTED)]))]
    )
    assert fine.exit_code == 0, fine.output
    broken = CliRunner().invoke(app, ["check", str(config("{ kibitz = 1 }", ["/nonexistent/kib"]))])
    assert broken.exit_code == 2, broken.output
    assert '[[kibitzer]] "Kib"' in broken.stderr and "on game host kib" in broken.stderr
    missing = CliRunner().invoke(
        app, ["check", str(config("{ tpu = 1 }", [sys.executable, str(SCRIPTED)]))]
    )
    assert missing.exit_code == 1, missing.output
    assert '[[kibitzer]] "Kib" requires tpu=1: no worker' in missing.output
