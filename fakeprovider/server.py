"""The loopback HTTP server: plays scenario attempts byte for byte, write by write.

A thin asyncio shell. h11 parses requests; responses are the raw bytes wire.py produced,
written as sends.py lays them out, so every scripted write reaches the socket exactly as
planned (one ``send`` per write, TCP_NODELAY on), or, in the load mode (``coalesce``),
each run of writes between pauses in one. One scenario per URL prefix; a small JSON
control API under ``/_``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import NamedTuple, Self

import h11

from .dialects import DEFAULT_DIALECT, DIALECTS
from .errors import FakeProviderError
from .forwarding import origin_form
from .hosts import HostCheck, http_origin
from .listening import ListeningServer
from .playback import (
    DEFAULT_MODEL_PREFIX,
    Answer,
    Fault,
    Playback,
    answer_control,
    answer_model_request,
    error_playback,
    for_http_1_0,
    misdirected,
)
from .registry import HowEnded, ScenarioRegistry, UnknownScenarioError
from .sends import Run

DEFAULT_HOST = "127.0.0.1"
MAX_BODY_BYTES = 10 * 1024 * 1024
REQUEST_TIMEOUT_S = 10.0
"""How long a client may take to send a whole request (slowloris guard, idle keep-alive),
or up to a quarter more: the deadlines are checked four times a timeout, not each timed
(a timer per request was 7 of the 70 µs a request cost beyond bare asyncio)."""

_READ_SIZE = 64 * 1024
# Connections the kernel may queue before accept(): asyncio's default of 100 makes a burst
# of a thousand connects (a load test) wait out SYN retransmits, seconds each.
_LISTEN_BACKLOG = 1024
# Bytes a response may leave in the transport's buffer (a client reading slower than the
# stream is written) before it waits for them to go: asyncio's own default high water.
_HIGH_WATER_BYTES = 64 * 1024
_LINGER_S = 1.0  # how long to drain input before closing on a rejected request
_log = logging.getLogger(__name__)


class _Request(NamedTuple):  # a tuple: made per request, the cheapest to make
    method: str
    target: str
    """In origin form (``/v1/chat/completions?x``), whatever form the client sent."""
    headers: list[tuple[str, str]]
    body: bytes
    keep_alive: bool
    http_1_0: bool
    authority: str | None = None
    """The host of an absolute-form target, which RFC 9112 §3.2.2 puts before ``Host``."""

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def host(self) -> str | None:
        if self.authority is not None:
            return self.authority
        return next((value for name, value in self.headers if name == "host"), None)


class _RequestRejectedError(FakeProviderError):
    """A request the server answers with an error and then closes the connection on."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class FakeProviderServer(ListeningServer):
    """Serves every scenario of ``registry`` at ``/{scenario-id}/v1/<endpoint>`` (and
    without ``/v1``), and at ``/v1/<endpoint>`` to a request whose ``x-scenario-id``
    header or ``model`` (``{model_prefix}<id>``) names it; the endpoint is the scenario
    dialect's: ``chat/completions``, or ``messages`` for Anthropic Messages.

    The control API answers a request only if its ``Host`` is ``localhost``, an IP address,
    ``host`` or one of ``allowed_hosts`` (``*``: any), with this port (fakeprovider.hosts).

    ``coalesce`` is the load mode: the same bytes, but each run of writes that no pause
    parts (the head and the last chunk included) is sent as one write, so write boundaries
    are no longer the scenario's. For a load source, not for conformance cases.
    """

    def __init__(
        self,
        registry: ScenarioRegistry,
        host: str = DEFAULT_HOST,
        port: int = 0,
        *,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        model_prefix: str = DEFAULT_MODEL_PREFIX,
        allowed_hosts: Iterable[str] = (),
        coalesce: bool = False,
    ) -> None:
        self.registry = registry
        self.host = host
        self.request_timeout_s = request_timeout_s
        self.max_body_bytes = max_body_bytes
        self.model_prefix = model_prefix
        self.host_check = HostCheck(host, allowed_hosts)
        self.coalesce = coalesce
        self._requested_port = port
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], _Connection] = {}
        self._sweeping: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, self._requested_port, backlog=_LISTEN_BACKLOG
        )
        self._sweep()

    async def stop(self) -> None:
        """Stop listening and drop every connection, stalled ones included."""
        if self._server is None:
            return
        self._server.close()
        if self._sweeping is not None:
            self._sweeping.cancel()
        for task in self._connections:
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def serve_forever(self) -> None:
        """Serve until cancelled (Ctrl-C under ``asyncio.run``), then stop cleanly."""
        if self._server is None:
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    @property
    def root_url(self) -> str:
        """``http://HOST:PORT``: the control API lives under it."""
        return http_origin(self.host, self.port)

    def base_url(self, scenario_id: str) -> str:
        """The OpenAI ``base_url`` that plays ``scenario_id``."""
        return f"{self.root_url}/{scenario_id}/v1"

    def sdk_base_url(self, scenario_id: str) -> str:
        """The base URL the SDKs of the scenario's dialect take: :meth:`base_url` for chat,
        ``http://HOST:PORT/{id}`` for Anthropic Messages (its SDKs add ``/v1/messages``)."""
        try:
            dialect = DIALECTS[self.registry.get(scenario_id).dialect]
        except UnknownScenarioError:
            dialect = DIALECTS[DEFAULT_DIALECT]
        return f"{self.root_url}/{scenario_id}{dialect.base_suffix}"

    def _sweep(self) -> None:
        """End the reading of every request past its deadline; again a quarter timeout on."""
        now = asyncio.get_running_loop().time()
        for connection in self._connections.values():
            connection.end_if_late(now)
        self._sweeping = asyncio.get_running_loop().call_later(
            self.request_timeout_s / 4, self._sweep
        )

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # start_server runs each connection in its own task
        self._connections[task] = _Connection(self, reader, writer, task)
        try:
            await self._connections[task].run()
        except asyncio.CancelledError:
            # Only stop() cancels a connection task (past a read's deadline, the connection
            # ends normally). Ending it normally matters on 3.11, whose stream callback logs
            # an error for a cancelled connection task.
            pass
        finally:
            del self._connections[task]


class _Connection:
    """One accepted socket: request/response cycles until either side ends it."""

    def __init__(
        self,
        server: FakeProviderServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        task: asyncio.Task[None],
    ) -> None:
        self._server = server
        self._registry = server.registry
        self._task = task
        self._deadline: float | None = None  # loop time by which the request being read is in
        self._late = False  # the request was not in by its deadline
        self._reader = reader
        self._writer = writer
        self._transport = writer.transport
        self._unparsed = bytearray()  # bytes read ahead of the request being parsed
        # TCP cannot tell a client that half-closed (and still reads) from one that left:
        # both send FIN. So the end of input ends only a stall (the watcher's end), which
        # writes nothing that could fail; a reset, or a write failing, is a client gone.
        self._peer_gone = False  # the client reset the connection
        self._input_discarded = False  # read ahead past the bound: no next request to parse
        self._pausing: asyncio.Future[None] | None = None  # the pause under way, if any
        # Reads while a response waits (a pause, a stall), from its first wait to its end:
        # a response that never waits costs no task.
        self._watcher: asyncio.Task[None] | None = None

    async def run(self) -> None:
        self._configure_socket()
        graceful = False
        try:
            while await self._serve_one():
                pass
            graceful = True
        except ConnectionError:
            pass  # the client went away while we wrote; nothing to answer
        except Exception:  # hostile input must never take the server down
            _log.exception("fakeprovider: connection failed")
        finally:
            self._close(graceful)

    def _configure_socket(self) -> None:
        # asyncio's socket transports set TCP_NODELAY themselves. With no high water,
        # drain() returns only once every byte is handed to the kernel: a pause starts once
        # the writes before it are sent, so "sent" times are true.
        self._transport.set_write_buffer_limits(high=0)

    async def _serve_one(self) -> bool:
        """Read and answer one request; False when the connection must end."""
        try:
            request = await self._read_in_time()
        except _RequestRejectedError as rejected:
            await self._send_response(error_playback(rejected.status, rejected.message))
            await self._linger()
            return False
        if request is None:
            return False
        return await self._respond(request) and request.keep_alive and not self._input_discarded

    # --- reading ------------------------------------------------------------------------

    def end_if_late(self, now: float) -> None:
        """Stop reading a request whose deadline has passed (the server's sweep)."""
        if self._deadline is not None and now >= self._deadline:
            self._deadline = None
            self._late = True
            self._task.cancel()

    async def _read_in_time(self) -> _Request | None:
        """The next request, or None if the client closed or was late (request_timeout_s)."""
        self._deadline = asyncio.get_running_loop().time() + self._server.request_timeout_s
        try:
            return await self._read_request()
        except asyncio.CancelledError:
            if not self._late:
                raise  # the server is stopping
            self._task.uncancel()
            return None
        finally:
            self._deadline = None

    async def _read_request(self) -> _Request | None:
        """The next complete request, or None if the client closed between requests."""
        parser = h11.Connection(h11.SERVER)
        if self._unparsed:  # h11 takes an empty receive as end of input
            parser.receive_data(bytes(self._unparsed))
            self._unparsed.clear()
        head: h11.Request | None = None
        body = bytearray()
        while True:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError as error:
                raise _RequestRejectedError(
                    error.error_status_hint, f"malformed HTTP request: {error}"
                ) from None
            if event is h11.NEED_DATA:
                parser.receive_data(await self._receive())
            elif isinstance(event, h11.Request):
                head = event
                length = self._content_length(event)
                if parser.they_are_waiting_for_100_continue:
                    await self._send(b"HTTP/1.1 100 Continue\r\n\r\n")
                if length is not None:
                    # h11 has read the framing; a body of a known length is taken as it
                    # is, which spares two events of h11 (a sixth of a short stream's cost).
                    return _request(head, await self._read_body(parser.trailing_data[0], length))
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > self._server.max_body_bytes:
                    raise _RequestRejectedError(413, self._too_large())
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None  # h11 emits Request before EndOfMessage
                self._unparsed += parser.trailing_data[0]
                return _request(head, bytes(body))
            else:  # ConnectionClosed: the client left between requests
                return None

    async def _receive(self) -> bytes:
        try:
            return await self._reader.read(_READ_SIZE)
        except ConnectionError:
            return b""  # h11 reads an empty receive as the end of the connection

    async def _read_body(self, received: bytes, length: int) -> bytes:
        """A body of ``length`` bytes, of which ``received`` were read with the head; the
        bytes after it are kept for the next request."""
        if len(received) < length:
            buffer = bytearray(received)
            while len(buffer) < length:
                if not (data := await self._receive()):
                    raise _RequestRejectedError(
                        400, f"malformed HTTP request: {len(buffer)} of {length} body bytes"
                    )
                buffer += data
            received = bytes(buffer)
        self._unparsed += received[length:]
        return received[:length]

    def _content_length(self, head: h11.Request) -> int | None:
        """The body length the head gives (h11 has checked it: one value, digits), or
        None: a chunked body, or none."""
        names = [name for name, _ in head.headers]
        if b"content-length" not in names:
            return None
        if b"transfer-encoding" in names:
            # RFC 9112 §6.3: the body's end is uncertain, so must the connection's be.
            raise _RequestRejectedError(
                400, "malformed HTTP request: both Content-Length and Transfer-Encoding"
            )
        length = int(head.headers[names.index(b"content-length")][1])
        if length > self._server.max_body_bytes:
            raise _RequestRejectedError(413, self._too_large())
        return length

    def _too_large(self) -> str:
        return f"request body larger than {self._server.max_body_bytes} bytes"

    # --- routing ------------------------------------------------------------------------

    async def _respond(self, request: _Request) -> bool:
        """Answer one request; False if the connection cannot carry another."""
        answer = answer_model_request(
            self._registry,
            method=request.method,
            target=request.target,
            headers=request.headers,
            body=request.body,
            model_prefix=self._server.model_prefix,
        )
        if answer is not None:
            return await self._play(for_http_1_0(answer) if request.http_1_0 else answer)
        if not self._server.host_check.allows(request.host, self._server.port):
            return await self._send_response(misdirected(request.host))
        # In a worker thread: validating a 10 MiB upload or writing out a long request log
        # takes seconds, during which the loop's streams would stand still.
        control = await asyncio.to_thread(
            answer_control,
            self._registry,
            method=request.method,
            path=request.path,
            body=request.body,
            base_url=self._server.sdk_base_url,
        )
        return await self._send_response(control)

    # --- playing an attempt -------------------------------------------------------------

    async def _play(self, answer: Answer) -> bool:
        try:
            if isinstance(answer.response, Fault):
                await self._play_fault(answer.response, answer.log_end)
                return False
            return await self._play_response(answer.response, answer.log_end)
        finally:
            await self._stop_watching()

    # Each ending is logged just before the act that shows it to the client (the last
    # chunk, the close, the RST), so a client that has seen the end never reads a log
    # still pending. Only stalls and disconnects are logged after the fact.

    async def _play_fault(self, fault: Fault, end: Callable[[HowEnded], None]) -> None:
        match fault.kind:
            case "reset":
                end("reset")
                self._reset()
            case "close":
                end("closed")
                self._close(graceful=True)
            case "stall":
                await self._stall(end)

    async def _play_response(self, playback: Playback, end: Callable[[HowEnded], None]) -> bool:
        if playback.framing == "length":
            end("complete")
            return await self._send_response(playback)
        if not await self._send_stream(playback.runs(coalesce=self._server.coalesce), end):
            end("client-disconnected")
            return False
        match playback.plan.ending:
            case "reset":
                end("reset")
                self._reset()
                return False
            case "stall":
                await self._stall(end)
                return False
            case "disconnect":
                end("closed")
                self._close(graceful=True)
                return False
        return not playback.closes_connection  # "complete" is logged

    async def _send_stream(self, runs: Iterable[Run], end: Callable[[HowEnded], None]) -> bool:
        """Make every write of a stream response, waiting where it waits; logs "complete"
        before the write that completes the body. False if the client went away.

        The writes go straight to the transport, which sends each at once while the
        socket takes them. Between the pieces of a long run, other streams run, or, past
        _HIGH_WATER_BYTES left unsent, the server waits for the client to catch up.
        """
        transport = self._transport
        write, closing = transport.write, transport.is_closing
        try:
            for number, (delay_ms, writes, ends) in enumerate(runs):
                if delay_ms > 0:
                    if not await self._pause(delay_ms):
                        return False
                elif number and not ends:
                    await self._take_turn()
                if ends:
                    end("complete")
                for data in writes:
                    write(data)
                    if closing():  # a send failed: the client is gone
                        return False
            await self._flushed()  # before the ending's act: an abort drops what is unsent
        except ConnectionError:
            return False
        return True

    async def _take_turn(self) -> None:
        """Let the other streams run, or wait for a client that reads slower than this
        stream is written (a socket that takes every write never makes us wait: without
        this, a body sent byte by byte would hold the loop for seconds)."""
        if self._transport.get_write_buffer_size() > _HIGH_WATER_BYTES:
            await self._writer.drain()
        else:
            await asyncio.sleep(0)

    async def _stall(self, end: Callable[[HowEnded], None]) -> None:
        """Keep the connection open, silent, until the client's input ends or the server
        stops (a stall writes nothing, so input's end is all that tells a client gone)."""
        watcher = self._watch_peer()
        try:
            await asyncio.wait([watcher])  # it reads to the end of input
        finally:
            end("stalled")

    async def _pause(self, delay_ms: float) -> bool:
        """Wait ``delay_ms`` once what was written is sent; False if the client reset the
        connection meanwhile (which ends the wait). One that only closed its side is still
        read to; a write tells if it left.

        A bare future and timer, as ``asyncio.sleep`` has: a pause precedes every write of a
        paced stream, and a timeout context around an event wait costs 1.4 times as much,
        which showed as late writes with 100 paced streams (benchmarks/bench_pacing.py).
        """
        await self._flushed()
        self._watch_peer()
        if not self._peer_gone:
            loop = asyncio.get_running_loop()
            self._pausing = loop.create_future()
            timer = loop.call_later(delay_ms / 1000, _settle, self._pausing)
            try:
                await self._pausing
            finally:
                timer.cancel()
                self._pausing = None
        return not self._peer_gone

    def _watch_peer(self) -> asyncio.Task[None]:
        """Read from now to the response's end, so a client hanging up is noticed while it
        waits (the task is started once per response, at its first wait)."""
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._read_while_playing())
        return self._watcher

    async def _stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.wait([self._watcher])  # unlike awaiting it, keeps our own cancellation
            self._watcher = None

    async def _read_while_playing(self) -> None:
        """Read to the end of input. Bytes a client sends meanwhile belong to its next
        request: they are kept up to the body bound, and past it discarded (the connection
        then ends with this response), so that a client's leaving is seen however much it
        sent."""
        while True:
            try:
                data = await self._reader.read(_READ_SIZE)
            except ConnectionError:
                self._peer_gone = True
                if self._pausing is not None:
                    _settle(self._pausing)
                data = b""
            if not data:
                return
            if len(self._unparsed) <= self._server.max_body_bytes:
                self._unparsed += data
            else:
                self._input_discarded = True

    # --- writing and closing ------------------------------------------------------------

    async def _send(self, data: bytes | memoryview) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def _flushed(self) -> None:
        """Wait until what was written is handed to the kernel (ConnectionError if the
        client left meanwhile)."""
        if self._transport.get_write_buffer_size():
            await self._writer.drain()

    async def _send_response(self, playback: Playback) -> bool:
        """Send a length-delimited response, in one write up to _HIGH_WATER_BYTES; False if
        the connection must end.

        A larger body (a request log of 30 MiB) goes a slice at a time, each once the one
        before is sent: handed over whole, the transport copies what the socket does not take
        at once, twice, on the loop (0.17 s for 36 MB).
        """
        body = playback.plan.body
        try:
            if len(body) <= _HIGH_WATER_BYTES:
                await self._send(playback.head + body)
            else:
                await self._send(playback.head)
                view = memoryview(body)
                for start in range(0, len(body), _HIGH_WATER_BYTES):
                    await self._send(view[start : start + _HIGH_WATER_BYTES])
        except ConnectionError:
            return False
        return not playback.closes_connection

    async def _linger(self) -> None:
        """Half-close, then drain input a moment, so the client reads our error.

        Closing with unread input makes the kernel send RST, which can destroy the
        response before the client reads it (e.g. a 413 to a client still uploading).
        """
        if self._writer.transport.is_closing() or not self._writer.can_write_eof():
            return
        self._writer.write_eof()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_LINGER_S):
                while await self._receive():
                    pass

    def _reset(self) -> None:
        """Abort so the peer sees RST: SO_LINGER with a zero timeout."""
        sock = self._writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._writer.transport.abort()

    def _close(self, graceful: bool) -> None:
        transport = self._writer.transport
        if transport.is_closing():
            return
        if graceful:
            transport.close()
        else:
            transport.abort()  # shutting down: do not wait to flush to a stalled client


# --- helpers ------------------------------------------------------------------------------


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _request(head: h11.Request, body: bytes) -> _Request:
    headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in head.headers]
    connection = ",".join(value for name, value in headers if name == "connection").lower()
    keep_alive = head.http_version == b"1.1" and "close" not in connection
    target, authority = origin_form(head.target.decode("latin-1"))
    return _Request(
        method=head.method.decode("latin-1"),
        target=target,
        headers=headers,
        body=body,
        keep_alive=keep_alive,
        http_1_0=head.http_version == b"1.0",
        authority=authority,
    )


# --- a server on its own thread -----------------------------------------------------------


class ServerThread:
    """The server on a private event loop in a daemon thread, for sync code and tests::

    with ServerThread(registry) as server:
        client = openai.OpenAI(base_url=server.base_url("hello"), api_key="sk-test")
    """

    def __init__(
        self,
        registry: ScenarioRegistry | None = None,
        host: str = DEFAULT_HOST,
        port: int = 0,
        *,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        model_prefix: str = DEFAULT_MODEL_PREFIX,
        allowed_hosts: Iterable[str] = (),
        coalesce: bool = False,
    ) -> None:
        self.registry = registry if registry is not None else ScenarioRegistry()
        self.server = FakeProviderServer(
            self.registry,
            host,
            port,
            request_timeout_s=request_timeout_s,
            max_body_bytes=max_body_bytes,
            model_prefix=model_prefix,
            allowed_hosts=allowed_hosts,
            coalesce=coalesce,
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fakeprovider-server", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result()
        except BaseException:
            self._stop_loop()
            raise

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result()
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def root_url(self) -> str:
        return self.server.root_url

    def base_url(self, scenario_id: str) -> str:
        return self.server.base_url(scenario_id)

    def sdk_base_url(self, scenario_id: str) -> str:
        return self.server.sdk_base_url(scenario_id)
