"""Reading a whole chat-completions body the way INVARIANTS.md does: chunks, tool calls, usage."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.scenario import (
    TERMINAL_STEPS,
    ChunkStep,
    DoneStep,
    PauseStep,
    StreamResponse,
)

from ...codes import MALFORMED_RESPONSE, SERVER, ConformanceError
from ...events import Block, ReasoningBlock, TextBlock, ToolCallBlock, Usage
from ...verdicts import AltReading
from ..http_errors import classify_status, error_object_detail
from ..outcome import ExpectedAttempt
from .canonical import Ending, ended_attempt, failed_attempt
from .framing import framing_features
from .sse import SseEvent, payload_json

_FINISH_REASONS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


def chat_features(response: StreamResponse) -> set[str]:
    """The wire features of a chat stream: its framing, and the chunks and [DONE]s it holds
    (``after-done`` only while the reading has not reached its [DONE], see
    :meth:`_Reading.read`)."""
    features = framing_features(response)
    done_seen = False
    for step in response.steps:
        if done_seen and not isinstance(step, (PauseStep, *TERMINAL_STEPS)):
            features.add("after-done")
        if isinstance(step, DoneStep):
            done_seen = True
            if not step.event_end:
                features.add("done-unterminated")
        elif isinstance(step, ChunkStep) and not isinstance(step.chunk.get("choices"), list):
            features.add("no-choices")
    return features


def chat_reading(response: StreamResponse, alt: AltReading | None) -> _Reading:
    """A fresh reading of a chat stream, under the spec's reading or ``alt``."""
    features = chat_features(response)
    return _Reading(
        features=features - {"after-done"}, alt=alt, after_done="after-done" in features
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
    # The body sends something after its [DONE]: a feature of the wire only once the
    # reading reaches that [DONE] (what follows one it never reaches is not S4's to judge).
    after_done: bool = False
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

    # How the body ended when it ended before [DONE] closed it (S5).
    closed_feature = "no-done"

    def fail(self, code: str, feature: str) -> None:
        self.failure = code
        self.features.add(feature)

    def read(self, event: SseEvent) -> None:
        """One event, by its data alone: chat-completions names no event."""
        if self.is_terminal(event):
            self.done = True
            if self.after_done:
                self.features.add("after-done")
            return
        self.read_payload(event.data)

    @staticmethod
    def is_terminal(event: SseEvent) -> bool:
        return event.data == "[DONE]"

    @property
    def finish_arrived(self) -> bool:
        return self.finish_reason is not None

    def read_payload(self, payload: str) -> None:
        if payload == "" and self.alt == "empty-data-skipped":
            return
        if payload.startswith(":"):
            # A keep-alive comment a gateway re-wrapped as data (anchors I2): not content.
            self.features.add("comment-as-data")
            return
        try:
            chunk = payload_json(payload)
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
            return failed_attempt(number, self.failure, blocks, self.usage, self.features)
        reason = "content_filter" if self.refused else self.finish_reason
        mapped = _FINISH_REASONS.get(reason, "error") if reason is not None else "stop"
        code = reason.upper() if mapped == "error" and reason is not None else None
        ending = Ending(
            blocks,
            mapped,
            code,
            self.usage,
            finish_absent=self.finish_reason is None,
        )
        return ended_attempt(number, ending, self.features)

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
