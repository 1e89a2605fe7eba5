"""The bundled reference adapter: the sans-IO core behind the httpx shell and the retry layer.

Load it with ``--adapter conformance.adapters.reference:factory``; the same adapter runs as
a subprocess adapter with ``python -m conformance.adapters.reference``. With
``conformance.adapters.reference:own_policy`` it runs the run's policy as its own, in place
of each case's, and declares it in its hello (``retry_policy``), as a library does.
"""

import asyncio
import functools
import random as random_module
import ssl
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from typing import Protocol

import httpx

from conformance.adapters.reference.next_request import NextRequest, next_request
from conformance.adapters.reference.retry import (
    Attempt,
    Clock,
    JitterSource,
    Sleep,
    run_with_retries,
)
from conformance.adapters.reference.retry_policy import declared_policy
from conformance.adapters.reference.shell import json_body, request_body, stream_attempt
from conformance.adapters.reference.wires import SPOKEN_DIALECTS
from conformance.events import (
    PROTOCOL_VERSION,
    Block,
    BlockEnd,
    Capabilities,
    Event,
    Finish,
    Hello,
    Retry,
    RetryPolicy,
    RunCase,
)
from conformance.options import RunOptions
from conformance.results import suite_version

ADAPTER_NAME = "streamconform-reference"

# Starts one attempt: POST the request body to the case's provider with the given client.
StartAttempt = Callable[[httpx.AsyncClient, RunCase, bytes], Attempt]


class RetryLayer(Protocol):
    """`run_with_retries` or a variant: a case's attempts in sequence, per its policy."""

    def __call__(
        self,
        start_attempt: Callable[[], Attempt],
        policy: RetryPolicy,
        *,
        sleep: Sleep,
        random: JitterSource,
        clock: Clock,
        timeout_s: float | None,
    ) -> AsyncGenerator[Event, None]: ...


class ReferenceAdapter:
    """Runs a case and yields its protocol events, each stamped with the case id.

    No `end`: in process, the end of the iteration is the end of the case, and the runner
    (`PythonAdapterSession`) appends the `end` itself. The subprocess shell writes it.
    `start_attempt` makes one attempt (the httpx shell) and `retry_layer` sequences them; the
    mutants pass variants of either. With `own_policy`, every case runs that policy instead of
    its own, and the hello declares it.
    """

    hello = Hello(
        protocol=PROTOCOL_VERSION,
        name=ADAPTER_NAME,
        version=suite_version(),  # the reference ships with the suite
        capabilities=Capabilities(
            deltas=True,
            reasoning=True,
            usage=True,
            retry=True,
            error_codes=True,
            follow_up=True,
        ),
        dialects=list(SPOKEN_DIALECTS),
    )

    def __init__(
        self,
        *,
        sleep: Sleep = asyncio.sleep,
        random: JitterSource | None = None,
        clock: Clock = time.monotonic,
        start_attempt: StartAttempt = stream_attempt,
        retry_layer: RetryLayer = run_with_retries,
        own_policy: RetryPolicy | None = None,
        build_next_request: NextRequest = next_request,
    ) -> None:
        if own_policy is not None:
            self.hello = self.hello.model_copy(update={"retry_policy": declared_policy(own_policy)})
        self._own_policy = own_policy
        self._sleep = sleep
        self._random = random if random is not None else random_module.Random()
        self._clock = clock
        self._start_attempt = start_attempt
        self._retry_layer = retry_layer
        self._next_request = build_next_request

    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        """The case's events; `http_client` (e.g. the in-process provider) is used, not closed."""
        body = request_body(case)  # once per case, so that every retry sends the same bytes
        async with self._client_for(http_client) as client:
            events = self._retry_layer(
                lambda: self._start_attempt(client, case, body),
                self._own_policy or case.retry,
                sleep=self._sleep,
                random=self._random,
                clock=self._clock,
                timeout_s=case.timeout_s,
            )
            turn = _AssembledTurn()
            async with aclosing(events):
                async for event in events:
                    turn.note(event)
                    yield event.model_copy(update={"case": case.case})
            if case.follow_up is not None and turn.succeeded:
                await self._send_next_request(client, case, turn.blocks)

    async def _send_next_request(
        self, client: httpx.AsyncClient, case: RunCase, blocks: list[Block]
    ) -> None:
        """The two-turn case's next request, from what the turn assembled; its answer is
        read to the end, as a caller's next turn would be (and not reported: the case's
        events are the first turn's)."""
        assert case.follow_up is not None
        dialect = case.dialect or "chat-completions"
        request = self._next_request(dialect, case.request, blocks, case.follow_up)
        async for _ in self._start_attempt(client, case, json_body(request)):
            pass

    def _client_for(
        self, http_client: httpx.AsyncClient | None
    ) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        """The caller's client as is, or a client of our own that is closed with the case."""
        if http_client is not None:
            return nullcontext(http_client)
        # A client per case keeps each case on connections of its own; the TLS context is
        # shared, as loading the CA bundle costs ~20 ms a client. Proxy settings from the
        # environment would divert requests meant for a loopback provider.
        return httpx.AsyncClient(trust_env=False, verify=self._tls_context)

    @functools.cached_property
    def _tls_context(self) -> ssl.SSLContext:
        """The TLS settings every client of this adapter verifies servers with, built on
        first use (an in-process run never needs them)."""
        return httpx.create_ssl_context(trust_env=False)  # what httpx.AsyncClient would build


class _AssembledTurn:
    """The blocks of the attempt the caller is handed (the one after the last retry), and
    whether it succeeded: what a two-turn case's next request is built from."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.succeeded = False

    def note(self, event: Event) -> None:
        if isinstance(event, Retry):
            self.blocks, self.succeeded = [], False
        elif isinstance(event, BlockEnd):
            self.blocks.append(event.block)
        elif isinstance(event, Finish):
            self.succeeded = event.reason in ("stop", "tool-calls")


def factory(options: RunOptions) -> ReferenceAdapter:
    """The ``--adapter`` entry point; every setting the adapter needs comes with each case."""
    return ReferenceAdapter()


def own_policy(options: RunOptions) -> ReferenceAdapter:
    """The reference with a retry policy of its own, the run's (``options.policy``): a
    case's ``retry`` is not read, and the hello declares what runs instead."""
    return ReferenceAdapter(own_policy=options.policy)
