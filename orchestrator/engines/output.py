"""An engine's standard output, time-stamped by the kernel as each write lands.

An engine's answer stops its clock.  If the daemon stamped it when its event loop got round
to reading it, every stall of that loop (other games' moves, SQLite, live files, the garbage
collector) would be charged to the engine.  So on Linux an engine's stdout is not a pipe but
one end of a ``SOCK_SEQPACKET`` socket pair: every ``write`` the engine makes is one record,
and with ``SO_TIMESTAMPNS`` the kernel stamps each record as the write puts it in our queue.
`StampedOutput` reads the records whenever the loop is free and hands their bytes to
python-chess's protocol together with the kernel's stamp (`Receiver.arrived`), so the time
charged is the time of the write, whatever the loop was doing.  Records read together are
handed on together (up to `BATCH_BYTES`), with the last one's stamp; a record that may stop
the engine's clock ends such a batch, so its line always has its own write's stamp.
While a move is searched (`Receiver.kept` is a list), the records are not handed on as they
come: each is kept as read, bytes and ancillary data, and the receiver is told once a turn
(`Receiver.kept_read`); it looks at them when one may hold its answer.  So an `info` line
costs its read and nothing more until the move is over.
When the loop has nothing else to do (one game, between its moves), a move is waited for
outside it (`StampedOutput.wait_here`): one read per write of the engine, the read itself
the wait (our end of the pair blocks, `LOOK_S` at most; every other read says it does not
wait), not a turn of the loop each, and the first writes, made while the wait naps (a share
of the engine's last search, `NAP_MOST_S` at most), are read together, with one wake-up of
the thread where each would make one; anything the loop has to do ends that wait (a callback
or a timer at once, any of its descriptors within `LOOK_S`), and the loop reads the
records again.
(bench/stamps.py measures this against stamping in the loop and in a reader thread; the
measurements page, docs/measurements.md, says why.)

A write becomes one record, so a record is as large as the engine's largest write: the
engine's end gets a send buffer of `SEND_BUFFER` bytes (at most what the kernel allows, and
never less than one line of `MAX_RECORD`), and the records are read into one buffer as large
as the largest send buffer seen, shared by every engine of a thread.  Where no socket pair can
be made (not Linux), `pair` returns None and the engine gets a pipe, stamped on reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from typing import Any, NamedTuple, Protocol

__all__ = [
    "SEND_BUFFER",
    "Answer",
    "Receiver",
    "Record",
    "StampedOutput",
    "loop_turn",
    "pair",
    "stamp",
    "stamps",
]

#: what an engine's end of the pair asks for as its send buffer: the largest write it can make
SEND_BUFFER = 1 << 20
#: Linux's SO_TIMESTAMPNS (and SCM_TIMESTAMPNS): nanosecond stamps in a `struct timespec`
SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@ll")
#: what `stamp` reads for each record, looked up once
_SOL_SOCKET, _TIMESPEC_SIZE, _unpack_timespec = (
    socket.SOL_SOCKET,
    _TIMESPEC.size,
    _TIMESPEC.unpack_from,
)
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size)
#: records, and bytes, read in one go before the loop gets its turn back (a flooding engine)
RECORDS_PER_TURN = 256
BYTES_PER_TURN = 1 << 20
#: records read together are handed on together up to this many bytes
BATCH_BYTES = 1 << 16

#: how often a wait outside the loop (`StampedOutput.wait_here`) looks at the loop's own
#: descriptors; a read that waits for a record waits this long at most (``SO_RCVTIMEO``)
LOOK_S = 0.02
#: flags of a read that never waits (the socket itself blocks, for `wait_here`)
_NOW = socket.MSG_DONTWAIT
#: the longest nap `wait_here` takes before it reads a move's first records (its records
#: then wait to be read together: one wake-up for them, not one each); a nap shorter than
#: `NAP_LEAST_S` is not taken
NAP_MOST_S = 0.005
NAP_LEAST_S = 0.0002

#: a record as read: its bytes and its ancillary data (the kernel's stamp)
Record = tuple[bytes | bytearray, list[tuple[int, int, bytes]]]


class Answer(Protocol):
    """What `StampedOutput.wait_here` waits for: `settled` turns true when it came."""

    settled: bool


class Receiver(Protocol):
    """What takes an engine's output: python-chess's protocol, with the stamp."""

    #: monotonic time (s) at which the bytes now being handed on were written
    arrived: float | None

    #: while a move is searched: the records read since its start, unlooked at (their
    #: bytes and their ancillary data, the stamp); None: records are handed on as they come
    kept: list[Record] | None

    #: the first words of the lines that stop the engine's clock: a write that holds one
    #: may hold such a line
    stop_words: tuple[bytes, ...]

    def pipe_data_received(self, fd: int, data: bytes | str) -> None: ...

    def kept_read(self, received: float, size: int, answer: bool) -> None:
        """Records of `size` bytes were added to `kept`, read by `received` (monotonic);
        `answer`: they may hold the line that stops the clock (the last one holds its
        first word, or a line came in pieces)."""


def pair() -> tuple[socket.socket, socket.socket] | None:
    """Our end and the engine's end of a stamped socket pair, or None where there is none.

    >>> ends = pair()
    >>> ours, theirs = ends
    >>> _ = theirs.send(b"bestmove e2e4\\n")
    >>> data, at = StampedOutput.read_one(ours)
    >>> data, 0 <= time.monotonic() - at < 5
    (b'bestmove e2e4\\n', True)
    >>> ours.close(); theirs.close()
    """
    if sys.platform != "linux":  # pragma: no cover - Linux only
        return None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        ours.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        # our end blocks, for `wait_here` (a read that is its own wait), at most `LOOK_S`,
        # whatever a library made the default (a timeout of Python's own would `poll`);
        # every other read says it does not wait (`_NOW`)
        ours.setblocking(True)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(LOOK_S))
    except OSError:  # pragma: no cover - a kernel without stamps: a pipe does as well
        ours.close()
        theirs.close()
        return None
    return ours, theirs


async def loop_turn() -> None:
    """Go on once the loop has handled what it has ready now, its descriptors included:
    the turn `StampedOutput.wait_here` leaves the loop when it read an answer while the loop
    had something to do.  (One yield would go on before the descriptors' callbacks: the
    loop runs what was ready before its look at them first.)

    >>> import asyncio
    >>> async def main():
    ...     order = []
    ...     asyncio.get_running_loop().call_soon(order.append, "the loop")
    ...     await loop_turn()
    ...     return order + ["the caller"]
    >>> asyncio.run(main())
    ['the loop', 'the caller']
    """
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def _timeval(seconds: float) -> bytes:
    """`seconds` as a ``struct timeval`` (a socket's ``SO_RCVTIMEO``).

    >>> struct.unpack("@ll", _timeval(0.02))
    (0, 20000)
    """
    whole = int(seconds)
    return struct.pack("@ll", whole, round((seconds - whole) * 1e6))


class _LoopState(NamedTuple):
    """What `StampedOutput.wait_here` reads of a running asyncio selector loop: its
    selector's descriptor (ready when any of the loop's own descriptors is), its ready
    callbacks, and (`timers`) its timers.  They are asyncio's private state, only read: a
    loop without them (not a selector loop, another asyncio) has no `_LoopState`, and its
    engines' records are read by the loop only.

    >>> import asyncio
    >>> async def main():
    ...     state = _LoopState.of(asyncio.get_running_loop())
    ...     return state is not None and state.timers() == []
    >>> asyncio.run(main())
    True
    """

    loop: asyncio.AbstractEventLoop
    selector: int
    ready: deque[Any]

    @staticmethod
    def of(loop: asyncio.AbstractEventLoop) -> _LoopState | None:
        selector = getattr(loop, "_selector", None)
        ready = getattr(loop, "_ready", None)
        fileno = getattr(selector, "fileno", None)
        timers = getattr(loop, "_scheduled", None)
        if not (callable(fileno) and isinstance(ready, deque) and isinstance(timers, list)):
            return None
        return _LoopState(loop, fileno(), ready)

    def timers(self) -> list[asyncio.TimerHandle]:
        """The loop's timers, a heap (read anew: the loop replaces it when it drops the
        cancelled ones)."""
        timers: list[asyncio.TimerHandle] = getattr(self.loop, "_scheduled")  # noqa: B009
        return timers


class _Buffer(threading.local):
    """One read buffer per thread (a thread's loop reads one record at a time)."""

    data = bytearray()


_buffer = _Buffer()


def stamp(
    ancillary: list[tuple[int, int, bytes]], received: float, offset: float | None = None
) -> float:
    """The kernel's stamp of a record, as monotonic time (`received` if it has none).  The
    kernel stamps with the wall clock; the difference of the two clocks (`offset`, else read
    now) turns it into monotonic time, never later than `received`.

    >>> stamp([], 12.5)
    12.5
    """
    return stamps([(b"", ancillary)], received, offset)[0]


def stamps(records: list[Record], received: float, offset: float | None = None) -> list[float]:
    """Each record's `stamp`, in one pass (a move's records are stamped together, the
    difference of the clocks read once).

    >>> ours, theirs = pair()
    >>> for line in (b"info depth 1\\n", b"bestmove e2e4\\n"):
    ...     _ = theirs.send(line)
    >>> records = [ours.recvmsg(64, _ANCILLARY)[:2] for _ in range(2)]
    >>> first, second = stamps(records, time.monotonic())
    >>> first <= second <= time.monotonic(), stamps([(b"", [])], 12.5)
    (True, [12.5])
    >>> ours.close(); theirs.close()
    """
    if offset is None:
        offset = wall_minus_monotonic()
    times: list[float] = []
    add = times.append
    for _, ancillary in records:
        at = received
        for level, kind, data in ancillary:  # one item: the stamp
            if level == _SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC_SIZE:
                seconds, nanoseconds = _unpack_timespec(data)
                at = seconds + nanoseconds / 1e9 - offset
                at = at if at < received else received  # (no `min`: a call costs more)
                break
        add(at)
    return times


#: how long a reading of the two clocks' difference is used again: NTP slews the wall clock
#: by at most 500 ppm, 50 µs in this time
OFFSET_KEPT_S = 0.1
#: when the difference was last read (monotonic), and its value: one tuple, replaced whole
_offset = [(-OFFSET_KEPT_S, 0.0)]


def wall_minus_monotonic() -> float:
    """The wall clock minus the monotonic clock, read together (again after
    `OFFSET_KEPT_S`): a reading the scheduler interrupted (the two clocks read more than
    50 µs apart) is taken again, so that no preemption of this process shifts a stamp.

    >>> abs(wall_minus_monotonic() - (time.time() - time.monotonic())) < 0.01
    True
    """
    now = time.monotonic()
    read_at, kept = _offset[0]
    if now - read_at < OFFSET_KEPT_S:
        return kept
    best = (float("inf"), 0.0)
    for _ in range(3):
        before = time.monotonic()
        wall = time.time()
        after = time.monotonic()
        best = min(best, (after - before, wall - (before + after) / 2))
        if after - before < 50e-6:
            break
    _offset[0] = (now, best[1])
    return best[1]


class StampedOutput:
    """Reads an engine's stamped records on the running loop and hands them on."""

    def __init__(self, sock: socket.socket, receiver: Receiver, record_size: int) -> None:
        self.sock = sock
        self.receiver = receiver
        self.record_size = record_size
        self.loop: asyncio.AbstractEventLoop | None = None
        self.eof = False
        #: whether the loop reads the records (`attach`, `resume`), or `wait_here` does
        self.reading = False
        #: `wait_here`'s poll of our socket and the loop's selector, its poll of the
        #: loop's selector alone, and the loop's state
        self._here: tuple[select.poll, select.poll, _LoopState] | None = None
        #: `drain`'s poll of our socket alone
        self._idle: select.poll | None = None

    @classmethod
    def attach(
        cls, ours: socket.socket, theirs: socket.socket, receiver: Receiver
    ) -> StampedOutput:
        """Read `ours` on the running loop from now on; `theirs` (the engine has it now) is
        closed here."""
        size = theirs.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        theirs.close()
        output = cls(ours, receiver, size)
        output.loop = asyncio.get_running_loop()
        output.resume()
        return output

    def resume(self) -> None:
        """The loop reads the records from now on (after `wait_here` read them)."""
        if not self.reading and not self.eof and self.loop is not None:
            self.loop.add_reader(self.sock.fileno(), self.readable)
            self.reading = True

    def wait_here(self, until: float, answer: Answer, nap: float = 0.0) -> bool:
        """Read the records here, waiting for them, until `answer` is settled, while the
        loop has nothing else to do.  True: the answer came and the loop has nothing ready
        (the game goes on at once; the loop no longer reads the records, until `resume`).
        False: the loop reads them again, and goes first: it has something to do (a
        callback ready, a timer due by `until` or before, a descriptor of its own ready),
        `until` (monotonic) passed, or the engine's end came.  The answer may have come
        all the same: then what the loop had ready (its descriptors: the engine's stderr)
        is to be taken in before the game goes on (`loop_turn`).

        One game's move on an otherwise idle loop so costs a read per write of its
        engine, not a turn of the loop each, nor the turn that wakes the game's task: the
        read is the wait (the socket blocks, `LOOK_S` at most).  Every `LOOK_S` the loop's
        own selector (`_LoopState`: ready whenever any of the loop's descriptors is) is
        looked at, and once more at the answer; a timer is never waited past (the wait
        for a record is `poll`, on the engine's socket and the loop's selector, when one
        is due sooner than `LOOK_S`).

        `nap`: how long the answer is not expected (a share of the engine's last
        search): the first read waits that long first (`NAP_MOST_S` at most, never past a
        timer or `until`), so that the engine's first writes are read together, with one
        wake-up of the thread where each would make one.  The stamps are the kernel's:
        a nap costs the engine nothing; at most it keeps the answer waiting to be read.
        """
        if self.eof or self.loop is None:
            return False
        if self._here is None:
            state = _LoopState.of(self.loop)
            if state is None:
                return False
            poller = select.poll()
            poller.register(self.sock.fileno(), select.POLLIN)
            poller.register(state.selector, select.POLLIN)
            loop_alone = select.poll()
            loop_alone.register(state.selector, select.POLLIN)
            self._here = (poller, loop_alone, state)
        if self.reading:
            self.loop.remove_reader(self.sock.fileno())
            self.reading = False
        poll, mine = self._here[0].poll, self.sock.fileno()
        ready, timers = self._here[2].ready, self._here[2].timers()
        look_at = time.monotonic() + LOOK_S
        if nap >= NAP_LEAST_S and not ready:
            wake = until if not timers else min(until, timers[0].when())
            nap = min(nap, NAP_MOST_S, wake - time.monotonic())
            if nap >= NAP_LEAST_S:
                time.sleep(nap)  # (the loop's descriptors within `LOOK_S`, as ever)
        while not answer.settled:
            if ready or self.eof:
                break
            now = time.monotonic()
            wake = until if not timers else min(until, timers[0].when())
            left = wake - now
            if left <= 0:
                break
            if left > LOOK_S and now < look_at and self.receiver.kept is not None:
                self._keep(RECORDS_PER_TURN, min(look_at, wake - LOOK_S))  # reads that wait
                continue
            # the loop's descriptors looked at, or a timer due sooner than a read may wait
            events = poll(0 if left > LOOK_S else math.ceil(left * 1000))
            look_at = now + LOOK_S
            if events:
                if len(events) > 1 or events[0][0] != mine:
                    break  # ours, if ready too, is read by the loop with the rest, in its order
                self.readable()
        if answer.settled and not (ready or self._here[1].poll(0)):
            return True
        self.resume()
        return False

    @staticmethod
    def read_one(sock: socket.socket, size: int = SEND_BUFFER) -> tuple[bytes, float]:
        """One record and its stamp (blocking unless the socket is not)."""
        data, ancillary, _, _ = sock.recvmsg(size, _ANCILLARY)
        return data, stamp(ancillary, time.monotonic())

    def readable(self) -> None:
        """The records that are there (at most `RECORDS_PER_TURN`, or a record past
        `BYTES_PER_TURN`: the loop calls again for the rest)."""
        if self.receiver.kept is None:
            self._take(RECORDS_PER_TURN)
        else:
            self._keep(RECORDS_PER_TURN)

    def drain(self) -> None:
        """Every record that is there now (the engine exited, or its deadline passed, or
        a move starts: what it wrote since the last one).  When there is none, one `poll`
        says so, not a read that fails."""
        if self.eof:
            return
        if self._idle is None:
            self._idle = select.poll()
            self._idle.register(self.sock.fileno(), select.POLLIN)
        if not self._idle.poll(0):
            return
        while not self.eof:
            if self.receiver.kept is None:
                self._take(None)
                return
            if not self._keep(None):  # all read; else it stopped at a possible answer
                return

    def _keep(self, most: int | None, wait: float | None = None) -> bool:
        """Read records into the receiver's `kept` as they are, up to one that may hold the
        line that stops the clock (then True: the records after it are read as the receiver
        then wants them), and tell the receiver once.  With `wait` (monotonic), each read
        waits for its record (`LOOK_S` at most), until that time; a record in pieces ends
        the reading too (the answer may be in it and the next piece)."""
        kept, words = self.receiver.kept, self.receiver.stop_words
        assert kept is not None
        word = words[0] if len(words) == 1 else None  # one word: looked for inline
        buffer = self._buffer()
        recv, into = self.sock.recvmsg_into, [buffer]
        bytes_most = sys.maxsize if most is None else BYTES_PER_TURN
        most = sys.maxsize if most is None else most
        flags = _NOW if wait is None else 0
        taken = read = 0
        answer = pieces = False
        while taken < most and not self.eof:
            try:
                size, ancillary, _, _ = recv(into, _ANCILLARY, flags)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._end()
                break
            if not size:
                if self._hung_up():
                    self._end()
                continue
            data = buffer[:size]  # one copy
            kept.append((data, ancillary))
            taken += 1
            read += size
            # (`find`, not `in`: a bytes operand of `in` is first tried as an integer)
            if data.find(word) >= 0 if word is not None else any(w in data for w in words):
                answer = True
                break
            if data[-1] != 10:  # a line in pieces (no newline at its end): the answer may be split
                pieces = True
                if wait is not None:
                    break
            if read >= bytes_most or (wait is not None and time.monotonic() >= wait):
                break
        if taken:
            self.receiver.kept_read(time.monotonic(), read, answer or pieces)
        return answer

    def _buffer(self) -> bytearray:
        """The thread's read buffer, as large as this engine's largest record."""
        buffer = _buffer.data
        if len(buffer) < self.record_size:
            buffer = _buffer.data = bytearray(self.record_size)
        return buffer

    def _take(self, most: int | None) -> None:
        """Read records and hand them on together, each batch with the stamp of its last
        record: a record that may hold a line that stops the clock (one of the
        `Receiver.stop_words`) ends its batch, so that line gets its own write's stamp.  A
        batch ends too at `BATCH_BYTES`, so a flood is never held whole."""
        batch: list[bytes] = []
        stamp: list[tuple[int, int, bytes]] = []
        received = 0.0
        taken = batched = read = 0
        offset = wall_minus_monotonic()  # once for every record read in this turn
        words = self.receiver.stop_words
        while (most is None or (taken < most and read < BYTES_PER_TURN)) and not self.eof:
            got = self._recv()
            if got is None:
                break
            taken += 1
            data, stamp, received = got
            if data:
                batch.append(data)
                batched += len(data)
                read += len(data)
                if batched >= BATCH_BYTES or any(w in data for w in words):
                    self._hand(batch, stamp, received, offset)
                    batch, batched = [], 0
        if batch:
            self._hand(batch, stamp, received, offset)

    def _hand(
        self,
        batch: list[bytes],
        ancillary: list[tuple[int, int, bytes]],
        received: float,
        offset: float,
    ) -> None:
        self.receiver.arrived = stamp(ancillary, received, offset)
        try:
            self.receiver.pipe_data_received(1, batch[0] if len(batch) == 1 else b"".join(batch))
        finally:
            self.receiver.arrived = None

    def _recv(self) -> tuple[bytes, list[tuple[int, int, bytes]], float] | None:
        """One record, its ancillary data (the stamp) and when it was read; None when there
        is none now, or at the end (`eof`)."""
        buffer = self._buffer()
        try:
            size, ancillary, _, _ = self.sock.recvmsg_into([buffer], _ANCILLARY, _NOW)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            self._end()
            return None
        if size == 0 and self._hung_up():
            self._end()
            return None
        return bytes(memoryview(buffer)[:size]), ancillary, time.monotonic()  # one copy

    def _hung_up(self) -> bool:
        """Whether every writer of the engine's end has closed it (a read of 0 bytes is also
        what an empty write gives)."""
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN | select.POLLHUP)
        return any(event & select.POLLHUP for _, event in poller.poll(0))

    def _end(self) -> None:
        self.eof = True
        if self.reading and self.loop is not None and not self.loop.is_closed():
            with contextlib.suppress(ValueError, OSError):
                self.loop.remove_reader(self.sock.fileno())
        self.reading = False

    def close(self) -> None:
        """Stop reading and close our end."""
        self._end()
        self.sock.close()
