"""The loopback server speaks Anthropic Messages: its paths, routing, headers and errors.

No Anthropic SDK: raw sockets read the exact bytes, httpx reads the stream as a client does.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest
from raw_http import dechunk, post_bytes, split_response

from fakeprovider.build import ScenarioBuilder, anthropic_error, http_error, messages_stream, stream
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import encode_stream

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]

ANTHROPIC_HEADERS = "x-api-key: sk-ant-test\r\nanthropic-version: 2023-06-01\r\n"


def text_stream() -> Scenario:
    return (
        ScenarioBuilder("an-text", dialect="anthropic-messages")
        .attempt(
            messages_stream()
            .message_start(input_tokens=25)
            .text_start(0)
            .ping()
            .text_delta(0, "Hel")
            .text_delta(0, "lo")
            .block_stop(0)
            .message_delta("end_turn", output_tokens=15)
            .message_stop()
        )
        .build()
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    registry = ScenarioRegistry(
        [
            text_stream(),
            ScenarioBuilder("chat-text").attempt(stream().text("hi").finish("stop").done()).build(),
            ScenarioBuilder("an-529", dialect="anthropic-messages")
            .attempt(http_error(529, headers={"x-should-retry": "true", "retry-after-ms": "250"}))
            .attempt(anthropic_error(429, message="spend limit", should_retry=False))
            .build(),
        ]
    )
    with ServerThread(registry, request_timeout_s=2.0) as running:
        yield running


def exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        received = b""
        while data := sock.recv(65536):
            received += data
    return received


def planned_writes(scenario: Scenario) -> list[bytes]:
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return [write.data for write in encode_stream(attempt.stream).writes]


@pytest.mark.parametrize("path", ["/an-text/v1/messages", "/an-text/messages"])
def test_a_scenario_is_served_at_both_messages_paths_byte_for_byte(
    server: ServerThread, path: str
) -> None:
    request = post_bytes(path, b'{"stream": true}', ANTHROPIC_HEADERS + "Connection: close\r\n")
    status, headers, body = split_response(exchange(server.port, request))
    assert status == "HTTP/1.1 200 OK"
    assert headers["content-type"].startswith("text/event-stream")
    assert dechunk(body) == planned_writes(text_stream())


def test_a_client_reads_the_named_events(server: ServerThread) -> None:
    with (
        httpx.Client(timeout=5) as client,
        client.stream(
            "POST",
            f"{server.root_url}/an-text/v1/messages",
            json={"model": "claude", "stream": True},
            headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
        ) as response,
    ):
        lines = [line for line in response.iter_lines() if line]
    names = [line.removeprefix("event: ") for line in lines if line.startswith("event:")]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    datas = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data:")]
    assert [data["type"] for data in datas] == names
    logged = server.registry.requests("an-text")[-1]
    assert ("x-api-key", "sk-ant-test") in logged.headers
    assert ("anthropic-version", "2023-06-01") in logged.headers


@pytest.mark.parametrize(
    ("path", "extra", "body"),
    [
        ("/v1/messages", "x-scenario-id: an-text\r\n", b"{}"),
        ("/messages", "", b'{"model": "scenario/an-text"}'),
    ],
    ids=["header", "model"],
)
def test_the_shared_messages_path_routes_by_header_or_model(
    server: ServerThread, path: str, extra: str, body: bytes
) -> None:
    request = post_bytes(path, body, extra + "Connection: close\r\n")
    status, _, received = split_response(exchange(server.port, request))
    assert status == "HTTP/1.1 200 OK"
    assert dechunk(received) == planned_writes(text_stream())


@pytest.mark.parametrize(
    ("path", "spoken", "shape"),
    [
        ("/chat-text/v1/messages", "chat-completions", "anthropic"),
        ("/an-text/v1/chat/completions", "anthropic-messages", "openai"),
    ],
)
def test_the_wrong_endpoint_gets_a_json_404_naming_the_scenarios_dialect(
    server: ServerThread, path: str, spoken: str, shape: str
) -> None:
    scenario_id = path.split("/")[1]
    before = len(server.registry.requests(scenario_id))
    response = httpx.post(f"{server.root_url}{path}", json={}, timeout=5)
    assert response.status_code == 404
    body = response.json()
    if shape == "anthropic":  # the shape of the endpoint asked, which the client reads
        assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    else:
        assert body["error"]["type"] == "invalid_request_error"
    assert f"speaks {spoken}" in body["error"]["message"]
    assert len(server.registry.requests(scenario_id)) == before  # no attempt was used


def test_an_unknown_scenario_at_messages_gets_anthropics_error_shape(server: ServerThread) -> None:
    response = httpx.post(f"{server.root_url}/nope/v1/messages", json={}, timeout=5)
    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert "no scenario 'nope'" in response.json()["error"]["message"]


def test_errors_have_anthropics_body_statuses_and_retry_headers(server: ServerThread) -> None:
    server.registry.clear_requests("an-529")
    url = f"{server.root_url}/an-529/messages"
    overloaded = httpx.post(url, json={}, timeout=5)
    assert overloaded.status_code == 529
    assert overloaded.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "fake provider: 529 overloaded_error"},
    }
    assert overloaded.headers["x-should-retry"] == "true"
    assert overloaded.headers["retry-after-ms"] == "250"
    limited = httpx.post(url, json={}, timeout=5)
    assert limited.status_code == 429
    assert limited.json()["error"] == {"type": "rate_limit_error", "message": "spend limit"}
    assert limited.headers["x-should-retry"] == "false"


def test_listings_give_each_dialects_sdk_base_url(server: ServerThread) -> None:
    # Anthropic's SDKs append /v1/messages to their base URL, OpenAI's /chat/completions.
    assert server.sdk_base_url("an-text") == f"{server.root_url}/an-text"
    assert server.sdk_base_url("chat-text") == server.base_url("chat-text")
    listed = httpx.get(f"{server.root_url}/_scenarios", timeout=5).json()["scenarios"]
    bases = {entry["id"]: entry["base_url"] for entry in listed}
    assert bases["an-text"] == f"{server.root_url}/an-text"
    assert bases["chat-text"] == f"{server.root_url}/chat-text/v1"


def test_a_put_anthropic_scenario_is_served_and_keeps_its_dialect(server: ServerThread) -> None:
    scenario = {
        "dialect": "anthropic-messages",
        "attempts": [{"stream": {"steps": [{"event": {"type": "ping"}}]}}],
    }
    put = httpx.put(f"{server.root_url}/_scenarios/an-put", json=scenario, timeout=5)
    assert put.status_code == 201
    assert put.json()["base_url"] == f"{server.root_url}/an-put"
    assert httpx.get(put.json()["base_url"] + "/v1/messages", timeout=5).status_code == 405
    played = httpx.post(put.json()["base_url"] + "/v1/messages", json={}, timeout=5)
    assert played.text == 'event: ping\ndata: {"type":"ping"}\n\n'
    stored = httpx.get(f"{server.root_url}/_scenarios/an-put", timeout=5).json()
    assert stored["dialect"] == "anthropic-messages"


def test_a_put_chunk_step_in_an_anthropic_scenario_is_a_422_naming_it(server: ServerThread) -> None:
    scenario = {
        "dialect": "anthropic-messages",
        "attempts": [{"stream": {"steps": [{"chunk": {}}]}}],
    }
    put = httpx.put(f"{server.root_url}/_scenarios/an-bad", json=scenario, timeout=5)
    assert put.status_code == 422
    assert (
        "attempts.0.stream.stream.steps.0.chunk: chunk steps belong to"
        in put.json()["error"]["message"]
    )
