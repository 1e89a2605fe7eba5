"""S — SSE framing (WHATWG event stream): framing never changes what the caller sees."""

from __future__ import annotations

from ..codes import MALFORMED_RESPONSE
from ..events import ReasoningBlock, TextBlock
from ..oracle import ExpectedAttempt
from .common import expected_failure, harness_duty, has_feature, judge_attempts, same_outcome
from .evidence import Evidence, ObservedAttempt, texts, tool_calls
from .registry import CHAT_ONLY, Judgement, held, invariant, weaker

WHATWG = (
    "WHATWG HTML, event stream interpretation: "
    "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation"
)


# The wire features each framing invariant judges: what a plain-framed twin of a case
# leaves out (conformance.run.control), to tell whether the framing made a difference.
LINE_ENDINGS = ("framing-cr", "framing-crlf")
WRITE_SPLITS = ("split-byte", "split-fixed", "split-offsets")
FIELD_QUIRKS = (
    "framing-comment",
    "framing-field",
    "framing-bom",
    "framing-data-no-space",
    "framing-multiline-data",
)
FRAMING_FEATURES = frozenset((*LINE_ENDINGS, *WRITE_SPLITS, *FIELD_QUIRKS))


@invariant(
    "S1",
    "MUST",
    "LF, CR and CRLF line endings give the same result.",
    source=WHATWG,
    rationale=(
        "LF, CR and CRLF are all valid event-stream line ends and proxies change them: a reader "
        "that splits on LF alone dispatches nothing on a CR stream and hangs or reports an empty "
        "reply."
    ),
)
def check_line_endings(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature(*LINE_ENDINGS), same_outcome)


@invariant(
    "S2",
    "MUST",
    "The result is independent of how bytes are split into network writes (inside data:, "
    "the blank line, or a multi-byte character).",
    source=WHATWG + "; quirks I5, I6 (docs/invariants.md#provider-quirks)",
    rationale=(
        "TCP and proxies cut a stream anywhere: a reader that parses each read on its own loses "
        "an event split across reads, or turns a split UTF-8 character into U+FFFD in the user's "
        "text."
    ),
)
def check_write_splits(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature(*WRITE_SPLITS), same_outcome)


@invariant(
    "S3",
    "MUST",
    "Comments, event/id/retry/unknown fields, data: with or without a space, multi-line "
    "data and a leading BOM do not change payloads.",
    source=WHATWG + "; quirks I1-I4 (docs/invariants.md#provider-quirks)",
    rationale=(
        "Keep-alive comments, id/event/retry fields, data: without a space and a BOM are valid "
        "SSE that real gateways send: a reader that takes them for payload fails a healthy stream "
        "with MALFORMED_RESPONSE or drops its content."
    ),
)
def check_field_parsing(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature(*FIELD_QUIRKS), same_outcome)


@invariant(
    "S4",
    "MUST",
    "Nothing after [DONE] is read.",
    source="the harness's SSE reader stops at [DONE]; examples/README.md#what-each-attempt-does",
    rationale=(
        "[DONE] ends the reply: reading on waits for a connection some servers keep open (a hang "
        "until the timeout) and appends whatever follows to a finished message."
    ),
    dialects=CHAT_ONLY,
)
def check_nothing_after_done(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("after-done"), nothing_read_past_end)


def nothing_read_past_end(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    """A difference is S4's (AN-G5's) when the caller still has all that came before [DONE]
    (message_stop): reading on
    adds to a reply, it takes nothing away. A reply that lost some of it (a reader that never
    splits a CR line dispatches nothing at all) is the loss's owner's to report."""
    found = same_outcome(seen, wanted, evidence)
    if found is None or _kept_before_done(seen, wanted, evidence.capabilities.reasoning):
        return found
    if wanted.success and _refused_as_malformed(seen):
        # The wire read well up to its end (the oracle's success says so): what the adapter
        # found malformed came after it, and reading it cost the caller the whole reply.
        return found
    return None


def _refused_as_malformed(seen: ObservedAttempt) -> bool:
    finish = seen.finish
    return finish is not None and finish.reason == "error" and finish.code == MALFORMED_RESPONSE


def _kept_before_done(seen: ObservedAttempt, wanted: ExpectedAttempt, reasoning: bool) -> bool:
    kinds = (TextBlock, ReasoningBlock) if reasoning else (TextBlock,)
    for kind in kinds:
        if not "".join(texts(seen.blocks, kind)).startswith("".join(texts(wanted.blocks, kind))):
            return False
    expected_calls = [(call.id, call.name) for call in tool_calls(wanted.blocks)]
    seen_calls = [(call.id, call.name) for call in tool_calls(seen.blocks)]
    return seen_calls[: len(expected_calls)] == expected_calls


@invariant(
    "S5",
    "MUST",
    "A stream that ends before a complete [DONE] event is a STREAM_CLOSED failure, never a "
    "success (interop: after its finish arrived, reading it as complete is recorded).",
    source="the harness's SSE reader (stream ended without [DONE]); "
    "examples/README.md#what-each-attempt-does",
    reads=("finish",),
    rationale=(
        "A body that ends before [DONE] may have lost text or tool-call arguments: reporting it "
        "as a success stores a truncated answer or runs a tool with half its arguments, with no "
        "error and no retry."
    ),
    dialects=CHAT_ONLY,
)
def check_eof_before_done(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, has_feature("no-done"), harness_duty("read as finished without [DONE]"), duty=True
    )


@invariant(
    "S6",
    "MUST",
    "A payload that is not JSON is a MALFORMED_RESPONSE failure; a comment re-wrapped as "
    "data (data: : …) may be skipped or refused so.",
    source="the harness's translator (malformed SSE payload); "
    "examples/README.md#what-each-attempt-does",
    reads=("finish",),
    rationale=(
        "A payload that is not JSON means the stream is corrupt: skipping it silently loses what "
        "it carried, and an uncoded parse error crashes the caller instead of reaching its error "
        "handling and retry."
    ),
)
def check_non_json_payload(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, has_feature("non-json"), expected_failure)


@invariant(
    "S7",
    "SHOULD",
    'A mid-stream {"error": …} payload is surfaced as a failure, not an empty or partial success.',
    source="quirks J1-J3 (docs/invariants.md#provider-quirks); the harness ignores it: recorded",
    reads=("finish",),
    rationale=(
        "Providers report overloads and limits inside a 200 stream as an error payload: ignoring "
        "it turns the failure into an empty or partial success, so nothing is retried and the "
        "user gets a cut-off answer."
    ),
    dialects=CHAT_ONLY,
)
def check_error_object_surfaced(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, _: ExpectedAttempt, __: Evidence) -> Judgement:
        if seen.failed:
            return held(seen.describe())
        return weaker(f"{seen.describe()}: the provider's error was swallowed")

    return judge_attempts(evidence, has_feature("error-object"), compare, every_reading=True)
