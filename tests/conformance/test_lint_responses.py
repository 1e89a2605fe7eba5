"""The OpenAI Responses lint: each RS wire rule flags the shape it guards against, with the
event's position, and keeps quiet on the documented stream; `conformance lint` on Responses
bodies, raw or recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.lint import (
    MESSAGES_RULES,
    RESPONSES_RULES,
    RULES,
    LintResult,
    attempt_wire,
    lint,
)
from fakeprovider.build import ResponsesStreamBuilder, ScenarioBuilder, responses_stream
from fakeprovider.proxy import RecordingProxy, Saved
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import ServerThread

USAGE = {"input_tokens": 5, "output_tokens": 2}


def _scenario(builder: ResponsesStreamBuilder, id: str = "lint") -> ScenarioBuilder:
    return ScenarioBuilder(id, dialect="openai-responses").attempt(builder)


def _wire(builder: ResponsesStreamBuilder) -> bytes:
    scenario = _scenario(builder).build()
    return attempt_wire(scenario.attempts[0], scenario.dialect).body


def _lint(builder: ResponsesStreamBuilder) -> LintResult:
    """The lint of the attempt as the fake provider sends it, its ending included."""
    scenario = _scenario(builder).build()
    return attempt_wire(scenario.attempts[0], scenario.dialect).lint(include_usage=False)


def _rules(result: LintResult) -> list[str]:
    return [finding.rule for finding in result.findings]


def _message(id: str = "msg_1", text: str = "Hello") -> dict[str, object]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": id,
        "status": "completed",
        "role": "assistant",
        "content": content,
    }


def _call(id: str = "fc_1", call_id: str = "call_1", arguments: str = "{}") -> dict[str, object]:
    return {
        "type": "function_call",
        "id": id,
        "call_id": call_id,
        "name": "get_weather",
        "arguments": arguments,
        "status": "completed",
    }


def _opened() -> ResponsesStreamBuilder:
    return responses_stream().created().in_progress()


def _text(builder: ResponsesStreamBuilder | None = None) -> ResponsesStreamBuilder:
    """A message item streamed whole: added, its part, two deltas, the done events."""
    return (
        (builder or _opened())
        .message_added(0, "msg_1")
        .part_added(0, "msg_1")
        .text_delta(0, "msg_1", "Hel")
        .text_delta(0, "msg_1", "lo")
        .text_done(0, "msg_1", "Hello")
        .part_done(0, "msg_1", {"type": "output_text", "text": "Hello", "annotations": []})
        .item_done(0, _message())
    )


def _completed(builder: ResponsesStreamBuilder, *output: object) -> ResponsesStreamBuilder:
    return builder.completed(output=list(output) or [_message()], usage=USAGE)


def test_the_documented_streams_have_no_finding() -> None:
    text = _completed(_text())
    tools = (
        _opened()
        .reasoning_added(0, "rs_1")
        .summary_delta(0, "rs_1", "Thinking")
        .item_done(0, {"type": "reasoning", "id": "rs_1", "summary": []})
        .function_call_added(1, "fc_1", "call_1", "get_weather")
        .arguments_delta(1, "fc_1", '{"city":')
        .keepalive()
        .arguments_delta(1, "fc_1", '"Paris"}')
        .arguments_done(1, "fc_1", '{"city":"Paris"}')
        .item_done(1, _call(arguments='{"city":"Paris"}'))
        .item_added(2, {"type": "web_search_call", "id": "ws_1", "status": "in_progress"})
        .event({"type": "response.web_search_call.searching", "output_index": 2, "item_id": "ws_1"})
        .item_done(2, {"type": "web_search_call", "id": "ws_1", "status": "completed"})
    )
    tools = tools.completed(output=[{}, _call(), {}], usage=USAGE)
    truncated = _opened().message_added(0, "msg_1").text_delta(0, "msg_1", "cut")
    truncated = truncated.incomplete(output=[_message(text="cut")])
    failed = _opened().error("rate_limit_exceeded", "slow down").failed("rate_limit_exceeded")
    nothing = _opened().completed(output=[], usage=USAGE)  # no item streamed: [] is right

    for clean in (text, tools, truncated, failed, nothing):
        result = _lint(clean)
        assert result.findings == (), [str(finding) for finding in result.findings]
    assert not _lint(text).failed and not _lint(truncated).failed
    assert _lint(failed).failed
    assert {"RS-W8", "RS-W11"} <= _lint(text).exercised
    assert "RS-W12" in _lint(failed).exercised


@pytest.mark.parametrize(
    ("builder", "rule", "words"),
    [
        (
            _completed(_text(responses_stream().in_progress())),
            "RS-W1",
            'event 1 ("response.in_progress") comes before response.created',
        ),
        (
            _text(),
            "RS-W2",
            "the body ended cleanly before a terminal event",
        ),
        (
            _completed(_completed(_text())),
            "RS-W3",
            "1 event(s) after the response.completed of event 10",
        ),
        (
            _completed(_text()).item_added(1, _message("msg_2")),
            "RS-W3",
            "after the response.completed",
        ),
        (_completed(_text(_opened().data_only())), "RS-W4", "has no event: line"),
        (
            _completed(_text(_opened().named("response.created"))),
            "RS-W4",
            'event 2 ("response.in_progress") is named "response.created"',
        ),
        (
            _completed(_text(_opened().unnumbered())),
            "RS-W5",
            'event 2 ("response.in_progress") has no sequence_number',
        ),
        (
            _completed(_text(_opened().event({"type": "keepalive", "sequence_number": 0}))),
            "RS-W5",
            'event 3 ("keepalive") sequence_number 0, not above 1 of event 2',
        ),
        (
            _completed(_text(_opened().event({"type": "keepalive", "sequence_number": "2"}))),
            "RS-W5",
            'sequence_number "2" is no integer',
        ),
        (
            _completed(_opened().text_delta(0, "msg_1", "lost")),
            "RS-W6",
            'event 3 ("response.output_text.delta") for output_index 0, never opened',
        ),
        (
            _completed(_text().text_delta(0, "msg_1", "late")),
            "RS-W6",
            "for output_index 0, already done",
        ),
        (
            _completed(_opened().message_added(0).event({"type": "response.output_text.delta"})),
            "RS-W6",
            "names no output_index",
        ),
        (
            _completed(_opened().message_added(1, "msg_1").item_done(1, _message())),
            "RS-W7",
            'event 3 ("response.output_item.added") opens output_index 1; expected 0',
        ),
        (
            _completed(_text().message_added(0, "msg_2").item_done(0, _message("msg_2"))),
            "RS-W7",
            "opens output_index 0 again (event 3; done)",
        ),
        (
            _completed(_opened().message_added(0, "msg_1").text_delta(0, "msg_rotated", "Hi")),
            "RS-W8",
            'item_id "msg_rotated", not the id "msg_1" of the item event 3 opened',
        ),
        (
            _completed(
                _opened().function_call_added(0, "fc_1", "call_1", "f").text_delta(0, "fc_1", "x")
            ),
            "RS-W9",
            'event 4 ("response.output_text.delta") into the "function_call" item of event 3',
        ),
        (
            _completed(_opened().message_added(0, "msg_1").arguments_delta(0, "msg_1", "{}")),
            "RS-W9",
            '"response.function_call_arguments.delta") into the "message" item',
        ),
        (
            _completed(_text()).done(),
            "RS-W10",
            "event 11 is data: [DONE], a gateway's (after the terminal",
        ),
        (
            _text().done(),
            "RS-W10",
            "(before any terminal event)",
        ),
        (
            _text().completed(output=[], usage=USAGE),
            "RS-W11",
            'event 10 ("response.completed") has response.output [], though 1 were streamed',
        ),
        (
            _text().completed(output=None, usage=USAGE),
            "RS-W11",
            "has response.output null",
        ),
        (
            _text().event(
                {"type": "response.completed", "response": {"status": "completed", "usage": USAGE}}
            ),
            "RS-W11",
            "has no response.output",
        ),
        (
            _text()
            .message_added(1, "msg_2")
            .item_done(1, _message("msg_2"))
            .incomplete(output=[_message()]),
            "RS-W11",
            "lists 1 item(s) in response.output, though 2 were streamed",
        ),
        (
            _opened().error("server_error", "boom", nested=False).failed(),
            "RS-W12",
            "is flat, as documented: openai-python yields it without raising",
        ),
        (
            _opened().event({"type": "error", "error": "boom"}).failed(),
            "RS-W12",
            "neither nested nor flat",
        ),
        (
            _completed(_text(_opened().raw("upstream timed out"))),
            "RS-W13",
            'data is not a JSON object: "upstream timed out"',
        ),
        (
            _completed(_text(_opened().field("event", "keepalive", event_end=True))),
            "RS-W13",
            'event 3 ("keepalive") has no data: line',
        ),
    ],
)
def test_each_rule_flags_its_shape(builder: ResponsesStreamBuilder, rule: str, words: str) -> None:
    result = _lint(builder)

    flagged = result.of(rule)
    assert flagged, _rules(result)
    assert words in flagged[0].message, flagged[0].message
    assert rule in result.exercised


def test_every_rule_has_a_case_that_breaks_it() -> None:
    source = Path(__file__).read_text(encoding="utf-8")

    untested = [rule for rule in RESPONSES_RULES if f'"{rule}",' not in source]

    assert untested == []
    for rule in RESPONSES_RULES.values():
        assert rule.dialect == "openai-responses" and rule.cited and rule.statement
        assert rule.family == "RS-W" and "a client's reading judged by " in rule.source


def test_a_finding_is_at_the_line_and_byte_of_its_event() -> None:
    body = _wire(_completed(_text(_opened().text_delta(3, "msg_1", "x"))))

    (finding,) = lint(body).of("RS-W6")

    offset = body.index(b"event: response.output_text.delta")
    assert (finding.position.line, finding.position.offset) == (7, offset)


def test_a_cut_stream_fails_without_a_missing_terminal_finding() -> None:
    result = _lint(_opened().message_added(0, "msg_1").text_delta(0, "msg_1", "hi").reset())

    assert result.failed
    assert result.of("RS-W2") == ()


def test_an_error_without_a_terminal_event_is_a_failure_and_its_end() -> None:
    result = _lint(_opened().message_added(0, "msg_1").error("server_error", "boom"))

    assert result.failed
    assert _rules(result) == []


def test_an_http_error_body_sent_as_an_event_is_read_as_an_error() -> None:
    chat_shaped = {"error": {"message": "overloaded", "type": "server_error", "code": None}}

    result = _lint(_opened().message_added(0, "msg_1").event(chat_shaped).data_only())

    assert result.failed
    assert _rules(result) == ["RS-W4"]  # the missing event: line; no terminal is owed


def test_a_keepalive_after_the_terminal_event_is_tolerated() -> None:
    assert _rules(_lint(_completed(_text()).keepalive())) == []


def test_stream_content_is_escaped_in_every_finding() -> None:
    hostile = "\x1b[31m\u202eevil"
    body = _wire(_completed(_text(_opened().message_added(0, "msg_1").text_delta(0, hostile, "x"))))

    (finding, *_) = lint(body).of("RS-W8")

    assert finding.message.isascii() and "\x1b" not in finding.message
    assert "\\u001b[31m\\u202eevil" in finding.message


@pytest.mark.parametrize(
    ("body", "responses"),
    [
        (b'event: response.created\ndata: {"type":"response.created"}\n\n', True),
        (b'data: {"type":"response.output_text.delta","delta":"x"}\n\n', True),  # as G9
        (b'event: message_start\ndata: {"type":"message_start"}\n\n', False),
        (b'data: {"choices":[]}\n\ndata: [DONE]\n\n', False),
    ],
)
def test_the_dialect_is_read_from_the_body(body: bytes, responses: bool) -> None:
    detected = lint(body)
    assert any(rule.startswith("RS-") for rule in detected.exercised) is responses
    assert lint(body, dialect="chat-completions").exercised.isdisjoint(RESPONSES_RULES)
    assert lint(body, dialect="openai-responses").exercised >= {"RS-W1", "RS-W2"}


# --- conformance lint ------------------------------------------------------------------------


def test_lint_command_reads_a_raw_responses_body_with_or_without_dialect(tmp_path: Path) -> None:
    dump = tmp_path / "gateway.sse"
    dump.write_bytes(_wire(_text().completed(output=[], usage=USAGE).done()))

    told = CliRunner().invoke(main, ["lint", "--dialect", "openai-responses", str(dump)])
    detected = CliRunner().invoke(main, ["lint", str(dump)])

    assert told.exit_code == 1
    assert f"{dump}:28: byte " in told.stdout
    assert 'RS-W11 event 10 ("response.completed") has response.output []' in told.stdout
    assert "(§4 G1-G9 (gateways' terminal output [] or missing" in told.stdout
    assert "RS-W10 event 11 is data: [DONE], a gateway's (after" in told.stdout
    assert detected.stdout == told.stdout


def test_lint_command_checks_a_recorded_responses_fixture(tmp_path: Path) -> None:
    broken = _opened().message_added(0, "msg_1").text_delta(1, "msg_1", "lost")
    scenario = _scenario(_completed(broken), "rs-lost").build()
    with ServerThread(ScenarioRegistry([scenario])) as server:
        saved = asyncio.run(_record(f"{server.root_url}/rs-lost", tmp_path))
    assert saved.fixture is not None

    from_fixture = CliRunner().invoke(main, ["lint", str(saved.fixture)])
    from_dump = CliRunner().invoke(main, ["lint", str(saved.dump)])

    assert from_fixture.exit_code == from_dump.exit_code == 1
    expected = 'RS-W6 event 4 ("response.output_text.delta") for output_index 1, never opened'
    assert expected in from_fixture.stdout and expected in from_dump.stdout
    assert from_fixture.stdout.count("RS-") == from_dump.stdout.count("RS-") == 1


async def _record(upstream: str, out_dir: Path) -> Saved:
    saved: asyncio.Queue[Saved] = asyncio.Queue()
    async with (
        RecordingProxy(upstream, out_dir, on_saved=saved.put_nowait) as proxy,
        httpx.AsyncClient(trust_env=False) as client,
    ):
        await client.post(f"{proxy.root_url}/v1/responses", json={"model": "gpt"})
        return await asyncio.wait_for(saved.get(), 30.0)


def test_a_responses_error_response_body_is_checked_as_a_json_error() -> None:
    body = b'{"error":{"message":"slow down","type":"requests","param":null,"code":null}}'

    assert _rules(lint(body, status=429, dialect="openai-responses")) == []
    assert _rules(lint(b"Too Many Requests", status=429, dialect="openai-responses")) == ["W9"]


def test_the_lint_page_lists_every_rule_as_the_data_says() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text("utf-8")

    rows = [
        f"| {rule.id} | {rule.level} | {rule.statement} | {rule.cited} |" for rule in RULES.values()
    ]
    rows += [
        f"| {rule.id} | {rule.level} | {rule.statement} | {rule.judged_by} | {rule.cited} |"
        for rule in (*MESSAGES_RULES.values(), *RESPONSES_RULES.values())
    ]

    assert [row for row in rows if row not in page.splitlines()] == []
    assert page.count("\n| RS-W") == len(RESPONSES_RULES)
