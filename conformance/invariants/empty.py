"""E — a completed response with nothing in it is a retryable failure, not a success."""

from __future__ import annotations

from ..oracle import ExpectedAttempt
from .common import expected_failure, has_feature, judge_attempts, same_outcome
from .evidence import Evidence, ObservedAttempt
from .registry import Judgement, breached, invariant

NOTE = (
    "harness note: empty model completions are retryable EMPTY_RESPONSE failures; "
    "examples/README.md#what-each-attempt-does"
)


@invariant(
    "E1",
    "MUST",
    "A stop (or absent) finish with zero content blocks at [DONE] reports its usage, then "
    "finish error EMPTY_RESPONSE; chunks without choices count as zero blocks.",
    source=NOTE,
    reads=("finish", "usage"),
    interop="INFO",  # the harness's refusal; an empty stop loses nothing the wire sent
)
def check_empty_response_refused(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("empty-stop"), _refused_with_usage)


def _refused_with_usage(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    failure = expected_failure(seen, wanted, evidence)
    if failure is not None and not failure.weaker:
        return failure
    if wanted.usage is not None and evidence.capabilities.usage and not seen.usages:
        return breached("the wire's usage was not reported before the failure", "usage")
    return failure


@invariant("E2", "MUST", "A reasoning-only stream is a successful stop.", source=NOTE)
def check_reasoning_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("reasoning-only"), same_outcome)


@invariant("E3", "MUST", "Whitespace-only text is content: a successful stop.", source=NOTE)
def check_whitespace_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("whitespace-only"), same_outcome)


@invariant(
    "E4",
    "MUST",
    "length with zero blocks stays max-tokens; tool_calls stays tool-calls.",
    source=NOTE,
)
def check_non_stop_keeps_meaning(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, has_feature("empty-max-tokens", "empty-tool-calls"), same_outcome
    )


@invariant(
    "E5",
    "MUST",
    "A tool-call block counts as content: stop with a call is not empty.",
    source=NOTE,
)
def check_tool_call_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("stop-with-tool-call"), same_outcome)
