"""RS — what only the OpenAI Responses wire can get wrong (one id per wire-only rule).

Each rule judges a case whose wire shows its situation (a feature the oracle's Responses
reader names) and owns the difference there, as the AN rules do on the Anthropic wire; the
content, identity, empty, HTTP and retry families judge the canonical outcome as for every
dialect. Reference dialects.md §8.3 proposed these; docs/decisions.md says which of them
mean what a dialect-blind rule means, and are that rule.
"""

from __future__ import annotations

import dataclasses

from fakeprovider.dialects import DialectId

from ..events import ToolCallBlock
from ..oracle import ExpectedAttempt
from ..verdicts import Cost
from .common import (
    Compare,
    expected_failure,
    first_breach,
    has_feature,
    judge_attempts,
    same_outcome,
    same_tokens,
    succeeded_with,
)
from .evidence import Evidence, ObservedAttempt, block_summary, tool_calls
from .framing import nothing_read_past_end
from .registry import Judgement, breached, invariant

RESPONSES: tuple[DialectId, ...] = ("openai-responses",)
WIRE = (
    "the OpenAI Responses streaming events "
    "(https://platform.openai.com/docs/api-reference/responses-streaming); "
    "docs/decisions.md#reading-the-openai-responses-wire"
)


@invariant(
    "RS-G1",
    "MUST",
    "The first event (keepalives aside) is response.created, sent once, else "
    "MALFORMED_RESPONSE; the first terminal event (completed, incomplete, failed) ends the "
    "attempt and nothing after it is read.",
    source=WIRE,
    dialects=RESPONSES,
    rationale=(
        "Both official SDKs refuse a stream that does not open with response.created, and "
        "relays that concatenate runs send several response.completed: reading past the "
        "first appends another response to a finished reply."
    ),
)
def check_lifecycle(evidence: Evidence) -> Judgement | None:
    return first_breach(
        judge_attempts(
            evidence, has_feature("rs-before-created", "rs-created-repeated"), expected_failure
        ),
        judge_attempts(evidence, has_feature("rs-after-terminal"), nothing_read_past_end),
        judge_attempts(evidence, has_feature("rs-keepalive"), same_outcome),
    )


@invariant(
    "RS-G2",
    "MUST",
    "An item-scoped event for an output_index never opened by output_item.added, already "
    "done, or holding an item of another kind (text into a function call), and an "
    "output_item.added for an index in use, fail the attempt MALFORMED_RESPONSE; nothing "
    "attaches to another item.",
    source=WIRE,
    reads=("finish",),
    dialects=RESPONSES,
    rationale=(
        "A delta routed to the wrong item puts a call's arguments into the answer or into "
        "another call: the caller runs a tool with input the model never wrote."
    ),
)
def check_routed_by_output_index(evidence: Evidence) -> Judgement | None:
    features = ("rs-unknown-index", "rs-after-item-done", "rs-event-misfit", "rs-item-reopened")
    return judge_attempts(evidence, has_feature(*features), expected_failure)


@invariant(
    "RS-G3",
    "SHOULD",
    "Events are routed by output_index: an item_id that is not the item's id, and an "
    "output_index that skips numbers, change nothing the caller sees.",
    source=WIRE,
    interop="INFO",
    dialects=RESPONSES,
    rationale=(
        "GitHub Copilot rotates item_id on every event: a client keyed by item_id (or that "
        "throws on the mismatch, as openai-node does) loses the whole reply."
    ),
)
def check_item_id_tolerated(evidence: Evidence) -> Judgement | None:
    features = ("rs-item-id-mismatch", "rs-index-gap")
    return judge_attempts(evidence, has_feature(*features), same_outcome)


@invariant(
    "RS-G4",
    "MUST",
    "Text and arguments are their deltas: a .done payload (output_text.done, "
    "function_call_arguments.done, content_part.done, output_item.done) that is empty or "
    "missing never erases them; one non-empty and different is recorded (INFO).",
    source=WIRE,
    dialects=RESPONSES,
    rationale=(
        "Translating gateways send .done events with empty text and arguments: a client "
        "that takes them over the deltas shows an empty answer and runs a call without its "
        "input."
    ),
)
def check_deltas_win(evidence: Evidence) -> Judgement | None:
    return first_breach(
        judge_attempts(evidence, has_feature("rs-done-empty"), same_outcome),
        judge_attempts(
            evidence,
            has_feature("rs-done-conflict", "rs-snapshot-conflict"),
            _recorded(same_outcome),
        ),
    )


@invariant(
    "RS-G5",
    "MUST",
    "A body that ends (EOF, or a [DONE] a gateway adds) before a terminal event is a "
    "failure, STREAM_CLOSED for a close, never a success.",
    source=WIRE,
    reads=("finish",),
    dialects=RESPONSES,
    rationale=(
        "Without response.completed nothing says the reply is whole: openai-node resolves "
        "the partial snapshot as final, storing a cut answer or running a half-written call."
    ),
)
def check_end_before_terminal(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("rs-no-terminal"), expected_failure)


@invariant(
    "RS-G6",
    "MUST",
    "Unknown event types and unknown output item types (with their events) are skipped; "
    "skipping never shifts the output_index of later items.",
    source=WIRE,
    interop="SHOULD",
    dialects=RESPONSES,
    rationale=(
        "The Responses union grows every few weeks (custom tools, MCP, compaction): a client "
        "that throws on a new type, as openai-node does, loses replies that hold nothing it "
        "needs."
    ),
)
def check_unknown_skipped(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, has_feature("rs-unknown-event", "rs-unknown-item"), same_outcome
    )


@invariant(
    "RS-C2",
    "MUST",
    "A reasoning item's encrypted_content and id are reported verbatim with its reasoning "
    "block; none is ever made up.",
    source=WIRE,
    needs=("reasoning",),
    reads=("reasoning",),
    dialects=RESPONSES,
    rationale=(
        "Under store:false the next turn must replay the reasoning item with its id and "
        "encrypted_content: one dropped or altered fails it with 'Item with id rs_… not "
        "found' or invalid_encrypted_content."
    ),
)
def check_reasoning_tokens_verbatim(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence,
        succeeded_with("rs-reasoning-tokens"),
        same_tokens("encrypted_content", "item_id"),
        content=True,
    )


@invariant(
    "RS-C6",
    "MUST",
    "A terminal response.output that is empty, null or missing while items were streamed "
    "never erases them: the reply is the streamed items.",
    source=WIRE,
    dialects=RESPONSES,
    rationale=(
        "Seven gateways and OpenAI's own Codex backend send response.completed with "
        "output: [] after good deltas: clients that trust the snapshot show an empty answer."
    ),
)
def check_empty_snapshot_never_erases(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("rs-output-empty"), _not_erased)


def _not_erased(seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence) -> Judgement | None:
    """What trusting the empty snapshot does: a success with none of a kind of block the
    stream sent (no text, no calls…). Other differences are other rules' to judge."""
    if seen.failed or not wanted.success:
        return None
    kinds = {type(block) for block in seen.blocks}
    erased = [block for block in wanted.blocks if type(block) not in kinds]
    if not erased:
        return None
    lost = ", ".join(block_summary(block) for block in erased)
    return breached(f"the streamed {lost} erased by the empty snapshot", cost=Cost("lost", lost))


@invariant(
    "RS-T2",
    "MUST",
    "A function call's reported id is its call_id, never the item id (fc_…), which may be "
    "reported beside it as item_id.",
    source=WIRE,
    reads=("tool-calls",),
    dialects=RESPONSES,
    rationale=(
        "The next turn pairs a function_call_output with its call by call_id: a client that "
        "reports the item id sends an output that matches nothing, refused with 400."
    ),
)
def check_call_id_reported(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("rs-call-id"), _no_item_id_as_call_id, content=True)


def _no_item_id_as_call_id(
    seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence
) -> str | None:
    item_ids = {c.item_id: c.id for c in tool_calls(wanted.blocks) if c.item_id is not None}
    for call in seen.blocks:
        if isinstance(call, ToolCallBlock) and call.id in item_ids:
            expected = item_ids[call.id]
            return f"tool call id {call.id!r} is the item id, expected call_id {expected!r}"
    return None


@invariant(
    "RS-S2",
    "INFO",
    "sequence_number gaps, repeats and absence are recorded, never fatal: the events are "
    "read in the order they arrive.",
    source=WIRE,
    dialects=RESPONSES,
    rationale=(
        "sequence_number is a resume cursor, not a reading order: a client that drops or "
        "refuses events whose numbers are not consecutive loses deltas a relay renumbered."
    ),
)
def check_sequence_numbers(evidence: Evidence) -> Judgement | None:
    features = ("rs-seq-gap", "rs-seq-backward", "rs-seq-absent")
    return judge_attempts(evidence, has_feature(*features), same_outcome)


@invariant(
    "RS-H1",
    "MUST",
    "An error event, nested (error: {code, message}) or flat (code, message), a chat-style "
    "error payload and response.failed fail the attempt with the code of their error code "
    "(rate_limit_exceeded → RATE_LIMIT, server_error → SERVER, insufficient_quota → QUOTA, "
    "context_length_exceeded → CONTEXT_WINDOW_EXCEEDED), even when EOF follows.",
    source=WIRE,
    reads=("finish",),
    dialects=RESPONSES,
    rationale=(
        "openai-python raises only on the nested shape and yields the documented flat one "
        "as an ordinary event: the caller gets a cut-off reply with no error and no retry."
    ),
)
def check_error_events(evidence: Evidence) -> Judgement | None:
    features = ("rs-error-event", "rs-error-object", "rs-failed")
    return judge_attempts(evidence, has_feature(*features), expected_failure)


def _recorded(compare: Compare) -> Compare:
    """``compare``, its breach only recorded: the wire contradicts itself, and the rule's
    level there is INFO (DIALECTS.md "Source of truth")."""

    def recorded(
        seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
    ) -> Judgement | None:
        found = compare(seen, wanted, evidence)
        if found is None:
            return None
        judgement = found if isinstance(found, Judgement) else Judgement(False, found)
        return judgement if judgement.held else dataclasses.replace(judgement, recorded=True)

    return recorded
