"""HTTP/1.1 as RFC 9112 has it at the edges: no chunked coding to an HTTP/1.0 client
(§6.1), an absolute-form target accepted as its path (§3.2.2), an IPv6 host in brackets."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from raw_http import dechunk, post_bytes, split_response

from fakeprovider.hosts import http_origin
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import encode_stream

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]

STEPS: list[Any] = [
    {"chunk": {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}},
    {"pause_ms": 20},
    {"chunk": {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}},
    "done",
]
SCENARIO = Scenario.model_validate({"id": "edge", "attempts": [{"stream": {"steps": STEPS}}]})


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    registry = ScenarioRegistry()
    registry.register(SCENARIO)
    with ServerThread(registry, request_timeout_s=1.0) as running:
        yield running


def stream_body() -> bytes:
    attempt = SCENARIO.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return encode_stream(attempt.stream).body


def exchange(port: int, request: bytes) -> bytes:
    """Send ``request``; everything the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        return b"".join(iter(lambda: sock.recv(65536), b""))


def test_an_http_1_0_client_gets_the_stream_delimited_by_the_close(server: ServerThread) -> None:
    request = post_bytes("/edge/v1/chat/completions").replace(b" HTTP/1.1\r\n", b" HTTP/1.0\r\n", 1)

    status_line, headers, body = split_response(exchange(server.port, request))

    assert status_line.endswith(" 200 OK")
    assert "transfer-encoding" not in headers and "content-length" not in headers
    assert headers["connection"] == "close"
    assert body == stream_body()
    assert [record.ended for record in server.registry.requests("edge")][-1] == "complete"


def test_an_http_1_1_client_still_gets_chunks(server: ServerThread) -> None:
    request = post_bytes("/edge/v1/chat/completions", extra="Connection: close\r\n")

    _, headers, body = split_response(exchange(server.port, request))

    assert headers["transfer-encoding"] == "chunked"
    assert b"".join(dechunk(body)) == stream_body()


def test_an_absolute_form_target_is_its_path(server: ServerThread) -> None:
    origin = http_origin("127.0.0.1", server.port)
    request = post_bytes(f"{origin}/edge/v1/chat/completions?x=1", extra="Connection: close\r\n")

    status_line, _, body = split_response(exchange(server.port, request))

    assert status_line.endswith(" 200 OK"), body
    assert b"".join(dechunk(body)) == stream_body()
    assert server.registry.requests("edge")[-1].path == "/edge/v1/chat/completions?x=1"


def test_the_host_of_an_absolute_form_target_is_the_one_checked(server: ServerThread) -> None:
    """§3.2.2: the target's host counts, not the Host header (here a name that passes)."""
    health = "GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    local = health.format(target=f"{http_origin('127.0.0.1', server.port)}/_health")
    foreign = health.format(target=f"http://rebound.example:{server.port}/_health")

    assert split_response(exchange(server.port, local.encode()))[0].endswith(" 200 OK")
    status_line, _, body = split_response(exchange(server.port, foreign.encode()))
    assert status_line.startswith("HTTP/1.1 421 "), body
    assert "rebound.example" in json.loads(body)["error"]["message"]


@pytest.mark.parametrize(
    ("host", "origin"),
    [("::1", "http://[::1]:8"), ("::", "http://[::1]:8"), ("127.0.0.1", "http://127.0.0.1:8")],
)
def test_an_origin_puts_an_ipv6_host_in_brackets(host: str, origin: str) -> None:
    assert http_origin(host, 8) == origin


def test_serve_on_ipv6_loopback_prints_bracketed_urls() -> None:
    command = [sys.executable, "-m", "fakeprovider", "serve", "--host", "::1", "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as served:
        assert served.stdout is not None
        try:
            lines = [served.stdout.readline() for _ in range(3)]
        finally:
            served.terminate()
            assert served.wait(timeout=10) == 128 + signal.SIGTERM  # stopped as asked
    assert lines[0].startswith("fakeprovider listening on http://[::1]:"), lines
    assert lines[1].startswith("control API: http://[::1]:"), lines
    assert lines[2].startswith("shared base URL: http://[::1]:"), lines
