"""Where the tests' data and tools are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
#: the conformance files as the project's shared folder holds them (beside the clone in CI);
#: tests/data/tcec/ keeps a copy so that a clone alone can run the suite
SHARED_TCEC = ROOT.parent / "shared" / "conformance" / "tcec"
#: the scripted engine: a UCI/XBoard engine whose behaviour a test dictates
SCRIPTED = Path(__file__).resolve().parent / "scripted_engine.py"


def conformance(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "tcec" / name).read_text())
    return data
