"""An engine's stamped output (`engines/output.py`): what is handed on, and with which stamp."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from orchestrator.engines.output import BATCH_BYTES, StampedOutput, pair

pytestmark = pytest.mark.skipif(pair() is None, reason="stamped output is Linux's")


class Taker:
    """A receiver that keeps what it is handed, with the stamp it had then."""

    kept = None  # records are handed on as they come (no move is searched)

    def __init__(self) -> None:
        self.arrived: float | None = None
        self.handed: list[tuple[bytes, float | None]] = []
        self.answered = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        self.handed.append((data, self.arrived))
        if b"bestmove" in data:
            self.answered.set()

    def stops(self, data: bytes | bytearray) -> bool:
        return b"bestmove" in data

    def kept_read(self, received: float, size: int, answer: bool) -> None:
        raise AssertionError("nothing is kept")


async def test_a_flood_is_handed_on_in_bounded_batches_and_the_answer_with_its_own_stamp() -> None:
    """An engine writes 8 MB of 40 kB records, then, 50 ms later, its move.  The records are
    handed on in batches of at most `BATCH_BYTES` (and one record), so a flood is never
    held whole; the record holding the move ends its batch, which has that write's stamp."""
    ends = pair()
    assert ends is not None
    ours, theirs = ends
    taker = Taker()
    record = b"info string " + b"y" * 40_000 + b"\n"
    records = (8 << 20) // len(record)
    sent: list[float] = []

    def engine() -> None:
        for _ in range(records):
            theirs.send(record)
        time.sleep(0.05)
        theirs.send(b"bestmove e2e4\n")
        sent.append(time.monotonic())

    writer = threading.Thread(target=engine)
    output = StampedOutput.attach(ours, theirs.dup(), taker)
    writer.start()
    try:
        await asyncio.wait_for(taker.answered.wait(), 60)
        writer.join()
        assert b"".join(data for data, _ in taker.handed) == record * records + b"bestmove e2e4\n"
        assert all(len(data) < BATCH_BYTES + len(record) for data, _ in taker.handed)
        data, stamp = taker.handed[-1]
        assert data.endswith(b"bestmove e2e4\n") and stamp is not None and stamp <= sent[0]
        assert all(s is not None and s <= stamp - 0.05 for _, s in taker.handed[:-1])
        assert taker.arrived is None
    finally:
        writer.join()
        output.close()
        theirs.close()
