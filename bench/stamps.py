"""Where to stamp an engine's answer: the measurement behind `engines/output.py`.

    .venv/bin/python bench/stamps.py [--sizes 16,64,128] [--seconds 10]

A bare asyncio program, no daemon around it: N engines (a few lines of Python each) answer
every `go` after 200-470 ms and report in `info time` what they measured themselves, from
reading `go` to writing the answer.  The program writes `go`, stamps the answer, and
records the time charged minus the time reported.  Beside the games run a light task and a
task that holds the loop (and the GIL, as real work does) for 50 ms every 200 ms; the last
column is the same without that task.  Each way of stamping:

- `loop`: when the event loop reads the line (a pipe; what python-chess does);
- `thread`: by a reader thread per engine, as `read()` returns (the GIL is released in it);
- `thread, 1 ms switch`: the same with `sys.setswitchinterval(0.001)`;
- `kernel`: the kernel's stamp of the engine's write (stdout is a SOCK_SEQPACKET socket pair
  with SO_TIMESTAMPNS; what the runner does);
- `kernel, no yield`: the same, without giving up the CPU after writing `go`.

Every way but the last yields the CPU once after writing `go` (`os.sched_yield`), as the
runner does: a pipe write wakes the engine on the writer's CPU, where it waits for the loop.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

ENGINE = r"""
import sys, time, random
random.seed(int(sys.argv[1]))
for line in sys.stdin:
    t0 = time.monotonic()
    if line.startswith("go"):
        time.sleep(random.uniform(0.2, 0.47))
        ms = round((time.monotonic() - t0) * 1000)
        sys.stdout.write(f"info time {ms}\nbestmove e2e4\n"); sys.stdout.flush()
    elif line.startswith("isready"):
        sys.stdout.write("readyok\n"); sys.stdout.flush()
    elif line.startswith("quit"):
        break
"""
SO_TIMESTAMPNS = 35
METHODS = ["loop", "thread", "thread, 1 ms switch", "kernel", "kernel, no yield"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def play(method: str, engines: int, stalls: bool, seconds: float) -> list[float]:
    """Charged minus reported (ms) for every answer of `engines` engines."""
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    kernel = method.startswith("kernel")
    yields = method != "kernel, no yield"

    async def one(n: int) -> None:
        lines: asyncio.Queue[tuple[str, float]] = asyncio.Queue()
        buffer = b""

        def feed(data: bytes, at: float) -> None:
            nonlocal buffer
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                lines.put_nowait((line.decode(), at))

        command = [sys.executable, "-c", ENGINE, str(n)]
        if kernel:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            ours.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            engine = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=theirs)  # noqa: ASYNC220
            theirs.close()
            ours.setblocking(False)

            def readable() -> None:
                try:
                    data, ancillary, _, _ = ours.recvmsg(65536, 64)
                except BlockingIOError:
                    return
                if not data:
                    loop.remove_reader(ours.fileno())
                    return
                now = time.monotonic()
                at = now
                for _, kind, raw in ancillary:
                    if kind == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("@ll", raw[:16])
                        at = min(now, sec + nsec / 1e9 - (time.time() - now))
                feed(data, at)

            loop.add_reader(ours.fileno(), readable)
        else:
            engine = subprocess.Popen(  # noqa: ASYNC220 - a bare program: blocking is fine
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            assert engine.stdout is not None
            fd = engine.stdout.fileno()
            if method == "loop":
                os.set_blocking(fd, False)

                def readable() -> None:
                    try:
                        data = os.read(fd, 65536)
                    except BlockingIOError:
                        return
                    if not data:
                        loop.remove_reader(fd)
                        return
                    feed(data, time.monotonic())

                loop.add_reader(fd, readable)
            else:

                def reader() -> None:
                    while data := os.read(fd, 65536):
                        loop.call_soon_threadsafe(feed, data, time.monotonic())

                threading.Thread(target=reader, daemon=True).start()
        assert engine.stdin is not None
        engine.stdin.write(b"isready\n")
        engine.stdin.flush()
        while (await lines.get())[0] != "readyok":
            pass
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            go = time.monotonic()
            engine.stdin.write(b"go\n")
            engine.stdin.flush()
            if yields:
                os.sched_yield()
            reported = 0
            while True:
                line, at = await lines.get()
                if line.startswith("info time"):
                    reported = int(line.split()[2])
                elif line.startswith("bestmove"):
                    break
            gaps.append((at - go) * 1000 - reported)
            await asyncio.sleep(random.uniform(0, 0.05))  # the opponent's move
        engine.stdin.write(b"quit\n")
        engine.stdin.flush()
        engine.wait()

    async def hold() -> None:
        while True:
            await asyncio.sleep(0.15)
            until = time.monotonic() + 0.05
            while time.monotonic() < until:
                pass

    async def light() -> None:
        while True:
            await asyncio.sleep(0.01)
            sum(range(1000))

    background = [asyncio.create_task(light())]
    if stalls:
        background.append(asyncio.create_task(hold()))
    try:
        await asyncio.gather(*(one(n) for n in range(engines)))
    finally:
        for task in background:
            task.cancel()
    return gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,128")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a run in a process of its own (the switch interval is the process's)
        method, engines, stalls = args.one
        if method == "thread, 1 ms switch":
            sys.setswitchinterval(0.001)
        gaps = asyncio.run(play(method, int(engines), stalls == "1", args.seconds))
        print(f"{percentile(gaps, 99):.0f}")
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    header = " | ".join(f"{n} engines" for n in sizes)
    print(f"| stamped (p99 of charged - reported, ms) | {header} | {sizes[-1]}, no stalls |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for method in METHODS:
        cells = []
        for engines, stalls in [(n, "1") for n in sizes] + [(sizes[-1], "0")]:
            out = subprocess.run(
                [sys.executable, __file__, "--seconds", str(args.seconds), "--one", method,
                 str(engines), stalls],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            cells.append(out.stdout.strip())
        print(f"| {method} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
