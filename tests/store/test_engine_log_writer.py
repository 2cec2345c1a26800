"""The writer of the engines' logs (`store/logs.py`): chunks in order, batched, never lost."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import pytest

from orchestrator.store.logs import EngineLogs


@pytest.mark.asyncio
async def test_chunks_are_written_in_order_across_batches(tmp_path: Path) -> None:
    logs = EngineLogs(tmp_path)
    logs.start(1, 10)
    logs.start(2, 20)
    expected = {10: [], 20: []}
    for i in range(300):  # more than one batch: the writer runs while chunks still come
        attempt = 10 if i % 3 else 20
        text = f"{attempt} line {i}\n"
        logs.append(attempt, text)
        expected[attempt].append(text)
        if i % 50 == 0:
            await asyncio.sleep(0.01)
    logs.append(10, "")  # nothing: no write
    first, second = logs.finish(10), logs.finish(20)
    logs.append(10, "after its end\n")  # an ended attempt's chunk: its log is closed
    packed = [await asyncio.wait_for(done, 10) for done in (first, second)]
    await logs.close()
    for attempt, path in zip((10, 20), packed, strict=True):
        assert path is not None
        assert gzip.decompress(path.read_bytes()).decode() == "".join(expected[attempt])
