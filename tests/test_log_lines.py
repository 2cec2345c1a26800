"""The log's lines stay whole: the daemon's own lines (structlog) and the libraries' (the
standard library's logging, from any thread: aiosqlite logs from its own) go to one stream,
each line written under the one lock of that stream, so that no line is cut by another."""

from __future__ import annotations

import json
import logging
import threading
import time

import structlog

from orchestrator.logs import configure


class _Slow:
    """A stream that gives the other threads their turn in the middle of every write, as a
    long line's write to a file may."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        time.sleep(0.0005)
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_the_daemon_s_and_the_libraries_lines_never_cut_each_other() -> None:
    stream = _Slow()
    root, engine = logging.getLogger(), logging.getLogger("chess.engine")
    levels = root.level, engine.level
    configure(json=True, level="debug", stream=stream)
    try:

        def library() -> None:
            for n in range(40):
                logging.getLogger("aiosqlite").debug("operation %d", n)

        thread = threading.Thread(target=library)
        thread.start()
        for n in range(40):
            structlog.get_logger().info("game_finished", game=n)
        thread.join()
    finally:
        configure(json=True)
        root.setLevel(levels[0])
        engine.setLevel(levels[1])
    lines = "".join(stream.parts).splitlines()
    events = [json.loads(line)["event"] for line in lines]  # each line one whole object
    assert events.count("game_finished") == 40
    assert events.count("library_log") == 40
