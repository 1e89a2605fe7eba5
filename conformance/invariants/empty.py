"""E — a completed response with nothing in it is a retryable failure, not a success."""

from __future__ import annotations

from ..oracle import ExpectedAttempt
from .common import expected_failure, has_feature, judge_attempts, same_ending
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
    rationale=(
        "An empty stop read as success stores an empty assistant message and ends the turn: no "
        "retry runs, no error reaches the user, and a driver loop spends a round without "
        "progress."
    ),
)
def check_empty_response_refused(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("empty-stop"), _refused_with_usage, duty=True)


def _refused_with_usage(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    failure = expected_failure(seen, wanted, evidence)
    if failure is not None and not failure.weaker:
        return failure
    if wanted.usage is not None and evidence.capabilities.usage and not seen.usages:
        return breached("the wire's usage was not reported before the failure", "usage")
    return failure


@invariant(
    "E2",
    "MUST",
    "A reasoning-only stream is a successful stop.",
    source=NOTE,
    rationale=(
        "A reasoning-only answer is model output: calling it empty retries a legitimate reply, "
        "pays for it again and can loop on a model that stops after thinking."
    ),
)
def check_reasoning_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("reasoning-only"), same_ending)


@invariant(
    "E3",
    "MUST",
    "Whitespace-only text is content: a successful stop.",
    source=NOTE,
    rationale=(
        "Whitespace is what the model produced: calling it empty retries a legitimate, if "
        "useless, reply and risks a retry loop on a model that keeps answering the same way."
    ),
)
def check_whitespace_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("whitespace-only"), same_ending)


@invariant(
    "E4",
    "MUST",
    "length with zero blocks stays max-tokens; tool_calls stays tool-calls (interop: with no "
    "call, stop from a library that exposes no finish reason passes, and so does an empty "
    "length refused as MAX_TOKENS).",
    source=NOTE,
    rationale=(
        "max-tokens and tool-calls keep their meaning with no block: max-tokens tells the caller "
        "to raise the limit or compact, and reported as EMPTY_RESPONSE the attempt is retried "
        "unchanged and hits the same limit again."
    ),
)
def check_non_stop_keeps_meaning(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, has_feature("empty-max-tokens", "empty-tool-calls"), same_ending
    )


@invariant(
    "E5",
    "MUST",
    "A tool-call block counts as content: stop with a call is not empty.",
    source=NOTE,
    rationale=(
        "A stop whose only block is a tool call still carries the model's action: treating it as "
        "empty drops the call and retries a reply that was fine."
    ),
)
def check_tool_call_is_content(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("stop-with-tool-call"), same_ending)
