"""R — retry: which failures are retried, how often, after what wait, with what request, and
that nothing of a discarded attempt reaches the caller.

Evidence from both sides: the provider's request log (how many requests arrived, when,
with which bodies) is the ground truth for what the adapter did; its events show what the
caller was handed (everything after the last `retry`). Every invariant here needs the
`retry` capability: an adapter without a retry layer gets `n/a` on each case that
exercises it, judged by the attempts it would have made under the case's policy.

An adapter may declare the policy it runs instead of the case's (its hello's
`retry_policy`: a library's own retry layer, whose retries its caller never sees). What is
about meaning is judged against the declared policy under both contracts: nothing of a
discarded attempt reaches the caller (R7, R8), the retried body is the same (R4), no
request past the declared budget (R2). The rest follows the contract
(:attr:`Evidence.judged_policy`): the harness's rules under `harness`, the declaration
under `interop`.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Sequence
from typing import Literal

from ..codes import DEFAULT_RETRYABLE_CODES, EMPTY_RESPONSE, MALFORMED_TOOL_CALL
from ..events import (
    DeclaredRetryPolicy,
    ReasoningBlock,
    ReasoningDelta,
    Retry,
    RetryPolicy,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    Usage,
    no_arguments,
)
from ..options import DEFAULT_POLICY, case_policy
from ..oracle import (
    AnyRetryPolicy,
    ExpectedAttempt,
    ExpectedOutcome,
    directed_wait_ms,
    expected_outcome,
    retry_decision,
    wait_bounds,
)
from ..quirks import Aspect
from .common import breach_of
from .evidence import (
    Difference,
    Evidence,
    ObservedAttempt,
    outcome_difference,
    streamed_calls,
    texts,
    tool_calls,
    usage_difference,
)
from .registry import Judgement, breached, held, invariant
from .transport import RETRY_AFTER_DATE_TOLERANCE_MS
from .waits import Wait, announcements, waits

EXECUTOR = "the harness's retry executor; examples/README.md#what-each-attempt-does"
EMPTY_NOTE = "harness note: empty model completions are retryable EMPTY_RESPONSE failures"
IDENTITY_NOTE = "harness note: streamed tool-call identity survives empty continuation deltas"

# Timing is measured at the provider (see conformance.invariants.waits): the gap between the
# end of attempt n's response and the arrival of request n+1 can only exceed the adapter's
# wait, so a lower bound needs no tolerance beyond the clock's granularity and the moment
# the provider takes between writing a response's last bytes and logging its end.
LOWER_SLACK_MS = 5.0
# Everything between the adapter's timer and the provider reading the next request (the
# adapter's own event loop, a new TCP connection, a loaded 2-core machine's scheduler, a
# subprocess adapter's pipes) only lengthens the gap: upper bounds are generous.
UPPER_SLACK_MS = 1500.0
UPPER_SLACK_RATIO = 0.5

RetryApplies = Callable[[ExpectedOutcome, AnyRetryPolicy], bool]
RetryCompare = Callable[[Evidence, AnyRetryPolicy], Judgement]


def _judge(evidence: Evidence, applies: RetryApplies, compare: RetryCompare) -> Judgement | None:
    """None when the case does not exercise the invariant; otherwise ``compare``'s judgement.

    Whether it is exercised follows from the attempts a conforming adapter makes under the
    case's policy, so that an adapter without a retry layer (run with retries off) still
    shows the invariant, as n/a.
    """
    outcome, policy = _conforming(evidence)
    if not applies(outcome, policy):
        return None
    if evidence.judged_policy is None:
        return held("the adapter has no retry layer")  # the registry reports it n/a
    return compare(evidence, policy)


def _conforming(evidence: Evidence) -> tuple[ExpectedOutcome, AnyRetryPolicy]:
    policy = evidence.judged_policy
    if policy is not None:
        return evidence.judged_expected, policy
    policy = case_policy(DEFAULT_POLICY, evidence.scenario)
    return expected_outcome(evidence.scenario, policy), policy


def _hidden_retries(evidence: Evidence) -> bool:
    """The provider saw retries of a layer of the adapter's own (a declared policy), which
    are judged on what they did whether or not the policy asked for them."""
    return evidence.declared is not None and len(evidence.requests) > 1


def _failed_attempts(outcome: ExpectedOutcome) -> list[ExpectedAttempt]:
    return [attempt for attempt in outcome.attempts if not attempt.success]


def _retries(outcome: ExpectedOutcome, _: AnyRetryPolicy) -> bool:
    return len(outcome.attempts) > 1


def _retried(evidence: Evidence) -> RetryApplies:
    """The case has retries: the policy asks for them, or a declared layer made them."""
    return lambda outcome, policy: _retries(outcome, policy) or _hidden_retries(evidence)


def _reported_failures(evidence: Evidence) -> list[tuple[ExpectedAttempt, bool]]:
    """Each attempt the adapter reported as failed, as the retry layer saw it, and whether
    another request followed it.

    The code is the adapter's own (the oracle's where the adapter reports no codes): whether
    its reading of the attempt was right is judged elsewhere (C, E, S, T, H), so a retry
    decision is judged against what the adapter concluded. An attempt it reported as a
    success, or that crashed without a code, asks no retry decision of it. A request the
    declared layer retried out of sight failed as the oracle reads it.
    """
    requests = len(evidence.requests)
    observed = {seen.number: seen for seen in evidence.attempts}
    found = []
    for number in range(1, requests + 1):
        served = evidence.scenario_attempt(number)
        seen = observed.get(number)
        if seen is None:
            hidden = evidence.declared is not None and not served.success
            code = served.code if hidden else None
        elif seen.failed:
            code = seen.code if evidence.capabilities.error_codes else served.code
        else:
            code = None
        if code is None:
            continue
        as_seen = dataclasses.replace(served, reason="error", code=code)
        found.append((as_seen, number < requests))
    return found


def _decisions_kept(
    evidence: Evidence, policy: AnyRetryPolicy, judged: Callable[[ExpectedAttempt], bool]
) -> Judgement:
    """Each ``judged`` failure was retried exactly when the policy retries it."""
    whose = _named(evidence, policy)
    for attempt, retried in _reported_failures(evidence):
        if not judged(attempt):
            continue
        decision = retry_decision(attempt, policy, attempt.number - 1)
        read = _read_by(evidence, attempt)
        failed = f"attempt {attempt.number} failed with {attempt.code} {read}"
        if decision == "not-retryable" and retried:
            return breached(
                f"{failed}, which {whose} does not retry, yet the provider saw request "
                f"{attempt.number + 1}"
            )
        if decision == "retry" and not retried and not _out_of_time(evidence, policy, attempt):
            spent = f"{attempt.number - 1} of {policy.max_retries} retries spent"
            return breached(
                f"{failed}, which {whose} retries ({spent}), yet the provider saw no further "
                "request"
            )
    return held(f"the provider saw {len(evidence.requests)} request(s)")


def _read_by(evidence: Evidence, attempt: ExpectedAttempt) -> str:
    """Whose reading of a failed attempt a decision is judged on."""
    if any(seen.number == attempt.number for seen in evidence.attempts):
        return "as the adapter reported it"
    return "as the provider served it (retried out of the caller's sight)"


def _named(evidence: Evidence, policy: AnyRetryPolicy) -> str:
    """Which policy a reason speaks of, where the adapter declared one of its own."""
    if evidence.declared is None:
        return "the policy"
    return "the declared policy" if policy is evidence.declared else "the case's policy"


def _out_of_time(evidence: Evidence, policy: AnyRetryPolicy, failed: ExpectedAttempt) -> bool:
    """A retry whose shortest wait would end past the case's own time bound (ADAPTER-PROTOCOL
    ``timeout_s``, retries included): an adapter rightly does not start it."""
    if evidence.timeout_s is None or not evidence.requests:
        return False
    records = sorted(evidence.requests, key=lambda record: record.attempt)
    last = next((r for r in records if r.attempt == failed.number), records[-1])
    spent_ms = ((last.ended_at or last.received_at) - records[0].received_at) * 1000.0
    wait_ms = wait_bounds(policy, failed, failed.number).lower_ms
    return spent_ms + wait_ms >= evidence.timeout_s * 1000.0


# --- R1-R3: what is retried, how often ------------------------------------------------------


@invariant(
    "R1",
    "MUST",
    "A failure whose code is in the policy's retryable set is retried; any other code is "
    "not (the provider sees exactly one request).",
    source=EXECUTOR + " (which codes are retried)",
    needs=("retry",),
    reads=("finish",),
    rationale=(
        "Retrying a transient failure turns a hiccup into a delay instead of a failed turn; "
        "retrying AUTH, QUOTA or INVALID_REQUEST repeats a request that cannot succeed and spends "
        "time and rate limit on it."
    ),
)
def check_retryable_codes_retried(evidence: Evidence) -> Judgement | None:
    return _judge(
        evidence,
        lambda outcome, _: bool(_failed_attempts(outcome)),
        lambda ev, policy: _decisions_kept(ev, policy, lambda attempt: True),
    )


@invariant(
    "R2",
    "MUST",
    "At most max_retries retries; when the budget is exhausted the outcome is an explicit "
    "failure with the last attempt's code, never an empty success.",
    source=EXECUTOR + " (retries left); " + EMPTY_NOTE,
    needs=("retry",),
    reads=("finish",),
    rationale=(
        "The budget bounds cost and latency: ignoring it multiplies spend on a provider that "
        "keeps failing, and an exhausted budget reported as an empty success hides the failure "
        "from the user."
    ),
)
def check_budget(evidence: Evidence) -> Judgement | None:
    def consumes_budget(outcome: ExpectedOutcome, policy: AnyRetryPolicy) -> bool:
        return any(
            retry_decision(attempt, policy, attempt.number - 1) in ("retry", "budget-spent")
            for attempt in _failed_attempts(outcome)
        )

    def applies(outcome: ExpectedOutcome, policy: AnyRetryPolicy) -> bool:
        own, expected = evidence.declared, evidence.declared_expected
        under_own = own is not None and expected is not None and consumes_budget(expected, own)
        return consumes_budget(outcome, policy) or under_own or _hidden_retries(evidence)

    def compare(ev: Evidence, policy: AnyRetryPolicy) -> Judgement:
        budgets = [policy.max_retries]
        if ev.declared is not None and ev.declared is not policy:
            budgets.append(ev.declared.max_retries)  # the declared budget holds in both
        allowed = min(budgets) + 1
        if len(ev.requests) > allowed:
            return breached(
                f"the provider saw {len(ev.requests)} requests; "
                f"{_whose(ev, min(budgets))}max_retries {min(budgets)} allows {allowed}"
            )
        return _budget_outcome(ev, policy) or held(
            f"{len(ev.requests)} of at most {allowed} requests"
        )

    return _judge(evidence, applies, compare)


def _whose(ev: Evidence, budget: int) -> str:
    """Which policy's budget, where the adapter declared one of its own."""
    if ev.declared is None:
        return ""
    return "the declared " if budget == ev.declared.max_retries else "the case's "


def _budget_outcome(ev: Evidence, policy: AnyRetryPolicy) -> Judgement | None:
    """A spent budget turned into a success by the retry layer itself.

    Only where the adapter reported the very code on an earlier attempt: then it read the
    last attempt's failure too, and the layer, not the reading, hid it. The rest of the
    case's differences follow from that one cause.
    """
    final = ev.scenario_attempt(len(ev.requests)) if ev.requests else ev.judged_expected.final
    if retry_decision(final, policy, final.number - 1) != "budget-spent":
        return None
    visible = ev.attempts[-1]
    recognised = [seen.number for seen in ev.attempts[:-1] if seen.code == final.code]
    if visible.failed or not recognised:
        return None
    return Judgement(
        False,
        f"the budget ran out on {final.code} (reported on attempt(s) {recognised}), yet the "
        f"caller saw {visible.describe()}",
        root_cause=True,
    )


def _default_retryable_or_removed(attempt: ExpectedAttempt, policy: RetryPolicy) -> bool:
    if attempt.code in (EMPTY_RESPONSE, MALFORMED_TOOL_CALL):
        return True
    return attempt.code in DEFAULT_RETRYABLE_CODES and attempt.code not in policy.retryable_codes


@invariant(
    "R3",
    "MUST",
    "With the default policy EMPTY_RESPONSE and MALFORMED_TOOL_CALL are retried; removing a "
    "code from retryable_codes stops its retries.",
    source=EMPTY_NOTE + "; " + IDENTITY_NOTE + "; " + EXECUTOR,
    needs=("retry",),
    reads=("finish",),
    rationale=(
        "An empty reply or an unidentified tool call is usually transient, so the default retries "
        "it; a deployment that removes a code must see its retries stop, or it pays for what it "
        "turned off."
    ),
)
def check_refusals_retried_unless_removed(evidence: Evidence) -> Judgement | None:
    # A rule of the case's policy (its defaults, its retryable_codes): what a declared policy
    # retries is R1's to judge.
    def applies(outcome: ExpectedOutcome, policy: AnyRetryPolicy) -> bool:
        return isinstance(policy, RetryPolicy) and any(
            _default_retryable_or_removed(a, policy) for a in _failed_attempts(outcome)
        )

    def compare(ev: Evidence, policy: AnyRetryPolicy) -> Judgement:
        assert isinstance(policy, RetryPolicy)
        return _decisions_kept(ev, policy, lambda a: _default_retryable_or_removed(a, policy))

    return _judge(evidence, applies, compare)


# --- R4: the same request -------------------------------------------------------------------


@invariant(
    "R4",
    "MUST",
    "The retried request body is byte-identical to the first.",
    source="the harness's retry tests: \"keeps failed error text and partial output out of "
    'every retried model context"; ' + EXECUTOR,
    needs=("retry",),
    reads=(),
    rationale=(
        "A retry must ask the same question: a body that changes (a fresh request id, the failed "
        "attempt's partial output or error text in the messages) gives the model another context, "
        "misses the prompt cache and can change the answer."
    ),
)
def check_same_body(evidence: Evidence) -> Judgement | None:
    def compare(ev: Evidence, _: AnyRetryPolicy) -> Judgement:
        records = sorted(ev.requests, key=lambda record: record.attempt)
        bodies = [base64.b64decode(record.body_base64) for record in records]
        for record, body in zip(records[1:], bodies[1:], strict=True):
            if body != bodies[0]:
                at = _first_difference(bodies[0], body)
                return breached(
                    f"request {record.attempt}'s body differs from request 1's at byte {at}: "
                    f"{_excerpt(body, at)} instead of {_excerpt(bodies[0], at)}"
                )
        if len(bodies) < 2:
            return held("no retry reached the provider")
        return held(f"{len(bodies)} identical bodies of {len(bodies[0])} bytes")

    return _judge(evidence, _retried(evidence), compare)


def _first_difference(first: bytes, other: bytes) -> int:
    return next(
        (i for i, (a, b) in enumerate(zip(first, other, strict=False)) if a != b),
        min(len(first), len(other)),
    )


def _excerpt(body: bytes, at: int, width: int = 40) -> str:
    return repr(body[max(0, at - 10) : at + width])


# --- R5, R6: the wait -----------------------------------------------------------------------


def tolerated_range(wait: Wait) -> tuple[float | None, float] | None:
    """The measured waits R5 (backoff) or R6 (Retry-After) accept: the spec's bounds
    widened by the tolerances above. No lower end where the provider's clock is not a sound
    one (the failed attempt's end is not exact); None when the case ran with retries off."""
    if wait.bounds is None:
        return None
    slack = LOWER_SLACK_MS if wait.bounds.source == "backoff" else _retry_after_tolerance(wait)
    lower = wait.bounds.lower_ms - slack if wait.exact_end else None
    upper = wait.bounds.upper_ms + slack
    return lower, upper * (1 + UPPER_SLACK_RATIO) + UPPER_SLACK_MS


def _too_early(wait: Wait, lower_ms: float | None) -> str | None:
    assert wait.measured_ms is not None
    if lower_ms is not None and wait.measured_ms < lower_ms:
        return (
            f"retry {wait.retry} came {wait.measured_ms:.0f} ms after attempt {wait.retry} "
            f"ended; at least {lower_ms:.0f} ms expected"
        )
    return None


def _too_late(wait: Wait, upper_ms: float, allowed: float) -> str | None:
    assert wait.measured_ms is not None
    if wait.measured_ms > allowed:
        return (
            f"retry {wait.retry} came {wait.measured_ms:.0f} ms after attempt {wait.retry} "
            f"ended; at most {upper_ms:.0f} ms expected (tolerance up to {allowed:.0f} ms)"
        )
    return None


def _judge_waits(evidence: Evidence, basis: Literal["backoff", "retry-after"]) -> Judgement:
    """Every measured wait of the given basis within its :func:`tolerated_range`. A retry past
    the policy's budget has no wait to keep: that it was made at all is R2's."""
    budget = evidence.judged_policy.max_retries if evidence.judged_policy is not None else 0
    measured = [
        wait
        for wait in waits(evidence)
        if wait.bounds is not None
        and wait.bounds.source == basis
        and wait.measured_ms is not None
        and wait.retry <= budget
    ]
    if not measured:
        return held("no such retry reached the provider")
    shown = []
    for wait in measured:
        tolerated = tolerated_range(wait)
        assert wait.bounds is not None and wait.measured_ms is not None and tolerated is not None
        lower, upper = wait.bounds.lower_ms, wait.bounds.upper_ms
        problem = _too_early(wait, tolerated[0]) or _too_late(wait, upper, tolerated[1])
        if problem:
            return breached(problem)
        shown.append(f"{wait.measured_ms:.0f} ms in [{lower:.0f}, {upper:.0f}]")
    return held("waits " + ", ".join(shown))


def _backs_off(outcome: ExpectedOutcome, policy: AnyRetryPolicy) -> bool:
    return any(
        wait_bounds(policy, attempt, attempt.number).source == "backoff"
        for attempt in outcome.attempts[:-1]
    )


@invariant(
    "R5",
    "MUST",
    "The wait before retry n is ≥ min(initial·2^(n-1), max)·(1-jitter) and ≤ that "
    "bound·(1+jitter), measured at the provider.",
    source=EXECUTOR
    + " (the wait); docs/adapter-protocol.md#retries-and-attempts (retries are announced)",
    needs=("retry",),
    reads=(),
    rationale=(
        "Backoff gives a struggling provider time to recover: retrying at once runs into the same "
        "overload or rate limit, and waiting past the policy's bound makes the user wait for "
        "nothing."
    ),
)
def check_backoff(evidence: Evidence) -> Judgement | None:
    return _judge(
        evidence,
        _backs_off,
        lambda ev, _: _judge_waits(ev, "backoff"),
    )


def _retry_after_tolerance(wait: Wait) -> float:
    # An HTTP date has whole seconds and is read against the adapter's clock.
    dated = "retry-after-date" in wait.failed.features
    return RETRY_AFTER_DATE_TOLERANCE_MS if dated else LOWER_SLACK_MS


@invariant(
    "R6",
    "SHOULD",
    "Retry-After ≤ max_delay is waited exactly; above it, the failure is not retried.",
    source=EXECUTOR + " (the wait)",
    needs=("retry",),
    reads=(),
    rationale=(
        "A Retry-After within the cap is the earliest a retry can succeed, so it is waited "
        "exactly; one beyond the cap cannot fit the caller's latency budget, so the failure "
        "should surface now rather than after a clamped retry that is refused again."
    ),
)
def check_retry_after_honoured(evidence: Evidence) -> Judgement | None:
    # Only a wait the policy reads: a declared policy that reads no Retry-After, or backs
    # off above its cap, is judged by R5 on its backoff.
    def asks_to_wait(outcome: ExpectedOutcome, policy: AnyRetryPolicy) -> bool:
        return any(
            wait_bounds(policy, attempt, attempt.number).source == "retry-after"
            and retry_decision(attempt, policy, attempt.number - 1)
            in ("retry", "retry-after-over-cap")
            for attempt in _failed_attempts(outcome)
        )

    def compare(ev: Evidence, policy: AnyRetryPolicy) -> Judgement:
        for attempt, retried in _reported_failures(ev):
            decision = retry_decision(attempt, policy, attempt.number - 1)
            if decision == "retry-after-over-cap" and retried:
                asked = directed_wait_ms(attempt, policy) or 0.0
                return breached(
                    f"attempt {attempt.number}'s Retry-After ({asked:.0f} ms) "
                    f"exceeds {_cap(policy)}, yet it was retried"
                )
        return _judge_waits(ev, "retry-after")

    return _judge(evidence, asks_to_wait, compare)


def _cap(policy: AnyRetryPolicy) -> str:
    if isinstance(policy, DeclaredRetryPolicy):
        return f"the declared retry_after_max_s {policy.retry_after_max_s:g}"
    return f"max_delay_ms {policy.max_delay_ms:g}"


# --- R7, R8: what the caller sees ------------------------------------------------------------


def _visible_texts(attempt: ObservedAttempt, kind: type[TextBlock | ReasoningBlock]) -> list[str]:
    """The attempt's text (or reasoning) as block-ends and as deltas show it."""
    delta = TextDelta if kind is TextBlock else ReasoningDelta
    streamed = "".join(e.text for e in attempt.events if isinstance(e, delta))
    return [*texts(attempt.blocks, kind), streamed]


def _discarded_texts(
    served: Sequence[ExpectedAttempt],
    observed: Sequence[ObservedAttempt],
    kind: type[TextBlock | ReasoningBlock],
) -> set[str]:
    """Partial texts of the discarded attempts: as the wire sent them, and as reported."""
    found = {text for attempt in served for text in texts(attempt.blocks, kind)}
    for attempt in observed:
        found.update(_visible_texts(attempt, kind))
    return {text for text in found if text}


def _discarded_calls(
    served: Sequence[ExpectedAttempt], observed: Sequence[ObservedAttempt]
) -> list[ToolCallBlock]:
    calls = [call for attempt in served for call in tool_calls(attempt.blocks)]
    for attempt in observed:
        calls += streamed_calls(attempt.events) + tool_calls(attempt.blocks)
    return calls


def _leak(
    visible: ObservedAttempt,
    final: ExpectedAttempt,
    served: Sequence[ExpectedAttempt],
    observed: Sequence[ObservedAttempt],
) -> Difference | None:
    """The first piece of a discarded attempt found in the visible outcome, or None.

    A piece counts as leaked when the visible outcome holds it more often than the final
    attempt the provider sent does (a retry that restates the prefix is no leak).
    """
    kinds: tuple[tuple[Aspect, type[TextBlock | ReasoningBlock]], ...] = (
        ("text", TextBlock),
        ("reasoning", ReasoningBlock),
    )
    for aspect, kind in kinds:
        wanted = "".join(texts(final.blocks, kind))
        for shown in _visible_texts(visible, kind):
            for piece in _discarded_texts(served, observed, kind):
                if shown.count(piece) > wanted.count(piece):
                    return Difference(
                        aspect, f"the discarded {aspect} {piece!r} reappears: {shown!r}"
                    )
    wanted_calls = tool_calls(final.blocks)
    parts: tuple[tuple[Aspect, str], ...] = (("ids", "id"), ("arguments", "arguments"))
    for shown_calls in (tool_calls(visible.blocks), streamed_calls(visible.events)):
        for call in _discarded_calls(served, observed):
            for aspect, field in parts:
                piece = getattr(call, field)
                if _carries_nothing(field, piece):
                    continue
                if _occurrences(piece, shown_calls, field) > _occurrences(
                    piece, wanted_calls, field
                ):
                    return Difference(
                        aspect,
                        f"the discarded tool call {call.name or '?'} ({field} {piece!r}) "
                        f"reappears in the visible outcome: {_describe_calls(shown_calls)}",
                    )
    return None


def _carries_nothing(field: str, piece: str) -> bool:
    """An empty id, or a no-argument call's arguments: nothing that could leak."""
    return not _carried(field, piece)


def _carried(field: str, value: str) -> str:
    """What a call's field carries: a no-argument call's ``{}`` carries no ``{`` of anyone's."""
    return "" if field == "arguments" and no_arguments(value) else value


def _occurrences(piece: str, calls: list[ToolCallBlock], field: str) -> int:
    return sum(_carried(field, str(getattr(call, field))).count(piece) for call in calls)


def _describe_calls(calls: list[ToolCallBlock]) -> str:
    return repr([(c.id, c.name, c.arguments) for c in calls])[:200]


@invariant(
    "R7",
    "MUST",
    "Nothing of a discarded attempt reaches the caller-visible outcome: no duplicated text "
    "prefix, no phantom or merged tool call, no executed partial arguments.",
    source="the harness's retry executor; quirks K1 (replayed prefix), K2 (phantom call), "
    "K3 (duplicated tokens) (docs/invariants.md#provider-quirks)",
    needs=("retry",),
    rationale=(
        "A failed attempt's partial text, tool calls and arguments are not the answer: showing "
        "them again duplicates the start of the reply, and keeping a phantom call runs a tool the "
        "model never finished asking for."
    ),
)
def check_nothing_leaks(evidence: Evidence) -> Judgement | None:
    def partial_output(outcome: ExpectedOutcome, _: AnyRetryPolicy) -> bool:
        # With a declared layer, also what it discarded, whether or not it should have.
        seen = range(1, len(evidence.requests)) if _hidden_retries(evidence) else range(0)
        discarded = [*outcome.attempts[:-1], *map(evidence.scenario_attempt, seen)]
        return any(attempt.blocks for attempt in discarded)

    def compare(ev: Evidence, _: AnyRetryPolicy) -> Judgement:
        seen = max(len(ev.requests), 1)
        served = [ev.scenario_attempt(n) for n in range(1, seen)] if ev.requests else []
        final = ev.scenario_attempt(seen) if ev.requests else ev.expected.final
        visible = ev.attempts[-1]
        return breach_of(_leak(visible, final, served, ev.attempts[:-1])) or held()

    return _judge(evidence, partial_output, compare)


@invariant(
    "R8",
    "MUST",
    "The caller-visible outcome equals the expected outcome of the successful attempt.",
    source="the harness's retry executor; "
    "docs/adapter-protocol.md#retries-and-attempts (the outcome after the last retry)",
    needs=("retry",),
    rationale=(
        "After a successful retry the caller must get exactly that attempt's reply: a lost block, "
        "a merged call or the earlier failure's code means the retry recovered nothing."
    ),
)
def check_visible_outcome(evidence: Evidence) -> Judgement | None:
    def compare(ev: Evidence, _: AnyRetryPolicy) -> Judgement:
        # The last attempt the provider served: whether the adapter should have made more
        # is R1-R3's to judge, on what it saw.
        final = ev.scenario_attempt(len(ev.requests)) if ev.requests else ev.expected.final
        visible = ev.attempts[-1]
        compared = ev.compared_with(visible, final)
        problem = outcome_difference(visible, compared, ev.capabilities, ev.contested)
        if problem:
            return breached(
                f"after {len(ev.attempts) - 1} retry event(s): {problem.detail}",
                problem.aspect,
                problem.cost,
            )
        return held(f"attempt {final.number}'s outcome: {visible.describe()}")

    return _judge(evidence, _retried(evidence), compare)


# --- R9: what the caller is told about discarded attempts ------------------------------------


def _unreported_usage(ev: Evidence) -> str | None:
    """A discarded attempt whose billed usage was not reported before its failure."""
    if not ev.capabilities.usage or not ev.requests:
        return None
    for attempt in ev.attempts[:-1]:
        if attempt.number > len(ev.requests):
            break
        billed = ev.scenario_attempt(attempt.number).billed_usage
        if billed is None:
            continue
        reported = _usage_before_finish(attempt)
        if reported is None:
            return f"attempt {attempt.number}'s usage was not reported before its failure"
        problem = usage_difference(reported, billed)
        if problem:
            return f"attempt {attempt.number}: {problem}"
    return None


def _usage_before_finish(attempt: ObservedAttempt) -> Usage | None:
    for event in attempt.events:
        if isinstance(event, Usage):
            return event
        if event.type in ("finish", "thrown", "retry"):
            return None
    return None


def _unannounced(ev: Evidence) -> str | None:
    """A retry the provider saw that the adapter did not announce truthfully."""
    for attempt in ev.attempts:
        if attempt.retry is not None and attempt.retry.attempt != attempt.number:
            return (
                f"attempt {attempt.number} announces its retry as attempt {attempt.retry.attempt}"
            )
    # From here on, the retry event of attempt n announces attempt n.
    announced = announcements(ev)
    measured = waits(ev)
    for wait in measured:
        retry = announced.get(wait.retry)
        if retry is None:
            return f"request {wait.retry + 1} was sent with no retry event for attempt {wait.retry}"
        problem = _misannounced(ev, wait, retry)
        if problem:
            return f"retry {wait.retry} {problem}"
    unanswered = sorted(set(announced) - {wait.retry for wait in measured})
    if unanswered:
        return f"a retry of attempt {unanswered[0]} was announced, but no request followed"
    return None


def _misannounced(ev: Evidence, wait: Wait, retry: Retry) -> str | None:
    # The code the attempt truly failed with is announced: whether that was the right code
    # is the attempt's own invariant's to judge (H1, S7...), not R9's again.
    failed_with = ev.attempts[wait.retry - 1].code
    if retry.code != failed_with:
        return f"announces {retry.code}; its attempt failed with {failed_with}"
    if retry.delay_ms < 0:
        return f"announces a negative delay ({retry.delay_ms} ms)"
    honest = retry.delay_ms - _retry_after_tolerance(wait)
    if wait.measured_ms is not None and wait.exact_end and wait.measured_ms < honest:
        return (
            f"announces {retry.delay_ms:.0f} ms; the provider saw the next request "
            f"{wait.measured_ms:.0f} ms after attempt {wait.retry} ended"
        )
    return None


@invariant(
    "R9",
    "SHOULD",
    "A discarded attempt's usage is reported before its failure (billed tokens stay "
    "visible); each retry is announced with attempt number, code and delay.",
    source="harness note: a failure is yielded, not thrown, to keep its usage; "
    "examples/README.md#what-each-attempt-does",
    needs=("retry",),
    reads=("finish", "usage"),
    rationale=(
        "Failed attempts are billed too: dropping their usage undercounts spend, and an "
        "unannounced retry hides why the reply was slow and what was thrown away."
    ),
)
def check_retries_reported(evidence: Evidence) -> Judgement | None:
    def compare(ev: Evidence, _: AnyRetryPolicy) -> Judgement:
        problem = _unreported_usage(ev)
        if problem:
            return breached(problem)
        problem = _unannounced(ev)
        if problem and _out_of_sight(ev):
            # What the declaration promises is judged; a library's caller hears of no retry.
            reason = f"{problem}: the declared retry layer retries out of its caller's sight"
            return Judgement(False, reason, recorded=True)
        return (
            breached(problem) if problem else held(f"{len(ev.requests) - 1} retry(ies) announced")
        )

    return _judge(evidence, _retried(evidence), compare)


def _out_of_sight(ev: Evidence) -> bool:
    """Under interop, an adapter with a declared policy that announces no retry at all."""
    return ev.contract == "interop" and ev.declared is not None and not announcements(ev)
