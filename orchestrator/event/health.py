"""What only the running daemon knows of its own health, as it writes it with its heartbeat
(`Store.heartbeat`) for the web process's `/metrics` (`web/metrics.py`) and `/healthz`: its
event loop's lag, the last move, where its games run (the scheduler and each game host), and
a full disk it is waiting out.

The lag is a histogram of the loop's lateness, sampled every `LoopLag.EVERY_S` by a task on
the loop: cumulative counts per bucket, as Prometheus keeps them, since the daemon started.
"""

from __future__ import annotations

import bisect

import msgspec

__all__ = ["Health", "HostHealth", "LoopLag", "decode", "encode"]

#: the upper bounds (seconds) of the lag's buckets; the last one is +Inf
LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class LoopLag(msgspec.Struct):
    """How late the daemon's loop ran a task due now: counts per bucket (each count is of
    the samples at most its bound, not cumulative), their sum, and the largest.

    >>> lag = LoopLag()
    >>> for seconds in (0.0004, 0.003, 0.2):
    ...     lag.observe(seconds)
    >>> lag.cumulative()[:3], lag.samples, round(lag.total, 4), lag.most
    ([1, 2, 2], 3, 0.2034, 0.2)
    """

    EVERY_S = 0.25  # how often the loop is sampled

    counts: list[int] = msgspec.field(default_factory=lambda: [0] * (len(LAG_BUCKETS) + 1))
    total: float = 0.0
    samples: int = 0
    most: float = 0.0

    def observe(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.counts[bisect.bisect_left(LAG_BUCKETS, seconds)] += 1
        self.total += seconds
        self.samples += 1
        self.most = max(self.most, seconds)

    def cumulative(self) -> list[int]:
        """The counts as Prometheus's buckets hold them: samples at most each bound, +Inf
        last."""
        out, running = [], 0
        for count in self.counts:
            running += count
            out.append(running)
        return out


class HostHealth(msgspec.Struct):
    """A game host as the daemon sees it: connected, and the games it plays now."""

    up: bool
    games: int = 0


class Health(msgspec.Struct, omit_defaults=True):
    """The daemon's own health, written with each heartbeat."""

    loop_lag: LoopLag = msgspec.field(default_factory=LoopLag)
    #: when the last engine move was played (Unix time); None before the first
    last_move_at: float | None = None
    #: the Dask scheduler's connection ("connected", "unreachable"); None: games run here
    scheduler: str | None = None
    hosts: dict[str, HostHealth] = msgspec.field(default_factory=dict)
    #: why the event waits for disk space ("the database: ..."), and how much is free
    disk_full: str | None = None
    disk_free: int | None = None


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Health)


def encode(health: Health) -> str:
    """`health` as the heartbeat stores it.

    >>> decode(encode(Health(last_move_at=1.5))).last_move_at
    1.5
    """
    return _ENCODER.encode(health).decode()


def decode(text: str | None) -> Health:
    """The stored health (an empty one for none, or for one that cannot be read).

    >>> decode(None) == Health(), decode("not json") == Health()
    (True, True)
    """
    if not text:
        return Health()
    try:
        return _DECODER.decode(text)
    except msgspec.DecodeError:
        return Health()
