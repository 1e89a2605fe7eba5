"""The scenario model: what the fake provider sends, attempt by attempt.

A scenario is data. Chunk payloads are kept as ordered JSON objects rather than typed
models because the point of the fake provider is to send fields that a typed model would
refuse or normalise away: a ``null`` id, a number for a name, a key that is absent rather
than ``null``. Python dicts keep insertion order, so key order survives to the bytes.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from .dialects import DEFAULT_DIALECT, DIALECTS, DialectId
from .dialects.named_events import EventStep
from .dialects.responses import numbered_events

SCENARIO_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class _Model(BaseModel):
    # A typo in a fixture must be an error, not a silently ignored key.
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- stream steps -----------------------------------------------------------------------


class ChunkStep(_Model):
    """One ``data:`` event carrying a ``chat.completion.chunk`` object, verbatim."""

    chunk: dict[str, JsonValue]
    envelope: bool = Field(
        default=True,
        description="Prefix the stream's envelope fields (id, object, created, model) that "
        "the chunk does not set itself. False sends the chunk exactly as written.",
    )
    event_end: bool = Field(default=True, description="Terminate the event with a blank line.")


class RawStep(_Model):
    """One ``data:`` event whose payload is sent verbatim (invalid JSON, ``[DONE] ``...)."""

    raw: str
    event_end: bool = True


class DoneStep(_Model):
    """The ``data: [DONE]`` sentinel."""

    done: Literal[True] = True
    event_end: bool = True


class CommentStep(_Model):
    """A comment line (``: keep-alive``); the text is written after the colon as given."""

    comment: str
    event_end: bool = True


class FieldStep(_Model):
    """A non-data field line such as ``event: message``, ``id: 7`` or ``retry: 3000``."""

    field: str = Field(pattern=r"^[^:\r\n]*$")
    value: str = Field(default="", pattern=r"^[^\r\n]*$")
    event_end: bool = False


class LiteralStep(_Model):
    """Bytes written exactly as given (UTF-8), outside any SSE framing rule."""

    literal: str


class PauseStep(_Model):
    """Wait before the next write."""

    pause_ms: float = Field(ge=0, le=600_000)


class StallStep(_Model):
    """Stop writing but keep the connection open until the client gives up."""

    stall: Literal[True] = True


class ResetStep(_Model):
    """Abort the TCP connection (RST) without finishing the body."""

    reset: Literal[True] = True


class EndStep(_Model):
    """Finish the body cleanly here, whatever was (not) sent before."""

    end: Literal[True] = True


class DisconnectStep(_Model):
    """Close the connection (FIN) without finishing the body.

    With chunked transfer the terminating chunk is never sent, which clients see as an
    incomplete body; with ``transfer: close`` it is the same as ``end``.
    """

    disconnect: Literal[True] = True


_BARE_STEPS = {
    "done": DoneStep,
    "stall": StallStep,
    "reset": ResetStep,
    "end": EndStep,
    "disconnect": DisconnectStep,
}
_STEP_KEYS = {
    "chunk": ChunkStep,
    "event": EventStep,
    "raw": RawStep,
    "done": DoneStep,
    "comment": CommentStep,
    "field": FieldStep,
    "literal": LiteralStep,
    "pause_ms": PauseStep,
    "stall": StallStep,
    "reset": ResetStep,
    "end": EndStep,
    "disconnect": DisconnectStep,
}


def _step_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return value if value in _BARE_STEPS else None
    if isinstance(value, BaseModel):
        for key, model in _STEP_KEYS.items():
            if isinstance(value, model):
                return key
        return None
    if isinstance(value, dict):
        kinds = [key for key in _STEP_KEYS if key in value]
        return kinds[0] if len(kinds) == 1 else None
    return None


def bare_step(value: Any) -> Any:
    # "done", "reset", "stall" and "end" read better as bare words in a fixture.
    if isinstance(value, str) and value in _BARE_STEPS:
        return {value: True}
    return value


Step = Annotated[
    Annotated[ChunkStep, Tag("chunk")]
    | Annotated[EventStep, Tag("event")]
    | Annotated[RawStep, Tag("raw")]
    | Annotated[DoneStep, Tag("done")]
    | Annotated[CommentStep, Tag("comment")]
    | Annotated[FieldStep, Tag("field")]
    | Annotated[LiteralStep, Tag("literal")]
    | Annotated[PauseStep, Tag("pause_ms")]
    | Annotated[StallStep, Tag("stall")]
    | Annotated[ResetStep, Tag("reset")]
    | Annotated[EndStep, Tag("end")]
    | Annotated[DisconnectStep, Tag("disconnect")],
    Discriminator(
        _step_kind,
        custom_error_type="unknown_step",
        custom_error_message="a step has exactly one of the keys chunk, event, raw, done, comment, "
        "field, literal, pause_ms, stall, reset, end, disconnect (or is one of the bare "
        "words done, stall, reset, end, disconnect)",
    ),
]

TERMINAL_STEPS = (StallStep, ResetStep, EndStep, DisconnectStep)
DIALECT_STEPS: dict[type[BaseModel], tuple[str, tuple[DialectId, ...]]] = {
    ChunkStep: ("chunk", ("chat-completions",)),
    EventStep: ("event", ("anthropic-messages", "openai-responses")),
}
"""The steps only some dialects' wires have, with their tag; the others frame any wire."""


# --- framing ----------------------------------------------------------------------------


class WriteSplit(_Model):
    """How the body is cut into network writes.

    ``event``: one write per step; ``fixed``: every ``size`` bytes; ``offsets``: at the
    given absolute body offsets; ``byte``: one byte per write. Pauses and terminal steps
    always cut, whatever the mode.
    """

    mode: Literal["event", "fixed", "offsets", "byte"] = "event"
    size: int | None = Field(default=None, ge=1)
    offsets: tuple[int, ...] = ()

    @model_validator(mode="after")
    def _mode_arguments(self) -> WriteSplit:
        if self.mode == "fixed" and self.size is None:
            raise ValueError("split mode 'fixed' needs 'size'")
        if self.mode != "fixed" and self.size is not None:
            raise ValueError("'size' belongs to split mode 'fixed'")
        if self.mode == "offsets" and not self.offsets:
            raise ValueError("split mode 'offsets' needs 'offsets'")
        if self.mode != "offsets" and self.offsets:
            raise ValueError("'offsets' belong to split mode 'offsets'")
        if list(self.offsets) != sorted(set(self.offsets)) or any(o < 1 for o in self.offsets):
            raise ValueError("offsets must be distinct positive byte offsets in ascending order")
        return self


class Framing(_Model):
    """SSE framing of one stream attempt."""

    line_ending: Literal["lf", "cr", "crlf"] = "lf"
    bom: bool = Field(default=False, description="Start the body with a UTF-8 BOM.")
    data_space: bool = Field(default=True, description="'data: x' rather than 'data:x'.")
    multiline_data: bool = Field(
        default=False,
        description="Pretty-print JSON payloads and send each line as its own data: line.",
    )
    json_separators: Literal["compact", "spaced"] = "compact"
    ensure_ascii: bool = False
    split: WriteSplit = WriteSplit()
    transfer: Literal["chunked", "close"] = Field(
        default="chunked",
        description="HTTP body delimitation: chunked transfer coding, or connection close.",
    )


def default_envelope() -> dict[str, JsonValue]:
    """The fields OpenAI puts before ``choices`` in every chunk."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "fake-model",
    }


# --- attempts ---------------------------------------------------------------------------


def _valid_headers(headers: dict[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            raise ValueError(f"invalid header name {name!r}")
        if "\r" in value or "\n" in value:
            raise ValueError(f"header {name!r} has a line break in its value")
        try:
            value.encode("latin-1")
        except UnicodeEncodeError:
            raise ValueError(f"header {name!r} has a character HTTP/1.1 cannot carry") from None
    return headers


class StreamResponse(_Model):
    status: int = Field(default=200, ge=100, le=599)
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Extra or overriding response headers (content-type included).",
    )
    framing: Framing = Framing()
    envelope: dict[str, JsonValue] | None = Field(
        default_factory=default_envelope,
        description="Ordered fields every chunk step starts with unless it sets them itself "
        "(extra keys such as system_fingerprint welcome); null sends chunks as written.",
    )
    steps: tuple[Step, ...]

    _headers = field_validator("headers")(_valid_headers)

    @field_validator("steps", mode="before")
    @classmethod
    def _bare_words(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [bare_step(item) for item in value]
        return value

    @model_validator(mode="after")
    def _nothing_after_terminal_step(self) -> StreamResponse:
        for position, step in enumerate(self.steps[:-1]):
            if isinstance(step, TERMINAL_STEPS):
                raise ValueError(
                    f"step {position} ({type(step).__name__}) ends the response; "
                    f"the {len(self.steps) - position - 1} step(s) after it would never be sent"
                )
        return self


class StreamAttempt(_Model):
    """An HTTP response whose body is an event stream."""

    stream: StreamResponse


class ErrorResponse(_Model):
    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    body: JsonValue = Field(
        default=None,
        description="JSON body; None means an OpenAI-shaped error object for the status.",
    )
    raw_body: str | None = Field(default=None, description="Body sent verbatim instead.")
    retry_after_date_in_s: int | None = Field(
        default=None,
        ge=1,
        le=86_400,
        description="Send Retry-After as an HTTP date this many seconds after the response "
        "is sent (rendered at send time: a date written into a fixture would be in the past).",
    )

    _headers = field_validator("headers")(_valid_headers)

    @model_validator(mode="after")
    def _one_body(self) -> ErrorResponse:
        if self.body is not None and self.raw_body is not None:
            raise ValueError("give 'body' or 'raw_body', not both")
        return self

    @model_validator(mode="after")
    def _one_retry_after(self) -> ErrorResponse:
        given = any(name.lower() == "retry-after" for name in self.headers)
        if given and self.retry_after_date_in_s is not None:
            raise ValueError("give a Retry-After header or 'retry_after_date_in_s', not both")
        return self


class ErrorAttempt(_Model):
    """A complete non-streaming HTTP response, usually an error."""

    error: ErrorResponse


class FaultAttempt(_Model):
    """The connection fails before any response byte is written."""

    fault: Literal["reset", "close", "stall"]


def _attempt_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        kinds = [key for key in ("stream", "error", "fault") if key in value]
        return kinds[0] if len(kinds) == 1 else None
    for key, model in (("stream", StreamAttempt), ("error", ErrorAttempt), ("fault", FaultAttempt)):
        if isinstance(value, model):
            return key
    return None


Attempt = Annotated[
    Annotated[StreamAttempt, Tag("stream")]
    | Annotated[ErrorAttempt, Tag("error")]
    | Annotated[FaultAttempt, Tag("fault")],
    Discriminator(
        _attempt_kind,
        custom_error_type="unknown_attempt",
        custom_error_message="an attempt has exactly one of the keys stream, error, fault",
    ),
]


# --- the expected outcome ---------------------------------------------------------------
#
# Suite data the fake provider ignores: the conformance suite compares it with its oracle.
# The types are the oracle's vocabulary (INVARIANTS.md), spelled here because the provider
# sits below the suite and cannot import it; a test keeps the two in step.

ExpectedFinish = Literal["stop", "tool-calls", "max-tokens", "error"]
"""Finish reasons as the caller sees them (C5): ``tool-calls``, not the wire's ``tool_calls``."""

CanonicalCode = Literal[
    "EMPTY_RESPONSE",
    "MALFORMED_TOOL_CALL",
    "MALFORMED_RESPONSE",
    "STREAM_CLOSED",
    "TRANSPORT",
    "TIMEOUT",
    "RATE_LIMIT",
    "SERVER",
    "AUTH",
    "QUOTA",
    "INVALID_REQUEST",
    "CONTEXT_WINDOW_EXCEEDED",
    "ABORTED",
    "MAX_TOKENS",
    "REFUSAL",
    "PAUSE_TURN",
    "CONTENT_FILTER",
]
CANONICAL_CODES: frozenset[str] = frozenset(get_args(CanonicalCode))
_HTTP_STATUS_CODE = r"^HTTP_[1-5][0-9]{2}$"
_FINISH_REASON_CODE = r"^[A-Z][A-Z0-9_-]*$"


def _failure_code(code: str) -> str:
    if code in CANONICAL_CODES or re.fullmatch(_HTTP_STATUS_CODE, code):
        return code
    if not re.fullmatch(_FINISH_REASON_CODE, code):
        raise ValueError(
            f"{code!r} is not a code: a canonical code (INVARIANTS.md), HTTP_<status>, "
            "or an unknown wire finish_reason upper-cased (content_filter -> CONTENT_FILTER)"
        )
    # An upper-cased finish reason is open-ended; one a letter or two from a canonical code
    # is a typo, not a reason any provider sends.
    near = difflib.get_close_matches(code, sorted(CANONICAL_CODES), n=1, cutoff=0.9)
    if near:
        raise ValueError(f"unknown code {code!r}; did you mean {near[0]!r}?")
    return code


FailureCode = Annotated[
    StrictStr,
    AfterValidator(_failure_code),
    WithJsonSchema(
        {
            "anyOf": [
                {"enum": sorted(CANONICAL_CODES)},
                {"type": "string", "pattern": _HTTP_STATUS_CODE},
                {
                    "type": "string",
                    "pattern": _FINISH_REASON_CODE,
                    "description": "An unknown wire finish_reason, upper-cased.",
                },
            ]
        }
    ),
]


class ExpectedToolCall(_Model):
    """A tool call as the caller sees it; a key left out is one the spec leaves open (T7)."""

    id: StrictStr | None = None
    name: StrictStr | None = None
    arguments: StrictStr | None = Field(
        default=None, description="The raw concatenated fragments, never re-serialised (C3)."
    )
    item_id: StrictStr | None = Field(
        default=None, description="Responses: the item's id beside its call_id (RS-T2)."
    )


class ExpectedUsage(_Model):
    """The disjoint usage of C4: ``input_tokens`` excludes the cached prompt tokens."""

    input_tokens: StrictInt
    output_tokens: StrictInt
    cache_read_tokens: StrictInt | None = Field(
        default=None, description="Listed when the wire sent cached tokens (left out = 0)."
    )
    reasoning_tokens: StrictInt | None = Field(
        default=None, description="Listed exactly when the wire sent reasoning tokens."
    )
    cache_write_tokens: StrictInt | None = Field(
        default=None, description="Listed exactly when the wire sent cache writes (Anthropic)."
    )


class Expect(_Model):
    """The caller-visible outcome: the final attempt's, once the retry layer is done.

    Under the default retry policy (fixtures/README.md) with the scenario's own
    ``retry_policy`` fields. A block or usage that is left out is one there is none of,
    except in an ambiguous quirk (tagged ``level:info``), which lists only what is not.
    """

    finish: ExpectedFinish
    code: FailureCode | None = Field(
        default=None,
        validate_default=True,
        description="The failure code; exactly with finish: error.",
    )
    text: StrictStr | None = Field(default=None, description="The concatenated text block.")
    reasoning: StrictStr | None = Field(
        default=None, description="The concatenated reasoning block."
    )
    signature: StrictStr | None = Field(
        default=None, description="The reasoning block's signature, verbatim (Anthropic)."
    )
    redacted: StrictStr | None = Field(
        default=None, description="A redacted reasoning block's opaque data, verbatim."
    )
    encrypted_content: StrictStr | None = Field(
        default=None, description="A reasoning item's encrypted_content, verbatim (Responses)."
    )
    tool_calls: tuple[ExpectedToolCall, ...] | None = Field(
        default=None, description="The tool calls in block order."
    )
    usage: ExpectedUsage | None = Field(
        default=None, description="The last usage the final attempt received."
    )
    attempts: StrictInt = Field(default=1, ge=1, description="Requests the provider sees.")

    @field_validator("code")
    @classmethod
    def _code_with_error(cls, code: str | None, info: ValidationInfo) -> str | None:
        finish = info.data.get("finish")
        if finish == "error" and code is None:
            raise ValueError("finish: error needs a code")
        if finish not in (None, "error") and code is not None:
            raise ValueError(f"a code goes with finish: error, not finish: {finish}")
        return code

    @field_validator(
        "text", "reasoning", "signature", "redacted", "encrypted_content", "tool_calls"
    )
    @classmethod
    def _no_blocks_on_error(cls, value: object, info: ValidationInfo) -> object:
        if value is not None and info.data.get("finish") == "error":
            raise ValueError(
                "a failed attempt's blocks are not part of the outcome; leave this out"
            )
        return value


# --- the scenario -----------------------------------------------------------------------


class Provenance(_Model):
    """Where a stream shape was seen, so a report can link to the bug it reproduces."""

    urls: tuple[str, ...] = ()
    emitted_by: str | None = Field(
        default=None, description="Provider, gateway or model that sent this shape."
    )
    notes: str | None = None


class RetryPolicyOverride(_Model):
    """Retry-policy fields a case sets over the run's policy (ADAPTER-PROTOCOL ``retry``).

    Suite data, like ``expect``: the conformance runner hands the merged policy to the
    adapter; the fake provider ignores it.
    """

    max_retries: int | None = Field(default=None, ge=0, le=10)
    retryable_codes: tuple[Annotated[str, Field(min_length=1)], ...] | None = Field(
        default=None, min_length=1
    )
    initial_delay_ms: float | None = Field(default=None, gt=0, le=60_000)
    max_delay_ms: float | None = Field(default=None, gt=0, le=60_000)
    jitter_ratio: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> RetryPolicyOverride:
        initial, largest = self.initial_delay_ms, self.max_delay_ms
        if initial is not None and largest is not None and initial > largest:
            raise ValueError("initial_delay_ms must not exceed max_delay_ms")
        codes = self.retryable_codes or ()
        if len(set(codes)) != len(codes):
            raise ValueError("retryable_codes lists a code twice")
        return self


class FollowUp(_Model):
    """A two-turn case: what the client is handed to answer the first turn with, and what
    the provider streams back to its next request.

    The client builds that next request itself from what it assembled, the way its users
    do: the fake provider checks it (``fakeprovider.follow_up``) against the first turn's
    ids and continuity tokens. Suite data like ``expect``, besides ``answer``.
    """

    tool_results: tuple[StrictStr, ...] = Field(
        default=(),
        description="The result of each tool call the first turn makes, in call order; the "
        "client pairs each with its call.",
    )
    message: StrictStr | None = Field(
        default=None, description="A user message the next request ends with, if any."
    )
    answer: StrictStr = Field(
        default="Done.",
        min_length=1,
        description="The text the provider streams back to the next request.",
    )

    @model_validator(mode="after")
    def _something_to_send(self) -> FollowUp:
        if not self.tool_results and self.message is None:
            raise ValueError("a follow-up sends tool_results, a message, or both")
        return self


class Scenario(_Model):
    """A named script: attempt n answers the n-th request; the last attempt repeats."""

    id: str = Field(pattern=SCENARIO_ID_PATTERN)
    dialect: DialectId = Field(
        default=DEFAULT_DIALECT,
        description="The wire the scenario speaks: its endpoint, error bodies and the "
        "steps it scripts (chunk steps for chat-completions, event steps for "
        "anthropic-messages and openai-responses).",
    )
    title: str = ""
    description: str = ""
    provenance: Provenance = Provenance()
    tags: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    expect: Expect | None = Field(
        default=None,
        description="Expected outcome, for the conformance suite; the fake provider ignores it.",
    )
    retry_policy: RetryPolicyOverride | None = Field(
        default=None,
        description="Retry-policy fields this case runs under instead of the run's, for the "
        "conformance suite; the fake provider ignores it.",
    )
    follow_up: FollowUp | None = Field(
        default=None,
        description="Makes the case two-turn: the client sends the next request from what "
        "it assembled, and the provider checks it.",
    )
    attempts: tuple[Attempt, ...]

    @field_validator("attempts")
    @classmethod
    def _at_least_one(cls, value: tuple[Attempt, ...]) -> tuple[Attempt, ...]:
        # A validator rather than min_length: pydantic would also report a bad attempt's
        # tuple as too short, doubling the one error a fixture author needs to see.
        if not value:
            raise ValueError("a scenario needs at least one attempt")
        return value

    @model_validator(mode="after")
    def _steps_of_its_dialect(self) -> Scenario:
        numbering = DIALECTS[self.dialect].numbered_events
        misplaced = [
            _misplaced_step(self.dialect, (attempt_index, step_index), step)
            for attempt_index, attempt in enumerate(self.attempts)
            if isinstance(attempt, StreamAttempt)
            for step_index, step in enumerate(attempt.stream.steps)
            if self.dialect not in DIALECT_STEPS.get(type(step), ("", (self.dialect,)))[1]
            or (isinstance(step, EventStep) and not step.numbered and not numbering)
        ]
        if misplaced:
            # Raised as a ValidationError so each problem keeps its step's location.
            raise ValidationError.from_exception_data(type(self).__name__, misplaced)
        if numbering:
            # The scripted data as sent: every reader of the scenario sees the same numbers.
            numbered = tuple(
                attempt.model_copy(
                    update={
                        "stream": attempt.stream.model_copy(
                            update={"steps": numbered_events(attempt.stream.steps)}
                        )
                    }
                )
                if isinstance(attempt, StreamAttempt)
                else attempt
                for attempt in self.attempts
            )
            object.__setattr__(self, "attempts", numbered)  # frozen once validated
        return self

    @model_validator(mode="after")
    def _a_result_per_call(self) -> Scenario:
        if self.follow_up is None or self.expect is None:
            return self
        if self.expect.finish == "error":
            raise ValueError("follow_up: a turn that fails has no next request")
        calls = len(self.expect.tool_calls or ())
        results = len(self.follow_up.tool_results)
        if results != calls:
            raise ValueError(
                f"follow_up.tool_results has {results} result(s) for the {calls} tool "
                "call(s) of expect.tool_calls: one each, in call order"
            )
        return self

    def attempt(self, number: int) -> StreamAttempt | ErrorAttempt | FaultAttempt:
        """The attempt that answers request ``number`` (1-based)."""
        if number < 1:
            raise ValueError("attempt numbers start at 1")
        return self.attempts[min(number, len(self.attempts)) - 1]


def _misplaced_step(
    dialect: DialectId, where: tuple[int, int], step: BaseModel
) -> InitErrorDetails:
    tag, owners = DIALECT_STEPS[type(step)]
    attempt_index, step_index = where
    # The tagged-union form of the location, as pydantic reports any other step error.
    loc: tuple[str | int, ...] = ("attempts", attempt_index, "stream", "stream", "steps")
    if dialect in owners:  # an event step, not numbered, on a wire that numbers none
        error = PydanticCustomError(
            "numbered_off_wire",
            "only openai-responses numbers its events; {dialect} has no sequence_number "
            "to leave out",
            {"dialect": dialect},
        )
        loc += (step_index, tag, "numbered")
    else:
        error = PydanticCustomError(
            "step_of_another_dialect",
            "{tag} steps belong to {owner} scenarios, and this one is {dialect} "
            "(set the scenario's dialect, or script this wire's own steps)",
            {"tag": tag, "owner": " or ".join(owners), "dialect": dialect},
        )
        loc += (step_index, tag)
    return InitErrorDetails(type=error, loc=loc, input=step.model_dump(mode="json"))
