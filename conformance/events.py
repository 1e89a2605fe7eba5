"""The event model of the adapter protocol (docs/adapter-protocol.md) and its JSON Lines codec.

Field names are the protocol's wire names. Optional fields are omitted from the JSON when unset,
never written as `null` (invariant G8). Parsing is strict about types (no `"3"` for `3`) and
rejects unknown fields, so a misspelt field is reported rather than silently dropped. A `null`
sent by an adapter for an optional field is accepted and stays visible in `model_fields_set`
(see `explicit_null_fields`), so the G8 checker, not the parser, judges it.
"""

import json
import math
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from conformance.codes import DEFAULT_RETRYABLE_CODES, ConformanceError, is_canonical

PROTOCOL_VERSION = 1
# The versions a hello may say: 1, and 1.1 (a JSON number), which adds dialects
# (docs/adapter-protocol.md, "Version 1.1: dialects"). Both are read by the same rules.
PROTOCOL_VERSIONS: tuple[int | float, ...] = (PROTOCOL_VERSION, 1.1)
# The bounds of a protocol message, checked before anything else reads it: a message outside
# them is a protocol error, never an exception that stops the run or a results file that
# cannot be written.
MAX_DEPTH = 64  # nested arrays and objects (an event needs 2, a run line's request more)
INT_RANGE = range(-(2**63), 2**63)  # integers: signed 64-bit
# Strings: Unicode scalar values only, no lone surrogates (`"\ud800"` is valid JSON, not text).

BlockType = Literal["text", "reasoning", "tool-call", "server-tool"]
# The wires an adapter may declare it speaks (protocol 1.1, DIALECTS.md); absent from its
# hello, it speaks chat-completions alone.
ProtocolDialect = Literal["chat-completions", "anthropic-messages", "openai-responses"]
DEFAULT_PROTOCOL_DIALECTS: tuple[ProtocolDialect, ...] = ("chat-completions",)
FinishReason = Literal["stop", "tool-calls", "max-tokens", "error", "aborted"]


class EventDecodeError(ConformanceError, ValueError):
    """A protocol line that is not valid JSON or not a known, well-formed message."""


class EventFieldError(EventDecodeError):
    """A readable event of a known type with a field that fails validation (a numeric tool
    call id, object arguments): ``field`` names it, ``tool-call-delta.id``, and the
    invariant of that field owns it rather than the stream grammar."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class WireModel(BaseModel):
    """Base of every protocol message: strict, closed, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    def to_json_line(self) -> str:
        """One JSON Lines record (no trailing newline); unset optional fields are omitted."""
        return self.model_dump_json(exclude_none=True)


# --- assembled blocks (the `block` of a `block-end`) ---


class TextBlock(WireModel):
    type: Literal["text"] = "text"
    text: str


class ReasoningBlock(WireModel):
    type: Literal["reasoning"] = "reasoning"
    text: str
    # Continuity tokens (protocol 1.1): opaque bytes a provider needs back verbatim in the
    # next request, reported exactly as received and never made up.
    signature: str | None = None
    redacted: str | None = None  # a redacted block's data; its text is then ""
    encrypted_content: str | None = None
    item_id: str | None = None


class ToolCallBlock(WireModel):
    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str
    item_id: str | None = None  # Responses: the item's id beside its callable call_id


class ServerToolBlock(WireModel):
    """A tool the provider ran itself (protocol 1.1): never a call for the client to run."""

    type: Literal["server-tool"] = "server-tool"
    id: str
    name: str
    arguments: str


Block = Annotated[
    TextBlock | ReasoningBlock | ToolCallBlock | ServerToolBlock, Field(discriminator="type")
]
CallBlock = ToolCallBlock | ServerToolBlock
"""The blocks assembled from tool-call deltas: an identity and raw arguments."""


def arguments_match(seen: str, wanted: str) -> bool:
    """Tool-call arguments equal as written, or both valid JSON with the same value: what a
    caller that parses them gets either way (only C3 asks for the raw form). A no-argument
    call's ``""`` (or whitespace) is ``{}``: the tool runs with no arguments either way
    (INVARIANTS.md v1.2, "No-argument calls")."""
    if seen == wanted:
        return True
    try:
        return bool(
            json.loads(_no_arguments_as_object(seen)) == json.loads(_no_arguments_as_object(wanted))
        )
    except ValueError:
        return False


def _no_arguments_as_object(arguments: str) -> str:
    return arguments if arguments.strip() else "{}"


def no_arguments(arguments: str) -> bool:
    """A no-argument call's arguments: ``""``, whitespace or ``{}``."""
    return arguments_match(arguments, "")


# --- events (adapter -> suite) ---


class EventBase(WireModel):
    # Declared first so that it leads each JSON line, as in the protocol's examples.
    case: str | None = None


class BlockStart(EventBase):
    type: Literal["block-start"] = "block-start"
    index: int
    block_type: BlockType


class TextDelta(EventBase):
    type: Literal["text-delta"] = "text-delta"
    index: int
    text: str


class ReasoningDelta(EventBase):
    type: Literal["reasoning-delta"] = "reasoning-delta"
    index: int
    text: str


class ToolCallDelta(EventBase):
    type: Literal["tool-call-delta"] = "tool-call-delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str


class BlockEnd(EventBase):
    type: Literal["block-end"] = "block-end"
    index: int
    block: Block


class Usage(EventBase):
    type: Literal["usage"] = "usage"
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None  # protocol 1.1


class Finish(EventBase):
    type: Literal["finish"] = "finish"
    reason: FinishReason
    # Checked when absent too: a missing code is the code's fault, not the event's.
    code: str | None = Field(default=None, validate_default=True)
    message: str | None = None

    @field_validator("code")
    @classmethod
    def _error_has_code(cls, code: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("reason") == "error" and not code:
            raise ValueError("a finish with reason 'error' requires a non-empty code")
        return code


class Retry(EventBase):
    type: Literal["retry"] = "retry"
    attempt: int
    code: str
    delay_ms: float


class Thrown(EventBase):
    type: Literal["thrown"] = "thrown"
    message: str
    code: str | None = None


class End(EventBase):
    type: Literal["end"] = "end"


Event = Annotated[
    BlockStart
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | BlockEnd
    | Usage
    | Finish
    | Retry
    | Thrown
    | End,
    Field(discriminator="type"),
]

_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


# --- handshake and case request ---


class Capabilities(WireModel):
    # An undeclared capability is not claimed: its invariants are reported `n/a`.
    deltas: bool = False
    reasoning: bool = False
    usage: bool = False
    retry: bool = False
    error_codes: bool = False
    # Protocol 1.1: sends the next request of a two-turn case, built from what it assembled.
    # None (not declared) is left out of a hello's dump, as before the capability existed.
    follow_up: bool | None = None


RetryAfterHeader = Literal["retry-after", "retry-after-ms"]
_STATUS_CLASS = re.compile(r"[1-5]xx")
# Bounds of a declared policy: beyond them a value is a mistake, not a policy.
MAX_DECLARED_RETRIES = 100
MAX_DECLARED_WAIT_S = 86_400.0


class DeclaredRetryPolicy(WireModel):
    """The retry policy an adapter runs of its own (a library's retry layer, whose constants
    a case's ``retry`` cannot set), declared in its ``hello`` as ``retry_policy``.

    A failure is retried, while retries are left, when its HTTP status is in ``statuses``
    or its canonical code in ``codes``; a failure after a 2xx response began (in its body)
    only with ``mid_stream``. A wait the provider does not direct lies within
    ``[backoff_min_s, backoff_max_s]``. The ``retry_after`` headers, read in that order, set
    the wait exactly up to ``retry_after_max_s``; above it, ``over_cap`` says what happens.
    """

    max_retries: int = Field(ge=0, le=MAX_DECLARED_RETRIES)
    statuses: list[int | str] = Field(default_factory=list)  # 429, or a class: "5xx"
    codes: list[str] = Field(default_factory=list)
    mid_stream: bool = False
    backoff_min_s: float = Field(ge=0, le=MAX_DECLARED_WAIT_S)
    backoff_max_s: float = Field(ge=0, le=MAX_DECLARED_WAIT_S)
    retry_after: list[RetryAfterHeader] = Field(default_factory=list)
    retry_after_max_s: float | None = Field(default=None, gt=0, le=MAX_DECLARED_WAIT_S)
    over_cap: Literal["no-retry", "backoff"] = "no-retry"
    should_retry_header: bool = False  # obeys `x-should-retry: true|false` on an error status

    @field_validator("statuses")
    @classmethod
    def _statuses(cls, statuses: list[int | str]) -> list[int | str]:
        for status in statuses:
            if isinstance(status, int) and not 100 <= status <= 599:
                raise ValueError(f"status {status} is not an HTTP status (100-599)")
            if isinstance(status, str) and not _STATUS_CLASS.fullmatch(status):
                raise ValueError(f"status {status!r} is neither a number nor a class like '5xx'")
        return statuses

    @field_validator("codes")
    @classmethod
    def _codes(cls, codes: list[str]) -> list[str]:
        for code in codes:
            if not is_canonical(code):
                raise ValueError(f"{code!r} is not a canonical code")
        return codes

    @field_validator("retry_after")
    @classmethod
    def _headers(cls, headers: list[RetryAfterHeader]) -> list[RetryAfterHeader]:
        if len(set(headers)) != len(headers):
            raise ValueError("a header is listed twice")
        return headers

    @model_validator(mode="after")
    def _backoff_ordered(self) -> "DeclaredRetryPolicy":
        if self.backoff_min_s > self.backoff_max_s:
            raise ValueError("backoff_min_s must not exceed backoff_max_s")
        return self

    def retries_status(self, status: int) -> bool:
        """Whether ``statuses`` lists ``status``, by number or by class."""
        return status in self.statuses or f"{status // 100}xx" in self.statuses


class Hello(WireModel):
    type: Literal["hello"] = "hello"
    protocol: int | float
    name: str
    version: str
    capabilities: Capabilities
    # Optional in protocol v1: absent, a retry layer follows each case's `retry` policy.
    retry_policy: DeclaredRetryPolicy | None = None
    # Protocol 1.1: the dialects the adapter speaks; absent, chat-completions alone.
    dialects: list[ProtocolDialect] | None = None

    @property
    def spoken_dialects(self) -> tuple[ProtocolDialect, ...]:
        return tuple(self.dialects) if self.dialects is not None else DEFAULT_PROTOCOL_DIALECTS

    @field_validator("protocol")
    @classmethod
    def _a_version_the_suite_speaks(cls, protocol: int | float) -> int | float:
        if protocol not in PROTOCOL_VERSIONS:
            spoken = " and ".join(map(str, PROTOCOL_VERSIONS))
            raise ValueError(f"the adapter speaks protocol {protocol}, the suite speaks {spoken}")
        return protocol

    @field_validator("dialects", mode="before")
    @classmethod
    def _known_dialects(cls, dialects: object) -> object:
        # Before the type check, to name the dialect rather than list the allowed ones.
        if not isinstance(dialects, list):
            return dialects
        known = get_args(ProtocolDialect)
        for dialect in dialects:
            if isinstance(dialect, str) and dialect not in known:
                raise ValueError(
                    f"unknown dialect {dialect!r} (the protocol knows {', '.join(known)})"
                )
        if not dialects:
            raise ValueError("an adapter speaks at least one dialect (leave it out for chat)")
        if len(set(map(str, dialects))) != len(dialects):
            raise ValueError("a dialect is listed twice")
        return dialects

    @model_validator(mode="after")
    def _policy_of_a_retry_layer(self) -> "Hello":
        if self.retry_policy is not None and not self.capabilities.retry:
            raise ValueError(
                "retry_policy declares a retry layer: it needs capabilities.retry true"
            )
        return self


class RetryPolicy(WireModel):
    """The retry policy the suite hands to an adapter with the `retry` capability."""

    max_retries: int = Field(ge=0)
    retryable_codes: list[str] = Field(default_factory=lambda: list(DEFAULT_RETRYABLE_CODES))
    initial_delay_ms: float = Field(gt=0)
    max_delay_ms: float = Field(gt=0)
    jitter_ratio: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _initial_within_max(self) -> "RetryPolicy":
        if self.initial_delay_ms > self.max_delay_ms:
            raise ValueError("initial_delay_ms must not exceed max_delay_ms")
        return self


class FollowUpTurn(WireModel):
    """What the shim hands the client to answer a two-turn case's first turn with: the
    client builds the next request itself, from what it assembled."""

    tool_results: list[str] = Field(default_factory=list)  # one per tool call, in call order
    message: str | None = None  # a user message the next request ends with


class RunCase(WireModel):
    """The suite -> adapter line that starts one case."""

    type: Literal["run"] = "run"
    case: str
    # Protocol 1.1: the wire of the case; absent, chat-completions.
    dialect: ProtocolDialect | None = None
    base_url: str
    api_key: str
    request: dict[str, Any]
    retry: RetryPolicy
    idle_timeout_s: float = Field(gt=0)
    timeout_s: float = Field(gt=0)
    # Protocol 1.1: a two-turn case, for an adapter that declares `follow_up`; absent, one turn.
    follow_up: FollowUpTurn | None = None


# --- codec ---

_Message = TypeVar("_Message", bound=WireModel)


def dump_event(event: WireModel) -> str:
    """Serialise any protocol message to one JSON Lines record (no trailing newline)."""
    return event.to_json_line()


def parse_event_line(line: str | bytes) -> Event:
    """Decode one adapter -> suite event line; raise EventDecodeError if it is not one
    (EventFieldError if it is a known event with a field that fails validation)."""
    return _validated(_load_object(line))


def validate_event(payload: Any) -> Event:
    """The event whose JSON form (decoded, or built by a Python adapter) is ``payload``,
    within the bounds; raise EventDecodeError if it is none (EventFieldError as above)."""
    check_bounds(payload)
    return _validated(payload)


def _validated(payload: Any) -> Event:
    try:
        return _EVENT_ADAPTER.validate_python(payload)
    except ValidationError as error:
        kind = payload.get("type") if isinstance(payload, dict) else None
        first = error.errors()[0]
        if first["type"] in ("union_tag_invalid", "union_tag_not_found", "model_attributes_type"):
            raise EventDecodeError(f"unknown event type {kind!r}") from error
        # Drop the leading location, the union tag, which repeats the event type.
        message = f"invalid {kind!r} event: {_summarise(error, skip=1)}"
        field = _field_path(first["loc"][1:])
        if field:
            raise EventFieldError(message, f"{kind}.{field}") from error
        raise EventDecodeError(message) from error


def _field_path(location: tuple[int | str, ...]) -> str:
    """``block.id`` for the location ``block, tool-call, id``: the block's union tag, which
    repeats its type, left out."""
    parts = [str(part) for part in location]
    if parts[:1] == ["block"] and len(parts) > 2:
        del parts[1]
    return ".".join(parts)


def parse_hello_line(line: str | bytes) -> Hello:
    """Decode the adapter's handshake line."""
    return _parse_as(Hello, line)


def parse_run_line(line: str | bytes) -> RunCase:
    """Decode a suite -> adapter `run` line (used by Python adapters behind the subprocess API)."""
    return _parse_as(RunCase, line)


def explicit_null_fields(message: WireModel) -> list[str]:
    """Optional fields the sender wrote as JSON `null` instead of omitting them (G8)."""
    return [
        name
        for name in type(message).model_fields
        if name in message.model_fields_set and getattr(message, name) is None
    ]


def _parse_as(model: type[_Message], line: str | bytes) -> _Message:
    payload = _load_object(line)
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        raise EventDecodeError(f"invalid {model.__name__}: {_summarise(error)}") from error


def _reject_constant(constant: str) -> float:
    # Python's json accepts NaN/Infinity; JSON does not.
    raise EventDecodeError(f"{constant} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise EventDecodeError(f"number out of range: {text}")
    return value


def _bounded_int(text: str) -> int:
    # The length first: converting thousands of digits is slow, or refused.
    value = int(text) if len(text) <= _INT_CHARS else INT_RANGE.stop
    if value not in INT_RANGE:
        cut = "…" if len(text) > _INT_CHARS else ""
        raise EventDecodeError(f"integer out of range (signed 64-bit): {text[:_INT_CHARS]}{cut}")
    return value


def _load_object(line: str | bytes) -> dict[str, Any]:
    try:
        text = line if isinstance(line, str) else line.decode()
        _check_json_depth(text)
        payload = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise EventDecodeError(f"not valid JSON: {error}") from error
    if not isinstance(payload, dict):
        raise EventDecodeError(f"expected a JSON object, got {type(payload).__name__}")
    check_bounds(payload)
    return payload


def _check_json_depth(text: str) -> None:
    """Refuse JSON text nested deeper than MAX_DEPTH before the parser recurses into it."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    # What is left once strings and everything but brackets are gone; linear, C speed.
    brackets = _NOT_BRACKETS.sub("", text)
    if max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH:
        raise EventDecodeError(f"nested deeper than {MAX_DEPTH} levels")


def check_bounds(value: object) -> None:
    """Raise EventDecodeError if a message in its JSON form (decoded, or built by a Python
    adapter) is outside the bounds: MAX_DEPTH, INT_RANGE, finite floats, no lone surrogates."""
    _check_value(value, 0)


def _check_value(value: object, depth: int) -> None:
    if isinstance(value, str):
        if lone := _SURROGATE.search(value):
            raise EventDecodeError(f"lone surrogate {lone[0]!a} in a string (valid JSON, not text)")
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        if value not in INT_RANGE:
            raise EventDecodeError(
                f"integer out of range (signed 64-bit): {value.bit_length()} bits"
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise EventDecodeError(f"number out of range: {value}")
    elif isinstance(value, Mapping | list | tuple):
        if depth >= MAX_DEPTH:
            raise EventDecodeError(f"nested deeper than {MAX_DEPTH} levels")
        items = [*value.keys(), *value.values()] if isinstance(value, Mapping) else value
        for item in items:
            _check_value(item, depth + 1)


_INT_CHARS = len(str(INT_RANGE.start))  # the longest integer in range, sign included
_NOT_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"?|[^][{}"]+', re.DOTALL)
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _summarise(error: ValidationError, skip: int = 0) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc'][skip:]) or '<root>'}: {item['msg']}"
        for item in error.errors()
    )
