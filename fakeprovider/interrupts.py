"""SIGINT and SIGTERM as a clean stop: what a command had is kept, what it started is ended.

The first signal is recorded (:attr:`Interruption.signal`) and then reaches the command in
one of two ways. Async code that waits on :meth:`Interruption.signalled` is woken on its own
loop (from any thread) and winds down itself, keeping its results; code in the main thread
that does not wait gets a KeyboardInterrupt raised where it is, as for a Ctrl-C (so that
what passes one through, asyncio's callbacks, Hypothesis, ``except Exception``, passes this
through too), unless it is in a block under :meth:`Interruption.deferred`, whose code looks
for itself (:meth:`Interruption.raise_if_signalled`).
Every later signal is ignored: the stop is under way and bounded (adapter trees are killed,
workers are ended), and a second Ctrl-C must not turn it into tracebacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Awaitable, Iterator
from types import FrameType
from typing import TypeVar

_T = TypeVar("_T")

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_code(signum: signal.Signals) -> int:
    """How a command stopped by ``signum`` exits, as a shell reports a process the signal
    ended: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + int(signum)


class Interruption:
    """The stopping signals of this process, while :meth:`caught`."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None
        self._lock = threading.RLock()  # the handler may run while this thread holds it
        self._waiters: dict[asyncio.Event, asyncio.AbstractEventLoop] = {}
        self._deferred = 0  # deferred() blocks open: the main thread looks for itself

    @contextlib.contextmanager
    def caught(self) -> Iterator[Interruption]:
        """Handle SIGINT and SIGTERM here (main thread only). The old handlers come back,
        unless a signal came: then the process is on its way out, and a later signal while
        it exits (its atexit hooks, multiprocessing's finalizers) is ignored too."""
        previous = {signum: signal.signal(signum, self._handle) for signum in STOPPING_SIGNALS}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler if self.signal is None else signal.SIG_IGN)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A block whose code notices the signal itself (an event loop in the main thread,
        whose own code awaits :meth:`signalled`): no exception is raised into it."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1

    async def signalled(self) -> signal.Signals:
        """Wait for a stopping signal (at once if one came already); which it was."""
        event = asyncio.Event()
        with self._lock:
            self._waiters[event] = asyncio.get_running_loop()
        try:
            if self.signal is None:
                await event.wait()
        finally:
            with self._lock:
                del self._waiters[event]
        assert self.signal is not None
        return self.signal

    async def unless_signalled(self, work: Awaitable[_T]) -> _T:
        """``work``'s result; if a stopping signal comes first, ``work`` is cancelled (and
        waited for) and KeyboardInterrupt raised."""
        working = asyncio.ensure_future(work)
        waiting = asyncio.ensure_future(self.signalled())
        try:
            await asyncio.wait({working, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            if not working.done():
                working.cancel()
                await asyncio.wait({working})
        if working.cancelled():
            self.raise_if_signalled()
        return working.result()

    def raise_if_signalled(self) -> None:
        """Raise KeyboardInterrupt if a stopping signal came: where deferred code stops."""
        if self.signal is not None:
            raise KeyboardInterrupt(self.signal.name)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:
            return  # a second signal: the first one's stop is under way
        self.signal = signal.Signals(signum)
        with self._lock:
            waiters = list(self._waiters.items())
        for event, loop in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(event.set)
        if not self._deferred:
            raise KeyboardInterrupt(self.signal.name)
