"""AN — what only the Anthropic Messages wire can get wrong (one id per wire-only rule).

Each rule judges a case whose wire shows its situation (a feature the oracle's Anthropic
reader names), and owns the difference there, as a wire feature's own invariant does
(``judging``): the content, identity, empty, HTTP and retry families judge the canonical
outcome as for every dialect. Reference dialects.md §8.2 proposed these; the ones that mean
what a dialect-blind rule means are that rule (docs/invariants.md).
"""

from __future__ import annotations

from fakeprovider.dialects import DialectId

from ..events import ServerToolBlock, ToolCallBlock
from ..oracle import ExpectedAttempt
from .common import (
    expected_failure,
    first_breach,
    harness_duty,
    has_feature,
    judge_attempts,
    same_outcome,
    same_tokens,
    succeeded_with,
)
from .evidence import Evidence, ObservedAttempt
from .framing import nothing_read_past_end
from .registry import Judgement, invariant

ANTHROPIC: tuple[DialectId, ...] = ("anthropic-messages",)
WIRE = (
    "the Anthropic Messages streaming wire "
    "(https://docs.anthropic.com/en/docs/build-with-claude/streaming); "
    "docs/decisions.md#reading-the-anthropic-messages-wire"
)


@invariant(
    "AN-G1",
    "MUST",
    "A content_block_delta or content_block_stop for an index never started, or already "
    "stopped, fails the attempt MALFORMED_RESPONSE; it never attaches to another block.",
    source=WIRE,
    reads=("finish",),
    dialects=ANTHROPIC,
    rationale=(
        "A delta routed to the wrong block puts a tool's arguments into the text or another "
        "call; one silently dropped loses them: either way the caller acts on a message the "
        "provider never sent."
    ),
)
def check_routed_by_index(evidence: Evidence) -> Judgement | None:
    features = (
        "an-delta-unknown-index",
        "an-delta-after-stop",
        "an-stop-unknown-index",
        "an-stop-after-stop",
    )
    return judge_attempts(evidence, has_feature(*features), expected_failure)


@invariant(
    "AN-G2",
    "MUST",
    "A content_block_start for an index already used never merges two blocks nor changes "
    "the first: a repeat of the same block may be ignored or refused (MALFORMED_RESPONSE); "
    "another block there is refused (interop: read past it, recorded).",
    source=WIRE,
    interop="INFO",
    dialects=ANTHROPIC,
    rationale=(
        "A gateway that re-starts an index makes clients append a second block or reset the "
        "first: thinking lands in the answer's text, or a call's identity is replaced."
    ),
)
def check_repeated_start(evidence: Evidence) -> Judgement | None:
    repeat = judge_attempts(evidence, has_feature("an-start-repeated"), same_outcome)
    conflict = judge_attempts(
        evidence,
        has_feature("an-start-conflict"),
        harness_duty("read past the repeated start"),
        duty=True,
    )
    return first_breach(repeat, conflict)


@invariant(
    "AN-G3",
    "MUST",
    "A delta whose type does not fit its block (text_delta into tool_use, thinking_delta "
    "into text…) is never appended to it: harness MALFORMED_RESPONSE; interop may ignore it.",
    source=WIRE,
    interop="SHOULD",
    dialects=ANTHROPIC,
    rationale=(
        "Text appended to a tool block corrupts its arguments (the tool fails to parse them "
        "or runs with others); reasoning appended to text shows the model's thinking as the "
        "answer."
    ),
)
def check_delta_fits_block(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("an-delta-misfit"), expected_failure)


@invariant(
    "AN-G4",
    "MUST",
    "A body that ends before message_stop is a failure (STREAM_CLOSED for a close), never a "
    "success (interop: after its message_delta brought a stop reason, reading it as complete "
    "is recorded).",
    source=WIRE,
    reads=("finish",),
    dialects=ANTHROPIC,
    rationale=(
        "A stream cut before message_stop may have lost text or arguments: handed back as a "
        "complete message it stores a truncated answer or runs a half-written tool call."
    ),
)
def check_end_before_message_stop(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence,
        has_feature("an-no-message-stop"),
        harness_duty("read as finished without message_stop"),
        duty=True,
    )


@invariant(
    "AN-G5",
    "MUST",
    "Nothing after message_stop is read (a trailing [DONE] or event included).",
    source=WIRE,
    dialects=ANTHROPIC,
    rationale=(
        "message_stop ends the message: reading on appends what a proxy sends after it to a "
        "finished reply, or waits on a connection kept open."
    ),
)
def check_nothing_after_message_stop(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("an-after-stop"), nothing_read_past_end)


@invariant(
    "AN-G6",
    "MUST",
    "The first event other than ping (and unknown ones) is message_start, and there is one: "
    "otherwise MALFORMED_RESPONSE.",
    source=WIRE,
    reads=("finish",),
    dialects=ANTHROPIC,
    rationale=(
        "Content before message_start, or a second message_start, is a stream the client "
        "cannot place: assembling it anyway mixes two messages or drops the first one's usage."
    ),
)
def check_message_start_first(evidence: Evidence) -> Judgement | None:
    features = ("an-before-message-start", "an-message-start-repeated")
    return judge_attempts(evidence, has_feature(*features), expected_failure)


@invariant(
    "AN-G7",
    "MUST",
    "ping (any data), unknown event types and unknown block types with their deltas are "
    "skipped; skipping never shifts the indexes of later blocks.",
    source=WIRE,
    interop="SHOULD",
    dialects=ANTHROPIC,
    rationale=(
        "New event and block types arrive without notice (vertex_event, fallback, "
        "*_tool_result): a client that fails on them or counts them as positions loses the "
        "reply or attaches later deltas to the wrong block."
    ),
)
def check_unknown_skipped(evidence: Evidence) -> Judgement | None:
    features = ("an-unknown-event", "an-unknown-block", "an-ping-no-json")
    return judge_attempts(evidence, has_feature(*features), same_outcome)


@invariant(
    "AN-C2",
    "MUST",
    "A thinking block's signature is reported verbatim with its reasoning block, a "
    "signature-only block kept; none is ever made up.",
    source=WIRE,
    needs=("reasoning",),
    reads=("reasoning",),
    dialects=ANTHROPIC,
    rationale=(
        "The next turn must send the thinking block back with its exact signature: one "
        "dropped, cut or altered fails that request with 400 'Invalid signature in thinking "
        "block', ending the conversation."
    ),
)
def check_signature_verbatim(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, succeeded_with("an-signature"), same_tokens("signature"), content=True
    )


@invariant(
    "AN-C3",
    "MUST",
    "A redacted_thinking block is reported as a reasoning block carrying its data verbatim, "
    "in its position.",
    source=WIRE,
    needs=("reasoning",),
    reads=("reasoning",),
    dialects=ANTHROPIC,
    rationale=(
        "Redacted thinking must be passed back unmodified on the next turn: a client that "
        "drops or rewrites it gets the request refused, or loses the model's reasoning state."
    ),
)
def check_redacted_verbatim(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, succeeded_with("an-redacted"), same_tokens("redacted"), content=True
    )


@invariant(
    "AN-T5",
    "MUST",
    "server_tool_use blocks are not client tool calls: never reported as a tool-call block "
    "(a server-tool block, or nothing, under protocol 1.0).",
    source=WIRE,
    reads=("tool-calls",),
    interop="SHOULD",
    dialects=ANTHROPIC,
    rationale=(
        "The provider already ran a server tool: a client that hands it to the caller as a "
        "call to execute runs a tool that does not exist locally, or runs the search twice and "
        "sends a tool_result the API rejects."
    ),
)
def check_server_tool_not_a_call(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence) -> str | None:
        server = {b.id for b in wanted.blocks if isinstance(b, ServerToolBlock)}
        run = [b.id for b in seen.blocks if isinstance(b, ToolCallBlock) and b.id in server]
        return f"server tool {run[0]!r} reported as a tool call to run" if run else None

    return judge_attempts(evidence, has_feature("an-server-tool"), compare, content=True)


@invariant(
    "AN-S2",
    "SHOULD",
    "An event is what its data's type says: one sent without an event: line, or with a name "
    "that disagrees, is read by its type.",
    source=WIRE,
    dialects=ANTHROPIC,
    rationale=(
        "Compatible servers and proxies send data-only events or wrong names: a client that "
        "dispatches by name alone assembles nothing, or the wrong thing, from a valid message."
    ),
)
def check_read_by_type(evidence: Evidence) -> Judgement | None:
    features = ("an-data-only", "an-name-mismatch")
    return judge_attempts(evidence, has_feature(*features), same_outcome)


@invariant(
    "AN-H2",
    "MUST",
    "An error event (at any point of a 200 stream) is a failure with the code its error.type "
    "maps to (overloaded_error, api_error → SERVER; rate_limit_error → RATE_LIMIT), never an "
    "empty or partial success; an error body of another shape is still a failure.",
    source=WIRE,
    reads=("finish",),
    dialects=ANTHROPIC,
    rationale=(
        "An overload reported mid-stream on a 200 is the most common Anthropic failure: read "
        "as a short success it hands back a cut-off answer with no error and no retry."
    ),
)
def check_error_event(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("an-error-event"), expected_failure)
