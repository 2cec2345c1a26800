"""`asyncio.timeout`, as Python 3.11.3 and later have it, on every Python 3.11.

Before 3.11.3 (Debian 12's python3 is 3.11.2), a timeout that expires in a task that was
cancelled before the timeout was entered raises `CancelledError`, not `TimeoutError`: it
takes the cancellation being handled (a game's engines closed after the game was cancelled)
for a new one (CPython gh-102780).  A `quit` that an engine ignores then ends the clean-up
of the game, and the engines after it are never closed.  `timeout` gives the fixed
behaviour there too: the timeout's own expiry is a `TimeoutError`, whatever cancellations
came before it; a cancellation that comes while it runs still propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from types import TracebackType

__all__ = ["timeout"]


class _Timeout:
    """`asyncio.Timeout` that tells its own expiry from a cancellation made before it was
    entered (by the task's count of cancel requests then, as 3.11.3 does)."""

    def __init__(self, when: float | None) -> None:
        self.inner = asyncio.Timeout(when)
        self.before = 0

    async def __aenter__(self) -> asyncio.Timeout:
        task = asyncio.current_task()
        self.before = task.cancelling() if task is not None else 0
        return await self.inner.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.inner.__aexit__(exc_type, exc_val, exc_tb)  # may raise TimeoutError
        task = asyncio.current_task()
        if (
            self.inner.expired()
            and exc_type is asyncio.CancelledError
            and task is not None
            and task.cancelling() <= self.before  # no cancel request came while it ran
        ):
            raise TimeoutError from exc_val


def timeout(delay: float | None) -> contextlib.AbstractAsyncContextManager[asyncio.Timeout]:
    """A timeout of `delay` seconds (None: none), as `asyncio.timeout`.

    >>> async def main():
    ...     task = asyncio.current_task()
    ...     task.cancel()
    ...     try:
    ...         await asyncio.sleep(1)
    ...     except asyncio.CancelledError:  # handled: the clean-up goes on
    ...         pass
    ...     try:
    ...         async with timeout(0.01):
    ...             await asyncio.sleep(1)
    ...     except TimeoutError:
    ...         return "timed out"
    >>> asyncio.run(main())
    'timed out'
    """
    if sys.version_info >= (3, 11, 3):
        return asyncio.timeout(delay)
    loop = asyncio.get_running_loop()
    return _Timeout(None if delay is None else loop.time() + delay)
