"""The "processes" executor: a Dask cluster of this machine, started and owned by the daemon.

It is started with Dask's own command line, exactly as on game hosts (`dask scheduler`,
`dask worker`), so that one code path serves both.  The scheduler listens on 127.0.0.1
only, and every process gets the parent-death signal: when the daemon dies, even by
SIGKILL, the kernel ends the scheduler and the workers, and with them the engines.

With pinned cores, the daemon's plan of this machine is shared out: each worker gets its
games' slots as its `ORCHESTRATOR_GAME_CPUS` (which it plans again, as any game host does)
and, as its CPU mask, those and the spare CPUs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import structlog

from orchestrator.core.cpus import CpuPlan, cpu_text
from orchestrator.engines.adapter import die_with_parent
from orchestrator.engines.affinity import GAME_CPUS_ENV
from orchestrator.executor.base import HELPER_PIDS
from orchestrator.executor.cluster import DaskExecutor

log = structlog.get_logger()

START_S = 60.0  # how long the scheduler and its workers may take to come up
STOP_S = 5.0


def dask_command(*args: str) -> list[str]:
    """Dask's command line (`dask ...`), run by this Python.

    >>> dask_command("worker", "--nthreads", "1")[1:]
    ['-m', 'dask', 'worker', '--nthreads', '1']
    """
    return [sys.executable, "-m", "dask", *args]


def worker_slots(games: int, cores: int) -> list[int]:
    """How many games each local worker process plays at once: one process per core (at
    most one per game), the games shared out as evenly as can be.

    >>> worker_slots(2, 8), worker_slots(128, 2), worker_slots(5, 2)
    ([1, 1], [64, 64], [3, 2])
    """
    workers = max(1, min(games, cores))
    return [games // workers + (1 if i < games % workers else 0) for i in range(workers)]


#: Dask's settings for the scheduler and workers started here.  Dask keeps the last
#: `low-level-log-length` events of each structured-event topic (every game adds one to
#: three of them) and, with them, the last games' task specs: 1,000 by default, with
#: which the scheduler grew from 91 to 99 MB between the 400th and the 1,643rd game of a
#: soak; with 100, 76.0 to 76.9 MB between the 400th and the 660th.  The daemon never
#: reads that history (a finished game's result carries every move).
DASK_ENV = {"DASK_DISTRIBUTED__ADMIN__LOW_LEVEL_LOG_LENGTH": "100"}


class LocalProcesses(DaskExecutor):
    """Worker processes for `slots` games at once (one per core, `worker_slots`), beside a
    scheduler on 127.0.0.1.  Each worker plays its games on one event loop of its own."""

    def __init__(
        self,
        slots: int,
        log_file: Path,
        folder: Path,
        plan: CpuPlan | None = None,
        pin_threads: int | None = None,
    ) -> None:
        super().__init__("", "processes", pin_threads=pin_threads)
        self.slots = slots
        self.plan = plan  # pinned cores: this machine's slots, shared out among the workers
        self.log_file = log_file
        #: the cluster's working folder (its scheduler file): beside the database, so that a
        #: daemon killed with SIGKILL leaves no folder behind that the next one does not clear
        self.folder = folder
        self.processes: list[subprocess.Popen[bytes]] = []

    def _spawn(
        self, *args: str, cpus: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    ) -> None:
        """Start `dask ARGS`; `cpus`: a worker's games' CPUs and the CPUs it may run on."""

        def prepare() -> None:
            die_with_parent()
            if cpus is not None:
                os.sched_setaffinity(0, cpus[1])

        env = os.environ | DASK_ENV
        if cpus is not None:
            env[GAME_CPUS_ENV] = cpu_text(cpus[0])
        with self.log_file.open("ab") as out:
            process = subprocess.Popen(
                dask_command(*args),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                preexec_fn=prepare,  # noqa: PLW1509 - the death signal must be set there
                cwd=self.folder,
                env=env,
            )
        HELPER_PIDS.add(process.pid)
        self.processes.append(process)

    async def start(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)  # what a killed daemon left
        self.folder.mkdir(parents=True)
        scheduler_file = self.folder / "scheduler.json"
        self._spawn(
            "scheduler",
            "--host", "127.0.0.1",
            "--port", "0",
            "--no-dashboard",
            "--scheduler-file", str(scheduler_file),
        )  # fmt: skip
        host = socket.gethostname()
        workers = worker_slots(self.slots, os.cpu_count() or 1)
        first = 0
        for number, games in enumerate(workers, 1):
            await asyncio.sleep(0)  # a stop asked for meanwhile is seen (`Daemon.request_stop`)
            cpus = None
            if self.plan is not None:  # this worker's slots, and the spare CPUs beside them
                mine = tuple(c for s in self.plan.slots[first : first + games] for c in s.cpus)
                cpus = (mine, tuple(sorted(mine + self.plan.spare)))
            first += games
            self._spawn(
                "worker",
                "--scheduler-file", str(scheduler_file),
                "--host", "127.0.0.1",
                "--nthreads", str(games),  # a game holds a thread while it plays
                "--resources", f"game={games}",
                "--no-nanny",
                "--no-dashboard",
                "--name", f"{host}/worker-{number}",
                cpus=cpus,
            )  # fmt: skip
        deadline = asyncio.get_running_loop().time() + START_S
        while not scheduler_file.is_file() or not scheduler_file.stat().st_size:
            if asyncio.get_running_loop().time() > deadline or self.processes[0].poll() is not None:
                raise OSError(f"the local Dask scheduler did not start (see {self.log_file})")
            await asyncio.sleep(0.1)
        self.address = json.loads(scheduler_file.read_text())["address"]
        await self.ready()
        await super().start()
        assert self.client is not None
        try:
            client: Any = self.client
            await client.wait_for_workers(len(workers), timeout=START_S)
        except TimeoutError:
            raise OSError(f"the local Dask workers did not start (see {self.log_file})") from None
        log.info(
            "executor_started",
            executor="processes",
            scheduler=self.address,
            workers=len(workers),
            games=self.slots,
        )

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await asyncio.to_thread(self._stop)

    def _stop(self) -> None:
        for process in reversed(self.processes):  # the workers first, the scheduler last
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            HELPER_PIDS.discard(process.pid)
        shutil.rmtree(self.folder, ignore_errors=True)
