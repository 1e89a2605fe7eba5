"""The Anthropic Messages wire, byte for byte (sans-IO): named events on the shared framing."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from fakeprovider.build import (
    ABSENT,
    MessagesStreamBuilder,
    ScenarioBuilder,
    anthropic_error,
    http_error,
    messages_stream,
    stream,
)
from fakeprovider.fixtures import FixtureError, fixture_yaml, load_fixture
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.transport import IN_PROCESS_ORIGIN, FakeTransport
from fakeprovider.wire import attempt_transcript, encode_stream, error_body


def body_of(builder: MessagesStreamBuilder) -> bytes:
    scenario = ScenarioBuilder("s", dialect="anthropic-messages").attempt(builder).build()
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return encode_stream(attempt.stream).body


def test_the_documented_text_flow_encodes_event_by_event() -> None:
    body = body_of(
        messages_stream()
        .message_start(input_tokens=25)
        .text_start(0)
        .ping()
        .text_delta(0, "Hel")
        .block_stop(0)
        .message_delta("end_turn", output_tokens=15)
        .message_stop()
    )
    assert body == (
        b"event: message_start\n"
        b'data: {"type":"message_start","message":{"id":"msg_fake","type":"message",'
        b'"role":"assistant","model":"fake-model","content":[],"stop_reason":null,'
        b'"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}\n\n'
        b"event: content_block_start\n"
        b'data: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: ping\ndata: {"type":"ping"}\n\n'
        b"event: content_block_delta\n"
        b'data: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Hel"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b"event: message_delta\n"
        b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        b'"usage":{"output_tokens":15}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )


def test_the_event_line_is_overridable_omittable_and_mismatchable() -> None:
    body = body_of(messages_stream().ping().named("keepalive").ping().data_only().ping())
    assert body == (
        b'event: keepalive\ndata: {"type":"ping"}\n\n'
        b'data: {"type":"ping"}\n\n'
        b'event: ping\ndata: {"type":"ping"}\n\n'
    )


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (ABSENT, b'"delta":{"type":"input_json_delta"}'),
        (None, b'"delta":{"type":"input_json_delta","partial_json":null}'),
        ("", b'"delta":{"type":"input_json_delta","partial_json":""}'),
        (7, b'"delta":{"type":"input_json_delta","partial_json":7}'),
    ],
    ids=["absent", "null", "empty", "number"],
)
def test_a_field_can_be_absent_null_or_empty(value: object, fragment: bytes) -> None:
    assert fragment in body_of(messages_stream().input_json(0, value))  # type: ignore[arg-type]


def test_an_absent_index_and_a_null_block() -> None:
    body = body_of(messages_stream().block_start(ABSENT, None).block_stop(None))
    assert b'{"type":"content_block_start","content_block":null}' in body
    assert b'{"type":"content_block_stop","index":null}' in body


def test_a_tool_use_start_carries_its_identity_and_input() -> None:
    body = body_of(
        messages_stream().tool_use_start(1, "toolu_A", "get_weather").tool_use_start(2, "b", "f")
    )
    assert (
        b'"content_block":{"type":"tool_use","id":"toolu_A","name":"get_weather","input":{}}'
        in body
    )


@pytest.mark.parametrize(("line_ending", "eol"), [("lf", b"\n"), ("cr", b"\r"), ("crlf", b"\r\n")])
def test_framing_is_the_shared_one(line_ending: str, eol: bytes) -> None:
    builder = messages_stream(line_ending=line_ending, bom=True, data_space=False)
    body = body_of(builder.comment(" hi").ping())
    assert (
        body
        == b"\xef\xbb\xbf: hi"
        + eol
        + eol
        + b"event:ping"
        + eol
        + b'data:{"type":"ping"}'
        + eol
        + eol
    )


def test_multiline_data_keeps_the_event_line_once() -> None:
    body = body_of(messages_stream(multiline_data=True).ping())
    assert body == b'event: ping\ndata: {\ndata:  "type":"ping"\ndata: }\n\n'


def test_byte_split_and_endings_apply_to_events() -> None:
    builder = messages_stream().split("byte").ping().pause(5).message_stop().reset()
    scenario = ScenarioBuilder("s", dialect="anthropic-messages").attempt(builder).build()
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    plan = encode_stream(attempt.stream)
    assert all(len(write.data) == 1 for write in plan.writes)
    assert b"".join(write.data for write in plan.writes) == plan.body
    assert plan.ending == "reset"
    assert [write.delay_ms for write in plan.writes if write.delay_ms] == [5]


def test_an_event_without_blank_line_then_a_raw_data_line() -> None:
    # an-event-without-data's neighbour: an event: line whose data is empty.
    body = body_of(messages_stream().field("event", "ping").raw(""))
    assert body == b"event: ping\ndata: \n\n"


def test_a_mid_stream_error_event_has_the_error_body_shape() -> None:
    body = body_of(messages_stream().error())
    assert body == (
        b"event: error\n"
        b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )


def test_an_error_attempt_defaults_to_the_dialects_body() -> None:
    error = http_error(529).error
    assert json.loads(error_body(error, "anthropic-messages")) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "fake provider: 529 overloaded_error"},
    }
    assert json.loads(error_body(error))["error"]["type"] == "server_error"  # chat, unchanged


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (503, "api_error"),
        (529, "overloaded_error"),
        (418, "invalid_request_error"),
    ],
)
def test_the_error_type_follows_the_status(status: int, kind: str) -> None:
    assert (
        json.loads(error_body(http_error(status).error, "anthropic-messages"))["error"]["type"]
        == kind
    )


def test_anthropic_error_sets_the_retry_headers_and_details() -> None:
    attempt = anthropic_error(
        429,
        message="spend limit",
        should_retry=False,
        retry_after_ms=1500,
        retry_after=2,
        details={"error_code": "enforced_spend_limit_reached"},
    )
    head, body = attempt_transcript(attempt, "anthropic-messages")
    assert b"x-should-retry: false\r\n" in head.data
    assert b"retry-after-ms: 1500\r\n" in head.data
    assert b"retry-after: 2\r\n" in head.data
    assert json.loads(body.data) == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "spend limit",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }


def test_a_chunk_step_in_an_anthropic_scenario_is_refused_where_it_is() -> None:
    with pytest.raises(ValidationError) as raised:
        ScenarioBuilder("s", dialect="anthropic-messages").attempt(stream().text("x")).build()
    (problem,) = raised.value.errors()
    assert problem["loc"] == ("attempts", 0, "stream", "stream", "steps", 0, "chunk")
    assert "chunk steps belong to chat-completions scenarios" in problem["msg"]


def test_an_event_step_in_a_chat_scenario_is_refused() -> None:
    with pytest.raises(
        ValidationError,
        match="event steps belong to anthropic-messages or openai-responses scenarios",
    ):
        ScenarioBuilder("s").attempt(messages_stream().ping()).build()


def test_an_event_without_a_type_needs_a_name_or_no_event_line() -> None:
    data = {"id": "s", "dialect": "anthropic-messages"}
    untyped = {"stream": {"steps": [{"event": {"index": 0}}]}}
    with pytest.raises(ValidationError, match="no string 'type' to name its event: line"):
        Scenario.model_validate(data | {"attempts": [untyped]})
    both = {"stream": {"steps": [{"event": {"type": "ping"}, "name": "x", "event_line": False}]}}
    with pytest.raises(ValidationError, match="'event_line: false' leaves out"):
        Scenario.model_validate(data | {"attempts": [both]})


MALFORMED = """\
dialect: anthropic-messages
attempts:
  - stream:
      steps:
        - event: {type: message_start, message: {}}
        - chunk: {choices: []}
        - event: {index: 0}
        - event: {type: ping}
          nmae: x
"""


def test_a_malformed_anthropic_fixture_names_file_field_and_reason(tmp_path: Path) -> None:
    path = tmp_path / "an-bad.yaml"
    path.write_text(MALFORMED, encoding="utf-8")
    with pytest.raises(FixtureError) as raised:
        load_fixture(path)
    shown = [str(problem) for problem in raised.value.problems]
    assert shown == [
        f"{path}:7: attempts[0].stream.steps[2]: the event has no string 'type' to name its "
        "event: line; give 'name', or 'event_line: false' for a data-only event",
        f"{path}:9: attempts[0].stream.steps[3].nmae: unknown field (check its spelling)",
    ]


def test_a_misplaced_chunk_step_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "an-chunk.yaml"
    path.write_text(MALFORMED.split("        - event: {index: 0}")[0], encoding="utf-8")
    with pytest.raises(FixtureError) as raised:
        load_fixture(path)
    (problem,) = raised.value.problems
    assert str(problem) == (
        f"{path}:6: attempts[0].stream.steps[1]: chunk steps belong to chat-completions "
        "scenarios, and this one is anthropic-messages (set the scenario's dialect, or script "
        "this wire's own steps)"
    )


def test_named_and_data_only_change_an_event_only() -> None:
    with pytest.raises(ValueError, match="add one first"):
        messages_stream().comment("x").named("y")


def test_an_anthropic_scenario_round_trips_through_fixture_yaml(tmp_path: Path) -> None:
    scenario = (
        ScenarioBuilder("an-round-trip", dialect="anthropic-messages")
        .attempt(anthropic_error(529, should_retry=True))
        .attempt(messages_stream().ping().named("x").text_delta(0, None).data_only().stall())
        .build()
    )
    path = tmp_path / "an-round-trip.yaml"
    path.write_text(fixture_yaml(scenario), encoding="utf-8")
    assert load_fixture(path) == scenario


def test_the_in_process_transport_serves_the_messages_endpoint() -> None:
    scenario = (
        ScenarioBuilder("an-t", dialect="anthropic-messages")
        .attempt(messages_stream().ping())
        .build()
    )
    with httpx.Client(transport=FakeTransport(ScenarioRegistry([scenario]))) as client:
        response = client.post(f"{IN_PROCESS_ORIGIN}/an-t/messages", json={})
        wrong = client.post(f"{IN_PROCESS_ORIGIN}/an-t/v1/chat/completions", json={})
    assert response.content == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert wrong.status_code == 404
    assert "speaks anthropic-messages" in wrong.json()["error"]["message"]
