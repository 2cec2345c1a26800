"""A real Dask cluster for tests: a scheduler and workers, each a process of its own on
127.0.0.1, started with `dask scheduler` and `dask worker` exactly as
the operators' guide (docs/operator.md) says."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tests.support.processes import free_port

DASK = [sys.executable, "-m", "dask"]
UP_S = 90.0  # how long a cluster may take to come up on a loaded machine


class Cluster:
    """A scheduler and its workers, each a process of its own, as on real game hosts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.tls: list[str] = []

    def _spawn(self, name: str, *args: str, cpus: Sequence[int] | None = None) -> None:
        out = (self.folder / f"{name}.log").open("wb")
        mask = None if cpus is None else tuple(cpus)
        self.processes[name] = subprocess.Popen(
            [*DASK, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # a game host's CPU mask, as `taskset -c` gives it
            preexec_fn=None if mask is None else (lambda: os.sched_setaffinity(0, mask)),  # noqa: PLW1509
        )
        out.close()

    def scheduler(self) -> None:
        self._spawn(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
            "--no-dashboard", *self.tls,
        )  # fmt: skip

    def worker(
        self, name: str, resources: str = "game=1", cpus: Sequence[int] | None = None
    ) -> None:
        """A worker named `name` with `resources`, on the CPUs `cpus` (its CPU mask)."""
        self._spawn(
            name, "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
            "--resources", resources, "--name", name, "--no-nanny", "--no-dashboard", *self.tls,
            cpus=cpus,
        )  # fmt: skip

    def wait_for(self, names: set[str]) -> None:
        """Until exactly the workers `names` are connected (read from the scheduler)."""
        deadline = time.monotonic() + UP_S
        while time.monotonic() < deadline:
            if self.connected() == names:
                return
            for name, process in self.processes.items():
                assert process.poll() is None, (self.folder / f"{name}.log").read_text()[-3000:]
            time.sleep(0.5)
        raise AssertionError(f"workers {self.connected()} are not {names}")

    @property
    def url(self) -> str:
        """The scheduler as an `executor` setting names it."""
        return self.address.replace("tcp://", "dask://")

    def use_tls(self, ca: Path, cert: Path, key: Path) -> None:
        self.address = f"tls://127.0.0.1:{self.port}"
        self.tls = ["--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(key)]

    def connected(self) -> set[str]:
        script = (
            "import sys, json; from distributed import Client\n"
            "from distributed.security import Security\n"
            "tls = Security(tls_ca_file=sys.argv[2], tls_client_cert=sys.argv[3],"
            " tls_client_key=sys.argv[4], require_encryption=True) if sys.argv[2:] else None\n"
            "with Client(sys.argv[1], timeout=10, security=tls) as c:\n"
            "    print(json.dumps([w['name'] for w in c.scheduler_info(n_workers=-1)"
            "['workers'].values()]))"
        )
        out = subprocess.run(
            [sys.executable, "-c", script, self.address, *self.tls[1::2]],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return set(json.loads(out.stdout)) if out.returncode == 0 else set()

    def kill(self, name: str) -> None:
        self.processes[name].send_signal(signal.SIGKILL)
        self.processes[name].wait()

    def stop(self) -> None:
        for process in self.processes.values():  # test processes: no need to be gentle
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        for process in self.processes.values():
            process.wait()
