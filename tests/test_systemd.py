"""The systemd unit: `systemd-analyze verify` accepts it, and it starts on a fresh install
(nothing it names must exist before the first run but the folder the README creates)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT

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


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing (Debian's systemd package; ./tasks.sh installs it)"
    install = tmp_path / "srv" / "orchestrator"
    (install / ".venv" / "bin").mkdir(parents=True)
    program = install / ".venv" / "bin" / "orchestrator"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    unit = tmp_path / "orchestrator.service"
    unit.write_text(UNIT.read_text().replace("/srv/orchestrator", str(install)))
    out = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    problems = [line for line in out.stderr.splitlines() if "orchestrator.service" in line]
    assert out.returncode == 0 and not problems, out.stderr
