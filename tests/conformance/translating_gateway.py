"""A translating gateway for the tests: the upstream's answer in one dialect, re-emitted in
another, the way a correct translator (or a faulty one) would.

The translation is sans-IO: the upstream body is read by the reference adapter's translator
of its dialect (independent of the oracle's readers, which judge), the answer written as
the downstream dialect's events by the small writers below. A ``fault`` breaks it the way
real gateways do (reference dialects.md §4): ``drop-signature`` (B1, B2), ``end-turn-for-
tools`` (LiteLLM's stop -> end_turn, C1-C3), ``summed-usage`` (D3-D6: the cumulative counts
added up), ``empty-snapshot`` (G1-G4: response.completed with output []).

A next request (one carrying an earlier turn) is translated too: its history read in the
downstream dialect and written in the upstream's by the reference's own next-request
builder. Its faults: ``drop-replayed-tokens`` (B1, B2, G24: signatures and encrypted_content
stripped from the history sent upstream), ``fresh-result-ids`` (A18, B13: tool results sent
upstream under ids of the gateway's own), ``forget-history`` (only the user's message sent
upstream), ``refuse-next-request`` (a 400 without calling upstream). The HTTP server
around it is a thin thread: one upstream request per request, read whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from conformance import codes
from conformance.adapters.reference import (
    AnthropicTranslator,
    AttemptReader,
    ResponsesTranslator,
    StreamTranslator,
)
from conformance.adapters.reference.attempt import Translator
from conformance.adapters.reference.next_request import next_request
from conformance.events import (
    Block,
    FollowUpTurn,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)
from conformance.invariants.evidence import ObservedAttempt
from conformance.options import default_request
from fakeprovider.dialects import DIALECTS, DialectId
from fakeprovider.playback import SCENARIO_HEADER

FAULTS = (
    "drop-signature",
    "end-turn-for-tools",
    "summed-usage",
    "empty-snapshot",
    "drop-replayed-tokens",
    "fresh-result-ids",
    "forget-history",
    "refuse-next-request",
)
_TRANSLATORS: dict[DialectId, Callable[[], Translator]] = {
    "chat-completions": StreamTranslator,
    "anthropic-messages": AnthropicTranslator,
    "openai-responses": ResponsesTranslator,
}
# A failure's code written as an HTTP status (and wording) every dialect's error shape can
# carry; a code with none here is a server error.
_STATUS_OF_CODE: dict[str, tuple[int, str]] = {
    codes.RATE_LIMIT: (429, "rate limited"),
    codes.QUOTA: (429, "insufficient_quota: you exceeded your current quota"),
    codes.AUTH: (401, "invalid api key"),
    codes.INVALID_REQUEST: (400, "invalid request"),
    codes.CONTEXT_WINDOW_EXCEEDED: (400, "context_length_exceeded"),
}
_RESPONSES_CODE = {code: wire for wire, code in codes.RESPONSES_ERROR_CODES.items()}


@dataclass(frozen=True)
class Answer:
    """The upstream's answer as the reference adapter read it."""

    blocks: tuple[Block, ...]
    usage: Usage | None
    reason: str
    code: str | None


def read_answer(body: bytes, dialect: DialectId) -> Answer:
    reader = AttemptReader(translator=_TRANSLATORS[dialect])
    events = reader.receive_data(body)
    observed = ObservedAttempt(1, tuple(events + reader.end()))
    usage = observed.usages[-1] if observed.usages else None
    reason = observed.finish.reason if observed.finish else "error"
    calls = any(isinstance(block, ToolCallBlock) for block in observed.blocks)
    if reason == "stop" and calls and dialect == "chat-completions":
        reason = "tool-calls"  # chat's clients run the calls of a stop: a tool turn
    return Answer(tuple(observed.blocks), usage, reason, observed.code)


def _sse(name: str | None, data: Any) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _failure_status(code: str | None) -> tuple[int, str]:
    return _STATUS_OF_CODE.get(code or "", (500, "upstream failed"))


# --- chat-completions ------------------------------------------------------------------


def _chunk(delta: dict[str, Any] | None = None, **fields: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": None}]
    chunk = {"id": "chatcmpl-gw", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return _sse(None, chunk | {"choices": choices} | fields)


def write_chat(answer: Answer, fault: str | None) -> bytes:
    out = [_chunk({"role": "assistant", "content": ""})]
    calls = 0
    for block in answer.blocks:
        if isinstance(block, ReasoningBlock) and block.text:
            out.append(_chunk({"reasoning_content": block.text}))
        elif isinstance(block, TextBlock) and block.text:
            out.append(_chunk({"content": block.text}))
        elif isinstance(block, ToolCallBlock):
            start = {"index": calls, "id": block.id, "type": "function"}
            function = {"name": block.name, "arguments": ""}
            out.append(_chunk({"tool_calls": [start | {"function": function}]}))
            pieces = {"index": calls, "function": {"arguments": block.arguments}}
            out.append(_chunk({"tool_calls": [pieces]}))
            calls += 1
    finish = {"stop": "stop", "tool-calls": "tool_calls", "max-tokens": "length"}
    named = {codes.REFUSAL: "content_filter", codes.CONTENT_FILTER: "content_filter"}
    if answer.reason in finish:
        reason = finish[answer.reason]
    elif answer.code == codes.STREAM_CLOSED:
        return b"".join(out)  # the upstream was cut: so is the answer
    elif answer.code in named or answer.code in ("PAUSE_TURN", "ERROR"):
        reason = named.get(answer.code or "", (answer.code or "").lower())
    else:
        status, wording = _failure_status(answer.code)
        return b"".join([*out, _sse(None, {"error": {"code": status, "message": wording}})])
    last = _chunk({}, choices=[{"index": 0, "delta": {}, "finish_reason": reason}])
    out.append(last)
    if answer.usage is not None:
        out.append(_chunk(usage=_openai_usage(answer.usage, fault, "chat")))
    return b"".join([*out, b"data: [DONE]\n\n"])


def _counted(usage: Usage, fault: str | None) -> tuple[int, int, int]:
    """Input (without cache reads), cache reads and output: twice, when summed."""
    times = 2 if fault == "summed-usage" else 1
    cached = usage.cache_read_tokens or 0
    return usage.input_tokens * times, cached, usage.output_tokens * times


def _openai_usage(usage: Usage, fault: str | None, wire: str) -> dict[str, Any]:
    fresh, cached, output = _counted(usage, fault)
    fresh += usage.cache_write_tokens or 0  # no counter of their own: billed input
    reasoning = usage.reasoning_tokens or 0
    if wire == "chat":
        return {
            "prompt_tokens": fresh + cached,
            "completion_tokens": output,
            "total_tokens": fresh + cached + output,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }
    return {
        "input_tokens": fresh + cached,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": fresh + cached + output,
    }


# --- anthropic-messages ----------------------------------------------------------------


def _messages_block(index: int, block: Block, fault: str | None) -> list[bytes]:
    def start(content: dict[str, Any]) -> bytes:
        data = {"type": "content_block_start", "index": index, "content_block": content}
        return _sse("content_block_start", data)

    def delta(body: dict[str, Any]) -> bytes:
        data = {"type": "content_block_delta", "index": index, "delta": body}
        return _sse("content_block_delta", data)

    stop = _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    if isinstance(block, TextBlock):
        return [
            start({"type": "text", "text": ""}),
            delta({"type": "text_delta", "text": block.text}),
            stop,
        ]
    if isinstance(block, ToolCallBlock):
        opened = start({"type": "tool_use", "id": block.id, "name": block.name, "input": {}})
        piece = delta({"type": "input_json_delta", "partial_json": block.arguments})
        return [opened, piece, stop]
    assert isinstance(block, ReasoningBlock)
    if block.redacted is not None:
        return [start({"type": "redacted_thinking", "data": block.redacted}), stop]
    out = [start({"type": "thinking", "thinking": "", "signature": ""})]
    if block.text:
        out.append(delta({"type": "thinking_delta", "thinking": block.text}))
    if block.signature and fault != "drop-signature":
        out.append(delta({"type": "signature_delta", "signature": block.signature}))
    return [*out, stop]


def _shown_in_messages(block: Block) -> bool:
    if isinstance(block, ReasoningBlock):
        return bool(block.text or block.signature or block.redacted is not None)
    return isinstance(block, TextBlock | ToolCallBlock) and (
        not isinstance(block, TextBlock) or bool(block.text)
    )


def write_messages(answer: Answer, fault: str | None) -> bytes:
    fresh, cached, output = _counted(answer.usage or Usage(input_tokens=0, output_tokens=0), fault)
    counts: dict[str, int] = {"input_tokens": fresh, "cache_read_input_tokens": cached}
    if answer.usage is not None and answer.usage.cache_write_tokens is not None:
        counts["cache_creation_input_tokens"] = answer.usage.cache_write_tokens
    message = {"id": "msg_gw", "type": "message", "role": "assistant", "model": "m", "content": []}
    start = message | {"stop_reason": None, "usage": counts | {"output_tokens": 1}}
    out = [_sse("message_start", {"type": "message_start", "message": start})]
    shown = [block for block in answer.blocks if _shown_in_messages(block)]
    for index, block in enumerate(shown):
        out += _messages_block(index, block, fault)
    tool_use = "end_turn" if fault == "end-turn-for-tools" else "tool_use"
    finish = {"stop": "end_turn", "tool-calls": tool_use, "max-tokens": "max_tokens"}
    named = {codes.REFUSAL: "refusal", codes.CONTENT_FILTER: "refusal", "PAUSE_TURN": "pause_turn"}
    if answer.reason in finish:
        reason = finish[answer.reason]
    elif answer.code == codes.STREAM_CLOSED:
        return b"".join(out)
    elif answer.code in named:
        reason = named[answer.code or ""]
    else:
        status, wording = _failure_status(answer.code)
        error = DIALECTS["anthropic-messages"].error_object(status, wording)
        return b"".join([*out, _sse("error", error)])
    ending = {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None}}
    out.append(_sse("message_delta", ending | {"usage": counts | {"output_tokens": output}}))
    return b"".join([*out, _sse("message_stop", {"type": "message_stop"})])


# --- openai-responses ------------------------------------------------------------------


class _Numbered:
    def __init__(self) -> None:
        self.events: list[bytes] = []

    def __call__(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(self.events)} | fields
        self.events.append(_sse(kind, data))


def _responses_item(send: _Numbered, index: int, block: Block, fault: str | None) -> dict[str, Any]:
    where = {"output_index": index}
    if isinstance(block, ToolCallBlock):
        item = {
            "id": f"fc_{index}",
            "type": "function_call",
            "call_id": block.id,
            "name": block.name,
        }
        send("response.output_item.added", **where, item=item | {"arguments": ""})
        at = where | {"item_id": item["id"]}
        send("response.function_call_arguments.delta", **at, delta=block.arguments)
        send("response.function_call_arguments.done", **at, arguments=block.arguments)
        item |= {"arguments": block.arguments, "status": "completed"}
    elif isinstance(block, TextBlock):
        item = {"id": f"msg_{index}", "type": "message", "role": "assistant", "content": []}
        send("response.output_item.added", **where, item=item | {"status": "in_progress"})
        at = where | {"item_id": item["id"], "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        send("response.content_part.added", **at, part=part)
        send("response.output_text.delta", **at, delta=block.text)
        send("response.output_text.done", **at, text=block.text)
        send("response.content_part.done", **at, part=part | {"text": block.text})
        item |= {"content": [part | {"text": block.text}], "status": "completed"}
    else:
        assert isinstance(block, ReasoningBlock)
        item = {"id": block.item_id or f"rs_{index}", "type": "reasoning", "summary": []}
        send("response.output_item.added", **where, item=item)
        if block.text:
            at = where | {"item_id": item["id"], "summary_index": 0}
            part = {"type": "summary_text", "text": ""}
            send("response.reasoning_summary_part.added", **at, part=part)
            send("response.reasoning_summary_text.delta", **at, delta=block.text)
            send("response.reasoning_summary_text.done", **at, text=block.text)
            send("response.reasoning_summary_part.done", **at, part=part | {"text": block.text})
            item["summary"] = [part | {"text": block.text}]
        if block.encrypted_content and fault != "drop-signature":
            item["encrypted_content"] = block.encrypted_content
    send("response.output_item.done", **where, item=item)
    return item


def _refusal_item(send: _Numbered, index: int) -> dict[str, Any]:
    """A refusal is a message whose part is a refusal (no text of the caller's)."""
    item = {"id": f"msg_{index}", "type": "message", "role": "assistant", "content": []}
    send("response.output_item.added", output_index=index, item=item | {"status": "in_progress"})
    at = {"output_index": index, "item_id": item["id"], "content_index": 0}
    part = {"type": "refusal", "refusal": ""}
    send("response.content_part.added", **at, part=part)
    send("response.refusal.delta", **at, delta="I can't help with that.")
    send("response.refusal.done", **at, refusal="I can't help with that.")
    done = part | {"refusal": "I can't help with that."}
    send("response.content_part.done", **at, part=done)
    item |= {"content": [done], "status": "completed"}
    send("response.output_item.done", output_index=index, item=item)
    return item


def _shown_in_responses(block: Block) -> bool:
    if isinstance(block, ReasoningBlock):
        return bool(block.text or block.encrypted_content)
    return isinstance(block, ToolCallBlock) or (isinstance(block, TextBlock) and bool(block.text))


def write_responses(answer: Answer, fault: str | None) -> bytes:
    send = _Numbered()
    response: dict[str, Any] = {"id": "resp_gw", "object": "response", "status": "in_progress"}
    send("response.created", response=response | {"output": []})
    shown = [block for block in answer.blocks if _shown_in_responses(block)]
    items = [_responses_item(send, index, block, fault) for index, block in enumerate(shown)]
    if answer.code == codes.REFUSAL:
        items.append(_refusal_item(send, len(items)))
    output = [] if fault == "empty-snapshot" else items
    usage = _openai_usage(answer.usage, fault, "responses") if answer.usage else None
    done = response | {"output": output, "usage": usage}
    incomplete = {"max-tokens": "max_output_tokens"} | {
        code: code.lower() for code in (codes.CONTENT_FILTER, "PAUSE_TURN")
    }
    if answer.reason in ("stop", "tool-calls") or answer.code == codes.REFUSAL:
        send("response.completed", response=done | {"status": "completed"})
    elif answer.code == codes.STREAM_CLOSED:
        pass  # the upstream was cut: so is the answer
    elif answer.reason in incomplete or answer.code in incomplete:
        details = {"reason": incomplete.get(answer.reason) or incomplete[answer.code or ""]}
        send(
            "response.incomplete",
            response=done | {"status": "incomplete", "incomplete_details": details},
        )
    else:
        wire_code = _RESPONSES_CODE.get(answer.code or "", "server_error")
        error = {"code": wire_code, "message": _failure_status(answer.code)[1]}
        send("error", error=error)
        send("response.failed", response=done | {"status": "failed", "error": error})
    return b"".join(send.events)


WRITERS: dict[DialectId, Callable[[Answer, str | None], bytes]] = {
    "chat-completions": write_chat,
    "anthropic-messages": write_messages,
    "openai-responses": write_responses,
}


def translate(body: bytes, upstream: DialectId, downstream: DialectId, fault: str | None) -> bytes:
    """The upstream's 2xx body in ``upstream`` as the gateway answers it in ``downstream``."""
    return WRITERS[downstream](read_answer(body, upstream), fault)


# --- the next request: the downstream's history, written in the upstream's dialect ------


def read_history(asked: dict[str, Any], dialect: DialectId) -> tuple[list[Block], FollowUpTurn]:
    """The assistant turn a request replays and the answers after it (none: a first turn)."""
    if dialect == "anthropic-messages":
        return _messages_history(asked["messages"][1:])
    if dialect == "openai-responses":
        return _responses_history(asked["input"][1:])
    return _chat_history(asked["messages"][1:])


def _answers(results: dict[str, str], blocks: list[Block], message: str | None) -> FollowUpTurn:
    calls = [block.id for block in blocks if isinstance(block, ToolCallBlock)]
    return FollowUpTurn(tool_results=[results[c] for c in calls if c in results], message=message)


def _chat_history(messages: list[dict[str, Any]]) -> tuple[list[Block], FollowUpTurn]:
    blocks: list[Block] = []
    results: dict[str, str] = {}
    message = None
    for each in messages:
        if each["role"] == "assistant":
            if each.get("content"):
                blocks.append(TextBlock(text=each["content"]))
            for call in each.get("tool_calls") or []:
                function = call["function"]
                blocks.append(
                    ToolCallBlock(
                        id=call["id"], name=function["name"], arguments=function["arguments"]
                    )
                )
        elif each["role"] == "tool":
            results[each["tool_call_id"]] = each["content"]
        elif each["role"] == "user":
            message = each["content"]
    return blocks, _answers(results, blocks, message)


def _messages_history(messages: list[dict[str, Any]]) -> tuple[list[Block], FollowUpTurn]:
    blocks: list[Block] = []
    results: dict[str, str] = {}
    message = None
    for each in messages:
        for part in each["content"]:
            if part["type"] == "thinking":
                blocks.append(
                    ReasoningBlock(text=part["thinking"], signature=part.get("signature"))
                )
            elif part["type"] == "redacted_thinking":
                blocks.append(ReasoningBlock(text="", redacted=part["data"]))
            elif part["type"] == "tool_use":
                arguments = json.dumps(part["input"])
                blocks.append(ToolCallBlock(id=part["id"], name=part["name"], arguments=arguments))
            elif part["type"] == "tool_result":
                results[part["tool_use_id"]] = part["content"]
            elif part["type"] == "text" and each["role"] == "assistant":
                blocks.append(TextBlock(text=part["text"]))
            elif part["type"] == "text":
                message = part["text"]
    return blocks, _answers(results, blocks, message)


def _responses_history(items: list[dict[str, Any]]) -> tuple[list[Block], FollowUpTurn]:
    blocks: list[Block] = []
    results: dict[str, str] = {}
    message = None
    for item in items:
        kind = item.get("type")
        if kind == "reasoning":
            text = "".join(part["text"] for part in item["summary"])
            encrypted = item.get("encrypted_content")
            blocks.append(
                ReasoningBlock(text=text, encrypted_content=encrypted, item_id=item.get("id"))
            )
        elif kind == "function_call":
            blocks.append(
                ToolCallBlock(
                    id=item["call_id"],
                    name=item["name"],
                    arguments=item["arguments"],
                    item_id=item.get("id"),
                )
            )
        elif kind == "function_call_output":
            results[item["call_id"]] = item["output"]
        elif kind == "message":
            blocks.append(TextBlock(text="".join(part["text"] for part in item["content"])))
        elif item.get("role") == "user":
            message = item["content"]
    return blocks, _answers(results, blocks, message)


def upstream_request(asked: dict[str, Any], route: Route) -> dict[str, Any]:
    """The request the gateway sends upstream for the client's ``asked``."""
    request = default_request(route.upstream) | {"model": asked["model"]}
    blocks, answers = read_history(asked, route.downstream)
    if not blocks or route.fault == "forget-history":
        return request
    if route.fault == "drop-replayed-tokens":
        blocks = [_without_tokens(block) for block in blocks if not _redacted(block)]
    sent = next_request(route.upstream, request, blocks, answers)
    if route.fault == "fresh-result-ids":
        return json.loads(_fresh_result_ids(json.dumps(sent), blocks))
    return sent


def _redacted(block: Block) -> bool:
    return isinstance(block, ReasoningBlock) and block.redacted is not None


def _without_tokens(block: Block) -> Block:
    if isinstance(block, ReasoningBlock):
        return block.model_copy(update={"signature": None, "encrypted_content": None})
    return block


def _fresh_result_ids(body: str, blocks: list[Block]) -> str:
    """Every id of a tool result rewritten as the gateway's own (and so its call's too)."""
    for number, block in enumerate(b for b in blocks if isinstance(b, ToolCallBlock)):
        body = body.replace(json.dumps(block.id), json.dumps(f"call_gw_{number}"))
    return body


# --- the thin HTTP shell ---------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    upstream_url: str  # the fake provider's base, with /v1
    upstream: DialectId
    downstream: DialectId
    fault: str | None


def _handler(route: Route) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self._reply(200, b'{"data": []}', "application/json")

        def do_POST(self) -> None:
            asked = json.loads(self.rfile.read(int(self.headers["content-length"])))
            # Only the downstream dialect's endpoint, and a request in its shape.
            served = self.path.endswith("/" + DIALECTS[route.downstream].endpoint)
            if not served or not set(default_request(route.downstream)) <= set(asked):
                self._reply(404, b'{"error": "not this endpoint or shape"}', "application/json")
                return
            if route.fault == "refuse-next-request" and read_history(asked, route.downstream)[0]:
                self._reply(400, b'{"error": "history not supported"}', "application/json")
                return
            request = upstream_request(asked, route)
            headers = {SCENARIO_HEADER: self.headers.get(SCENARIO_HEADER, "")}
            url = f"{route.upstream_url}/{DIALECTS[route.upstream].endpoint}"
            try:
                answer = httpx.post(url, json=request, headers=headers, timeout=10.0)
            except httpx.HTTPError:
                failed = Answer((), None, "error", codes.SERVER)
                self._reply(200, WRITERS[route.downstream](failed, route.fault))
                return
            if not 200 <= answer.status_code < 300:
                error = DIALECTS[route.downstream].error_object(answer.status_code, None)
                extra = {"retry-after": answer.headers.get("retry-after", "")}
                body = json.dumps(error).encode()
                self._reply(answer.status_code, body, "application/json", extra)
                return
            body = translate(answer.content, route.upstream, route.downstream, route.fault)
            self._reply(200, body)

        def _reply(
            self,
            status: int,
            body: bytes,
            content_type: str = "text/event-stream",
            extra: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for name, value in (extra or {}).items():
                if value:
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def translating_gateway(route: Route) -> Iterator[str]:
    """The gateway on a free loopback port, in a thread; yields its base URL (with /v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(route))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
