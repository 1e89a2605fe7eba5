"""The recording proxy: forwards requests to an upstream and saves each answer as a fixture.

A thin asyncio shell on loopback. Each connection carries one request (the answer says
``connection: close``): it goes to the upstream's origin, its path appended to the
upstream's (``forwarding.py``), with the client's headers, asking for an uncompressed body;
the response is relayed to the client as it arrives, read by read, and the reads, their
timing and the ending become a fixture (``recording.py``) beside a raw ``.sse`` dump of the
body, which ``conformance lint`` reads. A client that leaves early, or a recorder stopped
mid-answer, leaves a partial recording. Files are created exclusively: a recording never
replaces another, from this session or a concurrent one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import h11
import httpx

from .content_coding import BodyDecoder, ContentCodingError, body_decoder
from .dialects import DEFAULT_DIALECT, DIALECTS, DialectId, dialect_of_path
from .errors import FakeProviderError
from .files import write_atomic
from .fixtures import fixture_text_problems, fixture_yaml
from .forwarding import ForwardingError, forwarded_url, origin_form, upstream_origin
from .hosts import http_origin
from .listening import ListeningServer
from .playback import request_model
from .recording import (
    DEFAULT_MIN_PAUSE_MS,
    ClientEnding,
    Read,
    Recording,
    RecordingError,
    check_id_prefix,
    recorded_id,
    recorded_scenario,
)
from .redaction import redacted_url
from .wire import LAST_CHUNK, encode_head, frame_chunk

DEFAULT_HOST = "127.0.0.1"
DEFAULT_IDLE_TIMEOUT_S = 60.0
MAX_REQUEST_BYTES = 10 * 1024 * 1024
MAX_RECORDED_BYTES = 2 * 1024 * 1024
"""Body bytes (decoded) one recording keeps; past it the answer is still relayed in full,
and the recording is saved as a partial one. Its fixture must also pass ``validate``
(``MAX_FIXTURE_BYTES`` for the YAML, which escaping makes larger than the body)."""
_READ_SIZE = 64 * 1024
_RELAY_DROPPED = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}
)
_FORWARD_DROPPED = _RELAY_DROPPED | {"host", "accept-encoding", "expect", "upgrade"}
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Saved:
    """What one recorded exchange left on disk; ``problem`` says why there is no fixture,
    ``partial`` why the body stops before the upstream's end."""

    fixture: Path | None
    dump: Path
    status: int | None
    problem: str = ""
    partial: str = ""


@dataclass
class _Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    # RFC 9112 §6.1: no chunked coding in a response to HTTP/1.0; the close ends the body.
    chunked_answer: bool = True


@dataclass
class _Relay:
    """The response as relayed so far: its head, the reads (decoded, within
    ``MAX_RECORDED_BYTES``) and when the last one came, and why recording stopped early."""

    response: httpx.Response | None = None
    last: float = field(default_factory=time.monotonic)
    reads: list[Read] = field(default_factory=list)
    kept_bytes: int = 0
    decoder: BodyDecoder | None = None
    cut: str = ""  # why the recording stops before the body does; the relay goes on
    saved: bool = False  # the recording was handed to be saved: the rest is only relayed

    def start(self, response: httpx.Response) -> None:
        self.response = response
        decoder = body_decoder(response.headers.get("content-encoding", ""))
        if isinstance(decoder, str):
            self.cut = decoder
        else:
            self.decoder = decoder

    def add(self, data: bytes) -> None:
        """Record what ``data`` decodes to, up to ``MAX_RECORDED_BYTES`` of body."""
        if self.cut or self.decoder is None:
            return
        room = MAX_RECORDED_BYTES - self.kept_bytes
        try:
            decoded = self.decoder.decode(data, room + 1)  # one more: tells a full cap
        except ContentCodingError as error:
            self.cut = f"{error}: the rest was relayed, not recorded"
            return
        if len(decoded) > room:
            cut = room
            while cut > 0 and 0x80 <= decoded[cut] < 0xC0:  # inside a UTF-8 character
                cut -= 1  # a fixture holds text: end before it
            decoded = decoded[:cut]
            self.cut = (
                f"the recording stops at {MAX_RECORDED_BYTES} body bytes (MAX_RECORDED_BYTES): "
                "the rest was relayed, not recorded"
            )
        if decoded:  # a read that decodes to nothing yet: its wait joins the next one's
            now = time.monotonic()
            self.reads.append(Read(decoded, round((now - self.last) * 1000, 3)))
            self.kept_bytes += len(decoded)
            self.last = now

    def recording(self, unanswered: Recording, ending: ClientEnding) -> Recording:
        """``unanswered`` completed with the response relayed so far, ended by ``ending``."""
        assert self.response is not None
        return dataclasses.replace(
            unanswered,
            status=self.response.status_code,
            response_headers=tuple(self.response.headers.multi_items()),
            reads=tuple(self.reads),
            ending=ending,
            final_gap_ms=round((time.monotonic() - self.last) * 1000, 3),
            chunked="chunked" in self.response.headers.get("transfer-encoding", "").lower(),
        )

    def cut_short(self, unanswered: Recording, reason: str) -> Recording:
        """What was recorded before ``reason`` ended the recording: replayed as a cut."""
        return dataclasses.replace(
            self.recording(unanswered, "disconnect"), final_gap_ms=0.0, partial=reason
        )

    def partial(self, unanswered: Recording, who: str) -> Recording:
        """What was relayed before ``who`` ended the exchange early."""
        size = self.kept_bytes
        reason = f"{who} after {size} body bytes; the rest of the upstream's body was not read"
        return self.cut_short(unanswered, reason)


class _BadRequestError(FakeProviderError):
    """A request the proxy cannot forward; it is answered with a 400."""


class RecordingProxy(ListeningServer):
    """Records every exchange with ``upstream`` into ``out_dir`` as ``NAME-NNN.yaml``.

    Raises ForwardingError for an unusable ``upstream``, RecordingError for a ``name`` that
    cannot prefix a scenario id.
    """

    def __init__(
        self,
        upstream: str,
        out_dir: Path,
        *,
        host: str = DEFAULT_HOST,
        port: int = 0,
        name: str = "recorded",
        min_pause_ms: float = DEFAULT_MIN_PAUSE_MS,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        on_saved: Callable[[Saved], None] | None = None,
    ) -> None:
        check_id_prefix(name)
        self.upstream = upstream_origin(upstream)
        self.out_dir = out_dir
        self.host = host
        self.name = name
        self.min_pause_ms = min_pause_ms
        self.idle_timeout_s = idle_timeout_s
        self._on_saved = on_saved
        self._requested_port = port
        self._next_number = 1
        self._exchanges: set[asyncio.Task[None]] = set()
        self._savings: set[asyncio.Task[None]] = set()
        self._claiming = threading.Lock()  # saves run in threads; numbers are claimed in turn
        self._server: asyncio.Server | None = None
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        # trust_env off: proxy settings must not divert what the user pointed at.
        timeout = httpx.Timeout(10.0, read=self.idle_timeout_s)
        self._client = httpx.AsyncClient(trust_env=False, timeout=timeout)
        self._server = await asyncio.start_server(self._accept, self.host, self._requested_port)

    async def stop(self) -> None:
        """Stop listening, end the exchanges in flight (saved as partial) and close."""
        if self._server is not None:
            self._server.close()
            for exchange in self._exchanges:
                exchange.cancel()
            # Before wait_closed, which (Python 3.12+) waits for the connections to end.
            await asyncio.gather(*self._exchanges, return_exceptions=True)
            await asyncio.gather(*self._savings, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def root_url(self) -> str:
        return http_origin(self.host, self.port)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        exchange = asyncio.current_task()
        assert exchange is not None
        self._exchanges.add(exchange)
        dialect = DEFAULT_DIALECT
        try:
            request = await asyncio.wait_for(_read_request(reader, writer), 10.0)
            if request is not None:
                dialect = dialect_of_path(request.target.partition("?")[0])
                url = forwarded_url(self.upstream, request.target)
                recording = await self._relay(request, url, writer, dialect)
                if recording is not None:
                    self._save_later(recording)
        except (_BadRequestError, ForwardingError) as error:
            _write_error(writer, 400, str(error), dialect)
        except (TimeoutError, ConnectionError):
            pass
        except asyncio.CancelledError:
            pass  # stop() ended it; a handler ending cancelled is logged as an error (3.11)
        except Exception:  # one bad exchange must not stop the proxy
            _log.exception("fakeprovider record: exchange failed")
        finally:
            self._exchanges.discard(exchange)
            if not writer.transport.is_closing():
                writer.close()

    async def _relay(
        self, request: _Request, url: httpx.URL, writer: asyncio.StreamWriter, dialect: DialectId
    ) -> Recording | None:
        """Forward ``request`` to ``url``, relay the answer, and return what was received
        (None: nothing, or saved already); the proxy's own answer (an unreachable upstream)
        has ``dialect``'s error shape."""
        assert self._client is not None
        headers = [(n, v) for n, v in request.headers if n.lower() not in _FORWARD_DROPPED]
        headers.append(("accept-encoding", "identity"))  # the fixture keeps the body as sent
        unanswered = Recording(
            url=str(url),
            method=request.method,
            request_headers=tuple(request.headers),
            model=request_model(request.body),
            recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            status=None,
        )
        relay = _Relay()

        def save_if_cut() -> None:
            """Once the recording stopped short, save it now: an endless answer goes on."""
            if relay.cut and not relay.saved:
                relay.saved = True
                self._save_later(relay.cut_short(unanswered, relay.cut))

        try:
            async with self._client.stream(
                request.method, url, headers=headers, content=request.body
            ) as response:
                relay.start(response)
                save_if_cut()
                _write_head(writer, response, request.chunked_answer)
                ending = await _relay_body(
                    response, writer, relay, save_if_cut, request.chunked_answer
                )
                return None if relay.saved else relay.recording(unanswered, ending)
        except httpx.ConnectError as error:
            shown = redacted_url(str(url))
            message = f"fakeprovider record: upstream {shown} unreachable: {error}"
            _write_error(writer, 502, message, dialect)
            return None
        except httpx.TransportError as error:
            # The upstream failed before any response byte: a fault, relayed as the same.
            ending = transport_ending(error)
            if ending == "reset":
                writer.transport.abort()
            return dataclasses.replace(unanswered, ending=ending)
        except ConnectionError:
            if relay.response is None or relay.saved:
                raise
            return relay.partial(unanswered, "the client closed its connection")
        except asyncio.CancelledError:
            if relay.response is not None and not relay.saved:
                self._save_later(relay.partial(unanswered, "the recorder stopped"))
            raise

    def _save_later(self, recording: Recording) -> None:
        """Save ``recording`` in a task of its own, which stop() waits for (and never
        cancels: a save begun is finished)."""
        saving = asyncio.get_running_loop().create_task(self._save(recording))
        self._savings.add(saving)
        saving.add_done_callback(self._savings.discard)

    async def _save(self, recording: Recording) -> None:
        """Save ``recording`` off the event loop: building and checking its YAML takes
        long enough for other relayed streams to lose their pacing."""
        try:
            saved = await asyncio.to_thread(self._write_files, recording)
        except Exception:  # one bad save must not stop the proxy
            _log.exception("fakeprovider record: saving failed")
            return
        if self._on_saved is not None:
            self._on_saved(saved)

    def _write_files(self, recording: Recording) -> Saved:
        """Write the dump and, if ``validate`` would accept it, the fixture (in a thread)."""
        body = recording.body
        scenario_id, dump, fixture = self._claim_files(body)
        try:
            scenario = recorded_scenario(recording, scenario_id, min_pause_ms=self.min_pause_ms)
            text = fixture_yaml(scenario)
        except RecordingError as error:
            return Saved(None, dump, recording.status, str(error), recording.partial)
        problems = fixture_text_problems(fixture, text)
        if problems:
            reason = f"`fakeprovider validate` would refuse it: {problems[0].reason}"
            return Saved(None, dump, recording.status, reason, recording.partial)
        try:
            write_atomic(fixture, text, exclusive=True)
        except FileExistsError:
            reason = f"{fixture.name} appeared meanwhile; it is not replaced"
            return Saved(None, dump, recording.status, reason, recording.partial)
        return Saved(fixture, dump, recording.status, partial=recording.partial)

    def _claim_files(self, body: bytes) -> tuple[str, Path, Path]:
        """The next id whose ``.yaml`` does not exist, its ``.sse`` dump written (``body``).

        The dump claims the number: it is created whole and exclusively (a hard link), so
        numbering goes on past earlier sessions' files, two sessions racing for a number
        cannot both win it, and a kill leaves no empty or cut file.
        """
        with self._claiming:
            while True:
                scenario_id = recorded_id(self.name, self._next_number)
                self._next_number += 1
                dump = self.out_dir / f"{scenario_id}.sse"
                fixture = self.out_dir / f"{scenario_id}.yaml"
                if fixture.exists():
                    continue
                try:
                    write_atomic(dump, body, exclusive=True)
                except FileExistsError:
                    continue
                return scenario_id, dump, fixture


async def _relay_body(
    response: httpx.Response,
    writer: asyncio.StreamWriter,
    relay: _Relay,
    after_read: Callable[[], None],
    chunked: bool,
) -> ClientEnding:
    """Pass the body on read by read (``after_read`` after recording each); the client
    sees the upstream's ending too (with a close-delimited body, only a reset shows)."""
    try:
        async for data in response.aiter_raw():
            relay.add(data)
            after_read()
            writer.write(frame_chunk(data) if chunked else data)
            await writer.drain()
    except httpx.TransportError as error:
        ending = transport_ending(error)
        if ending == "reset":
            writer.transport.abort()
        return ending  # without the last chunk: the client sees an incomplete body
    if chunked:
        writer.write(LAST_CHUNK)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    return "complete"


def transport_ending(error: httpx.TransportError) -> ClientEnding:
    """How an httpx transport failure ended a body: a timeout, a cut or a reset."""
    if isinstance(error, httpx.TimeoutException):
        return "timeout"
    if isinstance(error, httpx.RemoteProtocolError):
        return "disconnect"
    return "reset"


def _write_head(writer: asyncio.StreamWriter, response: httpx.Response, chunked: bool) -> None:
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in _RELAY_DROPPED
    ]
    headers += [("transfer-encoding", "chunked")] if chunked else []
    headers += [("connection", "close")]
    writer.write(encode_head(response.status_code, headers))


def _write_error(
    writer: asyncio.StreamWriter, status: int, message: str, dialect: DialectId
) -> None:
    """The proxy's own answer, shaped as the asked endpoint's provider would shape it, so
    the client's SDK reports it as one."""
    body = json.dumps(DIALECTS[dialect].error_object(status, message)).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        ("connection", "close"),
    ]
    writer.write(encode_head(status, headers) + body)


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _Request | None:
    """The connection's request, or None if the client left first; raises _BadRequestError."""
    parser = h11.Connection(h11.SERVER)
    request: _Request | None = None
    while True:
        try:
            event = parser.next_event()
        except h11.RemoteProtocolError as error:
            raise _BadRequestError(f"malformed HTTP request: {error}") from None
        if event is h11.NEED_DATA:
            if parser.they_are_waiting_for_100_continue:
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            parser.receive_data(await reader.read(_READ_SIZE))
        elif isinstance(event, h11.Request):
            # An absolute-form target is accepted (RFC 9112 §3.2.2) and sent upstream as
            # its path: the upstream is --upstream's, whatever authority the client named.
            target, _ = origin_form(event.target.decode("latin-1"))
            request = _Request(
                event.method.decode("latin-1"),
                target,
                [(n.decode("latin-1"), v.decode("latin-1")) for n, v in event.headers],
                chunked_answer=event.http_version != b"1.0",
            )
        elif isinstance(event, h11.Data):
            assert request is not None  # h11 emits Request before Data
            request.body += event.data
            if len(request.body) > MAX_REQUEST_BYTES:
                raise _BadRequestError(f"request body larger than {MAX_REQUEST_BYTES} bytes")
        elif isinstance(event, h11.EndOfMessage):
            return request
        else:
            return None
