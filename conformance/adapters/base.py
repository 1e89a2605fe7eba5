"""The runner's view of an adapter under test, and the in-process (Python) loader.

Whatever the adapter is — a Python object or a subprocess in any language — the runner
sees an :class:`AdapterSession`: a handshake and ``run_case`` returning the case's events
and how the case ended. Crashes, hangs and garbage become a :class:`CaseRun` status,
never an exception that stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import os
import sys
import threading
import traceback
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx
from pydantic import TypeAdapter

from ..codes import ConformanceError
from ..events import (
    End,
    Event,
    EventBase,
    EventDecodeError,
    EventFieldError,
    Hello,
    RunCase,
    Thrown,
    check_bounds,
    validate_event,
)
from ..kept import Kept
from ..verdicts import CaseStatus
from .case_log import MAX_CASE_BYTES, MAX_EVENTS_PER_CASE, CaseLog
from .watchdog import AdapterLoop, CaseOutlet

GRACE_S = 2.0  # added to a case's timeout_s before the runner gives up on the adapter
TRACEBACK_LINES = 40  # the tail of a Python adapter's traceback kept as its case's stderr
_LOOP_ANSWER_S = 1.0  # after a timed-out case is cancelled: a loop silent this long is blocked
_CLOSE_WAIT_S = 2.0  # how long the adapter's own close() may take
_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


@dataclass
class CaseRun:
    """What one case produced on the adapter's side."""

    events: list[Event] = field(default_factory=list)
    status: CaseStatus = "completed"
    detail: str = ""
    stderr: str = ""  # a subprocess's stderr, or the traceback a Python adapter raised
    kept: Kept = field(default_factory=Kept)  # the case's account, its events charged
    # A protocol error in a readable event: the field that failed validation
    # (``tool-call-delta.id``); its invariant owns the case's failure.
    invalid_field: str | None = None

    @property
    def kept_bytes(self) -> int:
        return self.kept.bytes


class AdapterSession(Protocol):
    hello: Hello

    async def run_case(self, case: RunCase, http_client: httpx.AsyncClient | None) -> CaseRun:
        """Run one case; ``http_client`` reaches the provider in-process when given."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class PythonAdapter(Protocol):
    """What a ``--adapter module:factory`` factory returns.

    ``run`` may be a generator or an async generator of :mod:`conformance.events` events
    (or dicts in their JSON form). If it accepts an ``http_client`` keyword, the suite
    may pass an ``httpx.AsyncClient`` wired to the in-process fake provider.
    """

    hello: Hello

    def run(
        self, case: RunCase
    ) -> Iterable[Event | Mapping[str, Any]] | AsyncIterator[Event | Mapping[str, Any]]: ...


class AdapterLoadError(ConformanceError):
    """The adapter could not be loaded or did not complete its handshake."""


def load_python_adapter(target: str, options: object) -> PythonAdapterSession:
    """Import ``module:factory`` and call the factory with the run options.

    The current directory comes first on the import path, as with ``python -m``, so a
    project's own ``my_adapter.py`` loads from wherever the suite is started. Whatever the
    import or the factory raises becomes an AdapterLoadError.
    """
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise AdapterLoadError(f"--adapter takes module:factory, got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
        adapter = factory(options)
    except Exception as error:  # a missing module, a broken one, a factory that raised
        raise AdapterLoadError(f"cannot load {target}: {type(error).__name__}: {error}") from error
    if not isinstance(adapter, PythonAdapter) or not isinstance(adapter.hello, Hello):
        raise AdapterLoadError(f"{target} must return an object with `hello` (Hello) and `run`")
    try:
        check_bounds(adapter.hello.model_dump())
    except EventDecodeError as error:
        raise AdapterLoadError(f"{target}: bad hello: {error}") from None
    return PythonAdapterSession(adapter)


class PythonAdapterSession:
    """Drives a Python adapter under the watchdog a subprocess adapter is under.

    Each case runs off the runner's event loop (see :mod:`.watchdog`): an async adapter on an
    event loop of its own in a thread of its own, a sync one on a thread per case. Its events
    go through a :class:`~.watchdog.CaseOutlet` into a :class:`~.case_log.CaseLog` with the
    per-case caps. At the deadline (``timeout_s`` plus the grace) the case is a ``timeout``
    and the outlet is closed: the producer's next event is dropped and stops it, and an async
    case is cancelled. A loop that does not answer then (blocked by the adapter) is abandoned
    and the next case gets a fresh one, so the run goes on either way.

    Cases of an adapter whose ``run`` is an async generator function may be in flight
    together, on its one loop (``--jobs``); a case that blocks that loop stalls the cases
    beside it too. Any other adapter runs one case at a time: nothing says a sync
    generator may run on several threads at once.
    """

    def __init__(
        self,
        adapter: PythonAdapter,
        *,
        grace_s: float = GRACE_S,
        max_events_per_case: int = MAX_EVENTS_PER_CASE,
        max_case_bytes: int = MAX_CASE_BYTES,
    ) -> None:
        self.adapter = adapter
        self.hello = adapter.hello
        # Whether `run` takes an `http_client` keyword: then cases can run in process.
        self.accepts_http_client = "http_client" in inspect.signature(adapter.run).parameters
        self.concurrent = inspect.isasyncgenfunction(adapter.run)
        self._one_at_a_time = contextlib.nullcontext() if self.concurrent else asyncio.Lock()
        self._grace_s = grace_s
        self._max_events = max_events_per_case
        self._max_bytes = max_case_bytes
        self._loop: AdapterLoop | None = None

    async def run_case(self, case: RunCase, http_client: httpx.AsyncClient | None) -> CaseRun:
        async with self._one_at_a_time:
            return await self._run_case(case, http_client)

    async def _run_case(self, case: RunCase, http_client: httpx.AsyncClient | None) -> CaseRun:
        kwargs: dict[str, Any] = {}
        if http_client is not None and self.accepts_http_client:
            kwargs["http_client"] = http_client
        outlet = CaseOutlet(CaseLog(case.case, self._max_events, self._max_bytes))
        loop = self.loop
        producing = loop.submit(self._produce(case, kwargs, outlet))
        budget = case.timeout_s + self._grace_s
        try:
            ended = await outlet.ended_within(budget)
        finally:  # also when the run is cancelled: nothing more is kept
            outlet.close()
            producing.cancel()  # an async case still running stops at its next await
        if not ended:
            outlet.log.fail("timeout", f"no end within {budget:g} s")
            if not await loop.answers_within(_LOOP_ANSWER_S):
                self._abandon(loop)
        log = outlet.log
        return CaseRun(
            events=log.events,
            status=log.status,
            detail=log.detail(),
            stderr=outlet.stderr,
            kept=log.kept,
            invalid_field=log.invalid_field,
        )

    async def _produce(self, case: RunCase, kwargs: dict[str, Any], outlet: CaseOutlet) -> None:
        """On the adapter's loop: call ``run``; drain an async iterator here, hand a sync one
        to a thread of its own (its body may block, or run an event loop of its own)."""
        try:
            produced = self.adapter.run(case, **kwargs)
            if not isinstance(produced, AsyncIterator):
                items = iter(produced)
                threading.Thread(
                    target=_pump, args=(items, outlet), name="python-adapter-case", daemon=True
                ).start()
                return  # the pump ends the outlet
            try:
                async for item in produced:
                    if not _keep(outlet, item):
                        break
            finally:  # stopped early (refused, cancelled): the generator's cleanup runs now
                if isinstance(produced, AsyncGenerator):
                    await produced.aclose()
        except BaseException as error:
            outlet.end(functools.partial(_record_end, error))
            if not isinstance(error, Exception):  # cancelled: the task ends as such
                raise
        else:
            outlet.end(functools.partial(_record_end, None))

    async def close(self) -> None:
        """Call the adapter's ``close`` (awaited if it is a coroutine) on its loop, giving it
        _CLOSE_WAIT_S, then stop the loop."""
        closer = getattr(self.adapter, "close", None)
        try:
            if closer is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.loop.run(_call(closer)), _CLOSE_WAIT_S)
        finally:
            if self._loop is not None:
                self._abandon(self._loop)

    @property
    def loop(self) -> AdapterLoop:
        """The loop the next case runs on (a fresh one after a blocked one was abandoned);
        the run's provider runs there too (``conformance.run.provider.SessionProvider``)."""
        if self._loop is None:
            self._loop = AdapterLoop()
            # A session dropped without close() still lets its loop's thread end.
            weakref.finalize(self, self._loop.stop)
        return self._loop

    def _abandon(self, loop: AdapterLoop) -> None:
        """Stop ``loop``; the next case gets a fresh one (unless a case in flight beside
        the one that found ``loop`` blocked has replaced it already)."""
        loop.stop()
        if self._loop is loop:
            self._loop = None


def _traceback_tail(error: BaseException) -> str:
    """The last TRACEBACK_LINES lines of ``error``'s formatted traceback."""
    lines = "".join(traceback.format_exception(error)).splitlines()
    return "\n".join(lines[-TRACEBACK_LINES:])


def _as_text(message: str) -> str:
    """``message`` with any lone surrogate written as an escape (``\\ud800``): text that
    can be stored and printed."""
    return message.encode("utf-8", "backslashreplace").decode()


class _ProtocolError(ConformanceError):
    """An item a Python adapter yielded that is not an event; ``field`` names the field
    that failed validation in an event of a known type."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _as_event(item: object) -> Event:
    """Accept event models or their JSON form; anything else is a protocol error."""
    # A model built with `code=None` sends no JSON null: G8 judges wire JSON only.
    data = item.model_dump(exclude_none=True) if isinstance(item, EventBase) else item
    try:
        return validate_event(data)  # bounds first: before anything prints or stores it
    except EventFieldError as error:
        raise _ProtocolError(f"not an event: {error}: {item!r:.200}", error.field) from error
    except EventDecodeError as error:
        raise _ProtocolError(f"not an event: {error}") from error


def _keep(outlet: CaseOutlet, item: object) -> bool:
    """Put one item an adapter yielded through ``outlet``; False: stop producing (the
    outlet refused it, or it was ``end``: the case is over, as for a subprocess adapter)."""
    event = _as_event(item)
    return outlet.put(event, _size(event)) and not isinstance(event, End)


def _size(event: Event) -> int:
    return len(_EVENTS.dump_json(event, exclude_none=True))


def _pump(items: Iterator[object], outlet: CaseOutlet) -> None:
    """A sync adapter's case, on a thread of its own, until its generator ends or the outlet
    refuses an event (the generator is then closed at that yield)."""
    try:
        try:
            for item in items:
                if not _keep(outlet, item):
                    break
        finally:
            if isinstance(items, Generator):
                items.close()
    except BaseException as error:  # the thread's last word: recorded, not raised
        outlet.end(functools.partial(_record_end, error))
    else:
        outlet.end(functools.partial(_record_end, None))


def _record_end(error: BaseException | None, outlet: CaseOutlet) -> None:
    """How a case's producer ended, as the last entries of its record: a protocol error, or
    what the adapter raised (a ``thrown`` event, the traceback as stderr); then ``end``,
    unless the adapter sent it or the case is already a protocol error."""
    log = outlet.log
    if isinstance(error, _ProtocolError):
        log.fail("protocol-error", str(error), invalid_field=error.field)
    elif isinstance(error, Exception):  # the adapter raised: that is its outcome, not ours
        thrown = Thrown(message=_as_text(f"{type(error).__name__}: {error}"))
        log.add(thrown, _size(thrown))
        outlet.stderr = _as_text(_traceback_tail(error))
    if log.status == "completed" and not (log.events and isinstance(log.events[-1], End)):
        end = End()
        log.add(end, _size(end))


async def _call(closer: Callable[[], object]) -> None:
    result = closer()
    if inspect.isawaitable(result):
        await result
