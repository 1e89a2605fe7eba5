"""The loopback server: exact bytes on the wire, the control API, faults, hostile input."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from raw_http import dechunk, post_bytes, split_response

from conformance.options import bundled_fixtures
from fakeprovider import build
from fakeprovider.cli import main as cli_main
from fakeprovider.fixtures import load_fixture
from fakeprovider.playback import MAX_LISTED_PROBLEMS
from fakeprovider.registry import MAX_LOGGED_REQUESTS, ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import MAX_STREAM_BODY_BYTES, encode_stream

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]

TEXT_STEPS: list[Any] = [
    {"chunk": {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hé"}}]}},
    {"chunk": {"choices": [{"index": 0, "delta": {"content": "llo"}, "finish_reason": "stop"}]}},
    "done",
]


Register = Callable[..., Scenario]


def make_scenario(scenario_id: str, *attempts: dict[str, Any]) -> Scenario:
    return Scenario.model_validate({"id": scenario_id, "attempts": list(attempts)})


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(ScenarioRegistry(), request_timeout_s=1.0) as running:
        yield running


@pytest.fixture
def register(server: ServerThread) -> Register:
    def register(scenario_id: str, *attempts: dict[str, Any]) -> Scenario:
        scenario = make_scenario(scenario_id, *attempts)
        server.registry.register(scenario)
        return scenario

    return register


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.5)) as http:
        yield http


# --- raw socket helpers -------------------------------------------------------------------


def exchange(port: int, request: bytes) -> list[tuple[float, bytes]]:
    """Send ``request``, then read until the server closes: (arrival time, bytes) per recv."""
    received: list[tuple[float, bytes]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        while data := sock.recv(65536):
            received.append((time.monotonic(), data))
    return received


def wait_until(predicate: Callable[[], bool], timeout_s: float = 3.0) -> None:
    """The request log is updated just after the socket sees the last byte: poll a moment."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def ended(server: ServerThread, scenario_id: str) -> list[str]:
    return [record.ended for record in server.registry.requests(scenario_id)]


# --- bytes on the wire --------------------------------------------------------------------


def test_each_write_is_one_chunk_and_the_body_is_the_plan(
    server: ServerThread, register: Register
) -> None:
    scenario = register("raw-text", {"stream": {"steps": TEXT_STEPS}})
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    plan = encode_stream(attempt.stream)

    received = exchange(
        server.port, post_bytes("/raw-text/v1/chat/completions", extra="Connection: close\r\n")
    )
    status, headers, body = split_response(b"".join(data for _, data in received))

    assert status == "HTTP/1.1 200 OK"
    assert headers["content-type"] == "text/event-stream; charset=utf-8"
    assert headers["transfer-encoding"] == "chunked"
    chunks = dechunk(body)
    assert chunks == [write.data for write in plan.writes]
    assert b"".join(chunks) == plan.body


def test_byte_split_sends_every_byte_as_its_own_write(
    server: ServerThread, register: Register
) -> None:
    # One write per byte, the two bytes of "é" included: each is its own chunk.
    register(
        "byte-split",
        {"stream": {"framing": {"split": {"mode": "byte"}}, "steps": [{"raw": "é"}, "done"]}},
    )
    received = exchange(
        server.port, post_bytes("/byte-split/chat/completions", extra="Connection: close\r\n")
    )
    _, _, body = split_response(b"".join(data for _, data in received))

    chunks = dechunk(body)
    assert b"".join(chunks) == "data: é\n\ndata: [DONE]\n\n".encode()
    assert all(len(chunk) == 1 for chunk in chunks)


def test_writes_after_a_pause_arrive_later(server: ServerThread, register: Register) -> None:
    # transfer: close puts the body bytes on the wire unframed, so offsets are body offsets.
    register(
        "paused",
        {
            "stream": {
                "framing": {"split": {"mode": "byte"}, "transfer": "close"},
                "steps": [{"raw": "é"}, {"pause_ms": 80}, "done"],
            }
        },
    )
    received = exchange(server.port, post_bytes("/paused/v1/chat/completions"))
    arrival: list[float] = []  # arrival time of every response byte
    for at, data in received:
        arrival += [at] * len(data)
    raw = b"".join(data for _, data in received)
    status, headers, body = split_response(raw)

    assert (status, headers["connection"], body) == (
        "HTTP/1.1 200 OK",
        "close",
        "data: é\n\ndata: [DONE]\n\n".encode(),
    )
    first_after_pause = len(raw) - len(body) + len("data: é\n\n".encode())
    gap = arrival[first_after_pause] - arrival[first_after_pause - 1]
    assert gap >= 0.06


def test_keep_alive_serves_pipelined_requests_on_one_connection(
    server: ServerThread, register: Register
) -> None:
    register("pipelined", {"stream": {"steps": ["done"]}})
    request = post_bytes("/pipelined/v1/chat/completions", b'{"n": 1}')
    last = post_bytes("/pipelined/v1/chat/completions", b'{"n": 2}', "Connection: close\r\n")

    raw = b"".join(data for _, data in exchange(server.port, request + last))

    assert raw.count(b"HTTP/1.1 200 OK") == 2
    assert [r.body for r in server.registry.requests("pipelined")] == ['{"n": 1}', '{"n": 2}']


def test_expect_100_continue_is_honoured(server: ServerThread, register: Register) -> None:
    register("continue", {"stream": {"steps": ["done"]}})
    head = post_bytes(
        "/continue/v1/chat/completions", b"", "Expect: 100-continue\r\nConnection: close\r\n"
    )
    head = head.replace(b"Content-Length: 0", b"Content-Length: 2")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(head)
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"{}")
        assert sock.recv(100).startswith(b"HTTP/1.1 200 OK")


# --- the control API ----------------------------------------------------------------------


def test_request_log_counts_attempts_and_delete_resets_it(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    register("counted", {"error": {"status": 500}}, {"stream": {"steps": ["done"]}})
    url = server.base_url("counted") + "/chat/completions"

    statuses = [client.post(url, json={"n": n}).status_code for n in (1, 2, 3)]
    log = client.get(f"{server.root_url}/_scenarios/counted/requests").json()["requests"]

    assert statuses == [500, 200, 200]  # past the last attempt, the last one repeats
    assert [(r["attempt"], json.loads(r["body"])) for r in log] == [
        (1, {"n": 1}),
        (2, {"n": 2}),
        (3, {"n": 3}),
    ]
    assert log[0]["method"] == "POST"
    assert log[0]["path"] == "/counted/v1/chat/completions"
    assert ["content-type", "application/json"] in log[0]["headers"]
    assert [r["ended"] for r in log] == ["complete"] * 3

    assert client.delete(f"{server.root_url}/_scenarios/counted/requests").status_code == 204
    assert client.post(url, json={}).status_code == 500  # attempt 1 again


def test_the_request_log_keeps_its_bound_and_says_how_many_it_dropped(
    client: httpx.Client,
) -> None:
    scenario = make_scenario("busy", {"stream": {"steps": ["done"]}})
    with ServerThread(ScenarioRegistry([scenario])) as private:
        for _ in range(MAX_LOGGED_REQUESTS):
            private.registry.begin_request(
                "busy", method="POST", path="/busy/v1", headers=[], body=b"{}"
            )
        client.post(private.base_url("busy") + "/chat/completions", json={"last": True})
        # Serialising 10 000 records takes a while on a busy machine: this checks the bound,
        # not the speed (benchmarks/ measure that), so the fixture's 0.5 s read timeout is lifted.
        log = client.get(f"{private.root_url}/_scenarios/busy/requests", timeout=30.0).json()

    assert log["dropped"] == 1
    assert len(log["requests"]) == MAX_LOGGED_REQUESTS
    assert json.loads(log["requests"][-1]["body"]) == {"last": True}
    assert log["requests"][-1]["attempt"] == MAX_LOGGED_REQUESTS + 1


def test_put_registers_a_scenario_and_get_returns_it(
    server: ServerThread, client: httpx.Client
) -> None:
    scenario = {"title": "put", "attempts": [{"stream": {"steps": TEXT_STEPS}}]}
    created = client.put(f"{server.root_url}/_scenarios/put-me", json=scenario)
    replaced = client.put(f"{server.root_url}/_scenarios/put-me", json={"id": "put-me", **scenario})

    assert created.status_code == 201
    assert replaced.status_code == 200
    assert created.json() == {"id": "put-me", "base_url": server.base_url("put-me")}
    fetched = client.get(f"{server.root_url}/_scenarios/put-me").json()
    assert fetched == server.registry.get("put-me").model_dump(mode="json")
    listed = client.get(f"{server.root_url}/_scenarios").json()["scenarios"]
    assert {"id": "put-me", "base_url": server.base_url("put-me")} in listed
    assert client.post(server.base_url("put-me") + "/chat/completions", json={}).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "message_part"),
    [
        (b"{not json", 400, "not JSON"),
        (b"[1, 2]", 422, "JSON object"),
        (json.dumps({"id": "other", "attempts": [{"fault": "reset"}]}).encode(), 422, "differs"),
        (json.dumps({"attempts": [{"fault": "explode"}]}).encode(), 422, "attempts.0.fault"),
        (json.dumps({"attempts": [], "colour": 1}).encode(), 422, "colour"),
        (
            json.dumps(
                {
                    "attempts": [
                        {
                            "stream": {
                                "framing": {"split": {"mode": "offsets", "offsets": [999]}},
                                "steps": ["done"],
                            }
                        }
                    ]
                }
            ).encode(),
            422,
            "999",
        ),
        (
            json.dumps({"attempts": [{"error": {"status": 500, "headers": {"x": "€"}}}]}).encode(),
            422,
            "header",
        ),
        (
            b'{"attempts": [{"fault": "reset"}], "title": ' + b"9" * 5000 + b"}",
            400,
            "not JSON: Exceeds the limit (4300 digits) for integer string conversion",
        ),
        (  # ensure_ascii writes each of these 4-byte characters as 12 bytes
            json.dumps(
                {
                    "attempts": [
                        {
                            "stream": {
                                "framing": {"ensure_ascii": True},
                                "steps": [{"chunk": {"c": "\U0001f600" * 1_500_000}}],
                            }
                        }
                    ]
                },
                ensure_ascii=False,
            ).encode(),
            422,
            f"the body is more than {MAX_STREAM_BODY_BYTES} bytes by step 0",
        ),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "other-id",
        "bad-fault",
        "unknown-field",
        "split-past-the-body",
        "header-not-latin-1",
        "int-of-5000-digits",
        "body-over-the-cap",
    ],
)
def test_put_rejects_bad_scenarios_readably(
    server: ServerThread, client: httpx.Client, body: bytes, status: int, message_part: str
) -> None:
    response = client.put(f"{server.root_url}/_scenarios/bad-put", content=body, timeout=30)

    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert message_part in error["message"]
    assert "Traceback" not in response.text
    assert "bad-put" not in server.registry.ids()


def test_an_upload_of_many_invalid_steps_gets_a_short_error(
    server: ServerThread, client: httpx.Client
) -> None:
    steps = [{"pause_ms": -1}] * 200_000
    body = json.dumps({"attempts": [{"stream": {"steps": steps}}]}).encode()
    assert len(body) > 3 * 1024 * 1024

    response = client.put(f"{server.root_url}/_scenarios/many-bad", content=body, timeout=30)

    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert message.startswith("invalid scenario (200000 problem(s)): ")
    assert message.count("greater than or equal to 0") == MAX_LISTED_PROBLEMS
    assert message.endswith(f"; and {200_000 - MAX_LISTED_PROBLEMS} more")
    assert len(response.content) < 5000  # it was 19 MiB for 3.4 MiB of steps


def test_an_echoed_id_is_cut_short(server: ServerThread, client: httpx.Client) -> None:
    scenario = {"id": "x" * 1_000_000, "attempts": [{"fault": "reset"}]}
    response = client.put(f"{server.root_url}/_scenarios/echo", json=scenario)
    assert response.status_code == 422
    assert len(response.content) < 1000


def test_a_replaced_scenario_plays_its_new_bytes(server: ServerThread, register: Register) -> None:
    # Encodings are kept per attempt object: a replacement must never replay the old one.
    for text in ("first", "second", "third"):
        register("replaced", {"stream": {"steps": [{"raw": text}, "done"]}})
        request = post_bytes("/replaced/v1/chat/completions", extra="Connection: close\r\n")
        _, _, body = split_response(b"".join(data for _, data in exchange(server.port, request)))
        assert dechunk(body) == [f"data: {text}\n\n".encode(), b"data: [DONE]\n\n"]


def test_an_unplayable_registered_scenario_answers_500(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    # The registry takes any valid scenario; a split past the body only fails when played.
    split = {"mode": "offsets", "offsets": [999]}
    register("unplayable", {"stream": {"framing": {"split": split}, "steps": ["done"]}})

    response = client.post(server.base_url("unplayable") + "/chat/completions", json={})

    assert response.status_code == 500
    assert "999" in response.json()["error"]["message"]
    assert ended(server, "unplayable") == ["complete"]


def test_a_registered_body_over_the_cap_answers_500_naming_it(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    # Registered directly, not through PUT (whose check would refuse it with a 422).
    too_large = {"framing": {"ensure_ascii": True}, "steps": [{"chunk": {"c": "😀" * 1_500_000}}]}
    register("too-large", {"stream": too_large})

    # Encoding 18 MB of escapes takes the server a while on a busy machine: a generous read.
    url = server.base_url("too-large") + "/chat/completions"
    response = client.post(url, json={}, timeout=60)

    assert response.status_code == 500
    assert f"the body is more than {MAX_STREAM_BODY_BYTES} bytes" in response.text


def test_health(server: ServerThread, client: httpx.Client) -> None:
    assert client.get(f"{server.root_url}/_health").json() == {"status": "ok"}


# --- scripted errors and faults -----------------------------------------------------------


def test_error_attempt_sends_status_headers_and_json_body(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    register("limited", {"error": {"status": 429, "headers": {"Retry-After": "7"}}})

    response = client.post(server.base_url("limited") + "/chat/completions", json={})

    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.headers["content-length"] == str(len(response.content))
    assert response.json()["error"]["message"] == "fake provider: 429 Too Many Requests"


def test_reset_mid_stream_raises_after_the_bytes_before_it(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    register("reset-mid", {"stream": {"steps": [TEXT_STEPS[0], "reset"]}})
    received = b""
    with (
        pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)),
        client.stream(
            "POST", server.base_url("reset-mid") + "/chat/completions", json={}
        ) as response,
    ):
        for data in response.iter_raw():
            received += data

    assert received.startswith(b"data: {")  # the RST did not destroy what came before it
    assert ended(server, "reset-mid") == ["reset"]


def test_stall_makes_the_client_time_out_and_the_server_keeps_serving(
    server: ServerThread, register: Register, client: httpx.Client
) -> None:
    register("stall-mid", {"stream": {"steps": [TEXT_STEPS[0], "stall"]}})
    with pytest.raises(httpx.ReadTimeout):
        client.post(server.base_url("stall-mid") + "/chat/completions", json={}, timeout=0.3)

    assert client.get(f"{server.root_url}/_health").status_code == 200
    wait_until(lambda: ended(server, "stall-mid") == ["stalled"])


@pytest.mark.parametrize(
    ("fault", "error", "how"),
    [
        ("reset", httpx.ReadError, "reset"),
        ("close", httpx.RemoteProtocolError, "closed"),
        ("stall", httpx.ReadTimeout, "stalled"),
    ],
)
def test_fault_attempts_fail_before_any_response_byte(
    server: ServerThread,
    register: Register,
    client: httpx.Client,
    fault: str,
    error: type[Exception],
    how: str,
) -> None:
    register(f"fault-{fault}", {"fault": fault})
    with pytest.raises(error):
        client.post(server.base_url(f"fault-{fault}") + "/chat/completions", json={}, timeout=0.3)

    wait_until(lambda: ended(server, f"fault-{fault}") == [how])
    assert client.get(f"{server.root_url}/_health").status_code == 200


def test_a_client_resetting_during_a_pause_is_logged_at_once(
    server: ServerThread, register: Register
) -> None:
    register("reset-left", {"stream": {"steps": [TEXT_STEPS[0], {"pause_ms": 5000}, "done"]}})
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(post_bytes("/reset-left/v1/chat/completions"))
        sock.recv(65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    wait_until(lambda: ended(server, "reset-left") == ["client-disconnected"])


def test_a_client_closing_during_a_pause_is_logged_at_the_next_write(
    server: ServerThread, register: Register
) -> None:
    """Its FIN is all a half-closing client sends too: the pause plays on, and the writes
    after it, which the closed socket answers with RST, tell the two apart."""
    steps = [TEXT_STEPS[0], {"pause_ms": 300}, TEXT_STEPS[1], TEXT_STEPS[1], "done"]
    register("left", {"stream": {"steps": steps}})
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(post_bytes("/left/v1/chat/completions"))
        sock.recv(65536)

    assert ended(server, "left") == ["pending"]
    wait_until(lambda: ended(server, "left") == ["client-disconnected"])


LONG_BODY = 8 * 1024 * 1024  # more than the socket buffers hold: the server must wait


def long_unpaced(scenario_id: str, transfer: str = "chunked") -> Scenario:
    body = build.stream(transfer=transfer).split("fixed", size=4096).raw("x" * LONG_BODY)
    return build.ScenarioBuilder(scenario_id).attempt(body.done()).build()


def test_a_client_reading_slowly_gets_a_long_body_whole(server: ServerThread) -> None:
    scenario = long_unpaced("slow-reader", transfer="close")
    server.registry.register(scenario)
    received = bytearray()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(post_bytes("/slow-reader/v1/chat/completions"))
        while data := sock.recv(256 * 1024):
            received += data
            time.sleep(0.001)
    _, _, body = split_response(bytes(received))
    assert body == f"data: {'x' * LONG_BODY}\n\ndata: [DONE]\n\n".encode()
    assert ended(server, "slow-reader") == ["complete"]


def test_a_client_resetting_in_the_middle_of_a_long_body_is_logged(server: ServerThread) -> None:
    server.registry.register(long_unpaced("left-midway"))
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(post_bytes("/left-midway/v1/chat/completions"))
        assert sock.recv(65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    wait_until(lambda: ended(server, "left-midway") == ["client-disconnected"])


def test_a_client_that_half_closes_gets_the_whole_stream(
    server: ServerThread, register: Register
) -> None:
    steps = [TEXT_STEPS[0], {"pause_ms": 50}, TEXT_STEPS[1], "done"]
    scenario = register("half-closed", {"stream": {"steps": steps}})
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    received = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(post_bytes("/half-closed/v1/chat/completions"))
        sock.shutdown(socket.SHUT_WR)
        while data := sock.recv(65536):
            received += data

    _, _, body = split_response(received)
    assert dechunk(body) == [write.data for write in encode_stream(attempt.stream).writes]
    assert ended(server, "half-closed") == ["complete"]


def test_a_client_that_fills_a_stall_with_input_and_leaves_is_noticed() -> None:
    """Past the body bound the server read no more, so it never saw the client leave: the
    socket stayed in CLOSE-WAIT and the request pending until the server stopped."""
    stalled = make_scenario("stalled", {"fault": "stall"})
    with ServerThread(ScenarioRegistry([stalled])) as private:
        with socket.create_connection(("127.0.0.1", private.port), timeout=5) as sock:
            sock.sendall(post_bytes("/stalled/v1/chat/completions"))
            wait_until(lambda: ended(private, "stalled") == ["pending"])
            sent = _push_until_refused(sock, 12 * 1024 * 1024)
        wait_until(lambda: ended(private, "stalled") == ["stalled"])
    assert sent > 10 * 1024 * 1024


def _push_until_refused(sock: socket.socket, total: int) -> int:
    """Send up to ``total`` bytes, stopping when the peer has taken none for a while."""
    piece = b"x" * 65536
    sent = 0
    sock.setblocking(False)
    while sent < total:
        _, writable, _ = select.select([], [sock], [], 1.0)
        if not writable:
            break
        sent += sock.send(piece)
    return sent


def test_stopping_does_not_wait_for_stalled_connections() -> None:
    with ServerThread() as private:
        private.registry.register(make_scenario("stuck", {"fault": "stall"}))
        with socket.create_connection(("127.0.0.1", private.port), timeout=5) as sock:
            sock.sendall(post_bytes("/stuck/v1/chat/completions"))
            wait_until(lambda: len(private.registry.requests("stuck")) == 1)
            started = time.monotonic()
            private.stop()
            assert time.monotonic() - started < 1.0
            assert sock.recv(10) == b""
        assert ended(private, "stuck") == ["stalled"]


# --- hostile input ------------------------------------------------------------------------


def assert_json_error(raw: bytes, status: int) -> dict[str, Any]:
    status_line, headers, body = split_response(raw)
    assert status_line.startswith(f"HTTP/1.1 {status} ")
    assert headers["content-type"] == "application/json"
    error: dict[str, Any] = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"\x00\xff garbage \r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n" + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431),
        (
            post_bytes("/huge/v1/chat/completions").replace(b"Length: 2", b"Length: 99999999999"),
            413,
        ),
    ],
)
def test_malformed_requests_get_a_json_error(
    server: ServerThread, client: httpx.Client, request_bytes: bytes, status: int
) -> None:
    raw = b"".join(data for _, data in exchange(server.port, request_bytes))

    assert_json_error(raw, status)
    assert client.get(f"{server.root_url}/_health").status_code == 200


def test_content_length_with_transfer_encoding_is_refused_and_the_connection_closed(
    server: ServerThread, register: Register
) -> None:
    register("framed", {"stream": {"steps": TEXT_STEPS}})
    smuggled = (
        b"POST /framed/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    )
    pipelined = b"GET /_health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    raw = b"".join(data for _, data in exchange(server.port, smuggled + pipelined))

    error = assert_json_error(raw, 400)
    assert "both Content-Length and Transfer-Encoding" in error["message"]
    assert raw.count(b"HTTP/1.1 ") == 1  # the pipelined request is not answered
    assert server.registry.requests("framed") == []


def test_a_body_in_pieces_is_read_whole_and_what_follows_it_is_the_next_request(
    server: ServerThread, register: Register
) -> None:
    register("pieces", {"stream": {"steps": ["done"]}})
    first = post_bytes("/pieces/v1/chat/completions", b'{"n": "first"}')
    second = post_bytes("/pieces/v1/chat/completions", b'{"n": 2}', "Connection: close\r\n")
    cut = len(first) - 5  # inside the first body
    received = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(first[:cut])
        time.sleep(0.05)
        sock.sendall(first[cut:] + second[:10])
        time.sleep(0.05)
        sock.sendall(second[10:])
        while data := sock.recv(65536):
            received += data

    assert received.count(b"HTTP/1.1 200 OK") == 2
    assert [r.body for r in server.registry.requests("pieces")] == ['{"n": "first"}', '{"n": 2}']


def test_a_body_cut_short_gets_a_400(server: ServerThread) -> None:
    short = post_bytes("/cut-short/v1/chat/completions", b"{}").replace(b"Length: 2", b"Length: 10")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(short)
        sock.shutdown(socket.SHUT_WR)
        raw = b"".join(iter(lambda: sock.recv(65536), b""))

    error = assert_json_error(raw, 400)
    assert error["message"] == "malformed HTTP request: 2 of 10 body bytes"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/no-such-scenario/v1/chat/completions", 404),
        ("GET", "/anything/v1/chat/completions", 405),
        ("POST", "/not/a/route", 404),
        ("GET", "/_scenarios/no-such-scenario", 404),
        ("GET", "/_scenarios/no-such-scenario/requests", 404),
        ("POST", "/_scenarios", 405),
        ("DELETE", "/_health", 405),
    ],
)
def test_bad_routes_get_a_json_error(
    server: ServerThread, client: httpx.Client, method: str, path: str, status: int
) -> None:
    response = client.request(method, server.root_url + path, json={})

    assert response.status_code == status
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    if status == 405:
        assert response.headers["allow"]


def test_a_body_over_the_limit_gets_413(server: ServerThread, client: httpx.Client) -> None:
    response = client.post(
        server.root_url + "/x/v1/chat/completions", content=b"x" * (10 * 1024 * 1024 + 1)
    )

    assert response.status_code == 413


def test_a_slow_request_head_is_cut_off(server: ServerThread) -> None:
    # The module's server gives a request 1 s to arrive (the default is 10 s).
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"POST /slow/v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        assert sock.recv(100) == b""
        assert 0.5 < time.monotonic() - started < 3.0


# --- under attack: every hostile client gets its answer, a good one is served meanwhile ----

ATTACK_TIMEOUT_S = 2.0  # the attacked server's request timeout
IDLE_CLIENTS = 300  # more than asyncio's default listen backlog (100)
SLOW_CLIENTS = 20
_Ended = tuple[bytes, float]  # what a client received before the server closed, and when


async def _hold_idle(port: int) -> _Ended:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return await reader.read(), time.monotonic()
    finally:
        writer.close()


async def _trickle_headers(port: int) -> _Ended:
    """Slowloris: a header line every 100 ms, never the blank line that ends the head."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /attacked/v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    try:
        while True:
            try:
                async with asyncio.timeout(0.1):
                    return await reader.read(), time.monotonic()
            except TimeoutError:
                writer.write(b"X-Slow: 1\r\n")
    except ConnectionError:  # the server closed while we were writing
        return b"", time.monotonic()
    finally:
        writer.close()


async def _send_raw(port: int, request: bytes, *, then: bytes = b"", times: int = 0) -> bytes:
    """Send ``request`` (then ``then`` ``times`` times, ignoring a close), read to EOF."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        with contextlib.suppress(ConnectionError):
            for _ in range(times):
                writer.write(then)
                await writer.drain()
        return await reader.read()
    finally:
        writer.close()


async def _attack(port: int) -> tuple[list[_Ended], dict[str, bytes], bytes, float]:
    idle = [asyncio.create_task(_hold_idle(port)) for _ in range(IDLE_CLIENTS)]
    slow = [asyncio.create_task(_trickle_headers(port)) for _ in range(SLOW_CLIENTS)]
    one_mib = b"x" * (1024 * 1024)
    malformed = {
        "bad JSON": _send_raw(
            port,
            b"PUT /_scenarios/attacked HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Length: 5\r\n\r\n{nope",
        ),
        "wrong method": _send_raw(
            port,
            b"DELETE /attacked/v1/chat/completions HTTP/1.1\r\n"
            b"Host: x\r\nContent-Length: 0\r\n\r\n",
        ),
        "oversized body": _send_raw(  # chunked: no length to refuse up front
            port,
            b"POST /attacked/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n",
            then=b"%x\r\n%s\r\n" % (len(one_mib), one_mib),
            times=11,
        ),
    }
    answering = [asyncio.create_task(request) for request in malformed.values()]
    await asyncio.sleep(0.2)  # every attacker is connected and busy
    good = await _send_raw(
        port, post_bytes("/attacked/v1/chat/completions", extra="Connection: close\r\n")
    )
    served_at = time.monotonic()
    answers = dict(zip(malformed, await asyncio.gather(*answering), strict=True))
    return await asyncio.gather(*idle, *slow), answers, good, served_at


def test_the_server_serves_a_good_client_while_attacked() -> None:
    scenario = (
        build.ScenarioBuilder("attacked")
        .attempt(build.stream().role().pause(20).text("still ").pause(20).text("here").done())
        .build()
    )
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    with ServerThread(ScenarioRegistry([scenario]), request_timeout_s=ATTACK_TIMEOUT_S) as attacked:
        began = time.monotonic()
        cut_off, answers, good, served_at = asyncio.run(_attack(attacked.port))

    status, _, body = split_response(good)
    assert status == "HTTP/1.1 200 OK"
    assert dechunk(body) == [write.data for write in encode_stream(attempt.stream).writes]
    assert_json_error(answers["bad JSON"], 400)
    assert_json_error(answers["wrong method"], 405)
    assert_json_error(answers["oversized body"], 413)
    # Idle and slowloris clients get nothing and are cut off at the request timeout, after
    # the good client was served.
    assert {received for received, _ in cut_off} == {b""}
    closed_after = [at - began for _, at in cut_off]
    assert served_at - began < min(closed_after)
    assert min(closed_after) > ATTACK_TIMEOUT_S - 0.5
    assert max(closed_after) < 3 * ATTACK_TIMEOUT_S


def test_disconnect_mid_chunked_body_over_loopback() -> None:
    chunked = build.ScenarioBuilder("cut").attempt(build.stream().text("a").disconnect()).build()
    closed = (
        build.ScenarioBuilder("cut-close")
        .attempt(build.stream(transfer="close").text("a").disconnect())
        .build()
    )
    with ServerThread(ScenarioRegistry([chunked, closed])) as server:
        with (
            pytest.raises(httpx.RemoteProtocolError),
            httpx.stream("POST", f"{server.base_url('cut')}/chat/completions", json={}) as r,
        ):
            for _ in r.iter_raw():
                pass
        url = f"{server.base_url('cut-close')}/chat/completions"
        with httpx.stream("POST", url, json={}) as response:
            assert b"".join(response.iter_raw()).startswith(b"data: ")


def test_the_socket_carries_exactly_what_fakeprovider_show_prints(server: ServerThread) -> None:
    fixture = bundled_fixtures() / "starter" / "utf8-byte-split.yaml"
    shown = CliRunner().invoke(cli_main, ["show", str(fixture), "--attempt", "1", "--raw"])
    assert shown.exit_code == 0
    scenario = load_fixture(fixture)
    server.registry.register(scenario)
    raw = b"".join(
        data
        for _, data in exchange(
            server.port,
            post_bytes(f"/{scenario.id}/v1/chat/completions", extra="Connection: close\r\n"),
        )
    )
    _, _, body = split_response(raw)
    chunks = dechunk(body)
    assert b"".join(chunks) == shown.stdout_bytes
    assert all(len(chunk) == 1 for chunk in chunks)  # one write per byte, as scripted


def test_a_body_sent_byte_by_byte_lets_other_streams_run_meanwhile() -> None:
    """drain() does not yield while the socket takes every write: a stream of 100 000
    one-byte writes held the loop until its end, and a second client waited for all of it."""
    byte_by_byte = (
        build.ScenarioBuilder("bytes").attempt(build.stream().split("byte").raw("x" * 100_000))
    ).build()
    short = build.ScenarioBuilder("short").attempt(build.stream().text("hi").done()).build()
    with (
        ServerThread(ScenarioRegistry([byte_by_byte, short])) as running,
        socket.create_connection(("127.0.0.1", running.port), timeout=10) as long_client,
    ):
        long_client.sendall(post_bytes("/bytes/v1/chat/completions"))
        assert long_client.recv(1)  # the long stream has begun
        drained = threading.Thread(target=_read_to_the_end, args=(long_client,))
        drained.start()
        short_answer = b"".join(
            data
            for _, data in exchange(
                running.port,
                post_bytes("/short/v1/chat/completions", extra="Connection: close\r\n"),
            )
        )
        still_sending = ended(running, "bytes")
        long_client.shutdown(socket.SHUT_RDWR)
        drained.join()
    assert split_response(short_answer)[0] == "HTTP/1.1 200 OK"
    assert still_sending == ["pending"]


def _read_to_the_end(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while sock.recv(65536):
            pass


def test_a_long_upload_validation_lets_streams_play_meanwhile() -> None:
    paced = build.stream().role()
    for _ in range(20):
        paced = paced.pause(10).text("x")
    scenario = build.ScenarioBuilder("paced").attempt(paced.done()).build()
    invalid = json.dumps({"attempts": [{"stream": {"steps": [{"pause_ms": -1}] * 200_000}}]})
    with ServerThread(ScenarioRegistry([scenario])) as running:

        def upload() -> float:
            with httpx.Client(timeout=30) as uploader:
                uploader.put(f"{running.root_url}/_scenarios/slow", content=invalid.encode())
            return time.monotonic()

        with socket.create_connection(("127.0.0.1", running.port), timeout=30) as streaming:
            streaming.sendall(
                post_bytes("/paced/v1/chat/completions", extra="Connection: close\r\n")
            )
            assert streaming.recv(1)  # the paced stream has begun
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                answered = pool.submit(upload)
                _read_to_the_end(streaming)
                stream_ended = time.monotonic()
                upload_answered = answered.result()
    assert stream_ended < upload_answered  # the stream did not wait for the validation
