"""Hand-built retry evidence for the R tests: scenarios, provider log entries, events."""

from __future__ import annotations

import base64

from pydantic import JsonValue

from conformance.events import (
    BlockEnd,
    BlockStart,
    Capabilities,
    DeclaredRetryPolicy,
    Event,
    Finish,
    Retry,
    TextBlock,
    TextDelta,
    Usage,
)
from conformance.invariants import CATALOGUE
from conformance.invariants.evidence import Evidence
from conformance.options import DEFAULT_POLICY, case_policy
from conformance.oracle import expected_outcome
from conformance.verdicts import Contract, Verdict
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.registry import HowEnded, RequestRecord
from fakeprovider.scenario import Scenario

EVERY = Capabilities(deltas=True, reasoning=True, usage=True, retry=True, error_codes=True)
BODY = b'{"model":"fake-model","stream":true}'
R_IDS = [f"R{n}" for n in range(1, 10)]


def ok(text: str = "The forecast for Paris is sunny.") -> object:
    return stream().role().text(text).finish("stop").usage(24, 7).done()


def scenario(*attempts: object, policy: dict[str, JsonValue] | None = None) -> Scenario:
    builder = ScenarioBuilder("s")
    for attempt in attempts:
        builder.attempt(attempt)  # type: ignore[arg-type]
    if policy is not None:
        builder.retry_policy(**policy)
    return builder.build()


def record(
    attempt: int,
    received_ms: float,
    ended_ms: float | None,
    *,
    ended: HowEnded = "complete",
    body: bytes = BODY,
) -> RequestRecord:
    """A provider log entry; times in ms after an arbitrary epoch second."""
    return RequestRecord(
        scenario="s",
        attempt=attempt,
        method="POST",
        path="/s/v1/chat/completions",
        headers=[],
        body=body.decode(),
        body_base64=base64.b64encode(body).decode(),
        received_at=1_000.0 + received_ms / 1000,
        ended_at=None if ended_ms is None else 1_000.0 + ended_ms / 1000,
        ended=ended,
    )


def evidence(
    built: Scenario,
    events: list[Event],
    requests: list[RequestRecord],
    *,
    capabilities: Capabilities = EVERY,
    declared: DeclaredRetryPolicy | None = None,
    contract: Contract = "harness",
) -> Evidence:
    """The case as the runner would judge it; ``declared``: the adapter's own policy."""
    policy = case_policy(DEFAULT_POLICY, built) if capabilities.retry else None
    return Evidence(
        scenario=built,
        expected=expected_outcome(built, policy, now=1_000.0),
        events=tuple(events),
        capabilities=capabilities,
        policy=policy,
        idle_timeout_s=1.0,
        requests=tuple(requests),
        declared=declared,
        contract=contract,
    )


def verdict(invariant: str, case: Evidence) -> Verdict | None:
    judged = CATALOGUE[invariant].judge(case)
    return None if judged is None else judged[0]


def failed(code: str, *, retry_ms: float | None = None, attempt: int = 1) -> list[Event]:
    events: list[Event] = [Finish(reason="error", code=code)]
    if retry_ms is not None:
        events.append(Retry(attempt=attempt, code=code, delay_ms=retry_ms))
    return events


def succeeded(text: str = "The forecast for Paris is sunny.") -> list[Event]:
    return [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text=text),
        BlockEnd(index=0, block=TextBlock(text=text)),
        Usage(input_tokens=24, output_tokens=7, cache_read_tokens=0),
        Finish(reason="stop"),
    ]
