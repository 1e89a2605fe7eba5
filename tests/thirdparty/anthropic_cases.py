"""Anthropic Messages scenarios for the Anthropic clients' shim tests (``sdk-…``, built here,
and the corpus's ``an-…`` cases), and a driver that plays them on a loopback fake provider
and returns what the shim reported.

Each test states what its library hands its caller on the scenario (read in the pinned
source), not what the oracle expects: the shim's job is to report, the suite's to judge.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from shim_cases import CORPUS, announced_hello

from conformance.adapters.thirdparty import SHIMS
from conformance.adapters.thirdparty.common import NATIVE_RETRY
from conformance.events import RetryPolicy, RunCase
from conformance.options import RunOptions
from fakeprovider.build import anthropic_error, messages_stream
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario
from fakeprovider.server import FakeProviderServer


@dataclass(frozen=True)
class Wire:
    """A dialect's scenarios by id, and the request its clients send."""

    dialect: str
    scenarios: dict[str, Scenario]
    request: dict[str, Any]


DIALECT = "anthropic-messages"
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
REQUEST = {
    "model": "claude-fake",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
    "tools": [WEATHER_TOOL],
    "stream": True,
}
NO_RETRY = RetryPolicy(max_retries=0, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0)


def _scenario(id: str, *attempts: Any) -> Scenario:
    return Scenario(id=id, dialect=DIALECT, attempts=tuple(attempts))


SCENARIOS = {
    s.id: s
    for s in (
        _scenario(
            "sdk-text",
            messages_stream()
            .message_start(input_tokens=25)
            .text_start(0)
            .ping()
            .text_delta(0, "Hel")
            .text_delta(0, "lo")
            .block_stop(0)
            .message_delta("end_turn", output_tokens=15)
            .message_stop()
            .build(),
        ),
        _scenario(
            "sdk-tool-fragments",
            messages_stream()
            .message_start(input_tokens=40)
            .text_start(0)
            .text_delta(0, "Let me check.")
            .block_stop(0)
            .tool_use_start(1, "toolu_A", "get_weather")
            .input_json(1, "")
            .input_json(1, '{"city": "Par')
            .input_json(1, 'is"}')
            .block_stop(1)
            .message_delta("tool_use", output_tokens=30)
            .message_stop()
            .build(),
        ),
        _scenario(
            # Cumulative counts twice (message_start, then message_delta repeating them).
            "sdk-usage-cached",
            messages_stream()
            .message_start(
                input_tokens=10, cache_read_input_tokens=5, cache_creation_input_tokens=3
            )
            .text_start(0)
            .text_delta(0, "Hi")
            .block_stop(0)
            .message_delta(
                "end_turn",
                usage={"output_tokens": 7, "input_tokens": 10, "cache_read_input_tokens": 5},
            )
            .message_stop()
            .build(),
        ),
        _scenario(
            "sdk-error-mid-stream",
            messages_stream()
            .message_start()
            .text_start(0)
            .text_delta(0, "Hel")
            .error("overloaded_error", "Overloaded")
            .build(),
        ),
        _scenario("sdk-http-529", anthropic_error(529)),
        _scenario(
            # §2.10: a delta for index 3, never started, between two good ones.
            "sdk-delta-unknown-index",
            messages_stream()
            .message_start()
            .text_start(0)
            .text_delta(0, "Hi")
            .text_delta(3, " lost")
            .text_delta(0, "!")
            .block_stop(0)
            .message_delta("end_turn", output_tokens=3)
            .message_stop()
            .build(),
        ),
        _scenario(
            # §2.10: the body ends after a delta: no message_delta, no message_stop.
            "sdk-truncated",
            messages_stream().message_start().text_start(0).text_delta(0, "Hel").build(),
        ),
        _scenario(
            # §2.10: the input arrives whole in the start, then one empty partial_json.
            "sdk-tool-input-then-empty-json",
            messages_stream()
            .message_start()
            .tool_use_start(0, "toolu_A", "get_weather", input={"city": "Paris"})
            .input_json(0, "")
            .block_stop(0)
            .message_delta("tool_use", output_tokens=12)
            .message_stop()
            .build(),
        ),
        _scenario(
            "sdk-529-then-text",
            anthropic_error(529, retry_after_ms=20),
            messages_stream()
            .message_start()
            .text_start(0)
            .text_delta(0, "Hi")
            .block_stop(0)
            .message_delta("end_turn", output_tokens=2)
            .message_stop()
            .build(),
        ),
        _scenario("sdk-529-should-retry-false", anthropic_error(529, should_retry=False)),
    )
}


# The corpus's Anthropic cases: the matrix column's case ids, played here the same way.
SCENARIOS |= {s.id: s for s in CORPUS.values() if s.dialect == DIALECT}
ANTHROPIC = Wire(DIALECT, SCENARIOS, REQUEST)


def run_scenarios(
    column: str, *ids: str, options: RunOptions | None = None, wire: Wire | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The events the column's shim reported for each scenario (without ``case`` and the
    closing ``end``), played on a fake provider listening on loopback."""
    played_ids = played(column, *ids, options=options, wire=wire)
    return {id: events for id, (events, _) in played_ids.items()}


def played(
    column: str, *ids: str, options: RunOptions | None = None, wire: Wire | None = None
) -> dict[str, tuple[list[dict[str, Any]], int]]:
    """Each scenario's reported events and the number of requests the library made, on
    ``wire`` (the Anthropic one unless given)."""
    wire = wire or ANTHROPIC

    async def run() -> dict[str, tuple[list[dict[str, Any]], int]]:
        chosen = [wire.scenarios[i] for i in ids]
        server = FakeProviderServer(ScenarioRegistry(chosen), "127.0.0.1")
        await server.start()
        session = await SHIMS[column].open(options or RunOptions())
        try:
            reported = {}
            for id in ids:
                case = RunCase(
                    case=id,
                    dialect=wire.dialect,
                    base_url=server.sdk_base_url(id),
                    api_key="sk-ant-test",
                    request=wire.request,
                    retry=NO_RETRY,
                    idle_timeout_s=5.0,
                    timeout_s=20.0,
                )
                run = await session.run_case(case, None)
                assert run.status == "completed", (id, run.status, run.detail, run.stderr)
                events = [
                    event.model_dump(mode="json", exclude_none=True, exclude={"case"})
                    for event in run.events
                    if event.type != "end"
                ]
                reported[id] = (events, len(server.registry.requests(id)))
            return reported
        finally:
            await session.close()
            await server.stop()

    return asyncio.run(run())


def thrown(events: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The exception class a ``thrown`` names, and its code."""
    (event,) = [e for e in events if e["type"] == "thrown"]
    return str(event["message"]).split(":", 1)[0], event.get("code")


def text(index: int, value: str) -> list[dict[str, Any]]:
    return block(index, {"type": "text", "text": value})


def call(index: int, id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    return block(index, {"type": "tool-call", "id": id, "name": name, "arguments": arguments})


def block(index: int, value: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "block-start", "index": index, "block_type": value["type"]},
        {"type": "block-end", "index": index, "block": value},
    ]


def finish(reason: str, code: str | None = None) -> dict[str, Any]:
    return {"type": "finish", "reason": reason, **({"code": code} if code else {})}


def usage(input: int, output: int, **more: int) -> dict[str, Any]:
    return {"type": "usage", "input_tokens": input, "output_tokens": output, **more}


def check_native_retries(column: str) -> None:
    """With the library's own retries on, the library keeps what its shim declares, in the
    two parts these scenarios show: a 529 retried (after its ``retry-after-ms``) or not, and
    ``x-should-retry: false`` obeyed where the policy says the header is read."""
    options = RunOptions(extra={NATIVE_RETRY: True})
    policy = announced_hello(column, options).retry_policy
    assert policy is not None
    ids = ["sdk-529-then-text"]
    if policy.should_retry_header:
        ids.append("sdk-529-should-retry-false")
    seen = played(column, *ids, options=options)
    events, requests = seen["sdk-529-then-text"]
    if policy.retries_status(529):
        assert requests == 2
        assert events[1]["block"] == {"type": "text", "text": "Hi"}
    else:
        assert requests == 1
    if policy.should_retry_header:
        assert seen["sdk-529-should-retry-false"][1] == 1
