"""Tests of the protocol event model and its JSON Lines codec (ADAPTER-PROTOCOL.md, G8)."""

import json

import pytest

from conformance.codes import DEFAULT_RETRYABLE_CODES
from conformance.events import (
    INT_RANGE,
    MAX_DEPTH,
    PROTOCOL_VERSIONS,
    BlockEnd,
    BlockStart,
    Capabilities,
    DeclaredRetryPolicy,
    End,
    Event,
    EventDecodeError,
    Finish,
    Hello,
    ReasoningBlock,
    ReasoningDelta,
    Retry,
    RetryPolicy,
    RunCase,
    TextBlock,
    TextDelta,
    Thrown,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    dump_event,
    explicit_null_fields,
    parse_event_line,
    parse_hello_line,
    parse_run_line,
)

# The protocol page's own example lines, verbatim.
PROTOCOL_EXAMPLE_LINES = [
    '{"case": "c-0042", "type": "block-start", "index": 0, "block_type": "tool-call"}',
    '{"case": "c-0042", "type": "tool-call-delta", "index": 0, "id": "call_1", '
    '"name": "get_weather", "arguments_delta": "{\\"ci"}',
    '{"case": "c-0042", "type": "block-end", "index": 0, "block": {"type": "tool-call", '
    '"id": "call_1", "name": "get_weather", "arguments": "{\\"city\\":\\"Oslo\\"}"}}',
    '{"case": "c-0042", "type": "usage", "input_tokens": 12, "output_tokens": 7, '
    '"cache_read_tokens": 0, "reasoning_tokens": 0}',
    '{"case": "c-0042", "type": "finish", "reason": "tool-calls"}',
    '{"case": "c-0042", "type": "end"}',
]

ONE_OF_EACH: list[Event] = [
    BlockStart(index=0, block_type="text"),
    TextDelta(index=0, text="hé\n"),
    ReasoningDelta(index=1, text="r"),
    ToolCallDelta(index=2, arguments_delta=""),
    ToolCallDelta(index=2, id="c", name="f", arguments_delta='{"a"'),
    BlockEnd(index=0, block=TextBlock(text="t")),
    BlockEnd(index=1, block=ReasoningBlock(text="r")),
    BlockEnd(index=2, block=ToolCallBlock(id="c", name="f", arguments="{}")),
    Usage(input_tokens=1, output_tokens=2),
    Usage(input_tokens=1, output_tokens=2, cache_read_tokens=0, reasoning_tokens=1),
    Finish(reason="stop"),
    Finish(reason="error", code="EMPTY_RESPONSE", message="empty"),
    Finish(reason="aborted"),
    Retry(attempt=1, code="SERVER", delay_ms=1.5),
    Thrown(message="boom"),
    Thrown(message="boom", code="TRANSPORT"),
    End(case="c-1"),
]


@pytest.mark.parametrize("line", PROTOCOL_EXAMPLE_LINES)
def test_protocol_example_lines_parse_and_round_trip(line: str) -> None:
    event = parse_event_line(line)
    assert event.case == "c-0042"
    assert json.loads(dump_event(event)) == json.loads(line)


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: e.to_json_line())
def test_every_event_round_trips(event: Event) -> None:
    assert parse_event_line(dump_event(event)) == event


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: e.to_json_line())
def test_unset_optional_fields_are_omitted_not_null(event: Event) -> None:
    line = event.to_json_line()
    assert "null" not in line
    assert "\n" not in line


def test_wire_names() -> None:
    assert json.loads(ToolCallDelta(index=0, arguments_delta="x").to_json_line()) == {
        "type": "tool-call-delta",
        "index": 0,
        "arguments_delta": "x",
    }
    assert json.loads(Retry(attempt=2, code="TIMEOUT", delay_ms=3).to_json_line()) == {
        "type": "retry",
        "attempt": 2,
        "code": "TIMEOUT",
        "delay_ms": 3.0,
    }


def test_case_leads_the_line_when_set() -> None:
    line = BlockStart(case="c-7", index=0, block_type="reasoning").to_json_line()
    assert line.startswith('{"case":"c-7","type":"block-start"')


def test_error_finish_requires_a_code() -> None:
    with pytest.raises(ValueError, match="requires a non-empty code"):
        Finish(reason="error")
    with pytest.raises(EventDecodeError, match="requires a non-empty code"):
        parse_event_line('{"type": "finish", "reason": "error", "message": "x"}')
    with pytest.raises(EventDecodeError):
        parse_event_line('{"type": "finish", "reason": "error", "code": ""}')


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("{not json", "not valid JSON"),
        ("", "not valid JSON"),
        ("[1]", "expected a JSON object"),
        ('{"type": "delta"}', "unknown event type 'delta'"),
        ('{"index": 0}', "unknown event type None"),
        ('{"type": "hello", "protocol": 1}', "unknown event type 'hello'"),
        ('{"type": "usage", "input_tokens": NaN, "output_tokens": 1}', "NaN is not valid JSON"),
        ('{"type": "retry", "attempt": 1, "code": "X", "delay_ms": 1e999}', "out of range"),
        ('{"type": "text-delta", "index": "0", "text": "x"}', "invalid 'text-delta' event: index"),
        ('{"type": "text-delta", "index": 0.0, "text": "x"}', "index"),
        ('{"type": "text-delta", "index": true, "text": "x"}', "index"),
        ('{"type": "text-delta", "index": 0}', "text: Field required"),
        ('{"type": "block-start", "index": 0, "block_type": "image"}', "block_type"),
        ('{"type": "finish", "reason": "done"}', "reason"),
        (
            '{"type": "usage", "inputTokens": 1, "input_tokens": 1, "output_tokens": 1}',
            "inputTokens",
        ),
        ('{"type": "block-end", "index": 0, "block": {"type": "tool-call", "id": "c"}}', "block"),
    ],
)
def test_invalid_lines_raise_event_decode_error(line: str, match: str) -> None:
    with pytest.raises(EventDecodeError, match=match):
        parse_event_line(line)


DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000


@pytest.mark.parametrize(
    ("line", "match"),
    [
        (f'{{"type": "text-delta", "index": {DEEP}, "text": "x"}}', "nested deeper than 64"),
        ("{" * 100_000, "nested deeper than 64"),
        (f'{{"type": "usage", "input_tokens": {HUGE_INT}, "output_tokens": 1}}', "out of range"),
        ('{"type": "usage", "input_tokens": 9223372036854775808, "output_tokens": 1}', "range"),
        ('{"type": "thrown", "message": "\\ud800"}', "lone surrogate"),
        ('{"type": "thrown", "message": "x", "\\udfff": 1}', "lone surrogate"),
        (b'{"type": "thrown", "message": "\xed\xa0\x80"}', "not valid JSON"),
    ],
)
def test_lines_outside_the_bounds_raise_event_decode_error(line: str | bytes, match: str) -> None:
    with pytest.raises(EventDecodeError, match=match):
        parse_event_line(line)


def test_a_hello_outside_the_bounds_raises_event_decode_error() -> None:
    hello = '{"type": "hello", "protocol": %s, "name": "n", "version": "1", "capabilities": {}}'
    with pytest.raises(EventDecodeError, match="out of range"):
        parse_hello_line(hello % HUGE_INT)
    with pytest.raises(EventDecodeError, match="nested deeper"):
        parse_hello_line(hello % DEEP)


def test_lines_within_the_bounds_parse() -> None:
    nested = "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2)  # in the run line and its request
    brackets = "[{" * 100  # inside a string: text, not nesting
    assert parse_event_line(f'{{"type": "thrown", "message": "{brackets}"}}')
    run_line = json.loads(RUN_LINE) | {"request": {"tools": json.loads(nested)}}
    assert parse_run_line(json.dumps(run_line)).request
    usage = parse_event_line(
        '{"type": "usage", "input_tokens": -9223372036854775808, '
        '"output_tokens": 9223372036854775807}'
    )
    assert usage == Usage(input_tokens=INT_RANGE.start, output_tokens=INT_RANGE.stop - 1)
    assert parse_event_line('{"type": "thrown", "message": "\\ud83d\\ude00"}') == Thrown(
        message="\U0001f600"
    )


def test_event_decode_error_is_a_value_error() -> None:
    assert issubclass(EventDecodeError, ValueError)


def test_bytes_lines_are_accepted() -> None:
    assert parse_event_line(b'{"type": "end"}') == End()


def test_explicit_nulls_parse_and_are_reported() -> None:
    event = parse_event_line(
        '{"type": "tool-call-delta", "index": 0, "id": null, "name": "f", "arguments_delta": ""}'
    )
    assert event == ToolCallDelta(index=0, name="f", arguments_delta="")
    assert explicit_null_fields(event) == ["id"]
    assert explicit_null_fields(ToolCallDelta(index=0, arguments_delta="")) == []
    assert '"id"' not in event.to_json_line()


HELLO_LINE = (
    '{"type": "hello", "protocol": 1, "name": "my-adapter", "version": "1.2.3", '
    '"capabilities": {"deltas": true, "reasoning": true, "usage": true, "retry": true, '
    '"error_codes": true}}'
)


def test_hello_parses() -> None:
    hello = parse_hello_line(HELLO_LINE)
    assert hello == Hello(
        protocol=1,
        name="my-adapter",
        version="1.2.3",
        capabilities=Capabilities(
            deltas=True, reasoning=True, usage=True, retry=True, error_codes=True
        ),
    )
    assert json.loads(hello.to_json_line()) == json.loads(HELLO_LINE)


def test_undeclared_capabilities_are_not_claimed() -> None:
    hello = parse_hello_line(
        '{"type": "hello", "protocol": 1, "name": "a", "version": "0", '
        '"capabilities": {"usage": true}}'
    )
    assert hello.capabilities == Capabilities(usage=True)


def test_hello_rejects_non_boolean_capability() -> None:
    with pytest.raises(EventDecodeError, match=r"capabilities\.retry"):
        parse_hello_line(HELLO_LINE.replace('"retry": true', '"retry": "yes"'))


# openai-python's defaults, as a shim declares them.
DECLARED = {
    "max_retries": 2,
    "statuses": [408, 409, 429, "5xx"],
    "codes": ["TRANSPORT", "TIMEOUT"],
    "backoff_min_s": 0.375,
    "backoff_max_s": 8,
    "retry_after": ["retry-after-ms", "retry-after"],
    "retry_after_max_s": 120,
    "should_retry_header": True,
}


def _hello_with_policy(policy: object) -> str:
    return HELLO_LINE[:-1] + f', "retry_policy": {json.dumps(policy)}}}'


def test_a_hello_without_retry_policy_is_read_and_written_as_before() -> None:
    hello = parse_hello_line(HELLO_LINE)
    assert hello.retry_policy is None
    assert "retry_policy" not in hello.to_json_line()


def test_a_declared_retry_policy_parses_with_its_defaults() -> None:
    policy = parse_hello_line(_hello_with_policy(DECLARED)).retry_policy
    assert policy == DeclaredRetryPolicy(
        max_retries=2,
        statuses=[408, 409, 429, "5xx"],
        codes=["TRANSPORT", "TIMEOUT"],
        mid_stream=False,
        backoff_min_s=0.375,
        backoff_max_s=8.0,
        retry_after=["retry-after-ms", "retry-after"],
        retry_after_max_s=120.0,
        over_cap="no-retry",
        should_retry_header=True,
    )
    assert [policy.retries_status(s) for s in (429, 529, 500, 400, 410)] == [
        True,
        True,
        True,
        False,
        False,
    ]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"max_retries": -1}, r"retry_policy\.max_retries: Input should be greater"),
        ({"max_retries": 1000}, r"retry_policy\.max_retries: Input should be less"),
        ({"max_retries": "2"}, r"retry_policy\.max_retries: Input should be a valid integer"),
        ({"statuses": [700]}, r"status 700 is not an HTTP status"),
        ({"statuses": ["5XX"]}, r"status '5XX' is neither a number nor a class"),
        ({"codes": ["overloaded"]}, r"'overloaded' is not a canonical code"),
        ({"backoff_min_s": 9}, r"backoff_min_s must not exceed backoff_max_s"),
        ({"retry_after": ["Retry-After"]}, r"retry_policy\.retry_after\.0"),
        ({"retry_after": ["retry-after", "retry-after"]}, r"a header is listed twice"),
        ({"retry_after_max_s": 0}, r"retry_policy\.retry_after_max_s: Input should be greater"),
        ({"over_cap": "clamp"}, r"retry_policy\.over_cap"),
        ({"jitter": 0.25}, r"retry_policy\.jitter: Extra inputs are not permitted"),
    ],
)
def test_a_bad_retry_policy_is_a_clear_decode_error(change: dict[str, object], reason: str) -> None:
    with pytest.raises(EventDecodeError, match=r"^invalid Hello: .*" + reason):
        parse_hello_line(_hello_with_policy(DECLARED | change))


def test_a_retry_policy_needs_the_retry_capability() -> None:
    line = _hello_with_policy(DECLARED).replace('"retry": true', '"retry": false')
    with pytest.raises(EventDecodeError, match="retry_policy declares a retry layer"):
        parse_hello_line(line)


def test_a_retry_policy_is_held_to_the_protocol_bounds() -> None:
    line = _hello_with_policy(DECLARED).replace('"max_retries": 2', f'"max_retries": {HUGE_INT}')
    with pytest.raises(EventDecodeError, match="integer out of range"):
        parse_hello_line(line)


RUN_LINE = json.dumps(
    {
        "type": "run",
        "case": "c-0042",
        "base_url": "http://127.0.0.1:41234/c-0042/v1",
        "api_key": "sk-test",
        "request": {
            "model": "fake-model",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [],
            "tool_choice": None,
        },
        "retry": {
            "max_retries": 2,
            "retryable_codes": list(DEFAULT_RETRYABLE_CODES),
            "initial_delay_ms": 1,
            "max_delay_ms": 1,
            "jitter_ratio": 0,
        },
        "idle_timeout_s": 2,
        "timeout_s": 10,
    }
)


def test_run_line_parses_and_keeps_nulls_inside_the_request() -> None:
    run = parse_run_line(RUN_LINE)
    assert run.retry.max_retries == 2
    assert run.request["tool_choice"] is None
    assert json.loads(run.to_json_line()) == json.loads(RUN_LINE)


def test_retry_policy_defaults_to_the_canonical_retryable_codes() -> None:
    policy = RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=2, jitter_ratio=0)
    assert policy.retryable_codes == list(DEFAULT_RETRYABLE_CODES)
    assert DEFAULT_RETRYABLE_CODES == (
        "EMPTY_RESPONSE",
        "MALFORMED_TOOL_CALL",
        "RATE_LIMIT",
        "SERVER",
        "TIMEOUT",
        "TRANSPORT",
    )


@pytest.mark.parametrize(
    "change",
    [
        {"max_retries": -1},
        {"initial_delay_ms": 0},
        {"initial_delay_ms": 5, "max_delay_ms": 4},
        {"jitter_ratio": 1.1},
        {"jitter_ratio": -0.1},
    ],
    ids=repr,
)
def test_invalid_retry_policy_is_rejected(change: dict[str, float]) -> None:
    fields: dict[str, float] = {
        "max_retries": 1,
        "initial_delay_ms": 1,
        "max_delay_ms": 2,
        "jitter_ratio": 0,
    }
    with pytest.raises(ValueError):
        RetryPolicy.model_validate(fields | change)


def test_run_case_rejects_unknown_fields() -> None:
    with pytest.raises(EventDecodeError, match="extra"):
        parse_run_line(RUN_LINE.replace('"timeout_s"', '"extra": 1, "timeout_s"'))


def test_run_case_model_constructs() -> None:
    run = RunCase(
        case="c",
        base_url="http://x/v1",
        api_key="k",
        request={},
        retry=RetryPolicy(max_retries=0, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
        idle_timeout_s=0.5,
        timeout_s=1,
    )
    assert parse_run_line(run.to_json_line()) == run


def hello_with(**fields: object) -> str:
    return json.dumps(json.loads(HELLO_LINE) | fields)


@pytest.mark.parametrize("protocol", [1, 1.1])
def test_a_hello_may_say_protocol_1_or_1_1(protocol: float) -> None:
    hello = parse_hello_line(hello_with(protocol=protocol))
    assert hello.protocol == protocol and protocol in PROTOCOL_VERSIONS
    assert json.loads(hello.to_json_line())["protocol"] == protocol


@pytest.mark.parametrize("protocol", [2, 1.2, "1.1", True])
def test_a_hello_of_another_protocol_is_refused_naming_both(protocol: object) -> None:
    with pytest.raises(EventDecodeError, match="protocol"):
        parse_hello_line(hello_with(protocol=protocol))
    if not isinstance(protocol, str | bool):
        with pytest.raises(EventDecodeError, match=f"speaks protocol {protocol}, the suite"):
            parse_hello_line(hello_with(protocol=protocol))


def test_a_hello_declares_its_dialects_chat_alone_when_absent() -> None:
    assert parse_hello_line(HELLO_LINE).spoken_dialects == ("chat-completions",)
    both = ["chat-completions", "anthropic-messages"]
    hello = parse_hello_line(hello_with(protocol=1.1, dialects=both))
    assert hello.spoken_dialects == tuple(both)


@pytest.mark.parametrize(
    ("dialects", "match"),
    [
        (["anthropic"], "unknown dialect 'anthropic'"),
        (["chat-completions", "openai-chat"], "unknown dialect 'openai-chat'"),
        ([], "at least one dialect"),
        (["anthropic-messages", "anthropic-messages"], "listed twice"),
        ("anthropic-messages", "dialects"),
    ],
)
def test_a_hello_naming_an_unknown_dialect_is_refused_naming_it(
    dialects: object, match: str
) -> None:
    with pytest.raises(EventDecodeError, match=match):
        parse_hello_line(hello_with(protocol=1.1, dialects=dialects))
