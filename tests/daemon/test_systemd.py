"""The systemd unit: `systemd-analyze verify` accepts it, and it starts on a fresh install
(nothing it names must exist before the first run but the folder the operators' guide creates)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

UNIT = ROOT / "systemd" / "orchestrator.service"


def settings() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def test_only_the_install_folder_must_exist_before_the_first_run() -> None:
    unit = settings()
    (folder,) = unit["WorkingDirectory"]
    assert unit["ReadWritePaths"] == [folder]  # not tournament.sqlite: made by the first run
    assert unit["LimitNOFILE"] and int(unit["LimitNOFILE"][0]) >= 4096


UNITS = ["orchestrator.service", "dask-scheduler.service", "dask-worker.service"]


@pytest.mark.parametrize("name", UNITS)
def test_systemd_analyze_verify_accepts_the_unit(name: str, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing (Debian's systemd package; ./tasks.sh installs it)"
    install = tmp_path / "srv" / "orchestrator"
    (install / ".venv" / "bin").mkdir(parents=True)
    for program in ("orchestrator", "dask"):
        path = install / ".venv" / "bin" / program
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    unit = tmp_path / name
    source = (ROOT / "systemd" / name).read_text()
    unit.write_text(source.replace("/srv/orchestrator", str(install)))
    out = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    problems = [line for line in out.stderr.splitlines() if name in line]
    assert out.returncode == 0 and not problems, out.stderr


def test_the_game_host_unit_runs_a_worker_as_the_guide_says() -> None:
    """One game slot by default, named after the host, no nanny (systemd restarts it)."""
    text = (ROOT / "systemd" / "dask-worker.service").read_text()
    assert "dask worker ${SCHEDULER} --name %H --no-nanny" in text
    assert 'WORKER_ARGS=--nthreads 1 --resources game=1"' in text
    readme = (ROOT / "docs" / "operator.md").read_text()
    assert "systemd/dask-worker.service" in readme and "--resources" in readme
