"""The reference adapter end to end against the fake provider, and its retry layer alone.

Every scenario runs through the loopback server and through the in-process transport. Sleeps
are recorded, never slept, so retry waits cost nothing; only the idle-timeout cases wait.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from conformance import codes
from conformance.adapters.base import CaseRun, PythonAdapter, load_python_adapter
from conformance.adapters.reference import Failure, ReferenceAdapter, factory
from conformance.adapters.reference.retry import JitterSource, run_with_retries
from conformance.codes import DEFAULT_RETRYABLE_CODES
from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    Retry,
    RetryPolicy,
    RunCase,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    parse_event_line,
    parse_hello_line,
)
from conformance.options import DEFAULT_POLICY, RunOptions, default_request
from fakeprovider.build import ScenarioBuilder, StreamBuilder, fault, http_error, stream
from fakeprovider.registry import RequestRecord, ScenarioRegistry
from fakeprovider.scenario import Scenario
from fakeprovider.server import ServerThread
from fakeprovider.transport import AsyncFakeTransport

ROOT = Path(__file__).resolve().parents[2]
NO_RETRIES = DEFAULT_POLICY.model_copy(update={"max_retries": 0})


def text_stream(text: str = "Hi") -> StreamBuilder:
    return stream().role().text(text).finish("stop").usage(3, 1).done()


def scenario(scenario_id: str, *attempts: Any) -> Scenario:
    builder = ScenarioBuilder(scenario_id)
    for attempt in attempts:
        builder.attempt(attempt)
    return builder.build()


# --- running a case against the fake provider ---------------------------------------------


@dataclass
class Outcome:
    events: list[Event]
    sleeps_s: list[float]
    requests: list[RequestRecord]
    elapsed_s: float

    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def finishes(self) -> list[Finish]:
        return [event for event in self.events if isinstance(event, Finish)]

    def retries(self) -> list[Retry]:
        return [event for event in self.events if isinstance(event, Retry)]

    def visible(self) -> list[Event]:
        """The caller-visible outcome: everything after the last retry."""
        last_retry = max(
            (i for i, event in enumerate(self.events) if isinstance(event, Retry)), default=-1
        )
        return self.events[last_retry + 1 :]


@dataclass
class Provider:
    kind: Literal["loopback", "in-process"]
    registry: ScenarioRegistry
    server: ServerThread

    def play(
        self,
        scenario: Scenario,
        *,
        policy: RetryPolicy = DEFAULT_POLICY,
        idle_timeout_s: float = 2.0,
    ) -> Outcome:
        self.registry.register(scenario)  # also clears the request log of a previous run
        case = RunCase(
            case="c-1",
            base_url=self._base_url(scenario.id),
            api_key="sk-test",
            request=default_request(),
            retry=policy,
            idle_timeout_s=idle_timeout_s,
            timeout_s=10,
        )
        sleeps_s: list[float] = []

        async def record_sleep(seconds: float) -> None:
            sleeps_s.append(seconds)

        adapter = ReferenceAdapter(sleep=record_sleep, random=random.Random(0))
        started = time.monotonic()
        events = asyncio.run(self._collect(adapter, case))
        elapsed_s = time.monotonic() - started
        # The server's thread logs how a response ended once it notices; give it a moment.
        requests = asyncio.run(self.registry.settled(scenario.id, within_s=2))
        return Outcome(events, sleeps_s, requests, elapsed_s)

    def _base_url(self, scenario_id: str) -> str:
        if self.kind == "loopback":
            return self.server.base_url(scenario_id)
        return AsyncFakeTransport.base_url(scenario_id)

    async def _collect(self, adapter: ReferenceAdapter, case: RunCase) -> list[Event]:
        if self.kind == "loopback":
            return [event async for event in adapter.run(case)]
        async with httpx.AsyncClient(transport=AsyncFakeTransport(self.registry)) as client:
            return [event async for event in adapter.run(case, client)]


@pytest.fixture(scope="module")
def server_thread() -> Iterator[ServerThread]:
    with ServerThread(ScenarioRegistry()) as server:
        yield server


@pytest.fixture(params=["loopback", "in-process"])
def provider(request: pytest.FixtureRequest, server_thread: ServerThread) -> Provider:
    return Provider(request.param, server_thread.registry, server_thread)


# --- outcomes -----------------------------------------------------------------------------


def test_text(provider: Provider) -> None:
    outcome = provider.play(scenario("text", text_stream("Hello")))
    assert outcome.events == [
        BlockStart(case="c-1", index=0, block_type="text"),
        TextDelta(case="c-1", index=0, text="Hello"),
        BlockEnd(case="c-1", index=0, block=TextBlock(text="Hello")),
        Usage(case="c-1", input_tokens=3, output_tokens=1, cache_read_tokens=0),
        Finish(case="c-1", reason="stop"),
    ]
    assert len(outcome.requests) == 1


def test_request_is_an_authorised_sse_post_of_the_case_request(provider: Provider) -> None:
    outcome = provider.play(scenario("request-shape", text_stream()))
    (request,) = outcome.requests
    headers = {name.lower(): value for name, value in request.headers}
    assert request.method == "POST"
    assert request.path.endswith("/request-shape/v1/chat/completions")
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"
    assert json.loads(request.body) == default_request()


def test_tool_call_with_null_and_empty_continuations(provider: Provider) -> None:
    attempt = (
        stream()
        .role()
        .tool_call(0, id="call_1", type="function", name="get_weather", arguments="")
        .tool_call(0, id=None, name=None, arguments='{"city"')
        .tool_call(0, id="", name="", arguments=':"Paris"}')
        .finish("tool_calls")
        .usage(11, 7)
        .done()
    )
    outcome = provider.play(scenario("tool-continuations", attempt))
    deltas = [event for event in outcome.events if isinstance(event, ToolCallDelta)]
    assert {(delta.index, delta.id, delta.name) for delta in deltas} == {
        (0, "call_1", "get_weather")
    }
    assert outcome.types() == [
        "block-start",
        "tool-call-delta",
        "tool-call-delta",
        "tool-call-delta",
        "block-end",
        "usage",
        "finish",
    ]
    block = ToolCallBlock(id="call_1", name="get_weather", arguments='{"city":"Paris"}')
    assert BlockEnd(case="c-1", index=0, block=block) in outcome.events
    assert outcome.finishes() == [Finish(case="c-1", reason="tool-calls")]


def test_never_identified_call_is_retried_then_fails(provider: Provider) -> None:
    attempt = stream().role().tool_call(0, arguments="{}").finish("tool_calls").usage(5, 2).done()
    outcome = provider.play(scenario("tool-no-identity", attempt))
    one_attempt = ["block-start", "tool-call-delta", "usage", "finish"]
    assert outcome.types() == [*one_attempt, "retry", *one_attempt, "retry", *one_attempt]
    assert {finish.code for finish in outcome.finishes()} == {codes.MALFORMED_TOOL_CALL}
    assert [(r.attempt, r.code) for r in outcome.retries()] == [
        (1, codes.MALFORMED_TOOL_CALL),
        (2, codes.MALFORMED_TOOL_CALL),
    ]
    assert outcome.sleeps_s == [0.001, 0.002]  # the default policy's backoff, jitter 0
    assert len(outcome.requests) == 3


def test_empty_stop_is_retried_then_fails(provider: Provider) -> None:
    attempt = stream().role().finish("stop").usage(3, 0).done()
    outcome = provider.play(scenario("empty-stop", attempt))
    assert outcome.types() == ["usage", "finish", "retry"] * 2 + ["usage", "finish"]
    assert outcome.visible()[-1] == Finish(
        case="c-1",
        reason="error",
        code=codes.EMPTY_RESPONSE,
        message="model returned a completed response with no content",
    )
    assert len(outcome.requests) == 3


def test_retry_after_is_waited_exactly_and_the_body_repeated(provider: Provider) -> None:
    outcome = provider.play(
        scenario("rate-limited", http_error(429, retry_after=1), text_stream("Later"))
    )
    assert outcome.types()[:2] == ["finish", "retry"]
    assert outcome.finishes()[0].code == codes.RATE_LIMIT
    assert outcome.retries() == [Retry(case="c-1", attempt=1, code=codes.RATE_LIMIT, delay_ms=1000)]
    assert outcome.sleeps_s == [1.0]
    assert outcome.visible()[-1] == Finish(case="c-1", reason="stop")
    first, second = outcome.requests
    assert first.body_base64 == second.body_base64


def test_server_error_is_retried(provider: Provider) -> None:
    outcome = provider.play(scenario("server-error", http_error(500), text_stream()))
    assert outcome.retries() == [Retry(case="c-1", attempt=1, code=codes.SERVER, delay_ms=1)]
    assert outcome.visible()[-1] == Finish(case="c-1", reason="stop")
    assert len(outcome.requests) == 2


def test_auth_error_is_not_retried(provider: Provider) -> None:
    outcome = provider.play(scenario("unauthorised", http_error(401), text_stream()))
    assert outcome.types() == ["finish"]
    assert outcome.finishes()[0].code == codes.AUTH
    assert len(outcome.requests) == 1


def test_reset_mid_stream_is_transport(provider: Provider) -> None:
    reset = stream().role().text("Hel").pause(50).reset()
    outcome = provider.play(scenario("reset-mid-stream", reset, text_stream("Hello")))
    assert outcome.types()[:4] == ["block-start", "text-delta", "finish", "retry"]
    assert outcome.finishes()[0].code == codes.TRANSPORT
    assert "block-end" not in outcome.types()[: outcome.types().index("retry")]
    assert outcome.visible()[1] == TextDelta(case="c-1", index=0, text="Hello")
    assert outcome.requests[0].ended == "reset"


def test_stall_times_out_and_closes_the_connection(provider: Provider) -> None:
    stalled = stream().role().text("Hi").stall()
    outcome = provider.play(scenario("stall", stalled), policy=NO_RETRIES, idle_timeout_s=0.3)
    assert outcome.types() == ["block-start", "text-delta", "finish"]
    assert outcome.finishes()[0].code == codes.TIMEOUT
    assert 0.3 <= outcome.elapsed_s < 2
    (request,) = outcome.requests
    # The provider saw the client hang up: it no longer holds the stalled response open.
    assert request.ended == "stalled"
    assert request.ended_at is not None


def test_done_ends_the_attempt_though_the_connection_stays_open(provider: Provider) -> None:
    lingering = text_stream().stall()
    outcome = provider.play(scenario("done-then-stall", lingering), idle_timeout_s=5)
    assert outcome.finishes() == [Finish(case="c-1", reason="stop")]
    assert outcome.elapsed_s < 2  # nothing after [DONE] was waited for
    assert outcome.requests[0].ended != "pending"  # and the connection was let go


@pytest.mark.parametrize(
    ("kind", "code"),
    [("reset", codes.TRANSPORT), ("close", codes.TRANSPORT), ("stall", codes.TIMEOUT)],
)
def test_connection_fault_before_the_response(
    provider: Provider, kind: Literal["reset", "close", "stall"], code: str
) -> None:
    outcome = provider.play(
        scenario(f"fault-{kind}", fault(kind)), policy=NO_RETRIES, idle_timeout_s=0.3
    )
    assert outcome.types() == ["finish"]
    assert outcome.finishes()[0].code == code
    assert outcome.requests[0].ended != "pending"


def test_eof_without_done_is_stream_closed(provider: Provider) -> None:
    truncated = stream().role().text("Hi").finish("stop").usage(3, 1)
    outcome = provider.play(scenario("no-done", truncated))
    assert outcome.types() == ["block-start", "text-delta", "usage", "finish"]  # usage: R9
    assert outcome.finishes()[0].code == codes.STREAM_CLOSED  # not retryable by default
    assert len(outcome.requests) == 1


def test_one_byte_writes_split_multibyte_characters(provider: Provider) -> None:
    text = "héllo 🌍 ✓ 日本"
    split = stream().split("byte").role().text(text[:8]).text(text[8:])
    outcome = provider.play(scenario("byte-split", split.finish("stop").usage(3, 1).done()))
    deltas = [event.text for event in outcome.events if isinstance(event, TextDelta)]
    assert deltas == [text[:8], text[8:]]
    assert BlockEnd(case="c-1", index=0, block=TextBlock(text=text)) in outcome.events
    assert outcome.finishes() == [Finish(case="c-1", reason="stop")]


# --- the adapter as the runner loads it ---------------------------------------------------


def test_factory_returns_a_python_adapter_declaring_every_capability() -> None:
    adapter = factory(RunOptions())
    assert isinstance(adapter, PythonAdapter)
    assert adapter.hello.name == "streamconform-reference"
    assert adapter.hello.protocol == 1
    assert all(dict(adapter.hello.capabilities).values())


def test_runner_loads_the_adapter_and_hands_it_the_in_process_client() -> None:
    registry = ScenarioRegistry([scenario("loaded", text_stream())])
    session = load_python_adapter("conformance.adapters.reference:factory", RunOptions())
    case = RunCase.model_validate(_run_line_fields(base_url=AsyncFakeTransport.base_url("loaded")))

    async def run_case() -> CaseRun:
        async with httpx.AsyncClient(transport=AsyncFakeTransport(registry)) as client:
            return await session.run_case(case, client)

    run = asyncio.run(run_case())
    assert run.status == "completed"
    assert [event.type for event in run.events][-2:] == ["finish", "end"]  # one `end`
    assert len(registry.requests("loaded")) == 1


def test_refused_connection_is_transport() -> None:
    case = RunCase.model_validate(
        _run_line_fields(base_url="http://127.0.0.1:9/x/v1") | {"retry": NO_RETRIES}
    )

    async def collect() -> list[Event]:
        return [event async for event in ReferenceAdapter().run(case)]

    events = asyncio.run(collect())
    assert [event.type for event in events] == ["finish"]
    assert isinstance(events[0], Finish) and events[0].code == codes.TRANSPORT


_KEEP_ALIVE_REPLY = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 14\r\n\r\n"
    b"data: [DONE]\n\n"
)


async def _read_request(reader: asyncio.StreamReader) -> bool:
    """Read one HTTP request off a connection; False when the client closed it instead."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return False
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    await reader.readexactly(length)
    return True


def test_one_tls_context_per_adapter_and_new_connections_per_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The CA bundle costs ~20 ms to load: once per adapter, not once per case. A server
    # that keeps connections alive shows that cases still do not share one.
    loads: list[object] = []
    load_verify_locations = ssl.SSLContext.load_verify_locations

    def counted(context: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        load_verify_locations(context, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    connections = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while await _read_request(reader):
            writer.write(_KEEP_ALIVE_REPLY)
            await writer.drain()
        writer.close()

    async def run_cases(adapter: ReferenceAdapter) -> list[list[Event]]:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        fields = _run_line_fields(f"http://127.0.0.1:{port}/v1") | {"retry": NO_RETRIES}
        case = RunCase.model_validate(fields)
        async with server:
            return [[event async for event in adapter.run(case)] for _ in range(3)]

    outcomes = asyncio.run(run_cases(ReferenceAdapter()))
    assert all(events[-1].type == "finish" for events in outcomes)
    assert len(loads) == 1
    assert connections == 3


# --- the retry layer alone ----------------------------------------------------------------


@dataclass
class FakeAttempt:
    events: list[Event]
    failure: Failure | None
    hang_s: float = 0  # wait this long before the finish
    closed: bool = field(default=False, init=False)

    def __aiter__(self) -> AsyncGenerator[Event, None]:
        return self._events()

    async def _events(self) -> AsyncGenerator[Event, None]:
        try:
            for event in self.events:
                if isinstance(event, Finish) and self.hang_s:
                    await asyncio.sleep(self.hang_s)
                yield event
        finally:
            self.closed = True


def failing(code: str, retry_after_ms: float | None = None) -> FakeAttempt:
    failure = Failure(code=code, message="boom", retry_after_ms=retry_after_ms)
    return FakeAttempt([Finish(reason="error", code=code, message="boom")], failure)


def succeeding() -> FakeAttempt:
    return FakeAttempt([TextDelta(index=0, text="ok"), Finish(reason="stop")], None)


class FixedJitter:
    def __init__(self, sample: float) -> None:
        self.sample = sample

    def uniform(self, a: float, b: float) -> float:
        assert (a, b) == (-1, 1)
        return self.sample


def policy(**change: object) -> RetryPolicy:
    fields: dict[str, object] = {
        "max_retries": 2,
        "initial_delay_ms": 100,
        "max_delay_ms": 1000,
        "jitter_ratio": 0,
    }
    return RetryPolicy.model_validate(fields | change)


@dataclass
class Layer:
    """run_with_retries over scripted attempts, with a fake clock that sleeping advances."""

    attempts: list[FakeAttempt]
    random: JitterSource = field(default_factory=lambda: FixedJitter(0))
    started: int = 0
    now_s: float = 0
    sleeps_s: list[float] = field(default_factory=list)

    def run(self, policy: RetryPolicy, timeout_s: float | None = None) -> list[Event]:
        async def collect() -> list[Event]:
            events = run_with_retries(
                self._start,
                policy,
                sleep=self._sleep,
                random=self.random,
                clock=lambda: self.now_s,
                timeout_s=timeout_s,
            )
            return [event async for event in events]

        return asyncio.run(collect())

    def _start(self) -> FakeAttempt:
        self.started += 1
        return self.attempts[self.started - 1]

    async def _sleep(self, seconds: float) -> None:
        self.sleeps_s.append(seconds)
        self.now_s += seconds


def test_exhausted_budget_ends_with_the_last_failure() -> None:
    layer = Layer([failing(codes.SERVER) for _ in range(4)])
    events = layer.run(policy(max_retries=2))
    assert [event.type for event in events] == ["finish", "retry"] * 2 + ["finish"]
    assert events[-1] == Finish(reason="error", code=codes.SERVER, message="boom")
    assert [(r.attempt, r.delay_ms) for r in events if isinstance(r, Retry)] == [
        (1, 100),
        (2, 200),
    ]
    assert layer.started == 3


def test_success_ends_the_retries() -> None:
    layer = Layer([failing(codes.TIMEOUT), succeeding(), failing(codes.SERVER)])
    events = layer.run(policy())
    assert [event.type for event in events] == ["finish", "retry", "text-delta", "finish"]
    assert layer.started == 2


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(codes.AUTH, list(DEFAULT_RETRYABLE_CODES)), (codes.SERVER, [codes.RATE_LIMIT])],
    ids=["never-retryable", "removed-from-the-set"],
)
def test_code_outside_the_retryable_set_is_final(code: str, retryable: list[str]) -> None:
    layer = Layer([failing(code), succeeding()])
    events = layer.run(policy(retryable_codes=retryable))
    assert [event.type for event in events] == ["finish"]
    assert layer.started == 1


def test_retry_after_within_the_cap_is_waited_exactly() -> None:
    layer = Layer([failing(codes.RATE_LIMIT, retry_after_ms=750), succeeding()])
    events = layer.run(policy(jitter_ratio=0.5))
    assert Retry(attempt=1, code=codes.RATE_LIMIT, delay_ms=750) in events
    assert layer.sleeps_s == [0.75]


def test_retry_after_over_the_cap_is_not_retried() -> None:
    layer = Layer([failing(codes.RATE_LIMIT, retry_after_ms=1001), succeeding()])
    events = layer.run(policy())
    assert [event.type for event in events] == ["finish"]
    assert layer.started == 1
    assert layer.sleeps_s == []


def test_backoff_doubles_up_to_the_cap_without_jitter() -> None:
    layer = Layer([failing(codes.SERVER) for _ in range(6)])
    layer.run(policy(max_retries=5))
    assert layer.sleeps_s == [0.1, 0.2, 0.4, 0.8, 1.0]


@pytest.mark.parametrize(("sample", "delay_ms"), [(-1, 50), (0, 100), (1, 150)])
def test_jitter_scales_the_delay_within_its_ratio(sample: float, delay_ms: float) -> None:
    layer = Layer([failing(codes.SERVER), succeeding()], random=FixedJitter(sample))
    events = layer.run(policy(jitter_ratio=0.5))
    assert Retry(attempt=1, code=codes.SERVER, delay_ms=delay_ms) in events


def test_random_jitter_stays_within_bounds() -> None:
    layer = Layer([failing(codes.SERVER) for _ in range(200)], random=random.Random(7))
    layer.run(policy(max_retries=199, initial_delay_ms=1000, jitter_ratio=0.25))
    assert all(0.75 <= seconds <= 1.25 for seconds in layer.sleeps_s)
    assert len(set(layer.sleeps_s)) > 100  # actually random, not a constant


def test_no_retry_is_started_that_would_overrun_the_case_timeout() -> None:
    layer = Layer([failing(codes.SERVER), succeeding()])
    events = layer.run(policy(initial_delay_ms=1000), timeout_s=0.5)
    assert [event.type for event in events] == ["finish"]
    assert layer.sleeps_s == []


def test_attempt_running_at_the_case_deadline_ends_in_timeout() -> None:
    hanging = FakeAttempt([TextDelta(index=0, text="…"), Finish(reason="stop")], None, hang_s=5)
    layer = Layer([hanging])

    async def collect() -> tuple[list[Event], float]:
        started = time.monotonic()
        events = run_with_retries(
            layer._start, policy(), sleep=layer._sleep, random=layer.random, timeout_s=0.05
        )
        return [event async for event in events], time.monotonic() - started

    events, elapsed_s = asyncio.run(collect())
    assert [event.type for event in events] == ["text-delta", "finish"]
    assert isinstance(events[-1], Finish) and events[-1].code == codes.TIMEOUT
    assert hanging.closed
    assert elapsed_s < 1


def test_closing_the_layer_early_closes_the_running_attempt() -> None:
    attempt = succeeding()

    async def take_one() -> Event:
        events = run_with_retries(
            lambda: attempt, policy(), sleep=asyncio.sleep, random=random.Random()
        )
        first = await anext(events)
        await events.aclose()
        return first

    assert isinstance(asyncio.run(take_one()), TextDelta)
    assert attempt.closed


# --- the subprocess adapter ---------------------------------------------------------------


def _run_line_fields(base_url: str) -> dict[str, Any]:
    return {
        "type": "run",
        "case": "c-sub",
        "base_url": base_url,
        "api_key": "sk-test",
        "request": default_request(),
        "retry": DEFAULT_POLICY.model_dump(),
        "idle_timeout_s": 2,
        "timeout_s": 10,
    }


@pytest.mark.timeout(30)
def test_subprocess_adapter_speaks_json_lines(server_thread: ServerThread) -> None:
    server_thread.registry.register(scenario("subprocess", text_stream("Hi there")))
    python_path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance.adapters.reference"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": python_path},
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        hello = parse_hello_line(process.stdout.readline())
        assert hello.name == "streamconform-reference"
        run_line = json.dumps(_run_line_fields(server_thread.base_url("subprocess")))
        process.stdin.write("not json\n" + run_line + "\n")
        process.stdin.flush()  # stdin stays open: each event line must arrive unprompted
        lines = [process.stdout.readline()]
        while parse_event_line(lines[-1]).type != "end":
            lines.append(process.stdout.readline())
        process.stdin.close()
        assert process.wait(timeout=10) == 0
        assert process.stdout.read() == ""  # exactly one `end`, nothing after it
    finally:
        process.kill()
        process.wait()
    events = [parse_event_line(line) for line in lines]
    assert all(line.startswith('{"case":"c-sub",') for line in lines)
    assert [event.type for event in events] == [
        "block-start",
        "text-delta",
        "block-end",
        "usage",
        "finish",
        "end",
    ]
    assert process.stderr is not None and "skipped input line" in process.stderr.read()
