"""The Anthropic Messages lint: each AN wire rule flags the shape it guards against, with
the event's position, and keeps quiet on the documented stream; `conformance lint` on
Anthropic bodies, raw or recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.lint import MESSAGES_RULES, LintResult, attempt_wire, lint
from conformance.lint.scan import scan
from conformance.options import bundled_fixtures
from fakeprovider.build import MessagesStreamBuilder, ScenarioBuilder, messages_stream
from fakeprovider.proxy import RecordingProxy, Saved
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import ServerThread


def _wire(builder: MessagesStreamBuilder) -> bytes:
    scenario = ScenarioBuilder("lint", dialect="anthropic-messages").attempt(builder).build()
    return attempt_wire(scenario.attempts[0], scenario.dialect).body


def _lint(builder: MessagesStreamBuilder) -> LintResult:
    """The lint of the attempt as the fake provider sends it, its ending included."""
    scenario = ScenarioBuilder("lint", dialect="anthropic-messages").attempt(builder).build()
    return attempt_wire(scenario.attempts[0], scenario.dialect).lint(include_usage=False)


def _rules(result: LintResult) -> list[str]:
    return [finding.rule for finding in result.findings]


def _opened(*, input_tokens: int = 25) -> MessagesStreamBuilder:
    return messages_stream().message_start(input_tokens=input_tokens)


def _basic_text() -> MessagesStreamBuilder:
    """The an-basic-text shape: the documented stream, a ping inside the block."""
    return (
        _opened()
        .text_start(0)
        .ping()
        .text_delta(0, "Hel")
        .text_delta(0, "lo")
        .block_stop(0)
        .message_delta("end_turn", output_tokens=15)
        .message_stop()
    )


def _ended(builder: MessagesStreamBuilder, reason: str = "end_turn") -> MessagesStreamBuilder:
    return builder.message_delta(reason, output_tokens=5).message_stop()


def _tool(index: int, id: object = "toolu_a", name: object = "get_weather") -> dict[str, object]:
    return {"type": "tool_use", "id": id, "name": name, "input": {}}


def test_the_documented_streams_have_no_finding() -> None:
    tools = (
        _opened()
        .text_start(0)
        .text_delta(0, "Let me look.")
        .block_stop(0)
        .tool_use_start(1, "toolu_a", "get_weather")
        .input_json(1, "")
        .input_json(1, '{"city": "Par')
        .input_json(1, 'is"}')
        .block_stop(1)
        .tool_use_start(2, "toolu_b", "get_time")
        .input_json(2, "")
        .block_stop(2)
        .thinking_start(3)
        .thinking_delta(3, "hm")
        .signature_delta(3, "c2ln")
        .block_stop(3)
    )
    truncated = _opened().tool_use_start(0, "toolu_a", "f").input_json(0, '{"ci')
    # The SDK's recorded refusal: a preliminary output count of 1, then 0.
    refusal = _opened().text_start(0).block_stop(0).message_delta("refusal", output_tokens=0)
    shapes = (_ended(tools, "tool_use"), _ended(truncated, "max_tokens"), refusal.message_stop())

    for clean in (_basic_text(), *shapes):
        result = _lint(clean)
        assert result.findings == (), [str(finding) for finding in result.findings]
    assert not _lint(_basic_text()).failed
    assert {"AN-W12", "AN-W13", "AN-W10", "AN-W11", "AN-W7"} <= _lint(_ended(tools)).exercised


def test_the_bundled_text_fixture_is_clean() -> None:
    (fixture,) = bundled_fixtures().glob("anthropic/**/an-basic-text.yaml")

    result = CliRunner().invoke(main, ["lint", str(fixture)])

    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("builder", "rule", "words"),
    [
        (
            _ended(_opened().text_delta(0, "x")),
            "AN-W1",
            'event 2 ("content_block_delta") for index 0, never started',
        ),
        (
            _ended(_opened().text_start(0).block_stop(0).text_delta(0, "late")),
            "AN-W1",
            "for index 0, already stopped",
        ),
        (
            _ended(_opened().text_start(0).block_stop(0).block_stop(0)),
            "AN-W1",
            'event 4 ("content_block_stop") for index 0, already stopped',
        ),
        (
            _ended(_opened().text_start(0).block_stop(0).thinking_start(0).block_stop(0)),
            "AN-W2",
            "starts index 0 again (event 2 started it; stopped)",
        ),
        (
            _ended(_opened().text_start(0).thinking_start(0).block_stop(0)),
            "AN-W2",
            "(event 2 started it; open)",
        ),
        (
            _ended(_opened().tool_use_start(0, "toolu_a", "f").text_delta(0, "\n").block_stop(0)),
            "AN-W3",
            '"text_delta" into the "tool_use" block of event 2',
        ),
        (
            _ended(_opened().text_start(0).thinking_delta(0, "hm").block_stop(0)),
            "AN-W3",
            '"thinking_delta" into the "text" block',
        ),
        (
            _opened().text_start(0).text_delta(0, "cut").block_stop(0),
            "AN-W4",
            "before message_stop",
        ),
        (
            _opened().error().message_stop(),
            "AN-W4",
            'event 3 ("message_stop") is a second end, after the error of event 2',
        ),
        (_basic_text().text_start(1), "AN-W5", "1 event(s) after message_stop"),
        (
            _ended(messages_stream().ping().text_start(0).block_stop(0)),
            "AN-W6",
            "before message_start",
        ),
        (
            _ended(_opened().text_start(0).text_delta(0, "hi")),
            "AN-W7",
            'stop_reason "end_turn" with index 0 open',
        ),
        (_ended(_opened().text_start(0).data_only().block_stop(0)), "AN-W8", "has no event: line"),
        (
            _ended(_opened().text_start(0).named("content_block_delta").block_stop(0)),
            "AN-W8",
            'event 2 ("content_block_start") is named "content_block_delta"',
        ),
        (
            _ended(_opened().text_start(0).field("event", "content_block_stop", event_end=True)),
            "AN-W9",
            'event 3 ("content_block_stop") has no data: line',
        ),
        (
            _ended(_opened().text_start(0).field("event", "content_block_stop").raw("")),
            "AN-W9",
            'event 3 ("content_block_stop") has empty data',
        ),
        (
            _ended(_opened().raw("upstream timed out")),
            "AN-W9",
            'data is not a JSON object: "upstream timed out"',
        ),
        (
            _ended(
                _opened().tool_use_start(0, "toolu_a", "f").input_json(0, '{"a": 1').block_stop(0)
            ),
            "AN-W10",
            'stops the "tool_use" block of event 2: its partial_json is not JSON',
        ),
        (
            _opened(input_tokens=25)
            .message_delta("end_turn", usage={"input_tokens": 3, "output_tokens": 4})
            .message_stop(),
            "AN-W11",
            "input_tokens 3, down from 25 at event 1",
        ),
        (
            _opened()
            .message_delta(None, output_tokens=9)
            .message_delta("end_turn", output_tokens=4)
            .message_stop(),
            "AN-W11",
            "output_tokens 4, down from 9 at event 2",
        ),
        (
            _ended(_opened().block_start(0, _tool(0, id="")).block_stop(0)),
            "AN-W12",
            'tool_use with id ""',
        ),
        (
            _ended(_opened().block_start(0, {"type": "tool_use", "id": "toolu_a"}).block_stop(0)),
            "AN-W12",
            "tool_use with name absent",
        ),
        (
            _ended(
                _opened()
                .block_start(0, _tool(0))
                .block_stop(0)
                .block_start(1, _tool(1, name="other"))
                .block_stop(1)
            ),
            "AN-W13",
            'event 4 ("content_block_start") reuses tool id "toolu_a" of event 2',
        ),
    ],
)
def test_each_rule_flags_its_shape(builder: MessagesStreamBuilder, rule: str, words: str) -> None:
    result = _lint(builder)

    flagged = result.of(rule)
    assert flagged, _rules(result)
    assert words in flagged[0].message, flagged[0].message
    assert rule in result.exercised


def test_every_rule_has_a_case_that_breaks_it() -> None:
    source = Path(__file__).read_text(encoding="utf-8")

    untested = [rule for rule in MESSAGES_RULES if f'"{rule}",' not in source]

    assert untested == []
    for rule in MESSAGES_RULES.values():
        assert rule.dialect == "anthropic-messages" and rule.cited and rule.statement


def test_a_finding_is_at_the_line_and_byte_of_its_event() -> None:
    body = _wire(_ended(_opened().text_start(0).text_delta(3, "x").block_stop(0)))

    (finding,) = lint(body).of("AN-W1")

    offset = body.index(b"event: content_block_delta")
    assert (finding.position.line, finding.position.offset) == (7, offset)


def test_the_scan_keeps_event_names_and_a_named_event_without_data() -> None:
    scanned = scan(b"event: a\ndata: 1\n\nevent: b\n\ndata: 2\n\n")

    assert [(event.name, event.data) for event in scanned.events] == [("a", "1"), (None, "2")]
    assert [(event.name, event.at.line) for event in scanned.named_without_data] == [("b", 4)]
    assert (scanned.events[0].at.line, scanned.events[0].start.line) == (1, 2)


def test_a_cut_stream_fails_without_a_missing_end_finding() -> None:
    result = _lint(_opened().text_start(0).text_delta(0, "hi").reset())

    assert result.failed
    assert result.of("AN-W4") == ()


def test_a_trailing_done_or_ping_after_message_stop_is_tolerated() -> None:
    done = _basic_text().ping().field("event", "done").done()

    assert _rules(_lint(done)) == []


def test_an_error_instead_of_the_message_is_its_one_end() -> None:
    overloaded = messages_stream().ping().error()
    untyped = messages_stream().event({"error": "overloaded"}).named("error")

    assert _rules(_lint(overloaded)) == []
    # No type: read by its name, an error, so an end, and no message_start is owed.
    assert _rules(_lint(untyped)) == ["AN-W8"]


def test_a_mid_stream_error_is_a_failure_and_its_own_end() -> None:
    result = _lint(_opened().text_start(0).text_delta(0, "par").error())

    assert result.failed
    assert _rules(result) == []


def test_stream_content_is_escaped_in_every_finding() -> None:
    hostile = "\x1b[31m\u202eevil\n"
    body = _wire(_ended(_opened().text_start(0).named(hostile[:-1]).block_stop(0)))

    (finding,) = lint(body).of("AN-W8")

    assert finding.message.isascii() and "\x1b" not in finding.message
    assert "\\u001b[31m\\u202eevil" in finding.message


@pytest.mark.parametrize(
    ("body", "anthropic"),
    [
        (b'event: message_start\ndata: {"type":"message_start"}\n\n', True),
        (b'data: {"type":"message_start","message":{}}\n\n', True),  # data-only, as F2
        (b'data: {"choices":[]}\n\ndata: [DONE]\n\n', False),
    ],
)
def test_the_dialect_is_read_from_the_body(body: bytes, anthropic: bool) -> None:
    detected = lint(body)
    assert any(rule.startswith("AN-") for rule in detected.exercised) is anthropic
    assert lint(body, dialect="chat-completions").exercised.isdisjoint(MESSAGES_RULES)


# --- conformance lint ------------------------------------------------------------------------


def test_lint_command_reads_a_raw_anthropic_body_with_or_without_dialect(tmp_path: Path) -> None:
    data_only = tmp_path / "data-only.sse"
    data_only.write_bytes(_wire(_ended(_opened().ping().data_only().text_start(0).block_stop(0))))

    told = CliRunner().invoke(main, ["lint", "--dialect", "anthropic-messages", str(data_only)])
    detected = CliRunner().invoke(main, ["lint", str(data_only)])

    assert told.exit_code == 1
    assert f"{data_only}:4: byte " in told.stdout
    assert 'AN-W8 event 2 ("ping") has no event: line (§4 F2)' in told.stdout
    assert detected.stdout == told.stdout  # named events before it: detected


def test_lint_command_checks_a_recorded_anthropic_fixture(tmp_path: Path) -> None:
    broken = _opened().text_start(0).text_delta(1, "lost").block_stop(0)
    scenario = ScenarioBuilder("an-lost", dialect="anthropic-messages")
    scenario = scenario.attempt(_ended(broken)).build()
    with ServerThread(ScenarioRegistry([scenario])) as server:
        saved = asyncio.run(_record(f"{server.root_url}/an-lost", tmp_path))
    assert saved.fixture is not None

    from_fixture = CliRunner().invoke(main, ["lint", str(saved.fixture)])
    from_dump = CliRunner().invoke(main, ["lint", str(saved.dump)])

    assert from_fixture.exit_code == from_dump.exit_code == 1
    expected = 'AN-W1 event 3 ("content_block_delta") for index 1, never started'
    assert expected in from_fixture.stdout and expected in from_dump.stdout
    assert from_fixture.stdout.count("AN-") == from_dump.stdout.count("AN-") == 1


async def _record(upstream: str, out_dir: Path) -> Saved:
    saved: asyncio.Queue[Saved] = asyncio.Queue()
    async with (
        RecordingProxy(upstream, out_dir, on_saved=saved.put_nowait) as proxy,
        httpx.AsyncClient(trust_env=False) as client,
    ):
        await client.post(f"{proxy.root_url}/v1/messages", json={"model": "claude"})
        return await asyncio.wait_for(saved.get(), 30.0)


def test_an_anthropic_error_response_body_is_checked_as_a_json_error() -> None:
    body = json.dumps({"type": "error", "error": {"type": "overloaded_error"}}).encode()

    assert _rules(lint(body, status=529, dialect="anthropic-messages")) == []
    assert _rules(lint(b"Overloaded", status=529, dialect="anthropic-messages")) == ["W9"]
