"""The threads a Python adapter's cases run on, away from the runner's event loop.

A subprocess adapter cannot stall the run: the runner only reads its pipe and kills it at the
deadline. A Python adapter runs inside the runner's process, so the same guarantee needs two
things, both here:

- **Its own event loop** (:class:`AdapterLoop`, in a daemon thread): an async adapter that
  blocks its loop (``time.sleep`` in a coroutine) blocks that loop, not the runner's, which
  goes on keeping time; a loop that does not answer after its case was cancelled is abandoned,
  thread and all, and the next case gets a fresh one. A sync adapter's generator runs on a
  daemon thread of its own per case, as before.
- **A gate between producer and runner** (:class:`CaseOutlet`): the producer, in whatever
  thread, puts each event through it into the case's :class:`CaseLog`; at the deadline the
  runner closes it. A closed or full outlet refuses events, and a refused event stops the
  producer (a generator is closed at that yield), so what a timed-out adapter produces
  afterwards is dropped, not kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ..events import Event
from .case_log import CaseLog

_T = TypeVar("_T")


class AdapterLoop:
    """An event loop running in a daemon thread of its own."""

    def __init__(self) -> None:
        started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self.stopped = False  # stop() was called: the loop ends as soon as it can
        thread = threading.Thread(
            target=self._serve, args=(started,), name="python-adapter-loop", daemon=True
        )
        thread.start()
        started.wait()

    def _serve(self, started: threading.Event) -> None:
        # asyncio.Runner cancels what is left and shuts down async generators on the way out.
        with asyncio.Runner() as runner:
            self._loop = runner.get_loop()
            self._stopping = asyncio.Event()
            started.set()
            runner.run(self._stopping.wait())

    def submit(self, work: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        """Schedule ``work`` on this loop; cancelling the future cancels it there."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(work, self._loop)

    async def run(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run ``work`` on this loop and wait for it from the caller's loop."""
        return await asyncio.wrap_future(self.submit(work))

    async def answers_within(self, seconds: float) -> bool:
        """Whether the loop runs a callback within ``seconds`` (False: something blocks it)."""
        ping = asyncio.wrap_future(self.submit(asyncio.sleep(0)))
        try:
            await asyncio.wait_for(ping, seconds)
        except TimeoutError:
            return False
        return True

    def stop(self) -> None:
        """Let the loop finish (now, or once whatever blocks it returns); idempotent."""
        assert self._loop is not None and self._stopping is not None
        self.stopped = True
        with contextlib.suppress(RuntimeError):  # the loop is closed already
            self._loop.call_soon_threadsafe(self._stopping.set)


class CaseOutlet:
    """Where a Python adapter's case puts its events, from any thread: the case's CaseLog
    behind a lock, open until the case ends or its deadline passes."""

    def __init__(self, log: CaseLog) -> None:
        self.log = log
        self.stderr = ""  # the traceback of what the adapter raised
        self._lock = threading.Lock()
        self._open = True
        runner_loop = asyncio.get_running_loop()
        self._runner_loop = runner_loop
        self._ended: asyncio.Future[None] = runner_loop.create_future()

    def put(self, event: Event, size: int) -> bool:
        """Keep ``event`` (``size`` bytes as a JSON line); False when the outlet is closed
        or the case is past a cap: the producer must stop."""
        with self._lock:
            return self._open and self.log.add(event, size)

    def end(self, last_words: Callable[[CaseOutlet], None]) -> None:
        """The producer is done: ``last_words`` records how (unless the case is closed
        already), and the runner is told."""
        with self._lock:
            if self._open:
                last_words(self)
        with contextlib.suppress(RuntimeError):  # the runner's loop is gone: nobody waits
            self._runner_loop.call_soon_threadsafe(_settle, self._ended)

    def close(self) -> None:
        """Refuse everything from now on; the log is the runner's again."""
        with self._lock:
            self._open = False

    async def ended_within(self, seconds: float) -> bool:
        """Whether the producer ends within ``seconds``."""
        try:
            await asyncio.wait_for(asyncio.shield(self._ended), seconds)
        except TimeoutError:
            return False
        return True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
