"""Retry mutants: the reference's retry layer with one retry rule broken (or, for the request
body, its attempt; for a policy of its own, its declaration).

Decision bugs swap `decide_retry` inside `run_with_retries`; bugs in what a retry shows the
caller wrap the layer's events, keeping state for one case (one call of the layer); a
misdeclaration changes what the hello says of the policy that runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any

import httpx

from conformance.adapters.reference.adapter import RetryLayer
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.retry import (
    Attempt,
    Clock,
    Decide,
    JitterSource,
    Sleep,
    run_with_retries,
)
from conformance.adapters.reference.retry_policy import decide_retry
from conformance.adapters.reference.shell import AttemptStream
from conformance.codes import DEFAULT_RETRYABLE_CODES, EMPTY_RESPONSE, MALFORMED_TOOL_CALL, SERVER
from conformance.events import (
    BlockEnd,
    BlockStart,
    DeclaredRetryPolicy,
    Event,
    Finish,
    Retry,
    RetryPolicy,
    RunCase,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from conformance.invariants.evidence import streamed_calls

Shown = Callable[[AsyncGenerator[Event, None]], AsyncGenerator[Event, None]]


def _as_is(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    return events


def _variant(*, decide: Decide = decide_retry, shown: Shown = _as_is) -> RetryLayer:
    """The reference layer with another retry decision, or its events (one case's) passed
    through ``shown`` on their way to the caller."""

    def layer(
        start_attempt: Callable[[], Attempt],
        policy: RetryPolicy,
        *,
        sleep: Sleep,
        random: JitterSource,
        clock: Clock,
        timeout_s: float | None,
    ) -> AsyncGenerator[Event, None]:
        events = run_with_retries(
            start_attempt,
            policy,
            sleep=sleep,
            random=random,
            clock=clock,
            timeout_s=timeout_s,
            decide=decide,
        )
        return shown(events)

    return layer


# --- the retry decision ---------------------------------------------------------------------

BUILTIN_MAX_RETRIES = 5  # the harness's own default budget (harness-contract §d.2)


def _any_code(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """`retryable_codes` is never consulted: an AUTH or a 400 is retried like a 503."""
    every = policy.model_copy(update={"retryable_codes": [failure.code]})
    return decide_retry(every, failure, retries_done, jitter_sample=jitter_sample)


def _builtin_budget(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """The case's `max_retries` is ignored for the adapter's own default budget."""
    own = policy.model_copy(update={"max_retries": BUILTIN_MAX_RETRIES})
    return decide_retry(own, failure, retries_done, jitter_sample=jitter_sample)


def _codes_merged(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """The case's `retryable_codes` are added to the built-in defaults, not put in their
    place: a code the case removed is still retried."""
    merged = sorted({*policy.retryable_codes, *DEFAULT_RETRYABLE_CODES})
    wider = policy.model_copy(update={"retryable_codes": merged})
    return decide_retry(wider, failure, retries_done, jitter_sample=jitter_sample)


def _malformed_tool_call_final(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """MALFORMED_TOOL_CALL is never retried, as in the harness before the identity note."""
    if failure.code == MALFORMED_TOOL_CALL:
        return None
    return decide_retry(policy, failure, retries_done, jitter_sample=jitter_sample)


def _no_backoff(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """Retries at once; only a provider's Retry-After is still waited."""
    delay = decide_retry(policy, failure, retries_done, jitter_sample=jitter_sample)
    if delay is None or failure.retry_after_ms is not None:
        return delay
    return 0.0


def _retry_after_clamped(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """A Retry-After above `max_delay_ms` is cut to it, and the failure retried."""
    if failure.retry_after_ms is not None and failure.retry_after_ms > policy.max_delay_ms:
        failure = Failure(failure.code, failure.message, failure.status, policy.max_delay_ms)
    return decide_retry(policy, failure, retries_done, jitter_sample=jitter_sample)


retries_any_code = _variant(decide=_any_code)
builtin_budget = _variant(decide=_builtin_budget)
codes_merged = _variant(decide=_codes_merged)
malformed_tool_call_final = _variant(decide=_malformed_tool_call_final)
no_backoff = _variant(decide=_no_backoff)
retry_after_clamped = _variant(decide=_retry_after_clamped)


# --- the request --------------------------------------------------------------------------


class FreshRequestIdPerAttempt(AttemptStream):
    """Each attempt re-serialises the request and stamps a fresh `metadata.request_id` in it:
    a retry is no longer the same request."""

    def __init__(
        self, client: httpx.AsyncClient, case: RunCase, body: bytes, **pieces: Any
    ) -> None:
        request = json.loads(body) | {"metadata": {"request_id": uuid.uuid4().hex}}
        super().__init__(client, case, json.dumps(request).encode(), **pieces)


# --- what the caller is shown -------------------------------------------------------------


async def _prefix_replayed(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    """The caller's text buffer outlives a retry: the next attempt's text comes after the
    discarded attempt's (anchors K1, `Hello worldHello world!`)."""
    kept, current, pending = "", "", ""
    async with aclosing(events):
        async for event in events:
            if isinstance(event, Retry):
                kept, current = kept + current, ""
                pending = kept
            elif isinstance(event, TextDelta):
                current += event.text
                event = event.model_copy(update={"text": pending + event.text})
                pending = ""
            elif isinstance(event, BlockEnd) and isinstance(event.block, TextBlock):
                block = TextBlock(text=kept + event.block.text)
                event = event.model_copy(update={"block": block})
            yield event


async def _phantom_call_kept(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    """Tool calls a discarded attempt started are kept and closed with the final answer
    (anchors K2: a phantom call, its arguments possibly truncated)."""
    kept: list[ToolCallBlock] = []
    attempt: list[Event] = []  # the current attempt's events so far
    usage: Usage | None = None
    async with aclosing(events):
        async for event in events:
            if isinstance(event, Retry):
                kept += [call for call in streamed_calls(attempt) if call.id and call.name]
                attempt = []
                yield event
                continue
            attempt.append(event)
            if isinstance(event, Usage):
                usage = event  # held: the phantom blocks go before it
                continue
            if isinstance(event, Finish) and event.reason != "error":
                opened = sum(isinstance(e, BlockStart) for e in attempt)
                for index, call in enumerate(kept, opened):
                    for phantom in _closed_call(index, call):
                        yield phantom
            if isinstance(event, Finish) and usage is not None:
                yield usage
                usage = None
            yield event


def _closed_call(index: int, call: ToolCallBlock) -> list[Event]:
    return [
        BlockStart(index=index, block_type="tool-call"),
        ToolCallDelta(index=index, id=call.id, name=call.name, arguments_delta=call.arguments),
        BlockEnd(index=index, block=call),
    ]


async def _with_lookahead(
    events: AsyncGenerator[Event, None],
) -> AsyncGenerator[tuple[Event, Event | None], None]:
    """Each event with the one after it (None after the last)."""
    previous: Event | None = None
    async with aclosing(events):
        async for event in events:
            if previous is not None:
                yield previous, event
            previous = event
    if previous is not None:
        yield previous, None


async def _exhausted_empty_succeeds(
    events: AsyncGenerator[Event, None],
) -> AsyncGenerator[Event, None]:
    """When the budget runs out on EMPTY_RESPONSE, the last (empty) reply is returned as a
    success: the caller gets a blank message instead of the failure."""
    retried = False
    async with aclosing(_with_lookahead(events)) as pairs:
        async for event, following in pairs:
            retried = retried or isinstance(event, Retry)
            last = following is None
            if last and retried and isinstance(event, Finish) and event.code == EMPTY_RESPONSE:
                event = Finish(reason="stop")
            yield event


async def _discarded_usage_dropped(
    events: AsyncGenerator[Event, None],
) -> AsyncGenerator[Event, None]:
    """A retried attempt's usage is dropped with the attempt: billing undercounts retries."""
    usage: Usage | None = None
    async with aclosing(_with_lookahead(events)) as pairs:
        async for event, following in pairs:
            if isinstance(event, Usage):
                usage = event
                continue
            if isinstance(event, Finish) and usage is not None:
                if not isinstance(following, Retry):
                    yield usage
                usage = None
            yield event


replays_discarded_prefix = _variant(shown=_prefix_replayed)
keeps_phantom_call = _variant(shown=_phantom_call_kept)
exhausted_empty_succeeds = _variant(shown=_exhausted_empty_succeeds)
drops_discarded_usage = _variant(shown=_discarded_usage_dropped)


async def _discarded_hidden(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    """Only the last attempt's events reach the caller, as a library's do: its retries and
    the attempts they discarded stay out of sight."""
    attempt: list[Event] = []
    async with aclosing(events):
        async for event in events:
            attempt = [] if isinstance(event, Retry) else [*attempt, event]
    for event in attempt:
        yield event


def _prefix_replayed_out_of_sight(
    events: AsyncGenerator[Event, None],
) -> AsyncGenerator[Event, None]:
    return _discarded_hidden(_prefix_replayed(events))


hidden_retry_replays_prefix = _variant(shown=_prefix_replayed_out_of_sight)


# --- what the hello declares of the policy that runs -----------------------------------------

DECLARED_BACKOFF_MIN_S = 0.5
DECLARED_RETRY_AFTER_CAP_S = 0.5


def fewer_retries(declared: DeclaredRetryPolicy) -> DeclaredRetryPolicy:
    """One retry fewer than run: a library whose default budget changed under its shim."""
    return declared.model_copy(update={"max_retries": max(declared.max_retries - 1, 0)})


def server_final(declared: DeclaredRetryPolicy) -> DeclaredRetryPolicy:
    """SERVER left out of the retried codes, though 5xx is retried: a shim that forgot it."""
    codes = [code for code in declared.codes if code != SERVER]
    return declared.model_copy(update={"codes": codes})


def slower_backoff(declared: DeclaredRetryPolicy) -> DeclaredRetryPolicy:
    """A backoff of at least DECLARED_BACKOFF_MIN_S, where the layer retries at once."""
    floor = max(declared.backoff_max_s, DECLARED_BACKOFF_MIN_S)
    return declared.model_copy(
        update={"backoff_min_s": DECLARED_BACKOFF_MIN_S, "backoff_max_s": floor}
    )


def lower_retry_after_cap(declared: DeclaredRetryPolicy) -> DeclaredRetryPolicy:
    """Retry-After honoured only up to DECLARED_RETRY_AFTER_CAP_S, where the layer waits for
    longer ones too."""
    return declared.model_copy(update={"retry_after_max_s": DECLARED_RETRY_AFTER_CAP_S})
