"""The oracle against the hand-written ``expect`` blocks of the bundled fixtures.

Two independent readings of the spec: a fixture author's and the oracle's. Where they
differ, one of them is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.events import RetryPolicy, ToolCallBlock
from conformance.options import case_policy
from conformance.oracle import classify_status, expected_outcome, retry_after_ms, sse_payloads
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

REPO = Path(__file__).resolve().parents[2]
POLICY = RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=2000, jitter_ratio=0)
FIXTURES = [s for s in load_fixtures([REPO / "fixtures"]) if s.expect is not None]


@pytest.mark.parametrize("scenario", FIXTURES, ids=[s.id for s in FIXTURES])
def test_oracle_agrees_with_fixture_expectation(scenario: Scenario) -> None:
    expect: dict[str, Any] = dict(scenario.expect or {})
    outcome = expected_outcome(scenario, case_policy(POLICY, scenario))
    final = outcome.final
    assert final.reason == expect["finish"]
    assert final.code == expect.get("code")
    assert len(outcome.attempts) == expect.get("attempts", 1)
    if not final.success:
        return
    texts = {type(b).__name__: b.model_dump() for b in final.blocks}
    if "text" in expect:
        assert texts["TextBlock"]["text"] == expect["text"]
    if "reasoning" in expect:
        assert texts["ReasoningBlock"]["text"] == expect["reasoning"]
    calls = [b for b in final.blocks if isinstance(b, ToolCallBlock)]
    for call, wanted in zip(calls, expect.get("tool_calls", []), strict=True):
        for key, value in wanted.items():
            assert getattr(call, key) == value
    if "usage" in expect:
        assert final.usage is not None
        assert (
            final.usage.model_dump(exclude_none=True, exclude={"case", "type"})
            | {"cache_read_tokens": final.usage.cache_read_tokens}
            == {"cache_read_tokens": 0} | expect["usage"]
        )


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


def test_last_usage_wins_and_is_disjoint() -> None:
    final = outcome_of(
        stream()
        .text("x")
        .finish("stop", usage={"prompt_tokens": 1, "completion_tokens": 1})
        .usage(10, 4, cached_tokens=3, reasoning_tokens=2)
        .done()
    )
    assert final.usage.model_dump(exclude={"case", "type"}) == {
        "input_tokens": 7,
        "output_tokens": 4,
        "cache_read_tokens": 3,
        "reasoning_tokens": 2,
    }


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
    ],
)
def test_status_classification(status: int, detail: str, code: str) -> None:
    assert classify_status(status, detail) == code


def test_retry_after_values() -> None:
    assert retry_after_ms({"Retry-After": "2"}, now=0) == 2000
    assert retry_after_ms({"retry-after": "0"}, now=0) is None
    assert retry_after_ms({"retry-after": "9" * 400}, now=0) is None
    assert retry_after_ms({"retry-after": "not-a-date"}, now=0) is None
    assert retry_after_ms({"retry-after": "Thu, 01 Jan 1970 00:00:03 GMT"}, now=0) == 3000
    assert retry_after_ms({"retry-after": "Thu, 01 Jan 1970 00:00:03 GMT"}, now=10) is None


def test_sse_payloads_whole_body() -> None:
    body = b"\xef\xbb\xbf: c\r\ndata:a\rdata: b\n\nid: 1\n\ndata: tail"
    assert sse_payloads(body) == ["a\nb"]
