"""The httpx I/O shell of the reference adapter: one HTTP attempt, bytes in, events out.

All decisions are the sans-IO core's; this module only moves bytes and maps transport
exceptions onto canonical codes. Every exit path leaves the response closed, so a stalled or
abandoned body never keeps its connection open.
"""

import json
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx

from conformance import codes
from conformance.adapters.reference.anthropic import AnthropicTranslator
from conformance.adapters.reference.attempt import AttemptReader, Translator
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.http_status import classify_http_error
from conformance.adapters.reference.responses import ResponsesTranslator
from conformance.adapters.reference.sse import SSEDecoder
from conformance.adapters.reference.translate import StreamTranslator
from conformance.adapters.reference.wires import dialect_of, wire_of
from conformance.events import Event, Finish, ProtocolDialect, RunCase

MAX_ERROR_BODY_BYTES = 64 * 1024  # enough for any error object; a hostile body is cut here


def request_body(case: RunCase) -> bytes:
    """The case's request as bytes, serialised once so that every retry sends the same ones."""
    return json_body(case.request)


def json_body(request: dict[str, Any]) -> bytes:
    """A request body as the reference sends it: compact UTF-8 JSON."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()


class AttemptStream:
    """One attempt: iterate it (once) for its events; then `failure` tells how it failed.

    `failure` stays None after a successful finish. After an error finish it holds the code
    and, for an HTTP error, the provider's Retry-After, which the retry layer needs and the
    `finish` event does not carry. The case's dialect picks the wire (wires.py) and which of
    the translators reads the body.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        case: RunCase,
        body: bytes,
        *,
        now_epoch_s: Callable[[], float] = time.time,
        decoder: Callable[[], SSEDecoder] = SSEDecoder,
        translator: Callable[[], StreamTranslator] = StreamTranslator,
        anthropic_translator: Callable[[], AnthropicTranslator] = AnthropicTranslator,
        responses_translator: Callable[[], ResponsesTranslator] = ResponsesTranslator,
    ) -> None:
        self._client = client
        self._case = case
        self._body = body
        self._now_epoch_s = now_epoch_s
        self._wire = wire_of(case)
        translators: dict[ProtocolDialect, Callable[[], Translator]] = {
            "chat-completions": translator,
            "anthropic-messages": anthropic_translator,
            "openai-responses": responses_translator,
        }
        self._reader = AttemptReader(decoder=decoder, translator=translators[dialect_of(case)])
        self.failure: Failure | None = None

    def __aiter__(self) -> AsyncGenerator[Event, None]:
        return self._events()

    async def _events(self) -> AsyncGenerator[Event, None]:
        # One flat generator: a nested one would outlive an early aclose() of this one.
        try:
            async with self._client.stream(
                "POST",
                self._wire.url(self._case.base_url),
                content=self._body,
                headers=self._headers(),
                timeout=self._timeout(),
            ) as response:
                if not response.is_success:
                    self.failure = await self._http_failure(response)
                else:
                    async for data in response.aiter_bytes():
                        for event in self._noted(self._reader.receive_data(data)):
                            yield event
                        if self._reader.finished:
                            break  # [DONE] or an in-stream error: nothing after it is read (S4)
            # Leaving the block closed the response, unread bytes and all.
        except httpx.TimeoutException as error:
            idle = f"no byte for {self._case.idle_timeout_s:g} s"
            self._fail(codes.TIMEOUT, f"{type(error).__name__}: {idle}")
        except (httpx.TransportError, httpx.DecodingError) as error:
            # Refused, reset, a body cut mid-chunk, an undecodable content-encoding.
            self._fail(codes.TRANSPORT, f"{type(error).__name__}: {error}")
        # The attempt's finish, unless the body already produced it.
        for event in self._noted(self._reader.end(self.failure)):
            yield event

    def _timeout(self) -> httpx.Timeout:
        # The read timeout runs per socket read: exactly "no byte for idle_timeout_s".
        return httpx.Timeout(self._case.idle_timeout_s)

    def _headers(self) -> dict[str, str]:
        return {
            **self._wire.auth_headers(self._case.api_key),
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        }

    async def _http_failure(self, response: httpx.Response) -> Failure:
        body = bytearray()
        try:
            async for data in response.aiter_bytes():
                body += data
                if len(body) >= MAX_ERROR_BODY_BYTES:
                    break
        except (httpx.TransportError, httpx.DecodingError):
            pass  # the status line is the provider's answer; its body is only detail
        return classify_http_error(
            response.status_code,
            response.headers,
            bytes(body),
            now_epoch_s=self._now_epoch_s(),
            rules=self._wire.errors,
        )

    def _fail(self, code: str, message: str) -> None:
        self.failure = Failure(code=code, message=message)

    def _noted(self, events: list[Event]) -> list[Event]:
        """`events`, once an error finish among them is noted as the attempt's failure."""
        # A failure set earlier (HTTP error, transport) carries more than the finish does.
        for event in events:
            if isinstance(event, Finish) and event.code is not None and self.failure is None:
                self.failure = Failure(code=event.code, message=event.message or "")
        return events


def stream_attempt(
    client: httpx.AsyncClient,
    case: RunCase,
    body: bytes,
    *,
    now_epoch_s: Callable[[], float] = time.time,
) -> AttemptStream:
    """Start one attempt: POST `body` to the case's provider and translate the reply.

    `now_epoch_s` dates an HTTP-date Retry-After.
    """
    return AttemptStream(client, case, body, now_epoch_s=now_epoch_s)
