"""T — tool-call identity survives empty, null and repeated continuation deltas."""

from __future__ import annotations

from ..codes import MALFORMED_TOOL_CALL
from ..events import BlockEnd, ToolCallBlock
from ..oracle import ExpectedAttempt
from .common import Applies, breach_of, expected_failure, has_feature, judge_attempts
from .evidence import (
    Evidence,
    ObservedAttempt,
    first_difference,
    tool_calls,
    tool_calls_differences,
)
from .registry import CHAT_ONLY, Judgement, breached, held, invariant, weaker

NOTE = (
    "harness note: streamed tool-call identity survives empty continuation deltas; "
    "examples/README.md#what-each-attempt-does"
)


def _same_calls(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    differences = tool_calls_differences(tool_calls(seen.blocks), tool_calls(wanted.blocks))
    return breach_of(first_difference(differences, evidence.contested))


def _successful(*features: str) -> Applies:
    applies = has_feature(*features)
    return lambda wanted: wanted.success and applies(wanted)


@invariant(
    "T1",
    "MUST",
    'A continuation delta whose id or name is "", null or not a string leaves the '
    "established value in place.",
    source=NOTE,
    rationale=(
        'A continuation that repeats the id or name as "" or null would erase the identity the '
        'first delta set: the call then reaches the tool registry as unknown tool "", and its '
        "empty id makes the stored session impossible to reload."
    ),
)
def check_identity_survives(evidence: Evidence) -> Judgement | None:
    features = [f"tool-{k}-{v}" for k in ("id", "name") for v in ("empty", "null", "nonstring")]
    return judge_attempts(evidence, _successful(*features), _same_calls)


@invariant(
    "T2",
    "MUST",
    "Id and name are never concatenated; an identical repeat is inert.",
    source=NOTE,
    rationale=(
        "Identity is a value, not a stream: concatenating repeats turns get_weather into "
        "get_weatherget_weather and an id into call_1null, so the tool lookup fails and the "
        "result cannot be paired with its call."
    ),
)
def check_identity_not_concatenated(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, _successful("tool-id-repeated", "tool-name-repeated"), _same_calls
    )


@invariant(
    "T3",
    "MUST",
    "Parallel calls (distinct wire index) keep separate identities and arguments under any "
    "interleaving.",
    source=NOTE,
    rationale=(
        "Parallel calls run different tools on different inputs: mixing their fragments runs one "
        "tool with another's arguments, or with invalid JSON, and pairs the results with the "
        "wrong calls."
    ),
)
def check_parallel_calls_separate(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, _successful("tool-parallel"), _same_calls)


@invariant(
    "T4",
    "MUST",
    "An id or name that first arrives in a later delta (Responses: output_item.done) is accepted.",
    source=NOTE,
    rationale=(
        "Gateways send the id or name a delta late: refusing or dropping such a call loses a tool "
        "call the model made, and inventing an id breaks pairing the result with the provider's "
        "call."
    ),
    dialects=("chat-completions", "openai-responses"),
)
def check_late_identity_accepted(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, _successful("tool-late-id", "tool-late-name"), _same_calls)


@invariant(
    "T5",
    "MUST",
    "A call still lacking a non-empty id or name at [DONE] is never closed: its usage is "
    "reported, then finish error MALFORMED_TOOL_CALL (SHOULD: no block-end at all, yielded "
    "not thrown).",
    source=NOTE,
    reads=("tool-calls", "ids", "finish", "usage"),
    interop="INFO",  # the harness's refusal; T6 still forbids closing a call with no identity
    rationale=(
        "A call with no id or name can neither run nor be paired with its result: closing it "
        "stores a call the session cannot reload, while MALFORMED_TOOL_CALL after the billed "
        "usage lets the retry layer ask again."
    ),
)
def check_unidentified_call_refused(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("tool-unidentified"), _refused)


def _refused(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    unusable = [c for c in tool_calls(seen.blocks) if not c.id or not c.name]
    if unusable:
        return breached(f"closed an unidentified call {unusable[0].model_dump()}", "tool-calls")
    failure = expected_failure(seen, wanted, evidence)
    if failure is not None and not failure.weaker:
        return failure
    if wanted.usage is not None and evidence.capabilities.usage and not seen.usages:
        return breached("the wire's usage was not reported before the failure", "usage")
    if failure is not None:
        return failure
    if any(isinstance(e, BlockEnd) for e in seen.events):
        return weaker("block-ends were emitted before the MALFORMED_TOOL_CALL failure")
    assert wanted.code == MALFORMED_TOOL_CALL
    return None


@invariant(
    "T6",
    "MUST",
    "No block-end of a tool call carries an empty id or name.",
    source=NOTE + " (the durable boundary: such a call makes a session unloadable)",
    reads=(),
    # The harness's boundary: where the wire sent the identity, losing it is T1/T4's; a
    # call the wire never identified, handed back as it came, loses nothing.
    interop="INFO",
    rationale=(
        "This is the durable boundary: a block-end is written to the session, and a tool call "
        "with an empty id or name there makes the session refuse to load, losing the whole "
        "conversation, not one turn."
    ),
)
def check_no_empty_identity_closed(evidence: Evidence) -> Judgement | None:
    ends = [
        (attempt.number, event.block)
        for attempt in evidence.attempts
        for event in attempt.events
        if isinstance(event, BlockEnd) and isinstance(event.block, ToolCallBlock)
    ]
    if not ends and not evidence.expected.features & {"tool-unidentified"}:
        return None
    for number, block in ends:
        if not block.id or not block.name:
            return breached(f"attempt {number}: block-end {block.model_dump()}")
    return held()


@invariant(
    "T7",
    "INFO",
    "Conflicting second identity, name fragmented across deltas, call without index, two "
    "calls sharing an index: recorded as assembled.",
    source=NOTE + " (deferred alternatives)",
    rationale=(
        "The spec leaves these readings open, so nothing fails; the record shows which tool a "
        "conflicting or fragmented identity would actually run, before a user finds out in "
        "production."
    ),
    dialects=CHAT_ONLY,
)
def check_ambiguous_identity(evidence: Evidence) -> Judgement | None:
    features = ("tool-id-conflict", "tool-name-conflict", "tool-no-index", "tool-index-shared")
    relevant = [
        attempt
        for attempt in evidence.attempts
        if evidence.scenario_attempt(attempt.number).features & set(features)
    ]
    if not relevant:
        return None
    final = relevant[-1]
    calls = [(c.id, c.name, c.arguments) for c in tool_calls(final.blocks)]
    return held(f"attempt {final.number}: {final.describe()}; tool calls {calls!r}")
