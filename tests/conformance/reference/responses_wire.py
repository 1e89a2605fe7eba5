"""OpenAI Responses wires built with the fake provider's builder, and the reference
translator's reading of them bytewise: shared by the translator's tests and its mutants'."""

from collections.abc import Callable
from typing import Any

from conformance.adapters.reference import AttemptReader, Failure, ResponsesTranslator
from conformance.events import Event
from fakeprovider.build import ResponsesStreamBuilder, responses_stream
from fakeprovider.wire import encode_stream

USAGE = {
    "input_tokens": 12,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 3},
    "total_tokens": 19,
}


def translate(
    stream: ResponsesStreamBuilder,
    *,
    failure: Failure | None = None,
    translator: Callable[[], ResponsesTranslator] = ResponsesTranslator,
) -> list[Event]:
    """The events of the stream's body, read one byte at a time."""
    body = b"".join(write.data for write in encode_stream(stream.build().stream).writes)
    reader = AttemptReader(translator=translator)
    out: list[Event] = []
    for position in range(len(body)):
        out += reader.receive_data(body[position : position + 1])
        if reader.finished:
            break
    return out + reader.end(failure)


def hello(output_index: int = 0, item_id: str = "msg_1") -> ResponsesStreamBuilder:
    """`response.created`, then a message saying "Hello" at `output_index`, done."""
    return (
        responses_stream()
        .created()
        .message_added(output_index, item_id)
        .part_added(output_index, item_id)
        .text_delta(output_index, item_id, "Hel")
        .text_delta(output_index, item_id, "lo")
        .text_done(output_index, item_id, "Hello")
        .item_done(output_index, message_item(item_id, "Hello"))
    )


def message_item(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call_item(
    item_id: str = "fc_1", call_id: str = "call_9", name: str = "get_weather", arguments: str = ""
) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def weather_call(
    stream: ResponsesStreamBuilder, output_index: int = 0, item_id: str = "fc_1"
) -> ResponsesStreamBuilder:
    """A get_weather call (call_9) with its arguments in two deltas, done."""
    arguments = '{"city":"Paris"}'
    return (
        stream.function_call_added(output_index, item_id, "call_9", "get_weather")
        .arguments_delta(output_index, item_id, '{"city":')
        .arguments_delta(output_index, item_id, '"Paris"}')
        .arguments_done(output_index, item_id, arguments)
        .item_done(output_index, call_item(item_id, arguments=arguments))
    )
