"""The runner's view of an adapter under test, and the in-process (Python) loader.

Whatever the adapter is — a Python object or a subprocess in any language — the runner
sees an :class:`AdapterSession`: a handshake and ``run_case`` returning the case's events
and how the case ended. Crashes, hangs and garbage become a :class:`CaseRun` status,
never an exception that stops the run.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx
from pydantic import TypeAdapter, ValidationError

from ..codes import ConformanceError
from ..events import End, Event, EventBase, EventDecodeError, Hello, RunCase, Thrown, check_bounds
from ..verdicts import CaseStatus

GRACE_S = 2.0  # added to a case's timeout_s before the runner gives up on the adapter
TRACEBACK_LINES = 40  # the tail of a Python adapter's traceback kept as its case's stderr
_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


@dataclass
class CaseRun:
    """What one case produced on the adapter's side."""

    events: list[Event] = field(default_factory=list)
    status: CaseStatus = "completed"
    detail: str = ""
    stderr: str = ""  # a subprocess's stderr, or the traceback a Python adapter raised


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
    """Drives a Python adapter; sync adapters run on a daemon thread so a hang is survivable."""

    def __init__(self, adapter: PythonAdapter) -> None:
        self.adapter = adapter
        self.hello = adapter.hello
        # Whether `run` takes an `http_client` keyword: then cases can run in process.
        self.accepts_http_client = "http_client" in inspect.signature(adapter.run).parameters

    async def run_case(self, case: RunCase, http_client: httpx.AsyncClient | None) -> CaseRun:
        run = CaseRun()
        kwargs: dict[str, Any] = {}
        if http_client is not None and self.accepts_http_client:
            kwargs["http_client"] = http_client
        try:
            await asyncio.wait_for(self._collect(case, kwargs, run), case.timeout_s + GRACE_S)
        except TimeoutError:
            run.status, run.detail = "timeout", f"no end within {case.timeout_s + GRACE_S:g} s"
        return run

    async def _collect(self, case: RunCase, kwargs: dict[str, Any], run: CaseRun) -> None:
        try:
            produced = self.adapter.run(case, **kwargs)
            if isinstance(produced, AsyncIterator):
                async for item in produced:
                    run.events.append(_as_event(item))
            else:
                await _iterate_on_thread(iter(produced), run.events.append)
        except _ProtocolError as error:
            run.status, run.detail = "protocol-error", str(error)
            return
        except Exception as error:  # the adapter raised: that is its outcome, not ours
            run.events.append(Thrown(message=_as_text(f"{type(error).__name__}: {error}")))
            run.stderr = _as_text(_traceback_tail(error))
        if not run.events or not isinstance(run.events[-1], End):
            run.events.append(End())

    async def close(self) -> None:
        closer = getattr(self.adapter, "close", None)
        if closer is not None:
            result = closer()
            if inspect.isawaitable(result):
                await result


def _traceback_tail(error: BaseException) -> str:
    """The last TRACEBACK_LINES lines of ``error``'s formatted traceback."""
    lines = "".join(traceback.format_exception(error)).splitlines()
    return "\n".join(lines[-TRACEBACK_LINES:])


def _as_text(message: str) -> str:
    """``message`` with any lone surrogate written as an escape (``\\ud800``): text that
    can be stored and printed."""
    return message.encode("utf-8", "backslashreplace").decode()


class _ProtocolError(ConformanceError):
    """An item a Python adapter yielded that is not an event."""


def _as_event(item: object) -> Event:
    """Accept event models or their JSON form; anything else is a protocol error."""
    # A model built with `code=None` sends no JSON null: G8 judges wire JSON only.
    data = item.model_dump(exclude_none=True) if isinstance(item, EventBase) else item
    try:
        check_bounds(data)  # before anything prints or stores it
        return _EVENTS.validate_python(data)
    except EventDecodeError as error:
        raise _ProtocolError(f"not an event: {error}") from error
    except ValidationError as error:
        raise _ProtocolError(f"not an event: {item!r:.200}") from error


async def _iterate_on_thread(items: Iterator[object], take: Callable[[Event], None]) -> None:
    """Iterate a blocking iterator on a daemon thread (a hung adapter must not block exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def pump() -> None:
        try:
            for item in items:
                loop.call_soon_threadsafe(take, _as_event(item))
        except BaseException as error:  # handed to the event loop, re-raised there
            loop.call_soon_threadsafe(_settle, done, error)
        else:
            loop.call_soon_threadsafe(_settle, done, None)

    threading.Thread(target=pump, name="adapter-case", daemon=True).start()
    await done


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
