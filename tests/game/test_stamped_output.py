"""An engine's stamped output (`engines/output.py`): what is handed on, and with which stamp."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from orchestrator.engines import output as stamped_output
from orchestrator.engines.output import (
    BATCH_BYTES,
    LOOK_S,
    NAP_MOST_S,
    StampedOutput,
    loop_turn,
    pair,
    stamps,
)

pytestmark = pytest.mark.skipif(pair() is None, reason="stamped output is Linux's")


class Taker:
    """A receiver that keeps what it is handed, with the stamp it had then."""

    kept = None  # records are handed on as they come (no move is searched)
    stop_words = (b"bestmove",)

    def __init__(self) -> None:
        self.arrived: float | None = None
        self.handed: list[tuple[bytes, float | None]] = []
        self.answered = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        self.handed.append((data, self.arrived))
        if b"bestmove" in data:
            self.answered.set()

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


class Keeper:
    """A receiver while a lean move is searched: the records kept, answered at `bestmove`."""

    stop_words = (b"bestmove",)

    def __init__(self) -> None:
        self.kept: list[tuple[bytes | bytearray, object]] = []
        self.settled = False  # what `wait_here` waits for: the answer was read
        self.arrived: float | None = None
        self.came = asyncio.Event()  # the answer was read

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        raise AssertionError("a searched move's records are kept")

    def kept_read(self, received: float, size: int, answer: bool) -> None:
        self.settled = self.settled or answer
        if answer:
            self.came.set()


def kept_output() -> tuple[StampedOutput, socket.socket, Keeper]:
    """A stamped output read on the running loop into a `Keeper`, and the engine's end."""
    ends = pair()
    assert ends is not None
    ours, theirs = ends
    keeper = Keeper()
    return StampedOutput.attach(ours, theirs.dup(), keeper), theirs, keeper


def close(output: StampedOutput, *ends: socket.socket) -> None:
    """A test's stamped output and the sockets beside it, closed."""
    output.close()
    for end in ends:
        end.close()


def later(delay: float, *sent: bytes, end: socket.socket | None = None) -> threading.Thread:
    """A thread that writes `sent` to `end` (one record each) `delay` seconds from now."""

    def write() -> None:
        time.sleep(delay)
        for data in sent:
            assert end is not None
            end.send(data)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


async def test_a_move_is_waited_for_here_while_the_loop_has_nothing_else_to_do() -> None:
    """`wait_here` reads the engine's records as they come, each with its stamp, until its
    answer, outside the loop (which then no longer reads them, until `resume`)."""
    output, theirs, keeper = kept_output()
    writer = later(0.05, b"info depth 1\n", b"bestmove e2e4\n", end=theirs)
    try:
        assert output.wait_here(time.monotonic() + 60, keeper)
        assert [bytes(data) for data, _ in keeper.kept] == [b"info depth 1\n", b"bestmove e2e4\n"]
        assert all(ancillary for _, ancillary in keeper.kept)  # the kernel's stamps
        assert not output.reading
        output.resume()
        assert output.reading
    finally:
        writer.join()
        output.close()
        theirs.close()


@pytest.mark.parametrize("work", ["ready", "timer", "descriptor", "thread"])
async def test_the_loop_gets_its_turn_back_as_soon_as_it_has_work(work: str) -> None:
    """While a move is waited for outside the loop, anything the loop has to do ends the
    wait at once: a callback ready, a timer due, one of its descriptors ready, a thread's
    call.  The loop reads the engine's records again (the move is then awaited on it)."""
    output, theirs, keeper = kept_output()
    other = socket.socketpair()
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    writer: threading.Thread | None = None
    if work == "ready":
        loop.call_soon(done.set)
    elif work == "timer":
        loop.call_later(0.05, done.set)
    elif work == "descriptor":
        loop.add_reader(other[0].fileno(), done.set)
        writer = later(0.05, b"x", end=other[1])
    else:
        writer = threading.Thread(
            target=lambda: (time.sleep(0.05), loop.call_soon_threadsafe(done.set))
        )
        writer.start()
    started = time.monotonic()
    try:
        assert not output.wait_here(started + 60, keeper)  # never answers
        assert time.monotonic() - started < 30
        assert output.reading
        await asyncio.wait_for(done.wait(), 30)
    finally:
        if writer is not None:
            writer.join()
        loop.remove_reader(other[0].fileno())
        close(output, theirs, *other)


async def test_the_loop_gets_its_turn_while_the_engine_writes_on() -> None:
    """A wait here reads each record as it comes (the read is the wait), but looks at the
    loop's own descriptors all the same (every `LOOK_S`): an engine that writes on and on
    without answering never holds up the loop's work."""
    output, theirs, keeper = kept_output()
    other = socket.socketpair()
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_reader(other[0].fileno(), done.set)
    stop = threading.Event()

    def write_on() -> None:
        for _ in range(2000):  # 10 s of it, unless stopped
            if stop.wait(0.005):
                return
            theirs.send(b"info depth 1\n")

    writer = threading.Thread(target=write_on)
    writer.start()
    poke = later(0.1, b"x", end=other[1])
    try:
        assert not output.wait_here(time.monotonic() + 60, keeper)  # never answers
        assert writer.is_alive()  # the engine still writes: the loop did not wait for it
        assert keeper.kept and output.reading
        await asyncio.wait_for(done.wait(), 30)
    finally:
        stop.set()
        writer.join()
        poke.join()
        loop.remove_reader(other[0].fileno())
        close(output, theirs, *other)


async def test_a_nap_reads_the_first_writes_together_each_with_its_own_stamp() -> None:
    """A wait that naps first (`nap`, at most `NAP_MOST_S`) reads the records written
    meanwhile together, in one go, and each keeps the kernel's stamp of its own write:
    the nap is never charged to the engine."""
    output, theirs, keeper = kept_output()
    reads: list[float] = []
    kept_read = keeper.kept_read

    def counted(received: float, size: int, answer: bool) -> None:
        reads.append(received)
        kept_read(received, size, answer)

    keeper.kept_read = counted  # type: ignore[method-assign]
    for data in (b"info depth 1\n", b"info depth 2\n", b"bestmove e2e4\n"):
        theirs.send(data)
    written = time.monotonic()
    try:
        assert output.wait_here(written + 60, keeper, nap=60)
        waited = time.monotonic() - written
        assert NAP_MOST_S <= waited < 30  # the nap, and no longer than its most
        assert len(reads) == 1 and reads[0] >= written + NAP_MOST_S
        assert [bytes(data) for data, _ in keeper.kept][-1] == b"bestmove e2e4\n"
        assert all(at <= written for at in stamps(keeper.kept, reads[0]))  # (records)
    finally:
        close(output, theirs)


async def test_a_nap_never_passes_a_timer_nor_the_wait_s_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """However long the nap asked for (and its most), it ends by the loop's next timer and
    by the wait's own end."""
    monkeypatch.setattr(stamped_output, "NAP_MOST_S", 60.0)
    output, theirs, keeper = kept_output()
    loop = asyncio.get_running_loop()
    try:
        started = time.monotonic()
        timer = loop.call_later(0.05, lambda: None)
        assert not output.wait_here(started + 60, keeper, nap=60)
        assert time.monotonic() - started < 30
        timer.cancel()
        await asyncio.sleep(0)  # (the cancelled timer leaves the loop's heap)
        started = time.monotonic()
        assert not output.wait_here(started + 0.05, keeper, nap=60)
        assert 0.05 <= time.monotonic() - started < 30
        assert keeper.kept == [] and not keeper.settled
    finally:
        close(output, theirs)


async def test_a_wait_here_ends_at_its_time_and_at_the_engines_end() -> None:
    """No answer by `until`: the wait ends then (the caller's deadline takes over).  The
    engine's end closed: the wait ends, at the end of its output."""
    output, theirs, keeper = kept_output()
    try:
        started = time.monotonic()
        assert not output.wait_here(started + 0.1, keeper)
        assert time.monotonic() - started >= 0.1
        assert not output.eof
        theirs.send(b"info depth 1\n")
        theirs.close()
        assert not output.wait_here(time.monotonic() + 60, keeper)
        assert output.eof and not output.reading
        assert [bytes(data) for data, _ in keeper.kept] == [b"info depth 1\n"]
    finally:
        output.close()
        theirs.close()


async def test_what_the_loop_has_ready_with_the_answer_is_read_first() -> None:
    """The engine wrote on another of the loop's descriptors (its stderr) and then its
    answer.  The answer is read, but the wait says the loop has work, and the loop's turn
    (`loop_turn`, which the move takes then) reads the stderr line before the move goes on
    (a game that went on at once could end and give the line to the engine's next game)."""
    output, theirs, keeper = kept_output()
    other = socket.socketpair()
    loop = asyncio.get_running_loop()
    order: list[str] = []
    loop.add_reader(other[0].fileno(), lambda: order.append(other[0].recv(99).decode()))
    other[1].send(b"warning")
    theirs.send(b"bestmove e2e4\n")
    try:
        assert not output.wait_here(time.monotonic() + 60, keeper)
        assert keeper.settled and output.reading
        assert [bytes(data) for data, _ in keeper.kept] == [b"bestmove e2e4\n"]
        assert order == []
        await loop_turn()
        assert order == ["warning"]
    finally:
        loop.remove_reader(other[0].fileno())
        close(output, theirs, *other)


def test_our_end_waits_for_a_record_look_s_at_most_whatever_the_default() -> None:
    """Our end of the pair blocks, the kernel ending a read that waits after `LOOK_S`
    (``SO_RCVTIMEO``), even where a library set Python's default socket timeout (Python
    would then wait in a `poll` of its own, for that timeout)."""
    before = socket.getdefaulttimeout()
    socket.setdefaulttimeout(30)
    try:
        ends = pair()
    finally:
        socket.setdefaulttimeout(before)
    assert ends is not None
    ours, theirs = ends
    try:
        assert ours.gettimeout() is None
        started = time.monotonic()
        with pytest.raises(BlockingIOError):
            ours.recvmsg(64)
        assert LOOK_S * 0.5 <= time.monotonic() - started < 10
        theirs.send(b"bestmove e2e4\n")
        assert ours.recvmsg(64, 0, socket.MSG_DONTWAIT)[0] == b"bestmove e2e4\n"
        with pytest.raises(BlockingIOError):
            ours.recvmsg(64, 0, socket.MSG_DONTWAIT)
    finally:
        ours.close()
        theirs.close()
