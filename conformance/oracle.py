"""The oracle: scenario → expected outcome, the executable reading of INVARIANTS.md.

It reads what the provider will send (the encoded body, parsed whole rather than
incrementally) and states what a conforming adapter reports. It never imports an adapter:
the reference adapter is checked against it, not the other way round. Besides the
outcome it records the *features* of the wire (an identity repeated as ``null``, a late
id, CRLF framing…) that decide which invariants a case exercises.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from fakeprovider.scenario import (
    TERMINAL_STEPS,
    ChunkStep,
    CommentStep,
    DoneStep,
    ErrorAttempt,
    ErrorResponse,
    FaultAttempt,
    FieldStep,
    LiteralStep,
    PauseStep,
    Scenario,
    StreamAttempt,
    StreamResponse,
)
from fakeprovider.wire import encode_stream, error_body

from .codes import (
    AUTH,
    CONTEXT_WINDOW_EXCEEDED,
    EMPTY_RESPONSE,
    INVALID_REQUEST,
    MALFORMED_RESPONSE,
    MALFORMED_TOOL_CALL,
    QUOTA,
    RATE_LIMIT,
    SERVER,
    STREAM_CLOSED,
    TIMEOUT,
    TRANSPORT,
)
from .events import Block, ReasoningBlock, RetryPolicy, TextBlock, ToolCallBlock, Usage

SUCCESS_REASONS = ("stop", "tool-calls", "max-tokens")
_FINISH_REASONS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


@dataclass(frozen=True)
class ExpectedAttempt:
    """What a conforming adapter reports for one attempt."""

    number: int
    reason: str  # finish reason: stop, tool-calls, max-tokens, error
    code: str | None = None  # failure code when reason is error
    blocks: tuple[Block, ...] = ()  # assembled blocks; on failure, the ones opened so far
    usage: Usage | None = None  # the usage event due before the finish, if any
    # The last usage the wire sent, even in an attempt that failed before [DONE]: tokens
    # billed, which a discarded attempt should still report before its failure (R9).
    billed_usage: Usage | None = None
    retry_after_ms: float | None = None
    status: int | None = None  # HTTP status of an error response
    features: frozenset[str] = frozenset()

    @property
    def success(self) -> bool:
        return self.reason in SUCCESS_REASONS

    def summary(self) -> dict[str, Any]:
        """A JSON-ready view, as reports show it."""
        out: dict[str, Any] = {"attempt": self.number, "finish": self.reason}
        if self.code:
            out["code"] = self.code
        if self.blocks:
            out["blocks"] = [block.model_dump() for block in self.blocks]
        if self.usage:
            out["usage"] = self.usage.model_dump(exclude_none=True, exclude={"case", "type"})
        elif self.billed_usage:  # a failure before [DONE] after the wire's usage (R9)
            out["billed_usage"] = self.billed_usage.model_dump(
                exclude_none=True, exclude={"case", "type"}
            )
        if self.retry_after_ms is not None:
            out["retry_after_ms"] = self.retry_after_ms
        out["features"] = sorted(self.features)
        return out


@dataclass(frozen=True)
class ExpectedOutcome:
    """Every attempt the adapter should make under the policy; the last one is visible."""

    attempts: tuple[ExpectedAttempt, ...]

    @property
    def final(self) -> ExpectedAttempt:
        return self.attempts[-1]

    @property
    def features(self) -> frozenset[str]:
        return frozenset().union(*(attempt.features for attempt in self.attempts))

    def summary(self) -> dict[str, Any]:
        return {"attempts": [attempt.summary() for attempt in self.attempts]}


def expected_outcome(
    scenario: Scenario, policy: RetryPolicy | None, *, now: float | None = None
) -> ExpectedOutcome:
    """The attempts a conforming adapter makes against ``scenario`` with ``policy``.

    ``policy`` None means retries are off (an adapter without the retry capability).
    """
    attempts: list[ExpectedAttempt] = []
    clock = time.time() if now is None else now
    while True:
        attempt = expected_attempt(scenario, len(attempts) + 1, now=clock)
        attempts.append(attempt)
        if not _retried(attempt, policy, retries_done=len(attempts) - 1):
            return ExpectedOutcome(tuple(attempts))


RetryDecision = Literal["success", "not-retryable", "budget-spent", "retry-after-over-cap", "retry"]


def _retried(attempt: ExpectedAttempt, policy: RetryPolicy | None, retries_done: int) -> bool:
    return policy is not None and retry_decision(attempt, policy, retries_done) == "retry"


def retry_decision(
    attempt: ExpectedAttempt, policy: RetryPolicy, retries_done: int
) -> RetryDecision:
    """Whether a conforming retry layer retries after ``attempt`` (R1 to R3, R6), and if not,
    why.

    ``retries_done`` counts the retries made before it (0 after the first attempt).
    """
    if attempt.success:
        return "success"
    if attempt.code not in policy.retryable_codes:
        return "not-retryable"
    if retries_done >= policy.max_retries:
        return "budget-spent"
    if attempt.retry_after_ms is not None and attempt.retry_after_ms > policy.max_delay_ms:
        return "retry-after-over-cap"
    return "retry"


@dataclass(frozen=True)
class WaitBounds:
    """The wait the spec asks for before a retry, in ms (R5, R6); no tolerance added."""

    lower_ms: float
    upper_ms: float
    source: Literal["backoff", "retry-after"]


def wait_bounds(policy: RetryPolicy, failed: ExpectedAttempt, retry: int) -> WaitBounds:
    """The wait before retry ``retry`` (1-based) after ``failed``.

    A usable Retry-After replaces the backoff and is waited exactly; otherwise the backoff
    ``min(initial·2^(retry-1), max)`` is scaled by a factor in ``[1-jitter, 1+jitter]``.
    """
    if failed.retry_after_ms is not None:
        return WaitBounds(failed.retry_after_ms, failed.retry_after_ms, "retry-after")
    # Past 2**1023 the float overflows; the cap has long taken over by then.
    nominal = min(policy.initial_delay_ms * 2.0 ** min(retry - 1, 1023), policy.max_delay_ms)
    jitter = policy.jitter_ratio
    return WaitBounds(nominal * (1 - jitter), nominal * (1 + jitter), "backoff")


def expected_attempt(scenario: Scenario, number: int, *, now: float) -> ExpectedAttempt:
    attempt = scenario.attempt(number)
    if isinstance(attempt, FaultAttempt):
        code = TIMEOUT if attempt.fault == "stall" else TRANSPORT
        return ExpectedAttempt(
            number, "error", code, features=frozenset({f"fault-{attempt.fault}"})
        )
    if isinstance(attempt, ErrorAttempt):
        return _http_error(number, attempt.error, now)
    return _stream(number, attempt, now)


# --- HTTP errors (H1, H2) ------------------------------------------------------------------

_QUOTA_WORDING = re.compile(
    r"insufficient[ _-](quota|balance|credits?)"
    r"|(quota|usage limit)[ _-](exceeded|exhausted|reached)"
    r"|exceed(ed|s)? (your |the )?(current )?quota"
    r"|(balance|credits?) (exhausted|depleted)"
    r"|out of (credits?|budget)",
    re.IGNORECASE,
)
_CONTEXT_WORDING = re.compile(
    r"context[ _-]length[ _-]exceeded|maximum context length|context window"
    r"|too large for (the )?model('s)? context",
    re.IGNORECASE,
)


def classify_status(status: int, detail: str) -> str:
    """The canonical code of a non-2xx response; the first matching rule wins (H1)."""
    rules: tuple[tuple[bool, str], ...] = (
        (status in (401, 403), AUTH),
        (status == 413, INVALID_REQUEST),
        (bool(_QUOTA_WORDING.search(detail)), QUOTA),
        (status == 429, RATE_LIMIT),
        (status == 400 and bool(_CONTEXT_WORDING.search(detail)), CONTEXT_WINDOW_EXCEEDED),
        (status == 400, INVALID_REQUEST),
        (status >= 500, SERVER),
    )
    return next((code for matches, code in rules if matches), f"HTTP_{status}")


def error_detail(body: bytes) -> str:
    """The error's code, type and message joined, as the classification reads them."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode("utf-8", errors="replace")
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return body.decode("utf-8", errors="replace")
    return " ".join(str(error[key]) for key in ("code", "type", "message") if error.get(key))


def retry_after_ms(headers: dict[str, str], now: float) -> float | None:
    """Retry-After as milliseconds: seconds or an HTTP date; zero, past or junk is None."""
    value = _header(headers, "retry-after").strip()
    if not value:
        return None
    if value.isdigit():
        delay = int(value) * 1000.0 if len(value) < 16 else float("inf")
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        delay = (when.timestamp() - now) * 1000.0
    return delay if 0 < delay < float("inf") else None


def _header(headers: dict[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _http_error(number: int, response: ErrorResponse, now: float) -> ExpectedAttempt:
    failure = _status_failure(number, response.status, response.headers, error_body(response), now)
    if response.retry_after_date_in_s is None:
        return failure
    # A date the provider renders at send time: the wait it asks for, whenever that is.
    return dataclasses.replace(
        failure,
        retry_after_ms=response.retry_after_date_in_s * 1000.0,
        features=failure.features | {"retry-after", "retry-after-date"},
    )


def _status_failure(
    number: int, status: int, headers: dict[str, str], body: bytes, now: float
) -> ExpectedAttempt:
    code = classify_status(status, error_detail(body))
    after = retry_after_ms(headers, now)
    features = {"http-error"}
    if after is not None:
        features.add("retry-after")
        if not _header(headers, "retry-after").strip().isdigit():
            features.add("retry-after-date")
    return ExpectedAttempt(
        number, "error", code, retry_after_ms=after, status=status, features=frozenset(features)
    )


# --- streams --------------------------------------------------------------------------


def _stream(number: int, attempt: StreamAttempt, now: float) -> ExpectedAttempt:
    response = attempt.stream
    plan = encode_stream(response)
    if not 200 <= response.status < 300:
        return _status_failure(number, response.status, response.headers, plan.body, now)
    payloads = sse_payloads(plan.body)
    reading = _Reading(features=set(_framing_features(response)))
    for payload in payloads:
        if reading.failure is not None:
            break
        if payload == "[DONE]":
            reading.done = True
            break
        reading.read_payload(payload)
    if reading.failure is None and not reading.done:
        ending = plan.ending
        if ending == "disconnect" and response.framing.transfer == "close":
            ending = "close"  # closing the connection is how such a body ends
        reading.fail(*_UNFINISHED[ending])
    return reading.result(number)


# How a body that never reached [DONE] ends: the failure code and the wire feature.
_UNFINISHED = {
    "close": (STREAM_CLOSED, "no-done"),
    "reset": (TRANSPORT, "reset"),
    "stall": (TIMEOUT, "stall"),
    "disconnect": (TRANSPORT, "disconnect"),
}


def sse_payloads(body: bytes) -> list[str]:
    """Data payloads of the complete events in a whole body (WHATWG event stream).

    An event still unterminated at the end of the body is not dispatched.
    """
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # the text after the last line break is an unterminated line
    payloads: list[str] = []
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                payloads.append("\n".join(data))
            data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value.removeprefix(" "))
    return payloads


def _framing_features(response: StreamResponse) -> set[str]:
    framing = response.framing
    features = set()
    if framing.line_ending != "lf":
        features.add(f"framing-{framing.line_ending}")
    if framing.split.mode != "event":
        features.add(f"split-{framing.split.mode}")
    if framing.bom:
        features.add("framing-bom")
    if not framing.data_space:
        features.add("framing-data-no-space")
    if framing.multiline_data:
        features.add("framing-multiline-data")
    done_seen = False
    for step in response.steps:
        if done_seen and not isinstance(step, (PauseStep, *TERMINAL_STEPS)):
            features.add("after-done")
        if isinstance(step, DoneStep):
            done_seen = True
            if not step.event_end:
                features.add("done-unterminated")
        elif isinstance(step, CommentStep):
            features.add("framing-comment")
        elif isinstance(step, FieldStep):
            features.add("framing-field")
        elif isinstance(step, LiteralStep):
            features.add("framing-literal")
        elif isinstance(step, ChunkStep) and not isinstance(step.chunk.get("choices"), list):
            features.add("no-choices")
    return features


@dataclass
class _ToolCall:
    block: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    seen: int = 0  # entries received for this call


class _Malformed(Exception):
    """A payload whose JSON parses but whose shape is not a chunk."""


@dataclass
class _Reading:
    """State while reading one attempt's payloads, in order."""

    features: set[str]
    blocks: list[Block | _ToolCall] = field(default_factory=list)
    text_block: int | None = None
    reasoning_block: int | None = None
    calls: dict[str, _ToolCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None
    done: bool = False
    failure: str | None = None

    def fail(self, code: str, feature: str) -> None:
        self.failure = code
        self.features.add(feature)

    def read_payload(self, payload: str) -> None:
        if payload.startswith(":"):
            # A keep-alive comment a gateway re-wrapped as data (anchors I2): not content.
            self.features.add("comment-as-data")
            return
        try:
            chunk = json.loads(payload, parse_constant=_not_json)
        except ValueError:
            self.fail(MALFORMED_RESPONSE, "non-json")
            return
        try:
            self._read_chunk(chunk)
        except _Malformed as error:
            self.fail(MALFORMED_RESPONSE, f"malformed-{error}")

    def _read_chunk(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise _Malformed("chunk")
        choices = chunk.get("choices")
        if chunk.get("error") is not None and not choices:
            self.fail(_error_object_code(chunk["error"]), "error-object")
            return
        if choices is not None and not isinstance(choices, list):
            raise _Malformed("choices")
        for choice in choices or ():
            self._read_choice(choice)
        usage = chunk.get("usage")
        if usage is not None:
            if self.usage is not None:
                self.features.add("usage-repeated")
            self.usage = map_usage(usage)

    def _read_choice(self, choice: Any) -> None:
        if not isinstance(choice, dict):
            raise _Malformed("choice")
        delta = choice.get("delta")
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            raise _Malformed("delta")
        reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning_block = self._append_text(self.reasoning_block, reasoning, "reasoning")
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text_block = self._append_text(self.text_block, content, "text")
        tool_calls = delta.get("tool_calls")
        if tool_calls is not None:
            if not isinstance(tool_calls, list):
                raise _Malformed("tool_calls")
            for position, entry in enumerate(tool_calls):
                self._read_tool_call(position, entry)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:  # "" on every chunk is a known quirk (F4)
            self.finish_reason = reason

    def _append_text(self, index: int | None, text: str, kind: str) -> int:
        if index is None:
            block: Block = TextBlock(text="") if kind == "text" else ReasoningBlock(text="")
            self.blocks.append(block)
            index = len(self.blocks) - 1
        current = self.blocks[index]
        assert isinstance(current, TextBlock | ReasoningBlock)
        self.blocks[index] = current.model_copy(update={"text": current.text + text})
        return index

    def _read_tool_call(self, position: int, entry: Any) -> None:
        if not isinstance(entry, dict):
            raise _Malformed("tool_call")
        function = entry.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise _Malformed("function")
        if entry.get("index") is None:
            self.features.add("tool-no-index")
        wire_index = entry.get("index")
        key = json.dumps(position if wire_index is None else wire_index, sort_keys=True)
        call = self.calls.get(key)
        if call is None:
            call = self.calls[key] = _ToolCall(block=len(self.blocks))
            self.blocks.append(call)
            if len(self.calls) > 1:
                self.features.add("tool-parallel")
        call.id = self._identity(call, call.id, "id", entry)
        call.name = self._identity(call, call.name, "name", function)
        call.seen += 1
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments += arguments
        elif arguments is not None:
            self.features.add("tool-arguments-not-string")

    def _identity(self, call: _ToolCall, current: str | None, key: str, holder: Any) -> str | None:
        """T1/T2/T4: only a non-empty string establishes identity, and only once."""
        if key not in holder:
            return current
        value = holder[key]
        continuation = call.seen > 0
        if isinstance(value, str) and value:
            if current is None:
                if continuation:
                    self.features.add(f"tool-late-{key}")
                return value
            self.features.add(
                f"tool-{key}-repeated" if value == current else f"tool-{key}-conflict"
            )
            return current
        if continuation or current is not None:
            kind = "null" if value is None else ("empty" if value == "" else "nonstring")
            self.features.add(f"tool-{key}-{kind}")
        return current

    def result(self, number: int) -> ExpectedAttempt:
        blocks = tuple(self._assembled(block) for block in self.blocks)
        if self.failure is not None:
            return ExpectedAttempt(
                number,
                "error",
                self.failure,
                blocks,
                billed_usage=self.usage,
                features=frozenset(self.features),
            )
        unidentified = [c for c in self.calls.values() if not c.id or not c.name]
        if unidentified:
            self.features.add("tool-unidentified")
            return self._refusal(number, MALFORMED_TOOL_CALL, blocks)
        reason = self.finish_reason
        mapped = _FINISH_REASONS.get(reason, "error") if reason is not None else "stop"
        self._content_features(mapped)
        if mapped == "stop" and not blocks:
            return self._refusal(number, EMPTY_RESPONSE, blocks)
        code = reason.upper() if mapped == "error" and reason is not None else None
        if code:
            self.features.add("finish-unknown")
        return ExpectedAttempt(
            number,
            mapped,
            code,
            blocks,
            self.usage,
            billed_usage=self.usage,
            features=frozenset(self.features),
        )

    def _refusal(self, number: int, code: str, blocks: tuple[Block, ...]) -> ExpectedAttempt:
        # T5 and E1: the usage the wire sent is still reported, before the failure.
        return ExpectedAttempt(
            number,
            "error",
            code,
            blocks,
            self.usage,
            billed_usage=self.usage,
            features=frozenset(self.features),
        )

    def _content_features(self, reason: str) -> None:
        kinds = {type(block).__name__ for block in self.blocks}
        texts = [b.text for b in self.blocks if isinstance(b, TextBlock)]
        if not self.blocks:
            self.features.add(f"empty-{reason}")
        elif kinds == {"ReasoningBlock"}:
            self.features.add("reasoning-only")
        if texts and not texts[0].strip():
            self.features.add("whitespace-only")
        if reason == "stop" and "_ToolCall" in kinds:
            self.features.add("stop-with-tool-call")
        if self.finish_reason is None:
            self.features.add("finish-absent")

    @staticmethod
    def _assembled(block: Block | _ToolCall) -> Block:
        if isinstance(block, _ToolCall):
            return ToolCallBlock(
                id=block.id or "", name=block.name or "", arguments=block.arguments
            )
        return block


def map_usage(usage: Any) -> Usage:
    """C4: disjoint usage — input excludes the cached prompt tokens.

    Counts that are not integers leave no honest reading: the chunk is malformed.
    """
    if not isinstance(usage, dict):
        raise _Malformed("usage")
    prompt_details = _object(usage.get("prompt_tokens_details"))
    completion_details = _object(usage.get("completion_tokens_details"))
    cached = _count(prompt_details, "cached_tokens", required=False)
    if cached is None:
        cached = _count(usage, "prompt_cache_hit_tokens", required=False)
    cached = cached or 0
    return Usage(
        input_tokens=_required(usage, "prompt_tokens") - cached,
        output_tokens=_required(usage, "completion_tokens"),
        cache_read_tokens=cached,
        reasoning_tokens=_count(completion_details, "reasoning_tokens", required=False),
    )


def _object(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Malformed("usage-details")
    return value


def _required(container: dict[str, Any], key: str) -> int:
    count = _count(container, key, required=True)
    assert count is not None
    return count


def _count(container: dict[str, Any], key: str, *, required: bool) -> int | None:
    value = container.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Malformed("usage-count")
    return value


def _error_object_code(error: Any) -> str:
    """A provider error sent as a payload: its status, when it names one, decides the code."""
    if not isinstance(error, dict):
        return SERVER
    for key in ("status", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return classify_status(value, str(error.get("message") or ""))
    return SERVER


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
