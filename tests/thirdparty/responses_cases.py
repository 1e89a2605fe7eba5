"""OpenAI Responses scenarios for the Responses clients' shim tests (``rs-shim-…``, built
here, and the corpus's ``rs-…`` cases once it has them), played as :mod:`anthropic_cases`
plays its own (``run_scenarios(column, *ids, wire=RESPONSES)``).

The four behaviours issue 25 asks the matrix to show each have a scenario: the empty
terminal snapshot, ``item_id`` rotation, the flat ``error`` event and ``incomplete`` usage.
"""

from __future__ import annotations

from typing import Any

from anthropic_cases import Wire, block
from shim_cases import CORPUS

from fakeprovider.build import responses_stream
from fakeprovider.scenario import Scenario

DIALECT = "openai-responses"
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
REQUEST = {
    "model": "gpt-fake",
    "input": [{"role": "user", "content": "What is the weather in Paris?"}],
    "tools": [WEATHER_TOOL],
    "stream": True,
}
USAGE = {
    "input_tokens": 30,
    "input_tokens_details": {"cached_tokens": 10},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 4},
    "total_tokens": 42,
}
TEXT_PART = {"type": "output_text", "text": "Hello", "annotations": []}


def _message(text: str, id: str = "msg_1") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "type": "message",
        "id": id,
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


CALL_DONE = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_A",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
    "status": "completed",
}
REASONING_DONE = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Think."}],
    "encrypted_content": "gAAAA-opaque",
}


def _text_stream(*, rotate: bool = False) -> Any:
    """A message streamed in two deltas, its item done; ``rotate``: each event under a new
    ``item_id`` (reference §4.G, GitHub Copilot)."""
    ids = iter(["msg_2", "msg_3", "msg_4", "msg_5", "msg_6"]) if rotate else None

    def item_id() -> str:
        return next(ids) if ids else "msg_1"

    return (
        responses_stream()
        .created()
        .message_added(0, "msg_1")
        .part_added(0, item_id())
        .text_delta(0, item_id(), "Hel")
        .text_delta(0, item_id(), "lo")
        .text_done(0, item_id(), "Hello")
        .part_done(0, item_id(), TEXT_PART)
        .item_done(0, _message("Hello"))
    )


def _scenario(id: str, *attempts: Any) -> Scenario:
    return Scenario(id=id, dialect=DIALECT, attempts=tuple(attempts))


SCENARIOS = {
    s.id: s
    for s in (
        _scenario(
            "rs-shim-text",
            _text_stream().completed(output=[_message("Hello")], usage=USAGE).build(),
        ),
        _scenario(
            "rs-shim-tool-call",
            responses_stream()
            .created()
            .function_call_added(0, "fc_1", "call_A", "get_weather")
            .arguments_delta(0, "fc_1", '{"city": "Par')
            .arguments_delta(0, "fc_1", 'is"}')
            .arguments_done(0, "fc_1", '{"city": "Paris"}')
            .item_done(0, CALL_DONE)
            .completed(output=[CALL_DONE], usage=USAGE)
            .build(),
        ),
        _scenario(
            "rs-shim-reasoning",
            responses_stream()
            .created()
            .reasoning_added(0, "rs_1")
            .summary_delta(0, "rs_1", "Think.")
            .item_done(0, REASONING_DONE)
            .message_added(1, "msg_1")
            .part_added(1, "msg_1")
            .text_delta(1, "msg_1", "Hello")
            .item_done(1, _message("Hello"))
            .completed(output=[REASONING_DONE, _message("Hello")], usage=USAGE)
            .build(),
        ),
        # reference §4.G: correct deltas, then `response.completed` with `output: []`.
        _scenario("rs-shim-empty-terminal-output", _text_stream().completed(usage=USAGE).build()),
        _scenario(
            "rs-shim-item-id-rotation",
            _text_stream(rotate=True).completed(output=[_message("Hello")], usage=USAGE).build(),
        ),
        # The documented flat `error` event, then nothing.
        _scenario(
            "rs-shim-flat-error",
            responses_stream()
            .created()
            .message_added(0, "msg_1")
            .part_added(0, "msg_1")
            .text_delta(0, "msg_1", "Hel")
            .error("rate_limit_exceeded", "Slow down", nested=False)
            .build(),
        ),
        # The nested shape the live API sends.
        _scenario(
            "rs-shim-nested-error",
            responses_stream()
            .created()
            .message_added(0, "msg_1")
            .part_added(0, "msg_1")
            .text_delta(0, "msg_1", "Hel")
            .error("rate_limit_exceeded", "Slow down")
            .build(),
        ),
        # `response.incomplete` at the token limit, with the usage of what was produced.
        _scenario(
            "rs-shim-incomplete-usage",
            _text_stream().incomplete("max_output_tokens", usage=USAGE).build(),
        ),
        _scenario(
            "rs-shim-failed",
            _text_stream().failed("server_error", "The server had an error").build(),
        ),
        # The body ends after the deltas: no terminal event.
        _scenario("rs-shim-truncated", _text_stream().build()),
    )
}
SCENARIOS |= {s.id: s for s in CORPUS.values() if s.dialect == DIALECT}
RESPONSES = Wire(DIALECT, SCENARIOS, REQUEST)
SHIM_SCENARIOS = tuple(id for id in SCENARIOS if id.startswith("rs-shim-"))


def reasoning(text: str, **more: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": text, **more}


def call(index: int, id: str, name: str, arguments: str, item_id: str) -> list[dict[str, Any]]:
    value = {"type": "tool-call", "id": id, "name": name, "arguments": arguments}
    return block(index, {**value, "item_id": item_id})
