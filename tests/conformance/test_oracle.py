"""The oracle against the hand-written ``expect`` blocks of the bundled fixtures.

Two independent readings of the spec: a fixture author's and the oracle's. Where they
differ, one of them is wrong.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest

from conformance import codes
from conformance.events import RetryPolicy, TextBlock, ToolCallBlock
from conformance.options import bundled_fixtures
from conformance.oracle import (
    SUCCESS_REASONS,
    classify_status,
    error_detail,
    expect_disagreements,
    expected_outcome,
    retry_after_ms,
    sse_payloads,
)
from conformance.quirks import recorded_only
from fakeprovider import wire
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.fixtures import load_fixtures
from fakeprovider.playback import prepare
from fakeprovider.scenario import CANONICAL_CODES, ExpectedFinish, Scenario

POLICY = RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=2000, jitter_ratio=0)
FIXTURES = [s for s in load_fixtures([bundled_fixtures()]) if s.expect is not None]


@pytest.mark.parametrize("scenario", FIXTURES, ids=[s.id for s in FIXTURES])
def test_oracle_agrees_with_fixture_expectation(scenario: Scenario) -> None:
    exhaustive = not recorded_only(scenario)
    assert expect_disagreements(scenario, exhaustive=exhaustive) == []


def outcome_of(builder: object, policy: RetryPolicy | None = None) -> Any:
    scenario = ScenarioBuilder("s").attempt(builder).build()  # type: ignore[arg-type]
    return expected_outcome(scenario, policy).final


def test_identity_is_established_once() -> None:
    final = outcome_of(
        stream()
        .role()
        .tool_call(0, id="call_1", name="get_weather", arguments="{")
        .tool_call(0, id="", name=None, arguments='"a"')
        .tool_call(0, id="call_1", name=7, arguments="}")
        .finish("tool_calls")
        .done()
    )
    assert final.blocks == (ToolCallBlock(id="call_1", name="get_weather", arguments='{"a"}'),)
    assert {"tool-id-empty", "tool-name-null", "tool-id-repeated", "tool-name-nonstring"} <= (
        final.features
    )


def test_another_identity_at_a_used_index_is_another_call() -> None:
    """T7's two calls sharing an index: a whole new identity opens a call; a new id alone
    (LM Studio's id on every delta) or before the call has its name does not."""
    final = outcome_of(
        stream()
        .tool_call(0, id="call_a", name="get_weather", arguments="{}")
        .tool_call(0, id="call_b", name="get_time", arguments="[")
        .tool_call(0, id="call_x", arguments="]")
        .finish("tool_calls")
        .done()
    )
    assert final.blocks == (
        ToolCallBlock(id="call_a", name="get_weather", arguments="{}"),
        ToolCallBlock(id="call_b", name="get_time", arguments="[]"),
    )
    assert {"tool-index-shared", "tool-parallel", "tool-id-conflict"} <= final.features
    late_name = outcome_of(
        stream()
        .tool_call(0, id="call_a", arguments="{")
        .tool_call(0, id="call_b", name="f", arguments="}")
        .finish("tool_calls")
        .done()
    )
    assert late_name.blocks == (ToolCallBlock(id="call_a", name="f", arguments="{}"),)


def test_unidentified_call_reports_usage_then_malformed() -> None:
    final = outcome_of(
        stream().tool_call(0, name="f", arguments="{}").finish("tool_calls").usage(5, 1).done()
    )
    assert (final.reason, final.code) == ("error", "MALFORMED_TOOL_CALL")
    assert final.usage is not None and final.usage.input_tokens == 5


def test_empty_stop_and_absent_finish_are_empty_response() -> None:
    assert outcome_of(stream().role().finish("stop").done()).code == "EMPTY_RESPONSE"
    assert outcome_of(stream().role().done()).code == "EMPTY_RESPONSE"
    assert outcome_of(stream().role().finish("length").done()).reason == "max-tokens"


def test_unknown_finish_reason_is_upper_cased_error() -> None:
    final = outcome_of(stream().text("x").finish("content_filter").done())
    assert (final.reason, final.code) == ("error", "CONTENT_FILTER")


def test_endings_before_done() -> None:
    assert outcome_of(stream().text("x").end()).code == "STREAM_CLOSED"
    assert outcome_of(stream().text("x").reset()).code == "TRANSPORT"
    assert outcome_of(stream().text("x").stall()).code == "TIMEOUT"
    assert outcome_of(stream().text("x").done(event_end=False)).code == "STREAM_CLOSED"
    assert outcome_of(stream().text("x").done().reset()).reason == "stop"
    assert outcome_of(stream().text("x").disconnect()).code == "TRANSPORT"  # a chunk cut short
    closed = stream(transfer="close").text("x").disconnect()
    assert outcome_of(closed).code == "STREAM_CLOSED"  # without chunks, closing ends the body


def test_the_oracle_reads_the_plan_the_provider_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    # Encoding a stream costs more than reading it (a byte-split one, thousands of writes):
    # once the provider has prepared an attempt, the oracle encodes nothing again.
    scenario = ScenarioBuilder("s").attempt(stream().split("byte").text("hé").done()).build()
    encoded: list[object] = []
    encode_step = wire.encode_step

    def counted(*args: Any) -> bytes:
        encoded.append(args)
        return encode_step(*args)

    monkeypatch.setattr(wire, "encode_step", counted)
    prepare(scenario.attempts[0])
    steps = len(encoded)
    assert expected_outcome(scenario, None).final.blocks == (TextBlock(text="hé"),)
    assert len(encoded) == steps


def test_last_usage_wins_and_is_disjoint() -> None:
    final = outcome_of(
        stream()
        .text("x")
        .finish("stop", usage={"prompt_tokens": 1, "completion_tokens": 1})
        .usage(10, 4, cached_tokens=3, reasoning_tokens=2)
        .done()
    )
    assert final.usage.model_dump(exclude={"case", "type"}, exclude_none=True) == {
        "input_tokens": 7,
        "output_tokens": 4,
        "cache_read_tokens": 3,
        "reasoning_tokens": 2,
    }


def test_error_object_wording_is_read_as_in_an_error_body() -> None:
    error = {"code": 429, "type": "insufficient_quota", "message": "try later"}
    assert outcome_of(stream().chunk({"error": error}, envelope=False).done()).code == "QUOTA"


def test_retry_policy_decides_the_attempts() -> None:
    scenario = (
        ScenarioBuilder("s")
        .attempt(stream().role().finish("stop").done())
        .attempt(stream().text("ok").finish("stop").done())
        .build()
    )
    assert len(expected_outcome(scenario, POLICY).attempts) == 2
    assert len(expected_outcome(scenario, None).attempts) == 1
    no_empty = POLICY.model_copy(update={"retryable_codes": ["SERVER"]})
    assert len(expected_outcome(scenario, no_empty).attempts) == 1


@pytest.mark.parametrize(
    ("status", "detail", "code"),
    [
        (401, "insufficient_quota", "AUTH"),
        (403, "", "AUTH"),
        (413, "context_length_exceeded", "INVALID_REQUEST"),
        (429, "insufficient_quota account credits exhausted", "QUOTA"),
        (402, "Insufficient Balance", "QUOTA"),
        (429, "slow down", "RATE_LIMIT"),
        (400, "maximum context length is 128000 tokens", "CONTEXT_WINDOW_EXCEEDED"),
        (400, "temperature exceeds maximum allowed value", "INVALID_REQUEST"),
        (503, "", "SERVER"),
        (402, "", "HTTP_402"),
        (422, "", "HTTP_422"),
        # Decisions where the spec is silent (docs/decisions.md).
        (429, "You exceeded  your\ncurrent quota", "QUOTA"),
        (400, "the context window of this model is 8192 tokens", "INVALID_REQUEST"),
        (400, "input exceeded the model's context window", "CONTEXT_WINDOW_EXCEEDED"),
        (400, "request too large for the context", "CONTEXT_WINDOW_EXCEEDED"),
    ],
)
def test_status_classification(status: int, detail: str, code: str) -> None:
    assert classify_status(status, detail) == code


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"error": {"code": "insufficient_quota", "message": "no"}}', "insufficient_quota no"),
        (b'{"error": {"code": true, "type": ["quota"], "message": 7}}', "7"),
        (b'{"error": "exceeds\\nyour quota"}', "exceeds\nyour quota"),
        (b'{"error": ["insufficient_quota"]}', '{"error": ["insufficient_quota"]}'),
        (b"[" * 100_000, "[" * 100_000),
    ],
)
def test_error_detail(body: bytes, detail: str) -> None:
    assert error_detail(body) == detail


def test_retry_after_values() -> None:
    assert retry_after_ms({"Retry-After": "2"}, now=0) == 2000
    assert retry_after_ms({"retry-after": "0"}, now=0) is None
    assert retry_after_ms({"retry-after": "9" * 400}, now=0) is None
    assert retry_after_ms({"retry-after": "not-a-date"}, now=0) is None
    assert retry_after_ms({"retry-after": "Thu, 01 Jan 1970 00:00:03 GMT"}, now=0) == 3000
    assert retry_after_ms({"retry-after": "Thu, 01 Jan 1970 00:00:03 GMT"}, now=10) is None
    # Decisions where the spec is silent (docs/decisions.md).
    assert retry_after_ms({"retry-after": "0000000000000002"}, now=0) == 2000
    assert retry_after_ms({"retry-after": "1" + "0" * 17}, now=0) == 1e20
    assert retry_after_ms({"retry-after": "\u00b2"}, now=0) is None
    assert retry_after_ms({"retry-after": "\u0663"}, now=0) is None
    assert retry_after_ms({"retry-after": "Thu Jan  1 00:00:03 1970"}, now=0) == 3000
    assert (
        retry_after_ms({"retry-after": "Thu, 01 Jan 1970 99999999999999999999:00:03 GMT"}, now=0)
        is None
    )


def test_sse_payloads_whole_body() -> None:
    body = b"\xef\xbb\xbf: c\r\ndata:a\rdata: b\n\nid: 1\n\ndata: tail"
    assert sse_payloads(body) == ["a\nb"]


def test_the_expect_vocabulary_is_the_oracles() -> None:
    # fakeprovider spells the codes and finish reasons of `expect` itself: it cannot import
    # the suite.
    assert CANONICAL_CODES == codes.CANONICAL_CODES
    assert set(get_args(ExpectedFinish)) == {*SUCCESS_REASONS, "error"}


def disagreements(expect: dict[str, Any], *, exhaustive: bool = True) -> list[str]:
    builder = (
        stream().role().reasoning("hm").text("Hi").tool_call(0, id="c1", name="f", arguments="{}")
    )
    scenario = (
        ScenarioBuilder("s")
        .attempt(builder.finish("tool_calls").usage(9, 4, cached_tokens=0).done())
        .expect(**expect)
        .build()
    )
    found = expect_disagreements(scenario, exhaustive=exhaustive)
    return [f"{'.'.join(map(str, d.location))}: {d.reason}" for d in found]


CALL = '[{"id": "c1", "name": "f", "arguments": "{}"}]'
USAGE = {"input_tokens": 9, "output_tokens": 4}
FULL: dict[str, Any] = {
    "finish": "tool-calls",
    "text": "Hi",
    "reasoning": "hm",
    "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}],
    "usage": USAGE,
}


def test_an_agreeing_expect_has_no_disagreement() -> None:
    assert disagreements(FULL) == []
    assert disagreements(FULL | {"usage": USAGE | {"cache_read_tokens": 0}}) == []


def test_each_disagreement_names_its_field() -> None:
    assert disagreements(FULL | {"text": "Hey", "tool_calls": [{"id": "c2"}], "attempts": 2}) == [
        "expect.attempts: 2, but the oracle reads 1",
        'expect.text: "Hey", but the oracle reads "Hi"',
        'expect.tool_calls.0.id: "c2", but the oracle reads "c1"',
    ]
    assert disagreements(FULL | {"usage": USAGE | {"reasoning_tokens": 0}}) == [
        "expect.usage.reasoning_tokens: 0, but the oracle reads none"
    ]
    assert disagreements(FULL | {"tool_calls": []}) == [
        f"expect.tool_calls: [], but the oracle reads {CALL}"
    ]


def test_once_the_finish_differs_nothing_else_is_compared() -> None:
    assert disagreements({"finish": "stop", "text": "other"}) == [
        'expect.finish: "stop", but the oracle reads "tool-calls"'
    ]


def test_a_block_or_usage_left_out_is_none_unless_the_quirk_is_ambiguous() -> None:
    assert disagreements({"finish": "tool-calls"}) == [
        'expect.text: left out, but the oracle reads "Hi"',
        'expect.reasoning: left out, but the oracle reads "hm"',
        f"expect.tool_calls: left out, but the oracle reads {CALL}",
        "expect.usage: left out, but the oracle reads "
        '{"input_tokens": 9, "output_tokens": 4, "cache_read_tokens": 0}',
    ]
    assert disagreements({"finish": "tool-calls", "tool_calls": [{}]}, exhaustive=False) == []
