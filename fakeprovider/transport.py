"""The fake provider in-process: scenario attempts played by an httpx transport.

Routing, the request log and the byte plans are the loopback server's; instead of a socket,
the response body is a stream that sleeps each write's delay and yields its bytes, and
connection failures are the exceptions httpx raises for them on a real socket (measured
against the loopback server): ``ReadError`` for a reset, ``RemoteProtocolError`` for a
close before the response, ``ReadTimeout`` for a stall or a pause longer than the read
timeout.

The same code serves any httpx-compatible module: :class:`FakeTransport` and
:class:`AsyncFakeTransport` speak ``httpx``; :func:`httpx2_transports` gives the classes
for ``httpx2``, the fork the ``openai`` SDK is built on.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from types import ModuleType
from typing import Any, ClassVar, Literal, NamedTuple, cast

import httpx

from .playback import (
    DEFAULT_MODEL_PREFIX,
    Answer,
    Fault,
    Playback,
    answer_model_request,
    no_route,
)
from .registry import HowEnded, ScenarioRegistry
from .wire import WirePlan

DEFAULT_STALL_TIMEOUT_S = 30.0
"""How long a stall lasts when the request has no read timeout (a socket would hang)."""

IN_PROCESS_ORIGIN = "http://127.0.0.1:9"
"""Origin of in-process base URLs: loopback's discard port, so a client that is not given
the transport fails fast on this machine instead of reaching any network."""

_RESET_MESSAGE = "[Errno 104] Connection reset by peer"
_CLOSED_MESSAGE = "Server disconnected without sending a response."
_TIMEOUT_MESSAGE = "timed out"

_BodyEnd = Literal["complete", "reset", "stalled", "timed-out", "disconnected"]
_PLAN_ENDS: dict[str, _BodyEnd] = {
    "close": "complete",
    "reset": "reset",
    "stall": "stalled",
    "disconnect": "disconnected",
}
_INCOMPLETE_MESSAGE = (
    "peer closed connection without sending complete message body (incomplete chunked read)"
)


class _Read(NamedTuple):
    """What one read of the body gets: after ``wait_s``, ``data``, then maybe the end."""

    wait_s: float
    data: bytes
    end: _BodyEnd | None = None


def _timeline(plan: WirePlan, read_timeout_s: float | None, stall_s: float) -> Iterator[_Read]:
    """The body as a client reading a socket would get it.

    A read timeout runs from the last byte received, so a pause longer than it ends the
    body with a timeout, and a stall lasts exactly the timeout. A clean end right after
    the last write comes with it, as the server logs it before the write that shows it.
    """
    for read in _reads(plan):
        if read_timeout_s is not None and read.wait_s > read_timeout_s:
            yield _Read(read_timeout_s, b"", "timed-out")
            return
        if read.end == "stalled":
            yield _Read(stall_s if read_timeout_s is None else read_timeout_s, b"", "stalled")
            return
        yield read


def _reads(plan: WirePlan) -> Iterator[_Read]:
    """One read per write, made as it is reached, and the end: with the last write when
    nothing comes between them."""
    final = _Read(plan.final_delay_ms / 1000, b"", _PLAN_ENDS[plan.ending])
    last: _Read | None = None
    for write in plan.iter_writes():
        if last is not None:
            yield last
        last = _Read(write.delay_ms / 1000, write.data)
    if last is not None and final == _Read(0.0, b"", "complete"):
        yield last._replace(end="complete")
        return
    if last is not None:
        yield last
    yield final


class _PlanStream:
    """A response body playing a timeline; the sync and async flavours differ in sleeping."""

    def __init__(
        self,
        timeline: Iterable[_Read],
        finish: Callable[[_BodyEnd], None],
        log_end: Callable[[HowEnded], None],
    ) -> None:
        self._timeline = timeline
        self._finish = finish
        self._log_end = log_end

    def _before_data(self, read: _Read) -> None:
        if read.end == "complete":
            self._finish("complete")

    def _after_data(self, read: _Read) -> None:
        if read.end not in (None, "complete"):
            self._finish(read.end)


class _SyncPlanStream(_PlanStream):
    def __iter__(self) -> Iterator[bytes]:
        for read in self._timeline:
            if read.wait_s:
                time.sleep(read.wait_s)
            self._before_data(read)
            if read.data:
                yield read.data
            self._after_data(read)

    def close(self) -> None:
        self._log_end("client-disconnected")  # ignored once the body has ended


class _AsyncPlanStream(_PlanStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        for read in self._timeline:
            if read.wait_s:
                await asyncio.sleep(read.wait_s)
            self._before_data(read)
            if read.data:
                yield read.data
            self._after_data(read)

    async def aclose(self) -> None:
        self._log_end("client-disconnected")  # ignored once the body has ended


@functools.cache
def _stream_classes(http: ModuleType) -> tuple[type[_SyncPlanStream], type[_AsyncPlanStream]]:
    # httpx checks a body stream's class (SyncByteStream or AsyncByteStream) before reading.
    sync = type("SyncPlanStream", (_SyncPlanStream, http.SyncByteStream), {})
    async_ = type("AsyncPlanStream", (_AsyncPlanStream, http.AsyncByteStream), {})
    return cast(type[_SyncPlanStream], sync), cast(type[_AsyncPlanStream], async_)


class _TransportCore:
    """Routing, logging and responses, for every flavour; ``http`` is the httpx module."""

    http: ClassVar[ModuleType] = httpx

    def __init__(
        self,
        registry: ScenarioRegistry,
        *,
        stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S,
        model_prefix: str = DEFAULT_MODEL_PREFIX,
    ) -> None:
        self.registry = registry
        self.stall_timeout_s = stall_timeout_s
        self.model_prefix = model_prefix

    @staticmethod
    def base_url(scenario_id: str) -> str:
        """A ``base_url`` for a client using this transport; no socket is ever opened."""
        return f"{IN_PROCESS_ORIGIN}/{scenario_id}/v1"

    def _answer(self, request: Any, body: bytes) -> Answer:
        target = request.url.raw_path.decode("latin-1")
        headers = [
            (name.decode("latin-1").lower(), value.decode("latin-1"))
            for name, value in request.headers.raw
        ]
        answer = answer_model_request(
            self.registry,
            method=request.method,
            target=target,
            headers=headers,
            body=body,
            model_prefix=self.model_prefix,
        )
        return answer if answer is not None else Answer(no_route(target.partition("?")[0]))

    def _read_timeout_s(self, request: Any) -> float | None:
        timeout: float | None = request.extensions.get("timeout", {}).get("read")
        return timeout

    def _fault(self, fault: Fault, request: Any) -> tuple[float, HowEnded, Exception]:
        """How long the request waits, how the log records it, and what it then raises."""
        match fault.kind:
            case "reset":
                return 0.0, "reset", self.http.ReadError(_RESET_MESSAGE, request=request)
            case "close":
                error = self.http.RemoteProtocolError(_CLOSED_MESSAGE, request=request)
                return 0.0, "closed", error
            case "stall":
                read_timeout_s = self._read_timeout_s(request)
                wait_s = self.stall_timeout_s if read_timeout_s is None else read_timeout_s
                return wait_s, "stalled", self.http.ReadTimeout(_TIMEOUT_MESSAGE, request=request)

    def _response(
        self,
        playback: Playback,
        request: Any,
        log_end: Callable[[HowEnded], None],
        stream_class: type[_PlanStream],
    ) -> Any:
        timeline = _timeline(playback.plan, self._read_timeout_s(request), self.stall_timeout_s)
        finish = functools.partial(self._finish_body, request=request, log_end=log_end)
        headers = [
            (name.encode("latin-1"), value.encode("latin-1")) for name, value in playback.headers
        ]
        return self.http.Response(
            playback.status,
            headers=headers,
            stream=stream_class(timeline, finish, log_end),
            extensions={"http_version": b"HTTP/1.1"},
        )

    def _finish_body(
        self, end: _BodyEnd, *, request: Any, log_end: Callable[[HowEnded], None]
    ) -> None:
        """Log how the body ended; raise what a client reading a socket would."""
        match end:
            case "complete":
                log_end("complete")
            case "reset":
                log_end("reset")
                raise self.http.ReadError(_RESET_MESSAGE, request=request)
            case "stalled":
                log_end("stalled")
                raise self.http.ReadTimeout(_TIMEOUT_MESSAGE, request=request)
            case "disconnected":
                log_end("closed")
                raise self.http.RemoteProtocolError(_INCOMPLETE_MESSAGE, request=request)
            case "timed-out":
                log_end("client-disconnected")  # the client gives up mid-pause and hangs up
                raise self.http.ReadTimeout(_TIMEOUT_MESSAGE, request=request)


class FakeTransportBase(_TransportCore):
    """A sync transport for the module in ``http``; see :func:`transport_classes`."""

    def handle_request(self, request: Any) -> Any:
        answer = self._answer(request, request.read())
        if isinstance(answer.response, Fault):
            wait_s, how, error = self._fault(answer.response, request)
            time.sleep(wait_s)
            answer.log_end(how)
            raise error
        stream_class = _stream_classes(self.http)[0]
        return self._response(answer.response, request, answer.log_end, stream_class)


class AsyncFakeTransportBase(_TransportCore):
    """An async transport for the module in ``http``; see :func:`transport_classes`."""

    async def handle_async_request(self, request: Any) -> Any:
        answer = self._answer(request, await request.aread())
        if isinstance(answer.response, Fault):
            wait_s, how, error = self._fault(answer.response, request)
            await asyncio.sleep(wait_s)
            answer.log_end(how)
            raise error
        stream_class = _stream_classes(self.http)[1]
        return self._response(answer.response, request, answer.log_end, stream_class)


class FakeTransport(FakeTransportBase, httpx.BaseTransport):
    """Plays the scenarios of a registry to an ``httpx.Client``, in process::

    client = httpx.Client(transport=FakeTransport(registry))
    """


class AsyncFakeTransport(AsyncFakeTransportBase, httpx.AsyncBaseTransport):
    """Plays the scenarios of a registry to an ``httpx.AsyncClient``, in process."""


class TransportClasses(NamedTuple):
    sync: type[FakeTransportBase]
    async_: type[AsyncFakeTransportBase]


@functools.cache
def transport_classes(http: ModuleType) -> TransportClasses:
    """The transport classes for an httpx-compatible module (same transport API as httpx)."""
    if http is httpx:
        return TransportClasses(FakeTransport, AsyncFakeTransport)
    sync = type("FakeTransport", (FakeTransportBase, http.BaseTransport), {"http": http})
    async_ = type(
        "AsyncFakeTransport", (AsyncFakeTransportBase, http.AsyncBaseTransport), {"http": http}
    )
    return TransportClasses(
        cast(type[FakeTransportBase], sync), cast(type[AsyncFakeTransportBase], async_)
    )


def httpx2_transports() -> TransportClasses:
    """The transport classes for ``httpx2``, for ``openai.OpenAI(http_client=...)``::

    FakeTransport2, _ = httpx2_transports()
    http_client = httpx2.Client(transport=FakeTransport2(registry))
    """
    import httpx2  # only a test dependency, through the openai SDK

    return transport_classes(httpx2)
