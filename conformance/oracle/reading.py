"""Reading a whole SSE body the way INVARIANTS.md does: payloads, chunks, tool calls, usage."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.scenario import (
    TERMINAL_STEPS,
    ChunkStep,
    CommentStep,
    DoneStep,
    FieldStep,
    LiteralStep,
    PauseStep,
    ResetStep,
    StreamResponse,
)

from ..codes import (
    EMPTY_RESPONSE,
    MALFORMED_RESPONSE,
    MALFORMED_TOOL_CALL,
    MAX_TOKENS,
    SERVER,
    ConformanceError,
)
from ..events import Block, ReasoningBlock, TextBlock, ToolCallBlock, Usage
from ..verdicts import AltReading
from .http_errors import classify_status, error_object_detail
from .outcome import ExpectedAttempt

_FINISH_REASONS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


def sse_payloads(body: bytes, *, flush: bool = False) -> list[str]:
    """Data payloads of the complete events in a whole body (WHATWG event stream).

    An event still unterminated at the end of the body is not dispatched; with ``flush`` it
    is, as parsers that flush at the end of the body do.
    """
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    tail = lines.pop()  # the text after the last line break is an unterminated line
    if flush:
        lines += [tail, ""]
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
    if _reset_looks_like_close(response):
        features.add("reset-as-close")
    return features


def _reset_looks_like_close(response: StreamResponse) -> bool:
    """A reset right behind the last bytes of a close-delimited body: a client's stack may
    hand over the bytes and report the end of the connection as a clean close (libuv does),
    so nothing on the wire lets it tell TRANSPORT from STREAM_CLOSED."""
    steps = response.steps
    return (
        response.framing.transfer == "close"
        and bool(steps)
        and isinstance(steps[-1], ResetStep)
        and not (len(steps) > 1 and isinstance(steps[-2], PauseStep))
    )


# The readings that keep every entry at one wire index in one call (quirk C2).
_ONE_CALL_PER_INDEX = ("index-only", "index-only-last-wins")


@dataclass
class _ToolCall:
    block: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    seen: int = 0  # entries received for this call


class _MalformedError(ConformanceError):
    """A payload whose JSON parses but whose shape is not a chunk."""


@dataclass
class _Reading:
    """State while reading one attempt's payloads, in order: the spec's reading, or
    ``alt``, another an ambiguous quirk leaves open (:data:`..verdicts.ALT_READINGS`)."""

    features: set[str]
    alt: AltReading | None = None
    blocks: list[Block | _ToolCall] = field(default_factory=list)
    text_block: int | None = None
    reasoning_block: int | None = None
    calls: dict[str, _ToolCall] = field(default_factory=dict)
    last_call: str | None = None  # the key of the call an entry last went to
    refused: bool = False  # a refusal was streamed (read so only by "refusal-as-filter")
    finish_reason: str | None = None
    usage: Usage | None = None
    done: bool = False
    failure: str | None = None

    def fail(self, code: str, feature: str) -> None:
        self.failure = code
        self.features.add(feature)

    def read_payload(self, payload: str) -> None:
        if payload == "" and self.alt == "empty-data-skipped":
            return
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
        except _MalformedError as error:
            self.fail(MALFORMED_RESPONSE, f"malformed-{error}")

    def _read_chunk(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise _MalformedError("chunk")
        choices = chunk.get("choices")
        if chunk.get("error") is not None and not choices:
            self.fail(_error_object_code(chunk["error"]), "error-object")
            return
        if choices is not None and not isinstance(choices, list):
            raise _MalformedError("choices")
        for choice in choices or ():
            self._read_choice(choice)
        usage = chunk.get("usage")
        if usage is not None:
            if self.usage is not None:
                self.features.add("usage-repeated")
            self.usage = map_usage(usage)

    def _read_choice(self, choice: Any) -> None:
        if not isinstance(choice, dict):
            raise _MalformedError("choice")
        delta = choice.get("delta")
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            raise _MalformedError("delta")
        reasoning = delta.get("reasoning_content")
        if self.alt == "reasoning-field" and reasoning is None:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning_block = self._append_text(self.reasoning_block, reasoning, "reasoning")
        content = delta.get("content")
        refusal = delta.get("refusal")
        if self.alt == "refusal-as-text" and not content:
            content = refusal
        if self.alt == "refusal-as-filter" and isinstance(refusal, str) and refusal:
            self.refused = True
        if isinstance(content, str) and content:
            self.text_block = self._append_text(self.text_block, content, "text")
        tool_calls = delta.get("tool_calls")
        if tool_calls is not None:
            if not isinstance(tool_calls, list):
                raise _MalformedError("tool_calls")
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
            raise _MalformedError("tool_call")
        function = entry.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise _MalformedError("function")
        if entry.get("index") is None:
            self.features.add("tool-no-index")
        wire_index = entry.get("index")
        key = self._call_key(position, entry)
        call = self.calls.get(key)
        if call is not None and self._splits(wire_index) and _another_call(call, entry, function):
            self.features.add("tool-index-shared")
            call = None
        if call is None:
            call = self.calls[key] = _ToolCall(block=len(self.blocks))
            self.blocks.append(call)
            if len(self._tool_calls()) > 1:
                self.features.add("tool-parallel")
        self.last_call = key
        call.id = self._identity(call, call.id, "id", entry)
        call.name = self._identity(call, call.name, "name", function)
        call.seen += 1
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            flush = self.alt == "flush-replaces" and arguments != "" and arguments == call.arguments
            call.arguments += "" if flush else arguments
        elif arguments is not None:
            self.features.add("tool-arguments-not-string")
            if self.alt == "arguments-object-as-json":
                call.arguments += json.dumps(arguments, ensure_ascii=False)

    def _call_key(self, position: int, entry: dict[str, Any]) -> str:
        """Which call an entry belongs to: the one at its wire index (its place in the
        list without one); read by id, the one with its id, the last one for an entry
        without id."""
        if self.alt == "by-id":
            new_id = entry.get("id")
            if not isinstance(new_id, str) or new_id == "":
                return self.last_call or f"position:{position}"
            known = next((key for key, call in self.calls.items() if call.id == new_id), None)
            last = self.calls.get(self.last_call or "")
            if known is None and last is not None and last.id is None:
                return self.last_call or ""  # an id that arrives late names the last call
            return known or "id:" + new_id
        wire_index = entry.get("index")
        return json.dumps(position if wire_index is None else wire_index, sort_keys=True)

    def _splits(self, wire_index: Any) -> bool:
        """Whether another id and name at a used key open another call (:func:`_another_call`):
        not by id (the key is the id), nor at one wire index read as one call."""
        if self.alt == "by-id":
            return False
        return not (self.alt in _ONE_CALL_PER_INDEX and wire_index is not None)

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
            last_wins = self.alt == "index-only-last-wins" or (
                key == "id" and self.alt == "last-id-wins"
            )
            return value if last_wins else current
        if continuation or current is not None:
            kind = "null" if value is None else ("empty" if value == "" else "nonstring")
            self.features.add(f"tool-{key}-{kind}")
        return current

    def _tool_calls(self) -> list[_ToolCall]:
        return [block for block in self.blocks if isinstance(block, _ToolCall)]

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
        unidentified = [c for c in self._tool_calls() if not c.id or not c.name]
        reason = "content_filter" if self.refused else self.finish_reason
        mapped = _FINISH_REASONS.get(reason, "error") if reason is not None else "stop"
        code = reason.upper() if mapped == "error" and reason is not None else None
        if unidentified:
            self.features.add("tool-unidentified")
            refused = self._ended(number, "error", MALFORMED_TOOL_CALL)
            # T5's refusal is the harness's duty: the calls handed back as the wire sent
            # them, an id it never sent made up (unique), lose nothing.
            as_sent = self._ended(number, mapped, code)
            return dataclasses.replace(refused, interop_readings=(as_sent,))
        self._content_features(mapped)
        if mapped == "stop" and not blocks:
            refused = self._ended(number, "error", EMPTY_RESPONSE)
            # E1's refusal is the harness's duty: the empty stop as sent loses nothing.
            return dataclasses.replace(refused, interop_readings=(self._ended(number, "stop"),))
        if code:
            self.features.add("finish-unknown")
        ended = self._ended(number, mapped, code)
        return dataclasses.replace(ended, interop_readings=self._lossless_endings(number, mapped))

    def _lossless_endings(self, number: int, mapped: str) -> tuple[ExpectedAttempt, ...]:
        """How a successful attempt may also end under interop, losing nothing (E4, v1.2)."""
        if mapped == "tool-calls" and not self._tool_calls():
            # No call streamed: a library that exposes no finish reason reports stop, and
            # its caller does what it does for tool-calls with no call.
            return (self._ended(number, "stop"),)
        if mapped == "max-tokens" and not self.blocks:
            # Cut before any output: a library's typed refusal says exactly that.
            return (self._ended(number, "error", MAX_TOKENS),)
        return ()

    def _ended(self, number: int, reason: str, code: str | None = None) -> ExpectedAttempt:
        """The attempt as read, ending so; a refusal (T5, E1) still reports the wire's usage
        before its failure."""
        return ExpectedAttempt(
            number,
            reason,
            code,
            tuple(self._assembled(block) for block in self.blocks),
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


def _another_call(call: _ToolCall, entry: dict[str, Any], function: dict[str, Any]) -> bool:
    """T7's two calls sharing an index, read as two: once the call at an index has its id and
    name, an entry there that brings another non-empty id together with a non-empty name
    opens another call (Ollama puts every parallel call at index 0, Gemini sends each
    without index). A new id without a name (LM Studio's id on every delta) stays a
    conflicting repeat of the call, and one before the call has its name a late identity.
    """
    new_id, name = entry.get("id"), function.get("name")
    return (
        call.id is not None
        and call.name is not None
        and isinstance(new_id, str)
        and new_id not in ("", call.id)
        and isinstance(name, str)
        and name != ""
    )


def map_usage(usage: Any) -> Usage:
    """C4: disjoint usage — input excludes the cached prompt tokens.

    Counts that are not integers leave no honest reading: the chunk is malformed.
    """
    if not isinstance(usage, dict):
        raise _MalformedError("usage")
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
        raise _MalformedError("usage-details")
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
        raise _MalformedError("usage-count")
    return value


def _error_object_code(error: Any) -> str:
    """A provider error sent as a payload: its status, when it names one, decides the code,
    with the wording read as in an error body."""
    if not isinstance(error, dict):
        return SERVER
    for key in ("status", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return classify_status(value, error_object_detail(error))
    return SERVER


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
