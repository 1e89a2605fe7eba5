"""The retry layer of the reference adapter: attempts in sequence, per the case's policy.

Time and chance are injected (`sleep`, `clock`, `random`) so that tests need not wait. The
decision itself is `decide_retry`'s; this module sequences attempts, announces each retry after
the failed attempt's `finish`, and keeps the whole case within `timeout_s`.
"""

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Protocol

from conformance import codes
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.retry_policy import decide_retry
from conformance.events import Event, Finish, Retry, RetryPolicy

Sleep = Callable[[float], Awaitable[None]]  # seconds, like asyncio.sleep
Clock = Callable[[], float]  # seconds, monotonic


class Attempt(Protocol):
    """One attempt's events, iterated once; `failure` is read after its `finish`.

    The events come from an async generator so that an attempt cut short can be closed.
    """

    @property
    def failure(self) -> Failure | None: ...

    def __aiter__(self) -> AsyncGenerator[Event, None]: ...


class JitterSource(Protocol):
    """What the layer needs of `random.Random`."""

    def uniform(self, a: float, b: float) -> float: ...


class Decide(Protocol):
    """`decide_retry` or a variant: the delay before the next attempt, or None (final)."""

    def __call__(
        self, policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
    ) -> float | None: ...


async def run_with_retries(
    start_attempt: Callable[[], Attempt],
    policy: RetryPolicy,
    *,
    sleep: Sleep,
    random: JitterSource,
    clock: Clock = time.monotonic,
    timeout_s: float | None = None,
    decide: Decide = decide_retry,
) -> AsyncGenerator[Event, None]:
    """Every attempt's events, a `retry` between attempts, until one succeeds or is final.

    The outcome is the last attempt's: a budget that runs out ends with that attempt's
    failure, never with an empty success. With `timeout_s`, no retry is started that could
    not be waited for in time, and an attempt still running at the deadline ends in TIMEOUT.
    `decide` is the retry decision (a seam for the mutants).
    """
    deadline = None if timeout_s is None else clock() + timeout_s
    attempt_number = 0
    while True:
        attempt_number += 1
        attempt = start_attempt()
        async with aclosing(_attempt_events(attempt, deadline, clock)) as events:
            async for event in events:
                yield event
        failure = attempt.failure  # None too when the deadline cut the attempt short
        if failure is None:
            return
        delay_ms = decide(policy, failure, attempt_number - 1, jitter_sample=random.uniform(-1, 1))
        if delay_ms is None or not _fits(delay_ms, deadline, clock):
            return
        yield Retry(attempt=attempt_number, code=failure.code, delay_ms=delay_ms)
        await sleep(delay_ms / 1000)


async def _attempt_events(
    attempt: Attempt, deadline: float | None, clock: Clock
) -> AsyncGenerator[Event, None]:
    """The attempt's events up to its `finish`; a TIMEOUT finish if the deadline comes first."""
    async with aclosing(aiter(attempt)) as events:  # closes the attempt's response early too
        while True:
            remaining_s = None if deadline is None else deadline - clock()
            try:
                # The bound covers one step, never a yield: the caller's time is not ours.
                async with asyncio.timeout(remaining_s):
                    event = await anext(events)
            except StopAsyncIteration:
                raise RuntimeError("an attempt ended without a finish") from None
            except TimeoutError:
                yield Finish(
                    reason="error", code=codes.TIMEOUT, message="the case's timeout_s ran out"
                )
                return
            yield event
            if isinstance(event, Finish):
                return


def _fits(delay_ms: float, deadline: float | None, clock: Clock) -> bool:
    return deadline is None or clock() + delay_ms / 1000 < deadline
