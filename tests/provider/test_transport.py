"""The in-process transports: the server's plans, log and failures, without a socket."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import httpx2
import openai
import pytest
import respx

from fakeprovider import build
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.transport import (
    AsyncFakeTransport,
    FakeTransport,
    httpx2_transports,
    transport_classes,
)
from fakeprovider.wire import WirePlan, encode_stream, stream_headers

pytestmark = pytest.mark.timeout(30)

Register = Callable[..., Scenario]
OpenAIFor = Callable[[str], openai.OpenAI]


def delta(**fields: Any) -> dict[str, Any]:
    return {"chunk": {"choices": [{"index": 0, "delta": fields}]}}


def finish(reason: str) -> dict[str, Any]:
    return {"chunk": {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}}


def tool_call_delta(**fields: Any) -> dict[str, Any]:
    return delta(tool_calls=[{"index": 0, **fields}])


TEXT = {
    "stream": {
        "steps": [
            delta(role="assistant", content="Hé"),
            delta(content="llo"),
            finish("stop"),
            "done",
        ]
    }
}
TOOL_CALL = {
    "stream": {
        "steps": [
            delta(role="assistant", content=None),
            tool_call_delta(
                id="call_1", type="function", function={"name": "get_weather", "arguments": ""}
            ),
            tool_call_delta(function={"arguments": '{"city":'}),
            {"pause_ms": 5},
            tool_call_delta(function={"arguments": ' "Paris"}'}),
            finish("tool_calls"),
            "done",
        ]
    }
}
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(ScenarioRegistry()) as running:
        yield running


@pytest.fixture
def registry(server: ServerThread) -> ScenarioRegistry:
    """Shared with the server, so both can answer the same scenario."""
    return server.registry


@pytest.fixture
def register(registry: ScenarioRegistry) -> Register:
    def register(scenario_id: str, *attempts: dict[str, Any]) -> Scenario:
        scenario = Scenario.model_validate({"id": scenario_id, "attempts": list(attempts)})
        registry.register(scenario)
        return scenario

    return register


@pytest.fixture
def client(registry: ScenarioRegistry) -> Iterator[httpx.Client]:
    transport = FakeTransport(registry)
    with httpx.Client(transport=transport, timeout=httpx.Timeout(5.0, read=0.2)) as http:
        yield http


def completions_url(scenario_id: str) -> str:
    return FakeTransport.base_url(scenario_id) + "/chat/completions"


def plan_of(scenario: Scenario) -> WirePlan:
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return encode_stream(attempt.stream)


def ended(registry: ScenarioRegistry, scenario_id: str) -> list[str]:
    return [record.ended for record in registry.requests(scenario_id)]


# --- the openai SDK, over the socket and in process ---------------------------------------


@pytest.fixture(params=["server", "transport"])
def openai_for(request: pytest.FixtureRequest, server: ServerThread) -> Iterator[OpenAIFor]:
    """An OpenAI client playing a scenario from the loopback server or the transport."""
    http_clients: list[httpx2.Client] = []

    def make(scenario_id: str) -> openai.OpenAI:
        if request.param == "server":
            return openai.OpenAI(
                base_url=server.base_url(scenario_id), api_key="sk-test", max_retries=0
            )
        transport_class = httpx2_transports().sync
        http_clients.append(httpx2.Client(transport=transport_class(server.registry)))
        return openai.OpenAI(
            base_url=transport_class.base_url(scenario_id),
            api_key="sk-test",
            max_retries=0,
            http_client=http_clients[-1],
        )

    yield make
    for http_client in http_clients:
        http_client.close()


def test_openai_streams_text(openai_for: OpenAIFor, register: Register) -> None:
    register("sdk-text", TEXT)

    stream = openai_for("sdk-text").chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    chunks = list(stream)

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Héllo"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_openai_streams_a_tool_call(openai_for: OpenAIFor, register: Register) -> None:
    register("sdk-tool", TOOL_CALL)

    stream = openai_for("sdk-tool").chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    calls: dict[int, dict[str, str]] = {}
    finish_reason = None
    for chunk in stream:
        choice = chunk.choices[0]
        finish_reason = choice.finish_reason or finish_reason
        for call in choice.delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += call.id or ""
            if call.function is not None:
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""

    assert calls == {0: {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}}
    assert finish_reason == "tool_calls"


def test_async_openai_streams_through_the_async_transport(
    registry: ScenarioRegistry, register: Register
) -> None:
    register("sdk-async", TEXT)
    transport_class = httpx2_transports().async_

    async def stream_text() -> str:
        async with httpx2.AsyncClient(transport=transport_class(registry)) as http:
            client = openai.AsyncOpenAI(
                base_url=transport_class.base_url("sdk-async"),
                api_key="sk-test",
                max_retries=0,
                http_client=http,
            )
            stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
            return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(stream_text()) == "Héllo"


# --- bytes and timing ---------------------------------------------------------------------


def test_each_write_is_one_read_and_the_body_is_the_plan(
    client: httpx.Client, register: Register
) -> None:
    scenario = register("tp-text", TOOL_CALL)

    with client.stream("POST", completions_url("tp-text"), json={}) as response:
        reads = list(response.iter_raw())

    assert response.status_code == 200
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert response.headers.multi_items() == stream_headers(attempt.stream)
    assert reads == [write.data for write in plan_of(scenario).writes]


def test_pauses_are_slept(client: httpx.Client, register: Register) -> None:
    register("tp-pause", {"stream": {"steps": [{"pause_ms": 60}, "done", {"pause_ms": 60}]}})
    started = time.monotonic()

    client.post(completions_url("tp-pause"), json={})

    assert time.monotonic() - started >= 0.12


def test_the_log_has_the_same_shape_as_the_servers(
    server: ServerThread, client: httpx.Client, register: Register
) -> None:
    register("tp-log", TEXT)
    with httpx.Client() as over_socket:
        over_socket.post(server.base_url("tp-log") + "/chat/completions?x=1", json={"n": 1})
    client.post(completions_url("tp-log") + "?x=1", json={"n": 1})

    by_socket, in_process = registry_records = server.registry.requests("tp-log")
    assert [r.attempt for r in registry_records] == [1, 2]
    for field in ("scenario", "method", "path", "body", "body_base64", "ended"):
        assert getattr(by_socket, field) == getattr(in_process, field), field
    assert [name for name, _ in by_socket.headers] == [name for name, _ in in_process.headers]


def test_an_error_attempt_is_a_complete_json_response(
    client: httpx.Client, register: Register, registry: ScenarioRegistry
) -> None:
    register("tp-429", {"error": {"status": 429, "headers": {"Retry-After": "2"}}})

    response = client.post(completions_url("tp-429"), json={})

    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert ended(registry, "tp-429") == ["complete"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/tp-nobody/v1/chat/completions", 404),
        ("GET", "/tp-nobody/v1/chat/completions", 405),
        ("POST", "/v1/models", 404),
    ],
)
def test_other_requests_get_the_servers_json_errors(
    client: httpx.Client, method: str, path: str, status: int
) -> None:
    response = client.request(method, "http://127.0.0.1:9" + path)

    assert response.status_code == status
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}


# --- failures, as a socket would fail -----------------------------------------------------


def test_reset_mid_stream_raises_read_error_after_the_bytes_before_it(
    client: httpx.Client, register: Register, registry: ScenarioRegistry
) -> None:
    register("tp-reset", {"stream": {"steps": [delta(content="a"), "reset"]}})
    received = []
    with (
        pytest.raises(httpx.ReadError),
        client.stream("POST", completions_url("tp-reset"), json={}) as response,
    ):
        received.extend(response.iter_raw())

    assert received and received[0].startswith(b"data: ")
    assert ended(registry, "tp-reset") == ["reset"]


def test_stall_lasts_the_read_timeout(
    client: httpx.Client, register: Register, registry: ScenarioRegistry
) -> None:
    register("tp-stall", {"stream": {"steps": [delta(content="a"), "stall"]}})
    started = time.monotonic()

    with pytest.raises(httpx.ReadTimeout):
        client.post(completions_url("tp-stall"), json={})

    assert 0.2 <= time.monotonic() - started < 1.0
    assert ended(registry, "tp-stall") == ["stalled"]


def test_a_pause_longer_than_the_read_timeout_times_out(
    client: httpx.Client, register: Register, registry: ScenarioRegistry
) -> None:
    register(
        "tp-long-pause", {"stream": {"steps": [delta(content="a"), {"pause_ms": 60_000}, "done"]}}
    )

    with pytest.raises(httpx.ReadTimeout):
        client.post(completions_url("tp-long-pause"), json={})

    assert ended(registry, "tp-long-pause") == ["client-disconnected"]


def test_without_a_read_timeout_a_stall_ends_after_the_transports_limit(
    register: Register, registry: ScenarioRegistry
) -> None:
    register("tp-endless", {"fault": "stall"})
    transport = FakeTransport(registry, stall_timeout_s=0.1)

    with httpx.Client(transport=transport, timeout=None) as http, pytest.raises(httpx.ReadTimeout):
        http.post(completions_url("tp-endless"), json={})


@pytest.mark.parametrize(
    ("fault", "error", "how"),
    [
        ("reset", httpx.ReadError, "reset"),
        ("close", httpx.RemoteProtocolError, "closed"),
        ("stall", httpx.ReadTimeout, "stalled"),
    ],
)
def test_fault_attempts_raise_what_a_socket_would(
    client: httpx.Client,
    register: Register,
    registry: ScenarioRegistry,
    fault: str,
    error: type[Exception],
    how: str,
) -> None:
    register(f"tp-fault-{fault}", {"fault": fault})

    with pytest.raises(error):
        client.post(completions_url(f"tp-fault-{fault}"), json={})

    assert ended(registry, f"tp-fault-{fault}") == [how]


def test_closing_the_response_early_is_a_client_disconnect(
    client: httpx.Client, register: Register, registry: ScenarioRegistry
) -> None:
    register("tp-early", TEXT)

    with client.stream("POST", completions_url("tp-early"), json={}) as response:
        next(response.iter_raw())

    assert ended(registry, "tp-early") == ["client-disconnected"]


def test_async_transport_plays_and_fails_like_the_sync_one(
    register: Register, registry: ScenarioRegistry
) -> None:
    plan = plan_of(register("tp-async", {"stream": {"steps": [delta(content="a"), "reset"]}}))

    async def read_until_reset() -> list[bytes]:
        received: list[bytes] = []
        async with httpx.AsyncClient(transport=AsyncFakeTransport(registry)) as http:
            with pytest.raises(httpx.ReadError):
                async with http.stream("POST", completions_url("tp-async"), json={}) as response:
                    async for data in response.aiter_raw():
                        received.append(data)
        return received

    assert asyncio.run(read_until_reset()) == [plan.writes[0].data]
    assert ended(registry, "tp-async") == ["reset"]


# --- flavours and respx -------------------------------------------------------------------


def test_transport_classes_speak_the_module_they_are_built_for() -> None:
    assert transport_classes(httpx) == (FakeTransport, AsyncFakeTransport)
    sync, async_ = httpx2_transports()
    assert issubclass(sync, httpx2.BaseTransport)
    assert issubclass(async_, httpx2.AsyncBaseTransport)
    assert httpx2_transports() is httpx2_transports()  # built once


def test_respx_routes_can_hand_requests_to_the_transport(
    register: Register, registry: ScenarioRegistry
) -> None:
    plan = plan_of(register("respx-text", TEXT))
    transport = FakeTransport(registry)
    with respx.mock(base_url="https://api.example.test") as router:
        route = router.post(path__regex=r"/chat/completions$").mock(
            side_effect=transport.handle_request
        )
        with httpx.Client(base_url="https://api.example.test") as http:
            response = http.post("/respx-text/v1/chat/completions", json={})

    assert route.call_count == 1
    assert response.content == plan.body
    assert ended(registry, "respx-text") == ["complete"]


def test_respx_async_routes_can_hand_requests_to_the_async_transport(
    register: Register, registry: ScenarioRegistry
) -> None:
    register("respx-async", {"stream": {"steps": [delta(content="a"), "stall"]}})
    transport = AsyncFakeTransport(registry)

    async def post() -> None:
        with respx.mock(base_url="https://api.example.test") as router:
            router.post(path__regex=r"/chat/completions$").mock(
                side_effect=transport.handle_async_request
            )
            async with httpx.AsyncClient(base_url="https://api.example.test", timeout=0.1) as http:
                await http.post("/respx-async/v1/chat/completions", json={})

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(post())
    assert ended(registry, "respx-async") == ["stalled"]


def test_disconnect_mid_chunked_body_is_an_incomplete_body() -> None:
    scenario = build.ScenarioBuilder("cut").attempt(build.stream().text("a").disconnect()).build()
    registry = ScenarioRegistry([scenario])
    client = httpx.Client(transport=FakeTransport(registry))
    with (
        pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"),
        client.stream("POST", "http://fake/cut/v1/chat/completions", json={}) as response,
    ):
        for _ in response.iter_raw():
            pass
    assert registry.requests("cut")[0].ended == "closed"
