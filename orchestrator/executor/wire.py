"""What a game host sends its daemon while a game runs: each engine move (`MoveEvent`), with
the engines' log written since the move before.

A host gathers its games' moves for `SEND_EVERY_S` and sends them as one Dask structured
event whose only value is their msgspec packing (`pack`): Dask's msgpack then carries one
bytes value, where a map per move cost the daemon a Python hook of Dask's for each (its
`_decode_default`) and a string per key, and `unpack` makes the moves back in C.  The whole
game still comes with the task's result: a move lost on the way costs the live view only.
"""

from __future__ import annotations

import msgspec

from orchestrator.core.game.record import MoveRecord, score_from, score_parts

__all__ = ["MoveEvent", "pack", "unpack"]


class MoveEvent(msgspec.Struct, array_like=True, frozen=True):
    """One engine move of the attempt whose task's key is `key`, in its `run` on the host
    (a rerun of the task by Dask is another run); `ply` counts the moves on the board since
    the start position, this one included; `log` is the engines' log since the move before.
    The rest is the move's `MoveRecord`, its score as centipawns or moves to mate."""

    key: str
    run: str
    ply: int
    log: str
    uci: str
    san: str
    book: bool
    cp: int | None
    mate: int | None
    depth: int | None
    seldepth: int | None
    nodes: int | None
    time_ms: int
    clock_ms: int | None
    reported_ms: int | None
    pv: tuple[str, ...]
    nps: int | None
    tbhits: int | None
    hashfull: int | None
    ponder: str | None

    @classmethod
    def of(cls, key: str, run: str, ply: int, log: str, move: MoveRecord) -> MoveEvent:
        """The event of `move`.

        >>> from orchestrator.core.game.record import Mate
        >>> event = MoveEvent.of("game-1", "r1", 1, "", MoveRecord("e2e4", "e4", score=Mate(-3)))
        >>> event.cp, event.mate, event.record().score
        (None, -3, Mate(-3))
        """
        cp, mate = score_parts(move.score)
        return cls(
            key, run, ply, log, move.uci, move.san, move.book, cp, mate, move.depth,
            move.seldepth, move.nodes, move.time_ms, move.clock_ms, move.reported_ms,
            move.pv, move.nps, move.tbhits, move.hashfull, move.ponder,
        )  # fmt: skip

    def record(self) -> MoveRecord:
        """The move's `MoveRecord` (see `of`)."""
        return MoveRecord(
            self.uci, self.san, self.book, score_from(self.cp, self.mate), self.depth,
            self.seldepth, self.nodes, self.time_ms, self.clock_ms, self.reported_ms, self.pv,
            self.nps, self.tbhits, self.hashfull, self.ponder,
        )  # fmt: skip


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[MoveEvent])


def pack(events: list[MoveEvent]) -> bytes:
    """`events` as one bytes value (msgpack arrays), for a Dask structured event.

    >>> from orchestrator.core.game.record import Cp
    >>> move = MoveRecord("e2e4", "e4", score=Cp(35), depth=20, pv=("e2e4", "e7e5"))
    >>> [e.record() for e in unpack(pack([MoveEvent.of("game-1", "r1", 1, "", move)]))] == [move]
    True
    """
    return _encoder.encode(events)


def unpack(data: bytes) -> list[MoveEvent]:
    """The events of `pack`; a `msgspec.DecodeError` (a `ValueError`) for anything else."""
    return _decoder.decode(data)
