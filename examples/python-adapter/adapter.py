#!/usr/bin/env python3
"""Example streamconform subprocess adapter: Python 3.11, standard library only.

It speaks the JSON Lines protocol of docs/adapter-protocol.md (version 1.1) on stdin/stdout: a
`hello` line first, then, for each `run` line, it POSTs the case's request to the endpoint of the
case's dialect (`{base_url}/chat/completions`, or `{base_url}/v1/messages` for Anthropic
Messages), translates the event stream into protocol events, retries as the case's policy says,
and closes the case with `end`. It imports nothing from streamconform, so it can be copied
as the starting point of an adapter for your own client.

    conformance run --adapter-cmd "python examples/python-adapter/adapter.py"

Sections: protocol I/O, SSE decoder, translators (chat-completions, Anthropic Messages), HTTP
classification, one attempt, retry loop.
"""

import codecs
import functools
import http.client
import json
import math
import random
import re
import ssl
import sys
import time
from collections.abc import Callable
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

Event = dict[str, Any]
Emit = Callable[[Event], None]
DONE = "[DONE]"
EXCERPT = 120  # characters of a bad payload quoted in a failure message

# --- protocol I/O -------------------------------------------------------------------------

HELLO = {
    "type": "hello",
    "protocol": 1.1,
    "name": "example-python-adapter",
    "version": "1.1.0",
    "capabilities": dict.fromkeys(("deltas", "reasoning", "usage", "retry", "error_codes"), True),
    "dialects": ["chat-completions", "anthropic-messages"],
}


def write_line(message: Event) -> None:
    """One JSON object per line, flushed at once: the suite reads events as they happen."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(text: str) -> None:
    """Diagnostics go to stderr, which the suite captures into its report."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def main() -> int:
    write_line(HELLO)
    for line in iter(sys.stdin.readline, ""):  # cases arrive one at a time; EOF ends the run
        if not line.strip():
            continue
        case_id = None
        try:
            message = json.loads(line)
            case_id = message.get("case")
            if message.get("type") != "run":
                raise ValueError(f"unsupported message type {message.get('type')!r}")
        except Exception as error:  # not a run line: report it against its case, if it has one
            log(f"bad input line {line.strip()[:200]!r}: {error}")
            if isinstance(case_id, str):
                write_line({"case": case_id, "type": "thrown", "message": str(error)})
                write_line({"case": case_id, "type": "end"})
            continue

        def emit(event: Event, case_id: str = case_id) -> None:
            write_line({"case": case_id, **event})  # "case" leads every event line

        try:
            run_case(message, emit)
        except Exception as error:  # a bug in the adapter must not end the process
            log(f"[{case_id}] adapter error: {error!r}")
            emit({"type": "thrown", "message": f"{type(error).__name__}: {error}"})
        emit({"type": "end"})
    return 0


# --- SSE decoder (WHATWG "text/event-stream": bytes in, data payloads out) ------------------

LINE_END = re.compile(r"\r\n|\r|\n")


class SSEDecoder:
    """Independent of how the body is split into reads, including inside a UTF-8 character."""

    def __init__(self) -> None:
        # "utf-8-sig" drops one leading BOM even when it is split across reads; invalid bytes
        # become U+FFFD, as in a browser.
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.partial = ""  # an unterminated line carried over to the next read
        self.after_cr = False  # the last read ended with CR: an LF opening the next one is its pair
        self.data: list[str] = []  # data lines of the event being built
        self.event = ""  # its `event:` name (Anthropic names every event; chat none)

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """The (event name, data payload) of each event the chunk completes."""
        text = self.decoder.decode(chunk)
        if not text:
            return []
        if self.after_cr and text.startswith("\n"):
            text = text[1:]
        buffer = self.partial + text
        payloads, start = [], 0
        for match in LINE_END.finditer(buffer):
            payload = self.line(buffer[start : match.start()])
            if payload is not None:
                payloads.append(payload)
            start = match.end()
        self.after_cr = buffer.endswith("\r")
        self.partial = buffer[start:]
        return payloads

    def line(self, line: str) -> tuple[str, str] | None:
        if not line:  # blank line: dispatch, unless the event had no data line at all
            data, event = self.data, self.event or "message"
            self.data, self.event = [], ""
            return (event, "\n".join(data)) if data else None
        if line.startswith(":"):
            return None  # comment (keep-alive)
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self.data.append(value)
        elif field == "event":
            self.event = value  # id:, retry: and unknown fields change nothing
        return None


# --- translator (chat-completions chunks of one attempt -> protocol events) ----------------


class MalformedChunkError(ValueError):
    """Valid JSON that is not a chat-completions chunk."""


def json_number(text: str) -> int | float:
    # JSON has one number type; like JavaScript, treat 3.0 as the integer 3.
    value = float(text)
    return int(value) if value.is_integer() else value


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def as_list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedChunkError(f"{name} is not a list")
    return value


def as_object(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedChunkError(f"{name} is not an object")
    return value


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def identity(value: Any) -> str | None:
    """Only a non-empty string identifies a tool call; "", null and non-strings are inert."""
    return value if isinstance(value, str) and value else None


def another_call(block: Event, call_id: str | None, name: str | None) -> bool:
    """Once a call has its id and name, an entry at its key that brings another id and a
    name is the next call: Gemini sends each parallel call without index (each at place 0),
    Ollama every one at index 0. Merged, they would run one tool on invalid JSON."""
    return bool(block["id"] and block["name"] and call_id not in (None, block["id"]) and name)


def read_chunk(document: Any) -> tuple[list[Any], Event | None]:
    """Shape-check a whole chunk before applying any of it: ([choice parts], usage event)."""
    if not isinstance(document, dict):
        raise MalformedChunkError("the payload is not a JSON object")
    choices = []
    for choice in as_list(document.get("choices"), "choices"):
        if not isinstance(choice, dict):
            raise MalformedChunkError("a choice is not an object")
        delta = as_object(choice.get("delta"), "delta")
        calls = []
        for position, entry in enumerate(as_list(delta.get("tool_calls"), "tool_calls")):
            if not isinstance(entry, dict):
                raise MalformedChunkError("a tool_calls entry is not an object")
            # A call is keyed by its wire index as JSON text (0 and "0" differ); an entry
            # without one (Ollama, Gemini) takes its position in the array.
            index = entry.get("index")
            key = json.dumps(position if index is None else index, sort_keys=True)
            function = as_object(entry.get("function"), "function")
            arguments = function.get("arguments")
            arguments = arguments if isinstance(arguments, str) else ""  # raw, never parsed
            calls.append(
                (key, identity(entry.get("id")), identity(function.get("name")), arguments)
            )
        reasoning, content = delta.get("reasoning_content"), delta.get("content")
        reason = choice.get("finish_reason")
        choices.append(
            (
                reasoning if isinstance(reasoning, str) else "",
                content if isinstance(content, str) else "",
                calls,
                reason if isinstance(reason, str) and reason else None,  # "" = absent
            )
        )
    return choices, read_usage(document.get("usage"))


def read_usage(usage: Any) -> Event | None:
    """Disjoint usage: input_tokens excludes the cached prompt tokens."""
    if usage is None:
        return None
    usage = as_object(usage, "usage")
    prompt_details = as_object(usage.get("prompt_tokens_details"), "prompt_tokens_details")
    output_details = as_object(usage.get("completion_tokens_details"), "completion_tokens_details")
    cached = prompt_details.get("cached_tokens")
    cached = usage.get("prompt_cache_hit_tokens") if cached is None else cached
    reasoning = output_details.get("reasoning_tokens")
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not all(is_count(n) for n in (prompt, completion, cached, reasoning) if n is not None):
        raise MalformedChunkError("a usage count is not an integer")
    if prompt is None or completion is None:
        raise MalformedChunkError("usage lacks prompt_tokens or completion_tokens")
    cached = cached or 0  # always reported, 0 when the wire says nothing about the cache
    event: Event = {"type": "usage", "input_tokens": prompt - cached, "output_tokens": completion}
    event["cache_read_tokens"] = cached
    if reasoning is not None:
        event["reasoning_tokens"] = reasoning
    return event


def is_error_payload(document: Any) -> bool:
    """A provider error sent inside a 200 stream: an `error` and no choices to translate."""
    return (
        isinstance(document, dict)
        and document.get("error") is not None
        and not document.get("choices")
    )


def error_finish(code: str, message: str) -> Event:
    return {"type": "finish", "reason": "error", "code": code, "message": message}


class AttemptTranslator:
    """What the translators of both dialects share: one finish per attempt, and a failure
    reported after the usage the wire already sent."""

    END = "its end"  # what a complete stream ends with, named in a failure

    def __init__(self) -> None:
        self.usage: Event | None = None
        self.finish: Event | None = None

    def feed(self, payload: str, event: str = "message") -> list[Event]:
        """The protocol events one SSE event makes (each dialect reads its own)."""
        raise NotImplementedError

    def fail(self, code: str, message: str) -> list[Event]:
        """A failure finish, after any usage the wire already sent (billed tokens stay
        visible). Open blocks stay open: closing them would pass partial output off as
        complete."""
        if self.finish:
            return []
        self.finish = error_finish(code, message)
        return [*([self.usage] if self.usage else []), self.finish]


class Translator(AttemptTranslator):
    """Feed payloads in order. Deltas come out at once; block ends, usage and the finish wait
    for [DONE]. Exactly one finish is produced (`self.finish`); nothing is read after it."""

    END = DONE

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[Event] = []  # {"type", "parts", "id", "name"}; position = index
        self.text: int | None = None  # index of the text block, once opened
        self.reasoning: int | None = None
        self.tools: dict[str, int] = {}  # wire tool_calls[].index -> block index
        self.reason: str | None = None  # last string finish_reason

    def feed(self, payload: str, event: str = "message") -> list[Event]:
        # Chat-completions events are unnamed: the name changes nothing.
        if self.finish:
            return []
        if payload == DONE:
            return self.done()
        if payload.startswith(":"):
            return []  # a keep-alive comment a gateway re-wrapped as data
        try:
            document = json.loads(payload, parse_float=json_number, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return self.fail("MALFORMED_RESPONSE", f"malformed SSE payload: {payload[:EXCERPT]}")
        if is_error_payload(document):
            return self.fail(*classify_stream_error(document["error"]))
        try:
            choices, usage = read_chunk(document)
        except MalformedChunkError as problem:
            excerpt = payload[:EXCERPT]
            return self.fail("MALFORMED_RESPONSE", f"unexpected chunk shape ({problem}): {excerpt}")
        events: list[Event] = []
        for reasoning, content, calls, reason in choices:  # choices merge
            if reasoning:
                self.reasoning = self.open("reasoning", self.reasoning, events)
                self.blocks[self.reasoning]["parts"].append(reasoning)
                events.append(
                    {"type": "reasoning-delta", "index": self.reasoning, "text": reasoning}
                )
            if content:
                self.text = self.open("text", self.text, events)
                self.blocks[self.text]["parts"].append(content)
                events.append({"type": "text-delta", "index": self.text, "text": content})
            for key, call_id, name, arguments in calls:
                known = self.tools.get(key)
                if known is not None and another_call(self.blocks[known], call_id, name):
                    known = None
                index = self.tools[key] = self.open("tool-call", known, events)
                block = self.blocks[index]
                block["id"] = block["id"] or call_id  # set once, never concatenated
                block["name"] = block["name"] or name
                block["parts"].append(arguments)
                delta: Event = {"type": "tool-call-delta", "index": index}
                delta.update({k: block[k] for k in ("id", "name") if block[k]})  # known so far
                delta["arguments_delta"] = arguments
                events.append(delta)
            self.reason = reason or self.reason
        self.usage = usage or self.usage
        return events

    def open(self, kind: str, index: int | None, events: list[Event]) -> int:
        if index is None:
            index = len(self.blocks)
            self.blocks.append({"type": kind, "parts": [], "id": None, "name": None})
            events.append({"type": "block-start", "index": index, "block_type": kind})
        return index

    def done(self) -> list[Event]:
        usage = [self.usage] if self.usage else []
        for index, block in enumerate(self.blocks):
            missing = [k for k in ("id", "name") if block["type"] == "tool-call" and not block[k]]
            if missing:  # never close an unidentified call; report usage, then fail (no ends)
                text = f"tool call at index {index} has no {' or '.join(missing)} at [DONE]"
                return self.fail("MALFORMED_TOOL_CALL", text)
        ends = [
            {"type": "block-end", "index": i, "block": assemble(b)}
            for i, b in enumerate(self.blocks)
        ]
        reason = self.reason or "stop"
        if reason == "stop" and not self.blocks:
            self.finish = error_finish(
                "EMPTY_RESPONSE", "model returned a completed response with no content"
            )
        elif reason in ("stop", "tool_calls", "length"):
            mapped = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}[reason]
            self.finish = {"type": "finish", "reason": mapped}
        else:
            self.finish = error_finish(reason.upper(), f"model stopped: {reason}")
        return [*ends, *usage, self.finish]


def assemble(block: Event) -> Event:
    joined = "".join(block["parts"])
    if block["type"] in ("tool-call", "server-tool"):
        return {
            "type": block["type"],
            "id": block["id"],
            "name": block["name"],
            "arguments": joined,
        }
    assembled = {"type": block["type"], "text": joined}
    # Continuity tokens, verbatim: the provider needs them back in the next request.
    assembled.update({k: block[k] for k in ("signature", "redacted") if block.get(k) is not None})
    return assembled


# --- translator (Anthropic Messages events of one attempt -> protocol events) ---------------

# content_block.type -> the protocol's block type; another type is skipped, its index kept.
MESSAGES_BLOCKS = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "tool_use": "tool-call",
    "server_tool_use": "server-tool",
}
# delta.type -> (the block types it belongs to, the field holding its fragment)
MESSAGES_DELTAS = {
    "text_delta": (("text",), "text"),
    "thinking_delta": (("reasoning",), "thinking"),
    "signature_delta": (("reasoning",), "signature"),
    "input_json_delta": (("tool-call", "server-tool"), "partial_json"),
}
STOP_REASONS = {  # stop_reason -> finish reason; refusal and pause_turn are failures
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "model_context_window_exceeded": "max-tokens",
}
STOP_CODES = {"refusal": "REFUSAL", "pause_turn": "PAUSE_TURN"}
# the wire's counter -> the protocol's (Anthropic's input_tokens already excludes the cache)
MESSAGES_USAGE = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_creation_input_tokens": "cache_write_tokens",
}


class MessagesTranslator(AttemptTranslator):
    """Feed the data payloads of one Messages attempt in order (each names its event in its
    `type`). Blocks are keyed by the wire's index, never by position; the block ends, usage
    and finish wait for `message_stop`. Usage counters are assigned, never summed: the wire
    sends cumulative counts on `message_start` and again on `message_delta`."""

    END = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[Event] = []  # the blocks reported; position = protocol index
        self.wire: dict[str, Event | None] = {}  # wire index (JSON text) -> block; None: skipped
        self.started = False  # message_start was read
        self.counts: dict[str, int] = {}
        self.reason: str | None = None

    def feed(self, payload: str, event: str = "message") -> list[Event]:
        if self.finish or event == "ping":
            return []  # a ping may come anywhere, whatever its data
        try:
            document = json.loads(payload, parse_float=json_number, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return self.fail("MALFORMED_RESPONSE", f"malformed SSE payload: {payload[:EXCERPT]}")
        if not isinstance(document, dict):
            return self.fail("MALFORMED_RESPONSE", f"not an event object: {payload[:EXCERPT]}")
        try:
            return self.apply(document, event)
        except MalformedChunkError as problem:
            excerpt = payload[:EXCERPT]
            return self.fail("MALFORMED_RESPONSE", f"unexpected event ({problem}): {excerpt}")

    def apply(self, document: dict[str, Any], event: str) -> list[Event]:
        kind = document.get("type") or event  # the data names its event; else the event line
        if kind == "error":
            return self.fail(*classify_messages_error(document.get("error") or document))
        if not self.started and kind != "message_start":
            raise MalformedChunkError(f"{kind!r} before message_start")
        if kind == "message_start":
            self.started = True
            self.count(as_object(document.get("message"), "message").get("usage"))
        elif kind == "content_block_stop":
            block = self.wire.get(json.dumps(document.get("index")))
            if block is not None:
                block["stopped"] = True
        elif kind == "content_block_start":
            return self.start(document)
        elif kind == "content_block_delta":
            return self.delta(document)
        elif kind == "message_delta":
            reason = as_object(document.get("delta"), "delta").get("stop_reason")
            self.reason = reason if isinstance(reason, str) and reason else self.reason
            self.count(document.get("usage"))
        elif kind == "message_stop":
            return self.done()
        return []  # events this adapter does not know

    def start(self, document: dict[str, Any]) -> list[Event]:
        key = json.dumps(document.get("index"))
        if key in self.wire:
            raise MalformedChunkError(f"a second content_block_start for index {key}")
        wire = as_object(document.get("content_block"), "content_block")
        kind = MESSAGES_BLOCKS.get(str(wire.get("type")))
        if kind is None:
            self.wire[key] = None
            return []
        block: Event = {"type": kind, "parts": [], "id": identity(wire.get("id")), "index": None}
        self.wire[key] = block
        block["name"] = identity(wire.get("name"))
        if wire.get("type") == "redacted_thinking":
            block["redacted"] = wire.get("data") if isinstance(wire.get("data"), str) else ""
        if wire.get("type") == "thinking":
            block["parts"].append(wire.get("thinking") or "")
            block["signature"] = wire.get("signature") or None
        if kind in ("tool-call", "server-tool"):
            block["input"] = wire.get("input")  # the arguments, unless input_json_deltas follow
        # A text or thinking block is content once something arrives in it (an empty one is
        # none, and no block): it opens then.
        if kind in ("text", "reasoning") and not ("".join(block["parts"]) or "redacted" in block):
            return []
        return self.open(block)

    def open(self, block: Event) -> list[Event]:
        if block["index"] is not None:
            return []
        block["index"] = len(self.blocks)
        self.blocks.append(block)
        return [{"type": "block-start", "index": block["index"], "block_type": block["type"]}]

    def delta(self, document: dict[str, Any]) -> list[Event]:
        key = json.dumps(document.get("index"))
        if key not in self.wire:  # never attach a fragment to another block
            raise MalformedChunkError(f"a delta for index {key}, which never started")
        block = self.wire[key]
        delta = as_object(document.get("delta"), "delta")
        known = MESSAGES_DELTAS.get(str(delta.get("type")))
        if block is None or known is None:
            return []  # a skipped block's, or a delta type this adapter does not know
        if block.get("stopped"):
            raise MalformedChunkError(f"a delta for index {key} after its content_block_stop")
        belongs, field = known
        if block["type"] not in belongs:
            raise MalformedChunkError(f"a {delta.get('type')} inside a {block['type']} block")
        fragment = delta.get(field)
        fragment = fragment if isinstance(fragment, str) else ""
        if field == "signature":
            block["signature"] = (block.get("signature") or "") + fragment
            return []
        block["parts"].append(fragment)  # "" appends nothing: it never resets the input
        if field == "partial_json":
            return [call_delta(block["index"], block, fragment)]
        if not fragment:
            return []
        opened = self.open(block)
        return [
            *opened,
            {"type": f"{block['type']}-delta", "index": block["index"], "text": fragment},
        ]

    def count(self, usage: Any) -> None:
        for wire, value in as_object(usage, "usage").items():
            if wire in MESSAGES_USAGE and value is not None:
                if not is_count(value):
                    raise MalformedChunkError("a usage count is not an integer")
                self.counts[MESSAGES_USAGE[wire]] = value  # assigned, never summed
        if "input_tokens" in self.counts or "output_tokens" in self.counts:
            self.usage = {
                "type": "usage",
                "input_tokens": self.counts.get("input_tokens", 0),
                "output_tokens": self.counts.get("output_tokens", 0),
                "cache_read_tokens": self.counts.get("cache_read_tokens", 0),
            }
            if "cache_write_tokens" in self.counts:
                self.usage["cache_write_tokens"] = self.counts["cache_write_tokens"]

    def done(self) -> list[Event]:
        # A thinking block with nothing but a signature is content too: it opens at the end.
        signed = [e for b in self.wire.values() if b and b.get("signature") for e in self.open(b)]
        for index, block in enumerate(self.blocks):
            missing = [k for k in ("id", "name") if block["type"] == "tool-call" and not block[k]]
            if missing:  # never close an unidentified call
                text = f"tool call at index {index} has no {' or '.join(missing)}"
                return self.fail("MALFORMED_TOOL_CALL", text)
        calls = any(block["type"] == "tool-call" for block in self.blocks)
        reason = self.reason or ("tool_use" if calls else "end_turn")
        if reason in STOP_CODES:
            return self.fail(STOP_CODES[reason], f"model stopped: {reason}")
        if reason not in STOP_REASONS:
            return self.fail(reason.upper(), f"model stopped: {reason}")
        if STOP_REASONS[reason] == "stop" and not self.blocks:
            message = "model returned a completed response with no content"
            return self.fail("EMPTY_RESPONSE", message)
        # A call whose input came whole in its start (no input_json_delta) has it as its
        # arguments, sent as its one fragment so that its deltas still join to them.
        inputs = []
        for index, block in enumerate(self.blocks):
            complete = block.get("input")
            if complete is not None and not "".join(block["parts"]):
                block["parts"].append(json.dumps(complete, ensure_ascii=False))
                inputs.append(call_delta(index, block, block["parts"][-1]))
        # A block never stopped (max_tokens) is closed as it stands: the finish tells.
        ends = [
            {"type": "block-end", "index": i, "block": assemble(b)}
            for i, b in enumerate(self.blocks)
        ]
        self.finish = {"type": "finish", "reason": STOP_REASONS[reason]}
        return [*signed, *inputs, *ends, *([self.usage] if self.usage else []), self.finish]


def call_delta(index: int, block: Event, fragment: str) -> Event:
    """A tool-call-delta: the call's identity as known so far, and an arguments fragment."""
    event: Event = {"type": "tool-call-delta", "index": index}
    event.update({k: block[k] for k in ("id", "name") if block[k]})
    return {**event, "arguments_delta": fragment}


# Each dialect's endpoint (after the run line's base_url), headers and translator.
DIALECTS: dict[str, tuple[str, Callable[[str], dict[str, str]], type[AttemptTranslator]]] = {
    "chat-completions": (
        "/chat/completions",
        lambda key: {"Authorization": f"Bearer {key}"},
        Translator,
    ),
    "anthropic-messages": (
        "/v1/messages",
        lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
        MessagesTranslator,
    ),
}


# --- HTTP classification (status + wording -> code; Retry-After) ---------------------------

QUOTA = re.compile(
    r"insufficient[ _-](?:quota|balance|credits?)|(?:quota|usage limit)[ _-](?:exceeded|exhausted"
    r"|reached)|exceed(?:ed|s)?\s+(?:(?:your|the)\s+)?(?:current\s+)?quota"
    r"|(?:balance|credits?)\s+(?:exhausted|depleted)|out of (?:credits?|budget)"
    r"|spend[ _-]limit",
    re.IGNORECASE,
)
CONTEXT = re.compile(
    r"context[ _-]length[ _-]exceeded|maximum context length|context window"
    r"|too large for (?:the )?(?:model(?:'s)? )?context",
    re.IGNORECASE,
)


def code_for_status(status: int, detail: str) -> str:
    """The first matching rule wins."""
    if status in (401, 403):
        return "AUTH"
    if status == 413:
        return "INVALID_REQUEST"
    if QUOTA.search(detail):
        return "QUOTA"  # a 429 that waiting will not clear
    if status == 429:
        return "RATE_LIMIT"
    if status == 400:
        return "CONTEXT_WINDOW_EXCEEDED" if CONTEXT.search(detail) else "INVALID_REQUEST"
    return "SERVER" if status >= 500 else f"HTTP_{status}"


def describe_error(error: Any) -> tuple[str | None, str]:
    """(message, wording to classify) of an OpenAI-style error object or string."""
    if isinstance(error, str):
        return error or None, error
    if not isinstance(error, dict):
        return None, ""
    message = error.get("message")
    details = (
        as_object(error.get("details"), "details") if isinstance(error.get("details"), dict) else {}
    )
    parts = [error.get("code"), error.get("type"), message, details.get("error_code")]
    wording = " ".join(str(p) for p in parts if (isinstance(p, str) or is_count(p)) and p)
    return (message if isinstance(message, str) and message else None), wording


def classify_stream_error(error: Any) -> tuple[str, str]:
    """SERVER, unless the error object carries an HTTP status (`status` or a numeric `code`)."""
    message, wording = describe_error(error)
    fields: dict[str, Any] = error if isinstance(error, dict) else {}
    statuses = [fields.get(k) for k in ("status", "code")]
    status = next((s for s in statuses if isinstance(s, int) and 100 <= s <= 599), None)
    code = "SERVER" if status is None else code_for_status(status, wording)
    return code, message or "provider reported an error inside the stream"


# An Anthropic error object's type -> the HTTP status it stands for.
ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def classify_messages_error(error: Any) -> tuple[str, str]:
    """An Anthropic `error` event: classified as the HTTP error its type stands for."""
    code, message = classify_stream_error(error)
    kind = error.get("type") if isinstance(error, dict) else None
    status = ERROR_TYPE_STATUS.get(kind) if isinstance(kind, str) else None
    return (code if status is None else code_for_status(status, describe_error(error)[1])), message


def classify_http_error(status: int, body: bytes) -> tuple[str, str]:
    text = body.decode("utf-8", errors="replace")
    message, wording = None, text
    try:
        document = json.loads(text)
        if isinstance(document, dict) and document.get("error") is not None:
            message, wording = describe_error(document["error"])
    except (ValueError, RecursionError):
        pass  # not JSON: classify the raw text
    return code_for_status(status, wording), message or f"provider API error (HTTP {status})"


def parse_retry_after(value: str | None) -> float | None:
    """Delay-seconds or an HTTP date, in ms from now; None when zero, past or unparsable."""
    text = (value or "").strip()
    if re.fullmatch(r"[0-9]+", text):
        delay_ms = float(text) * 1000  # a huge digit string is inf, rejected below
    else:
        try:
            moment = parsedate_to_datetime(text)
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            delay_ms = (moment.timestamp() - time.time()) * 1000
        except (TypeError, ValueError, OverflowError):
            return None
    return delay_ms if math.isfinite(delay_ms) and delay_ms > 0 else None


# --- one attempt: exactly one HTTP request ------------------------------------------------


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every https attempt: loading the CA certificates costs more than
    a loopback case (each connection still opens on its own)."""
    return ssl.create_default_context()


def run_attempt(
    case: Event, body: bytes, deadline: float, emit: Emit
) -> tuple[Event, float | None]:
    """POST once and emit the attempt's events. Returns (its finish, provider Retry-After ms)."""
    endpoint, credentials, translate = DIALECTS[case.get("dialect") or "chat-completions"]
    url = case["base_url"].rstrip("/") + endpoint
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url}")
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    idle_s = float(case["idle_timeout_s"])
    translator, retry_after, stage = translate(), None, "request to"

    def read_timeout() -> float:  # the idle timeout, but never past the case's deadline
        return max(0.001, min(idle_s, deadline - time.monotonic()))

    def out(events: list[Event]) -> None:
        for event in events:
            emit(event)

    if parts.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=read_timeout(), context=tls_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=read_timeout())
    try:
        connection.connect()
        sock = connection.sock  # kept: http.client drops its own reference on Connection: close
        headers = {
            **credentials(case["api_key"]),
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "Connection": "close",  # a fresh connection per attempt, closed with it
        }
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()  # the socket timeout bounds the wait for headers
        stage = "stream from"
        if not 200 <= response.status < 300:
            code, message = classify_http_error(response.status, response.read())
            retry_after = parse_retry_after(response.getheader("Retry-After"))
            out(translator.fail(code, message))
        decoder = SSEDecoder()
        while not translator.finish:
            sock.settimeout(read_timeout())
            data = response.read1(65536)  # whatever arrived, up to 64 KiB; b"" at the end
            if not data:
                if response.length:  # Content-Length promised more: the body was cut
                    raise http.client.IncompleteRead(b"", response.length)
                out(translator.fail("STREAM_CLOSED", f"SSE stream ended without {translator.END}"))
            for event, payload in decoder.feed(data):
                out(translator.feed(payload, event))  # after its end the rest is ignored
    except TimeoutError:  # no byte for idle_timeout_s (or the case ran out of time)
        expired = time.monotonic() >= deadline - 0.001
        why = "case timeout_s reached" if expired else f"after {round(idle_s * 1000)}ms"
        out(translator.fail("TIMEOUT", f"stream idle timeout {why}"))
    except (OSError, http.client.HTTPException) as error:  # refused, reset, cut chunked body
        log(f"[{case['case']}] {stage} {url}: {error!r}")
        out(translator.fail("TRANSPORT", f"{stage} {url} failed"))
    finally:
        connection.close()  # also what stops reading after [DONE] or a failure
    assert translator.finish is not None
    return translator.finish, retry_after


# --- retry loop and case driver -------------------------------------------------------------


def retry_delay_ms(
    policy: Event, finish: Event, retry_after: float | None, attempt: int
) -> float | None:
    """The wait before retrying after attempt `attempt` (1-based) failed, or None: final."""
    if (
        finish["reason"] not in ("error", "aborted")
        or finish["code"] not in policy["retryable_codes"]
    ):
        return None
    if attempt > policy["max_retries"]:
        return None  # budget spent: the last failure is the outcome
    if retry_after is not None:  # the provider's own wait, exactly; beyond our cap: give up
        return retry_after if retry_after <= policy["max_delay_ms"] else None
    nominal = min(
        policy["initial_delay_ms"] * 2.0 ** min(attempt - 1, 1023), policy["max_delay_ms"]
    )
    return float(nominal * (1 + policy["jitter_ratio"] * random.uniform(-1.0, 1.0)))


RUN_FIELDS = ("base_url", "api_key", "request", "retry", "idle_timeout_s", "timeout_s")


def run_case(case: Event, emit: Emit) -> None:
    lacking = [key for key in RUN_FIELDS if case.get(key) is None]
    if lacking:
        raise ValueError(f"run line lacks {', '.join(lacking)}")
    deadline = time.monotonic() + case["timeout_s"]
    body = json.dumps(case["request"], separators=(",", ":")).encode()  # once: same on retries
    attempt = 1
    while True:
        finish, retry_after = run_attempt(case, body, deadline, emit)
        delay = retry_delay_ms(case["retry"], finish, retry_after, attempt)
        if delay is None or time.monotonic() + delay / 1000 >= deadline:
            return
        emit({"type": "retry", "attempt": attempt, "code": finish["code"], "delay_ms": delay})
        time.sleep(delay / 1000)
        attempt += 1


if __name__ == "__main__":
    sys.exit(main())
