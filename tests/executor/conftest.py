"""The `cluster` fixture: a real Dask cluster of separate processes, stopped after the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import Cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    folder = tmp_path / "cluster"
    folder.mkdir()
    running = Cluster(folder)
    try:
        yield running
    finally:
        running.stop()
