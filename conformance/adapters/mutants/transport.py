"""Attempt mutants: the httpx shell (`AttemptStream`) with one HTTP or transport rule broken."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import replace

import httpx
from typing_extensions import override

from conformance import codes
from conformance.adapters.reference.anthropic import AnthropicTranslator
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.responses import ResponsesTranslator
from conformance.adapters.reference.retry import Attempt
from conformance.adapters.reference.shell import AttemptStream
from conformance.adapters.reference.sse import SSEDecoder
from conformance.adapters.reference.translate import StreamTranslator
from conformance.events import Event, Finish, RunCase


class RateLimitAsServer(AttemptStream):
    """`if status == 429 or status >= 500: SERVER`: a rate limit reads as a server fault."""

    @override
    async def _http_failure(self, response: httpx.Response) -> Failure:
        failure = await super()._http_failure(response)
        return replace(failure, code=codes.SERVER) if response.status_code == 429 else failure


class RetryAfterIgnored(AttemptStream):
    """The provider's `Retry-After` is never read; the backoff alone decides the wait."""

    @override
    async def _http_failure(self, response: httpx.Response) -> Failure:
        return replace(await super()._http_failure(response), retry_after_ms=None)


class ResetAsStreamClosed(AttemptStream):
    """A reset or cut body taken for a clean end of stream: STREAM_CLOSED, not TRANSPORT."""

    @override
    def _fail(self, code: str, message: str) -> None:
        super()._fail(codes.STREAM_CLOSED if code == codes.TRANSPORT else code, message)


class NoIdleTimeout(AttemptStream):
    """No read timeout: a stalled body waits until the case's overall deadline gives up."""

    @override
    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self._case.idle_timeout_s, read=None)


class _ResendOnHttpError:
    """An HTTP client's own retry below the adapter's retry layer (as SDKs do by default):
    after an error status the request is re-sent once, and no attempt is announced."""

    def __init__(self, start: Callable[[], AttemptStream]) -> None:
        self._start = start
        self._current = start()

    @property
    def failure(self) -> Failure | None:
        return self._current.failure

    def __aiter__(self) -> AsyncGenerator[Event, None]:
        return self._events()

    async def _events(self) -> AsyncGenerator[Event, None]:
        for resend in (True, False):
            async with aclosing(aiter(self._current)) as events:
                async for event in events:
                    if resend and isinstance(event, Finish) and self._http_error():
                        break
                    yield event
                else:
                    return
            self._current = self._start()

    def _http_error(self) -> bool:
        return self._current.failure is not None and self._current.failure.status is not None


def resend_on_http_error(
    client: httpx.AsyncClient,
    case: RunCase,
    body: bytes,
    *,
    decoder: Callable[[], SSEDecoder],
    translator: Callable[[], StreamTranslator],
    anthropic_translator: Callable[[], AnthropicTranslator],
    responses_translator: Callable[[], ResponsesTranslator],
) -> Attempt:
    def start() -> AttemptStream:
        return AttemptStream(
            client,
            case,
            body,
            decoder=decoder,
            translator=translator,
            anthropic_translator=anthropic_translator,
            responses_translator=responses_translator,
        )

    return _ResendOnHttpError(start)
