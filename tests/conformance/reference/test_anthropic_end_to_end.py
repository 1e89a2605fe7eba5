"""The reference adapter speaks Anthropic Messages to the fake provider: each cited fixture of
``fixtures/anthropic/`` gives the outcome its ``expect`` states (not the oracle's: the
translator is held to the fixture's author), in process and through the subprocess shell.

Run lines are built here until the suite's runner builds them for this dialect.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance import codes
from conformance.adapters.mutants import MutantAdapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.http_status import ANTHROPIC_ERRORS, classify_http_error
from conformance.events import (
    BlockEnd,
    Event,
    Finish,
    ReasoningBlock,
    Retry,
    RunCase,
    TextBlock,
    ToolCallBlock,
    Usage,
    parse_event_line,
    parse_hello_line,
)
from conformance.options import DEFAULT_POLICY, case_policy
from fakeprovider.build import ScenarioBuilder, anthropic_error
from fakeprovider.fixtures import load_fixtures
from fakeprovider.registry import RequestRecord, ScenarioRegistry
from fakeprovider.scenario import ErrorAttempt, Expect, Scenario
from fakeprovider.server import ServerThread
from fakeprovider.transport import IN_PROCESS_ORIGIN, AsyncFakeTransport

ROOT = Path(__file__).resolve().parents[3]
CORPUS = load_fixtures([ROOT / "fixtures" / "anthropic"])
JUDGED = [scenario for scenario in CORPUS if scenario.expect is not None]
ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "Say hello."}],
    "stream": True,
}


def run_line(scenario: Scenario, base_url: str) -> RunCase:
    return RunCase(
        case=scenario.id,
        dialect="anthropic-messages",
        base_url=base_url,  # without /v1: the adapter appends /v1/messages
        api_key="sk-ant-test",
        request=ANTHROPIC_REQUEST,
        retry=case_policy(DEFAULT_POLICY, scenario),
        idle_timeout_s=2.0,
        timeout_s=10.0,
    )


def play(
    scenario: Scenario, adapter: MutantAdapter | None = None
) -> tuple[list[Event], list[RequestRecord], list[float]]:
    """The case's events in process (the reference's, or `adapter`'s, whose waits are its
    own), the provider's request log, and the waits the reference asked for."""
    registry = ScenarioRegistry()
    registry.register(scenario)
    sleeps_s: list[float] = []

    async def record_sleep(seconds: float) -> None:
        sleeps_s.append(seconds)

    async def run() -> list[Event]:
        runner = adapter or ReferenceAdapter(sleep=record_sleep, random=random.Random(0))
        case = run_line(scenario, f"{IN_PROCESS_ORIGIN}/{scenario.id}")
        async with httpx.AsyncClient(transport=AsyncFakeTransport(registry)) as client:
            emitted = [event async for event in runner.run(case, client)]
        return [event for event in emitted if not isinstance(event, dict)]  # no rewrites

    events = asyncio.run(run())
    return events, asyncio.run(registry.settled(scenario.id, within_s=2)), sleeps_s


def final_attempt(events: list[Event]) -> list[Event]:
    last_retry = max((i for i, e in enumerate(events) if isinstance(e, Retry)), default=-1)
    return events[last_retry + 1 :]


def problems_against(expect: Expect, events: list[Event], requests: int) -> list[str]:
    """How the final attempt differs from what the fixture expects, in each aspect it lists."""
    seen = final_attempt(events)
    finish = seen[-1]
    blocks = [event.block for event in seen if isinstance(event, BlockEnd)]
    texts = "".join(block.text for block in blocks if isinstance(block, TextBlock))
    reasoning = [block for block in blocks if isinstance(block, ReasoningBlock)]
    calls = [block for block in blocks if isinstance(block, ToolCallBlock)]
    usages = [event for event in seen if isinstance(event, Usage)]
    problems = []
    if not isinstance(finish, Finish) or finish.reason != expect.finish:
        problems.append(f"finish {finish!r}, expected {expect.finish}")
    elif expect.code is not None and finish.code != expect.code:
        problems.append(f"code {finish.code}, expected {expect.code}")
    if (expect.text or "") != texts:
        problems.append(f"text {texts!r}, expected {expect.text!r}")
    if expect.reasoning is not None and expect.reasoning != "".join(b.text for b in reasoning):
        problems.append(f"reasoning {reasoning}, expected {expect.reasoning!r}")
    if expect.signature is not None and [b.signature for b in reasoning] != [expect.signature]:
        problems.append(f"signature {reasoning}, expected {expect.signature!r}")
    if expect.redacted is not None and expect.redacted not in [b.redacted for b in reasoning]:
        problems.append(f"redacted {reasoning}, expected {expect.redacted!r}")
    wanted_calls = expect.tool_calls or ()
    if len(calls) != len(wanted_calls):
        problems.append(f"calls {calls}, expected {wanted_calls}")
    for call, wanted in zip(calls, wanted_calls, strict=False):
        for key in ("id", "name", "arguments"):
            if getattr(wanted, key) is not None and getattr(wanted, key) != getattr(call, key):
                problems.append(f"call {key} {getattr(call, key)!r}, expected {wanted}")
    if expect.usage is not None:
        if len(usages) != 1:
            problems.append(f"usage events {usages}, expected one")
        else:
            for key, value in expect.usage.model_dump(exclude_none=True).items():
                if getattr(usages[0], key) != value:
                    problems.append(f"usage {key} {getattr(usages[0], key)}, expected {value}")
    if requests != expect.attempts:
        problems.append(f"{requests} requests, expected {expect.attempts}")
    return problems


@pytest.mark.parametrize("scenario", JUDGED, ids=[scenario.id for scenario in JUDGED])
def test_the_reference_gives_each_fixture_s_expected_outcome(scenario: Scenario) -> None:
    assert scenario.expect is not None
    events, requests, _ = play(scenario)
    assert problems_against(scenario.expect, events, len(requests)) == []


def test_every_anthropic_fixture_is_read_and_judged() -> None:
    assert len(CORPUS) >= 29 and len(JUDGED) >= 28  # the corpus is found, not skipped


def test_a_request_is_an_anthropic_post_to_v1_messages_with_the_run_line_s_body() -> None:
    (scenario,) = [s for s in CORPUS if s.id == "an-basic-text"]
    _, (request,), _ = play(scenario)
    headers = dict(request.headers)
    assert request.path == "/an-basic-text/v1/messages"
    assert headers["x-api-key"] == "sk-ant-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert json.loads(request.body) == ANTHROPIC_REQUEST


def test_the_529_s_retry_after_ms_is_the_wait() -> None:
    (scenario,) = [s for s in CORPUS if s.id == "an-http-529"]
    events, _, sleeps_s = play(scenario)
    assert [e for e in events if isinstance(e, Retry)] == [
        Retry(case="an-http-529", attempt=1, code=codes.SERVER, delay_ms=100.0)
    ]
    assert sleeps_s == [0.1]


def test_the_mid_stream_overload_is_a_server_failure_never_the_partial_text() -> None:
    (scenario,) = [s for s in CORPUS if s.id == "an-overloaded-midstream"]
    events, _, _ = play(scenario.model_copy(update={"retry_policy": None}))
    assert not [e for e in events if isinstance(e, BlockEnd)]
    finishes = [e for e in events if isinstance(e, Finish)]
    assert finishes and all(f.code == codes.SERVER for f in finishes)


def test_data_only_events_are_assembled_by_their_type() -> None:
    (scenario,) = [s for s in CORPUS if s.id == "an-data-only-events"]
    events, _, _ = play(scenario)
    assert events[-1] == Finish(case=scenario.id, reason="tool-calls")


def http_failure(attempt: ErrorAttempt) -> Finish:
    """The final finish of a case whose every attempt is `attempt`."""
    scenario = ScenarioBuilder("an-http", dialect="anthropic-messages").attempt(attempt).build()
    events, _, _ = play(scenario)
    finish = events[-1]
    assert isinstance(finish, Finish)
    return finish


@pytest.mark.parametrize(
    ("attempt", "code"),
    [
        (anthropic_error(529), codes.SERVER),
        (anthropic_error(500), codes.SERVER),
        (anthropic_error(429), codes.RATE_LIMIT),
        (
            anthropic_error(429, details={"error_code": "enforced_spend_limit_reached"}),
            codes.QUOTA,
        ),
        (anthropic_error(402), codes.QUOTA),
        (anthropic_error(401), codes.AUTH),
        (anthropic_error(403), codes.AUTH),
        (anthropic_error(413), codes.INVALID_REQUEST),
        (anthropic_error(400), codes.INVALID_REQUEST),
        (
            anthropic_error(400, message="prompt is too long: 210000 tokens > 200000 maximum"),
            codes.CONTEXT_WINDOW_EXCEEDED,
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_anthropic_http_errors_are_classified_by_status_and_body(
    attempt: ErrorAttempt, code: str
) -> None:
    finish = http_failure(attempt)
    assert (finish.reason, finish.code) == ("error", code)


def test_the_spend_limit_429_is_quota_and_the_retry_headers_are_read() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "limit",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    headers = {"x-should-retry": "false", "retry-after-ms": "250", "retry-after": "9"}
    failure = classify_http_error(
        429, headers, json.dumps(body).encode(), now_epoch_s=0.0, rules=ANTHROPIC_ERRORS
    )
    assert (failure.code, failure.retry_after_ms) == (codes.QUOTA, 250.0)
    # The chat rules read neither header: its spec reads Retry-After alone.
    chat = classify_http_error(429, headers, json.dumps(body).encode(), now_epoch_s=0.0)
    assert (chat.code, chat.retry_after_ms) == (codes.RATE_LIMIT, 9000.0)


def test_x_should_retry_is_the_sdks_policy_not_the_cases() -> None:
    # The case's retry policy names codes alone: a retryable SERVER is retried whatever the
    # provider's header says (a library obeying it declares so in its own retry_policy).
    scenario = Scenario.model_validate(
        {
            "id": "an-should-retry-false",
            "dialect": "anthropic-messages",
            "attempts": [
                {"error": {"status": 529, "headers": {"x-should-retry": "false"}}},
                {"error": {"status": 529}},
            ],
        }
    )
    events, requests, _ = play(scenario)
    assert len(requests) == 3  # the last attempt repeats: both retries made
    assert [e.code for e in events if isinstance(e, Retry)] == [codes.SERVER, codes.SERVER]


def test_the_subprocess_declares_the_dialect_and_speaks_it() -> None:
    (scenario,) = [s for s in CORPUS if s.id == "an-tool-args-fragments"]
    with ServerThread(ScenarioRegistry()) as server:
        server.registry.register(scenario)
        line = run_line(scenario, server.sdk_base_url(scenario.id)).to_json_line()
        result = subprocess.run(
            [sys.executable, "-m", "conformance.adapters.reference"],
            input=line + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    hello, *lines = result.stdout.splitlines()
    assert parse_hello_line(hello).spoken_dialects == (
        "chat-completions",
        "anthropic-messages",
        "openai-responses",
    )
    events = [parse_event_line(line) for line in lines]
    assert events[-1].type == "end"
    assert scenario.expect is not None
    assert problems_against(scenario.expect, events[:-1], 1) == []
