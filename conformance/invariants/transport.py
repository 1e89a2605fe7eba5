"""H — HTTP status mapping and transport failures: refused, reset, stalled, one request."""

from __future__ import annotations

from ..events import DeclaredRetryPolicy
from ..oracle import ExpectedAttempt
from .common import expected_failure, has_feature, judge_attempts
from .evidence import Evidence, ObservedAttempt
from .registry import EVERY_CASE, Judgement, breached, held, invariant, weaker

ADAPTER = (
    "the harness the notes come from (its DeepSeek adapter's HTTP handling); "
    "examples/README.md#what-each-attempt-does"
)
# A stalled attempt may take the idle timeout plus this much before the adapter gives up:
# generous, because a loaded 2-core CI machine schedules late.
STALL_GRACE_S = 2.0
# Retry-After given as an HTTP date is rounded to whole seconds by the header format and
# read against the adapter's clock; delta-seconds must be honoured exactly.
RETRY_AFTER_DATE_TOLERANCE_MS = 1000.0
RETRY_AFTER_SECONDS_TOLERANCE_MS = 1.0


@invariant(
    "H1",
    "SHOULD",
    "HTTP status mapping: 401/403→AUTH, quota wording→QUOTA, 429→RATE_LIMIT, 400 with "
    "context-length wording→CONTEXT_WINDOW_EXCEEDED, 400/413→INVALID_REQUEST, ≥500→SERVER, "
    "else HTTP_<status>.",
    source=ADAPTER + " (status to code)",
    needs=("error_codes",),
    reads=("finish",),
    rationale=(
        "The code decides whether to retry and what the user is told: a 429 read as SERVER backs "
        "off wrongly, a quota error read as RATE_LIMIT waits through retries that cannot succeed, "
        "and a retried AUTH failure hammers the provider."
    ),
)
def check_status_mapping(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("http-error"), expected_failure)


@invariant(
    "H2",
    "SHOULD",
    "Retry-After (seconds or HTTP date) is read; zero, past or unparsable is ignored.",
    source=ADAPTER + " (Retry-After)",
    needs=("retry",),
    reads=(),
    rationale=(
        "Retry-After is the provider saying when it will accept the request again: ignoring it "
        "retries into the same 429, and obeying a zero, past or garbled value retries at once or "
        "stalls."
    ),
)
def check_retry_after_read(evidence: Evidence) -> Judgement | None:
    policy = evidence.judged_policy
    if isinstance(policy, DeclaredRetryPolicy) and "retry-after" not in policy.retry_after:
        return None  # judged by what it declared: it does not read Retry-After

    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence) -> Judgement:
        retry = seen.retry
        assert wanted.retry_after_ms is not None
        if retry is None:
            return held("not retried")  # whether it should have been is R's business
        dated = "retry-after-date" in wanted.features
        tolerance = RETRY_AFTER_DATE_TOLERANCE_MS if dated else RETRY_AFTER_SECONDS_TOLERANCE_MS
        if abs(retry.delay_ms - wanted.retry_after_ms) > tolerance:
            return weaker(
                f"retry after {retry.delay_ms} ms, Retry-After said {wanted.retry_after_ms} ms"
            )
        return held(f"retry after {retry.delay_ms} ms")

    return judge_attempts(evidence, has_feature("retry-after"), compare)


@invariant(
    "H3",
    "MUST",
    "A refused or reset connection is a TRANSPORT failure; partial blocks are not closed as a "
    "success.",
    source=ADAPTER + " (transport errors)",
    reads=("finish",),
    rationale=(
        "A refused or reset connection is transient and retryable: read as a clean end of the "
        "body it closes half a reply as complete, so the user gets a truncated answer and no "
        "retry runs."
    ),
)
def check_reset_is_transport(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence,
        has_feature("reset", "disconnect", "fault-reset", "fault-close"),
        expected_failure,
    )


@invariant(
    "H4",
    "MUST",
    "A stalled body fails with TIMEOUT within the idle timeout, and the connection is closed.",
    source=ADAPTER + " (idle watchdog); quirk J6 (docs/invariants.md#provider-quirks)",
    reads=("finish",),
    rationale=(
        "A provider can stop sending and keep the connection open: without an idle timeout the "
        "agent hangs until some outer deadline, or forever, instead of retrying, and the open "
        "connection leaks."
    ),
)
def check_stall_times_out(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, ev: Evidence) -> Judgement | None:
        failure = expected_failure(seen, wanted, ev)
        if failure is not None and not failure.weaker:
            return failure
        record = next((r for r in ev.requests if r.attempt == seen.number), None)
        if record is None:
            return failure
        if record.ended_at is None or record.ended == "pending":
            return breached("the stalled connection was left open")
        waited = record.ended_at - record.received_at
        if waited > ev.idle_timeout_s + STALL_GRACE_S:
            return breached(
                f"gave up after {waited:.2f} s; the idle timeout is {ev.idle_timeout_s} s"
            )
        return failure

    return judge_attempts(evidence, has_feature("stall", "fault-stall"), compare)


@invariant(
    "H5",
    "MUST",
    "One attempt makes exactly one HTTP request.",
    source="the harness's retry executor (one adapter stream per attempt); "
    "examples/README.md#what-each-attempt-does",
    reads=(),
    scope=EVERY_CASE,
    rationale=(
        "A request sent below the retry layer (an HTTP client's own retry) is billed but escapes "
        "the policy's budget and backoff, and the caller is never told an attempt was discarded."
    ),
)
def check_one_request_per_attempt(evidence: Evidence) -> Judgement | None:
    if evidence.status != "completed" and not evidence.requests:
        return None
    made, reported = len(evidence.requests), len(evidence.attempts)
    if made > reported and evidence.declared is not None:
        # A declared retry layer's own requests, which R judges against its declaration.
        return held(f"{made - reported} of {made} requests retried by the declared retry layer")
    if made != reported:
        return breached(f"the provider saw {made} request(s) for {reported} attempt(s)")
    return held()
