"""Capture: the recording proxy in front of the fake provider itself, and recording.py.

The acceptance check: recording a fixture through ``fakeprovider record`` gives a fixture
whose replay sends exactly the original body, cut only where the original was cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest
from pydantic import JsonValue
from raw_http import dechunk, post_bytes, split_response

from conformance.options import bundled_fixtures
from fakeprovider import proxy
from fakeprovider.build import (
    MessagesStreamBuilder,
    ResponsesStreamBuilder,
    ScenarioBuilder,
    anthropic_error,
    http_error,
    messages_stream,
    responses_stream,
    stream,
)
from fakeprovider.dialects.named_events import EventStep
from fakeprovider.fixtures import load_fixture
from fakeprovider.proxy import RecordingProxy, Saved
from fakeprovider.recording import (
    DEFAULT_MIN_PAUSE_MS,
    Read,
    Recording,
    RecordingError,
    check_id_prefix,
    recorded_scenario,
)
from fakeprovider.redaction import REDACTED
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import (
    DisconnectStep,
    ErrorAttempt,
    FaultAttempt,
    LiteralStep,
    PauseStep,
    ResetStep,
    Scenario,
    StallStep,
    StreamAttempt,
)
from fakeprovider.server import ServerThread
from fakeprovider.wire import BOM, WirePlan, Write, encode_stream

pytestmark = pytest.mark.timeout(60)
STARTER = bundled_fixtures() / "starter"
SECRET = "sk-live-do-not-save-me"
CREDENTIAL_HEADERS = (
    "authorization",
    "x-api-key",
    "cookie",
    "Ocp-Apim-Subscription-Key",
    "cf-aig-authorization",
    "helicone-auth",
    "api_key",
    "x-auth",
)
LINE_DEADLINE_S = 30.0
"""How long a test waits for an answer, a line or an exit before failing: a hang guard."""


def _plan(scenario: Scenario) -> WirePlan:
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return encode_stream(attempt.stream)


def _cuts(plan: WirePlan) -> set[int]:
    offsets, position = set(), 0
    for write in plan.writes[:-1]:
        position += len(write.data)
        offsets.add(position)
    return offsets


async def _record_through_proxy(
    upstream: str,
    path: str,
    out_dir: Path,
    idle_timeout_s: float = 5.0,
    headers: dict[str, str] | None = None,
    min_pause_ms: float = DEFAULT_MIN_PAUSE_MS,
) -> tuple[bytes, list[Saved]]:
    """POST through a recording proxy (with a credential in every ``CREDENTIAL_HEADERS``
    header unless ``headers`` are given); the bytes the client got and what was saved."""
    saved: list[Saved] = []
    proxy = RecordingProxy(
        upstream,
        out_dir,
        idle_timeout_s=idle_timeout_s,
        min_pause_ms=min_pause_ms,
        on_saved=saved.append,
    )
    if headers is None:
        headers = {name: f"Bearer {SECRET}" for name in CREDENTIAL_HEADERS}
    async with proxy, httpx.AsyncClient(timeout=10.0) as client:
        received = bytearray()
        try:
            async with client.stream(
                "POST", proxy.root_url + path, json={"model": "m"}, headers=headers
            ) as response:
                async for data in response.aiter_raw():
                    received += data
        except httpx.TransportError:
            pass  # the upstream's own failure, relayed
        for _ in range(100):  # the proxy saves once the upstream's body has ended
            if saved:
                break
            await asyncio.sleep(0.02)
    return bytes(received), saved


def _record(
    fixture: str, tmp_path: Path, idle_timeout_s: float = 5.0, *, credentials: bool = False
) -> tuple[bytes, Saved]:
    """Record ``fixture`` played by the fake provider; ``credentials`` puts a secret in the
    upstream URL (userinfo and query) and in the request's query, as a user might."""
    original = load_fixture(STARTER / f"{fixture}.yaml")
    with ServerThread(ScenarioRegistry([original])) as server:
        upstream, path = server.root_url, f"/{fixture}/v1/chat/completions"
        if credentials:
            upstream = f"http://user:{SECRET}@127.0.0.1:{server.port}/?key={SECRET}"
            path += f"?api_key={SECRET}&stream=1"
        received, saved = asyncio.run(
            _record_through_proxy(upstream, path, tmp_path, idle_timeout_s)
        )
    assert len(saved) == 1
    return received, saved[0]


def _replayed_body(scenario: Scenario) -> bytes:
    with ServerThread(ScenarioRegistry([scenario])) as server, httpx.Client() as client:
        url = f"{server.base_url(scenario.id)}/chat/completions"
        return client.post(url, json={}).content


def test_recording_the_byte_split_fixture_replays_byte_identical(tmp_path: Path) -> None:
    original = load_fixture(STARTER / "utf8-byte-split.yaml")

    received, saved = _record("utf8-byte-split", tmp_path)

    assert saved.fixture is not None and saved.status == 200
    recorded = load_fixture(saved.fixture)
    original_plan, recorded_plan = _plan(original), _plan(recorded)
    assert received == original_plan.body  # the client got the upstream's bytes
    assert saved.dump.read_bytes() == original_plan.body
    assert recorded_plan.body == original_plan.body
    assert _replayed_body(recorded) == original_plan.body
    # Reads can only merge writes, never invent a cut.
    assert _cuts(recorded_plan) <= _cuts(original_plan)
    assert len(recorded_plan.writes) > 1


def test_secrets_never_reach_the_saved_files(tmp_path: Path) -> None:
    _, saved = _record("utf8-byte-split", tmp_path, credentials=True)

    assert saved.fixture is not None
    text = saved.fixture.read_text(encoding="utf-8")
    assert SECRET not in text
    assert SECRET.encode() not in saved.dump.read_bytes()
    assert saved.status == 200  # the credentials in the URLs did not change where it went
    for name in CREDENTIAL_HEADERS:
        assert f"{name.lower()}: {REDACTED}" in text  # as httpx sends them
    # The upstream's userinfo and both queries, in the title, description, emitted_by, notes:
    upstream = f"http://{REDACTED}@127.0.0.1:"
    query = f"?key={REDACTED}&api_key={REDACTED}&stream=1"
    assert text.count(upstream) == text.count(query) == 4
    assert "recorded by `fakeprovider record`" in text


@pytest.mark.parametrize(
    "fixture", ["crlf-bom", "comment-keepalive-openrouter", "usage-every-chunk"]
)
def test_framing_survives_the_round_trip(fixture: str, tmp_path: Path) -> None:
    _, saved = _record(fixture, tmp_path)

    assert saved.fixture is not None
    original = _plan(load_fixture(STARTER / f"{fixture}.yaml"))
    assert _plan(load_fixture(saved.fixture)).body == original.body


def test_a_pause_and_a_reset_are_recorded_as_steps(tmp_path: Path) -> None:
    received, saved = _record("reset-mid-stream", tmp_path)

    assert saved.fixture is not None
    recorded = load_fixture(saved.fixture)
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    steps = attempt.stream.steps
    assert isinstance(steps[-1], ResetStep)
    assert isinstance(steps[-2], PauseStep) and steps[-2].pause_ms >= 15  # the fixture's 20 ms
    assert received == _plan(load_fixture(STARTER / "reset-mid-stream.yaml")).body


def test_a_stall_is_recorded_after_the_idle_timeout(tmp_path: Path) -> None:
    _, saved = _record("stall-mid-reasoning", tmp_path, idle_timeout_s=0.3)

    assert saved.fixture is not None
    attempt = load_fixture(saved.fixture).attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert isinstance(attempt.stream.steps[-1], StallStep)


def test_an_error_response_is_recorded_as_an_error_attempt(tmp_path: Path) -> None:
    original = load_fixture(STARTER / "rate-limit-then-ok.yaml")
    expected = original.attempts[0]
    assert isinstance(expected, ErrorAttempt)

    received, saved = _record("rate-limit-then-ok", tmp_path)

    assert saved.fixture is not None and saved.status == 429
    attempt = load_fixture(saved.fixture).attempts[0]
    assert isinstance(attempt, ErrorAttempt)
    assert attempt.error.raw_body is not None
    assert attempt.error.raw_body.encode() == received
    assert attempt.error.headers["retry-after"] == expected.error.headers["Retry-After"]


# --- recording.py, sans-IO ----------------------------------------------------------------


def _recording(*reads: Read, status: int | None = 200, ending: str = "complete") -> Recording:
    return Recording(
        url="http://127.0.0.1:1/v1/chat/completions",
        method="POST",
        request_headers=(("Authorization", "Bearer x"), ("Accept", "text/event-stream")),
        model="m",
        recorded_at="2025-01-01T00:00:00+00:00",
        status=status,
        reads=reads,
        ending=ending,  # type: ignore[arg-type]
    )


def test_a_body_that_is_not_utf8_cannot_be_a_fixture() -> None:
    with pytest.raises(RecordingError, match="not UTF-8"):
        recorded_scenario(_recording(Read(b"data: \xff\n\n")), "x")


def test_short_waits_are_noise_and_long_ones_pauses() -> None:
    scenario = recorded_scenario(
        _recording(Read(b"data: 1\n\n"), Read(b"data: 2\n\n", 1.0), Read(b"data: 3\n\n", 50.0)),
        "x",
    )

    plan = _plan(scenario)
    assert [write.delay_ms for write in plan.writes] == [0.0, 0.0, 50.0]
    assert plan.body == b"data: 1\n\ndata: 2\n\ndata: 3\n\n"


def test_a_pause_inside_a_character_moves_to_its_end_and_keeps_the_bytes() -> None:
    text = "data: é\n\n".encode()  # é is two bytes; the second read starts inside it
    cut = text.index(b"\xc3") + 1

    plan = _plan(recorded_scenario(_recording(Read(text[:cut]), Read(text[cut:], 80.0)), "x"))

    assert plan.body == text
    assert plan.writes[0].data == text[:cut]
    assert any(write.delay_ms == 80.0 for write in plan.writes)


def test_a_failure_before_any_byte_is_a_fault() -> None:
    scenario = recorded_scenario(_recording(status=None, ending="reset"), "x")

    assert scenario.attempts == (FaultAttempt(fault="reset"),)


def test_a_recording_keeps_no_credential_of_its_url_or_headers() -> None:
    recording = Recording(
        url=f"https://me:{SECRET}@api.example.com/v1/chat/completions?key={SECRET}",
        method="POST",
        request_headers=(("Ocp-Apim-Subscription-Key", SECRET), ("accept", "text/event-stream")),
        model="m",
        recorded_at="2025-01-01T00:00:00+00:00",
        status=401,
        response_headers=(("set-cookie", SECRET), ("content-type", "application/json")),
        reads=(Read(b"{}"),),
    )

    scenario = recorded_scenario(recording, "x")

    assert SECRET not in scenario.model_dump_json()
    attempt = scenario.attempts[0]
    assert isinstance(attempt, ErrorAttempt)
    assert attempt.error.headers == {"set-cookie": REDACTED, "content-type": "application/json"}


def test_a_partial_recording_ends_in_a_cut_and_says_why() -> None:
    recording = _recording(Read(b"data: 1\n\n"), ending="disconnect")

    scenario = recorded_scenario(
        dataclasses.replace(recording, partial="the client closed its connection"), "x"
    )

    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert isinstance(attempt.stream.steps[-1], DisconnectStep)
    assert "partial" in scenario.tags and "(partial)" in scenario.title
    assert scenario.provenance.notes is not None
    assert "Partial: the client closed its connection." in scenario.provenance.notes


@pytest.mark.parametrize("name", ["recorded", "openai.gpt-4o_2025", "A"])
def test_a_name_that_prefixes_valid_ids_is_accepted(name: str) -> None:
    check_id_prefix(name)


@pytest.mark.parametrize("name", ["", "two words", "../escape", "-dash-first", "x" * 125, "é"])
def test_a_name_that_cannot_prefix_an_id_is_refused(name: str) -> None:
    with pytest.raises(RecordingError, match="--name"):
        check_id_prefix(name)


# --- the proxy: where it forwards, what it writes, when the client leaves -------------------


def test_a_request_target_never_reaches_another_host(tmp_path: Path) -> None:
    targets = ["@127.0.0.1:{port}/x", "http://127.0.0.1:{port}//x", "//127.0.0.1:{port}/x"]
    targets += ["127.0.0.1:{port}", "*"]
    with socket.create_server(("127.0.0.1", 0)) as decoy:
        port = decoy.getsockname()[1]
        answers = asyncio.run(
            _send_raw(tmp_path, [post_bytes(target.format(port=port)) for target in targets])
        )
        decoy.setblocking(False)
        with pytest.raises(BlockingIOError):
            decoy.accept()  # nobody connected to it

    for target, answer in zip(targets, answers, strict=True):
        status_line, headers, body = split_response(answer)
        assert status_line == "HTTP/1.1 400 Bad Request", target
        assert headers["content-type"] == "application/json"
        assert "request target" in json.loads(body)["error"]["message"]
    assert list(tmp_path.iterdir()) == []


def test_an_absolute_form_target_is_recorded_from_the_upstream_whatever_host_it_names(
    tmp_path: Path,
) -> None:
    # RFC 9112 §3.2.2: a server accepts absolute-form; the proxy sends its path upstream.
    original = load_fixture(STARTER / "utf8-byte-split.yaml")
    with socket.create_server(("127.0.0.1", 0)) as decoy:
        target = f"http://127.0.0.1:{decoy.getsockname()[1]}/{original.id}/v1/chat/completions"
        with ServerThread(ScenarioRegistry([original])) as server:
            (answer,) = asyncio.run(_send_raw(tmp_path, [post_bytes(target)], server.root_url))
        decoy.setblocking(False)
        with pytest.raises(BlockingIOError):
            decoy.accept()  # nobody connected to it

    status_line, _, body = split_response(answer)
    assert status_line == "HTTP/1.1 200 OK"
    assert b"".join(dechunk(body)) == _replayed_body(original)


def test_an_http_1_0_client_gets_the_body_delimited_by_the_close(tmp_path: Path) -> None:
    # RFC 9112 §6.1: a response to HTTP/1.0 carries no chunked transfer coding.
    original = load_fixture(STARTER / "utf8-byte-split.yaml")
    request = post_bytes(f"/{original.id}/v1/chat/completions").replace(b"HTTP/1.1", b"HTTP/1.0")
    with ServerThread(ScenarioRegistry([original])) as server:
        (answer,) = asyncio.run(_send_raw(tmp_path, [request], server.root_url))

    status_line, headers, body = split_response(answer)
    assert status_line == "HTTP/1.1 200 OK"
    assert "transfer-encoding" not in headers and headers["connection"] == "close"
    assert body == _replayed_body(original)


async def _send_raw(
    out_dir: Path, requests: list[bytes], upstream: str = "http://127.0.0.1:9"
) -> list[bytes]:
    """Each request on its own connection to a proxy (whose upstream is never reached,
    unless one is given)."""
    answers = []
    async with RecordingProxy(upstream, out_dir) as proxy:
        for request in requests:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(request)
            answers.append(await asyncio.wait_for(reader.read(), LINE_DEADLINE_S))
            writer.close()
    return answers


@pytest.mark.parametrize(("host", "shown"), [("::1", "[::1]"), ("127.0.0.1", "127.0.0.1")])
def test_the_address_printed_for_a_proxy_is_a_usable_url(
    tmp_path: Path, host: str, shown: str
) -> None:
    async def ask() -> tuple[str, int]:
        async with RecordingProxy("http://127.0.0.1:9", tmp_path, host=host) as proxy:
            async with httpx.AsyncClient(trust_env=False) as client:
                answer = await client.post(f"{proxy.root_url}/v1/chat/completions", json={})
            return proxy.root_url, answer.status_code

    url, status = asyncio.run(ask())
    assert url.startswith(f"http://{shown}:")
    assert status == 502  # the proxy answered: its upstream is closed


def test_a_second_session_numbers_on_and_never_overwrites(tmp_path: Path) -> None:
    _, first = _record("utf8-byte-split", tmp_path)
    assert first.fixture is not None
    kept = first.fixture.read_bytes()
    # Numbers a concurrent session holds: one has its dump so far, the other its fixture.
    (tmp_path / "recorded-002.sse").write_bytes(b"another session's")
    (tmp_path / "recorded-003.yaml").write_text("another session's")

    _, second = _record("crlf-bom", tmp_path)

    assert first.fixture.name == "recorded-001.yaml"
    assert second.fixture == tmp_path / "recorded-004.yaml"
    assert second.dump == tmp_path / "recorded-004.sse"
    assert first.fixture.read_bytes() == kept
    assert (tmp_path / "recorded-002.sse").read_bytes() == b"another session's"
    assert (tmp_path / "recorded-003.yaml").read_text() == "another session's"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "recorded-001.sse",
        "recorded-001.yaml",
        "recorded-002.sse",
        "recorded-003.yaml",
        "recorded-004.sse",
        "recorded-004.yaml",
    ]


@pytest.mark.parametrize("failure", [RecordingError("not UTF-8"), ValueError("unexpected")])
def test_a_fixture_that_cannot_be_written_leaves_no_empty_file(
    failure: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> Scenario:
        raise failure

    monkeypatch.setattr(proxy, "recorded_scenario", fail)
    original = load_fixture(STARTER / "utf8-byte-split.yaml")
    with ServerThread(ScenarioRegistry([original])) as server:
        path = "/utf8-byte-split/v1/chat/completions"
        received, saved = asyncio.run(_record_through_proxy(server.root_url, path, tmp_path))

    assert received == _plan(original).body  # the client is served whatever the recording does
    assert [path.name for path in tmp_path.iterdir()] == ["recorded-001.sse"]
    if isinstance(failure, RecordingError):
        assert saved == [Saved(None, tmp_path / "recorded-001.sse", 200, "not UTF-8")]


def test_an_answer_the_client_leaves_is_saved_as_far_as_it_went(tmp_path: Path) -> None:
    slow = stream().text("first").pause(100)
    for number in range(5):
        slow.text(f"later {number}").pause(20)
    scenario = ScenarioBuilder("slow").attempt(slow.done()).build()

    with ServerThread(ScenarioRegistry([scenario])) as server:
        received, saved = asyncio.run(_leave_early(server.root_url, tmp_path))

    assert saved.partial.startswith("the client closed its connection after")
    assert saved.fixture is not None and saved.status == 200
    body = saved.dump.read_bytes()
    assert b"first" in received and b"first" in body
    assert b"[DONE]" not in body  # the upstream's end was never read
    recorded = load_fixture(saved.fixture)
    assert _plan(recorded).body == body
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert isinstance(attempt.stream.steps[-1], DisconnectStep)
    assert "partial" in recorded.tags
    assert recorded.provenance.notes is not None
    assert f"Partial: {saved.partial}." in recorded.provenance.notes


async def _leave_early(upstream: str, out_dir: Path) -> tuple[bytes, Saved]:
    """Read the answer through the proxy until its first text arrives, then reset."""
    saved: asyncio.Queue[Saved] = asyncio.Queue()
    async with RecordingProxy(upstream, out_dir, on_saved=saved.put_nowait) as proxy:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(post_bytes("/slow/v1/chat/completions"))
        received = b""
        while b"first" not in received:
            received += await asyncio.wait_for(reader.read(1024), LINE_DEADLINE_S)
        linger = writer.get_extra_info("socket")
        linger.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()  # with linger 0: a reset, as a client that gives up
        return received, await asyncio.wait_for(saved.get(), LINE_DEADLINE_S)


# --- Anthropic Messages: named events, Anthropic's errors and credentials ------------------

ANTHROPIC_KEY = "sk-ant-api03-do-not-save-me"
ANTHROPIC_HEADERS = {
    "x-api-key": ANTHROPIC_KEY,
    "authorization": f"Bearer {ANTHROPIC_KEY}",
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "fine-grained-tool-streaming-2025-05-14",
}


def _messages_text() -> MessagesStreamBuilder:
    """A text answer with the odd events a recording must keep as they were sent: a
    data-only event, a name that disagrees with its type, and a ping spaced unlike the rest."""
    return (
        messages_stream()
        .message_start(input_tokens=12)
        .text_start(0)
        .ping()
        .text_delta(0, "Bonjour ")
        .text_delta(0, "à vous")
        .data_only()
        .text_delta(0, " !")
        .named("content_block_start")
        .literal('event: ping\ndata: {"type": "ping"}\n\n')
        .block_stop(0)
        .message_delta("end_turn", output_tokens=7)
        .message_stop()
    )


def _record_anthropic(
    scenario: Scenario, tmp_path: Path, path: str = "/v1/messages"
) -> tuple[bytes, Saved]:
    """Record ``scenario`` played by the fake provider, asked with Anthropic's headers;
    no wait is a pause, so a busy machine's scheduling never cuts an event in two."""
    with ServerThread(ScenarioRegistry([scenario])) as server:
        upstream = f"{server.root_url}/{scenario.id}"
        received, saved = asyncio.run(
            _record_through_proxy(
                upstream, path, tmp_path, headers=ANTHROPIC_HEADERS, min_pause_ms=math.inf
            )
        )
    assert len(saved) == 1
    return received, saved[0]


def _replayed_messages(scenario: Scenario) -> httpx.Response:
    with ServerThread(ScenarioRegistry([scenario])) as server, httpx.Client() as client:
        return client.post(f"{server.sdk_base_url(scenario.id)}/v1/messages", json={})


@pytest.mark.parametrize("path", ["/v1/messages", "/messages"])
def test_an_anthropic_stream_is_recorded_as_named_events_and_replays_its_bytes(
    tmp_path: Path, path: str
) -> None:
    original = ScenarioBuilder("an-text", dialect="anthropic-messages")
    original.attempt(_messages_text())
    scenario = original.build()

    received, saved = _record_anthropic(scenario, tmp_path, path)

    assert saved.fixture is not None and saved.status == 200
    recorded = load_fixture(saved.fixture)
    assert recorded.dialect == "anthropic-messages"
    sent = _plan(scenario).body
    assert received == saved.dump.read_bytes() == sent
    assert _plan(recorded).body == sent
    assert _replayed_messages(recorded).content == sent
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    steps = attempt.stream.steps
    events = [step for step in steps if isinstance(step, EventStep)]
    assert [step.event_name() for step in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        None,  # the data-only event
        "content_block_start",  # named unlike its content_block_delta data
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[5].name == "content_block_start" and events[3].name is None
    assert events[4].event == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "à vous"},
    }
    # The spaced ping cannot be an event step of this stream's framing: kept literal.
    assert [step.literal for step in steps if isinstance(step, LiteralStep)] == [
        'event: ping\ndata: {"type": "ping"}\n\n'
    ]


def test_a_recorded_anthropic_stream_keeps_its_framing_and_write_cuts(tmp_path: Path) -> None:
    framed = _messages_text().framing(line_ending="crlf", bom=True, json_separators="spaced")
    scenario = ScenarioBuilder("an-framed", dialect="anthropic-messages")
    scenario = scenario.attempt(framed.split("fixed", size=7)).build()

    _, saved = _record_anthropic(scenario, tmp_path)

    assert saved.fixture is not None
    recorded = load_fixture(saved.fixture)
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    framing = attempt.stream.framing
    assert (framing.line_ending, framing.bom, framing.json_separators) == ("crlf", True, "spaced")
    assert sum(isinstance(step, EventStep) for step in attempt.stream.steps) >= 9
    original_plan, recorded_plan = _plan(scenario), _plan(recorded)
    assert recorded_plan.body == original_plan.body
    assert _cuts(recorded_plan) <= _cuts(original_plan)


def test_an_anthropic_error_is_recorded_with_its_body_and_retry_headers(tmp_path: Path) -> None:
    error = anthropic_error(
        529,
        should_retry=True,
        retry_after_ms=250,
        headers={"request-id": "req_011CRecorded"},
    )
    scenario = ScenarioBuilder("an-529", dialect="anthropic-messages").attempt(error).build()

    received, saved = _record_anthropic(scenario, tmp_path)

    assert saved.fixture is not None and saved.status == 529
    recorded = load_fixture(saved.fixture)
    assert recorded.dialect == "anthropic-messages"
    attempt = recorded.attempts[0]
    assert isinstance(attempt, ErrorAttempt)
    assert attempt.error.raw_body is not None
    assert attempt.error.raw_body.encode() == received
    assert json.loads(received)["error"]["type"] == "overloaded_error"
    headers = attempt.error.headers
    assert headers["x-should-retry"] == "true"
    assert headers["retry-after-ms"] == "250"
    assert headers["request-id"] == "req_011CRecorded"
    replayed = _replayed_messages(recorded)
    assert (replayed.status_code, replayed.content) == (529, received)
    assert replayed.headers["x-should-retry"] == "true"


def test_an_anthropic_key_leaves_no_trace_in_what_is_saved(tmp_path: Path) -> None:
    scenario = ScenarioBuilder("an-key", dialect="anthropic-messages")
    scenario = scenario.attempt(_messages_text()).build()

    _, saved = _record_anthropic(scenario, tmp_path)

    assert saved.fixture is not None
    text = saved.fixture.read_text(encoding="utf-8")
    for path in tmp_path.iterdir():
        assert ANTHROPIC_KEY.encode() not in path.read_bytes(), path.name
        assert b"sk-ant-" not in path.read_bytes(), path.name
    assert f"x-api-key: {REDACTED}" in text and f"authorization: {REDACTED}" in text
    assert "anthropic-version: 2023-06-01" in text  # not a credential: kept, as evidence


def test_the_proxy_answers_an_unreachable_upstream_in_the_asked_dialect(tmp_path: Path) -> None:
    async def ask(path: str) -> JsonValue:
        proxy = RecordingProxy("http://127.0.0.1:9", tmp_path)
        async with proxy, httpx.AsyncClient(trust_env=False) as client:
            answer = await client.post(proxy.root_url + path, json={})
        assert answer.status_code == 502
        body: JsonValue = answer.json()
        return body

    anthropic_body = asyncio.run(ask("/v1/messages"))
    chat_body = asyncio.run(ask("/v1/chat/completions"))
    responses_body = asyncio.run(ask("/v1/responses"))

    assert isinstance(anthropic_body, dict) and anthropic_body["type"] == "error"
    assert isinstance(anthropic_body["error"], dict)
    assert anthropic_body["error"]["type"] == "api_error"
    assert isinstance(chat_body, dict) and "type" not in chat_body
    # The Responses API's HTTP errors have chat's body.
    assert isinstance(responses_body, dict) and responses_body.keys() == chat_body.keys()
    assert isinstance(responses_body["error"], dict) and isinstance(chat_body["error"], dict)
    assert responses_body["error"]["type"] == chat_body["error"]["type"] == "server_error"


def test_recording_chooses_event_steps_by_dialect_and_verifies_every_byte() -> None:
    body = b'event: ping\ndata: {"type":"ping"}\n\n'
    chat = recorded_scenario(_recording(Read(body)), "x")
    anthropic = recorded_scenario(
        dataclasses.replace(_recording(Read(body)), url="https://api.anthropic.com/v1/messages"),
        "x",
    )

    assert chat.dialect == "chat-completions"
    chat_attempt, anthropic_attempt = chat.attempts[0], anthropic.attempts[0]
    assert isinstance(chat_attempt, StreamAttempt) and isinstance(anthropic_attempt, StreamAttempt)
    assert isinstance(chat_attempt.stream.steps[0], LiteralStep)
    assert anthropic.dialect == "anthropic-messages"
    assert isinstance(anthropic_attempt.stream.steps[0], EventStep)
    assert _plan(anthropic).writes == (Write(body),)  # one read: one write, as recorded


def test_a_bom_is_framing_unless_a_wait_comes_before_it() -> None:
    event = b'event: ping\ndata: {"type":"ping"}\n\n'
    recording = dataclasses.replace(_recording(), url="http://h/v1/messages")
    at_once = recorded_scenario(
        dataclasses.replace(recording, reads=(Read(BOM + event), Read(event))), "x"
    )
    after_a_wait = recorded_scenario(
        dataclasses.replace(recording, reads=(Read(BOM + event, 80.0), Read(event))), "x"
    )

    for scenario in (at_once, after_a_wait):
        assert _plan(scenario).body == BOM + event + event
    first, later = at_once.attempts[0], after_a_wait.attempts[0]
    assert isinstance(first, StreamAttempt) and isinstance(later, StreamAttempt)
    assert first.stream.framing.bom
    assert [type(step) for step in first.stream.steps] == [EventStep, EventStep]
    assert not later.stream.framing.bom  # the wait stays before the first byte
    assert [type(step) for step in later.stream.steps] == [PauseStep, LiteralStep, EventStep]
    assert _plan(after_a_wait).writes[0] == Write(BOM + event, 80.0)


@pytest.mark.parametrize(
    "event",
    [
        b'event:ping\ndata: {"type":"ping"}\n\n',  # "event:" unspaced beside "data: "
        b'event: ping\ndata: {"type":"ping", "x":1}\n\n',  # separators of two styles
        b'event: ping\nid: 7\ndata: {"type":"ping"}\n\n',  # a field events cannot script
        b'event: ping\ndata: {"type":\ndata: "ping"}\n\n',  # data over two lines
        b'event: ping\r\ndata: {"type":"ping"}\n\n',  # two line endings
        b'event: ping\ndata: {"type":"ping","type":"x"}\n\n',  # a repeated key
        b'event: ping\ndata: ["ping"]\n\n',  # not an object
    ],
)
def test_an_event_that_no_step_reencodes_exactly_stays_literal(event: bytes) -> None:
    recording = _recording(Read(event))
    scenario = recorded_scenario(dataclasses.replace(recording, url="http://h/messages"), "x")

    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert all(isinstance(step, LiteralStep) for step in attempt.stream.steps)
    assert _plan(scenario).body == event


# --- OpenAI Responses ------------------------------------------------------------------------

OPENAI_KEY = "sk-proj-do-not-save-me"


def _responses_text() -> ResponsesStreamBuilder:
    """A text answer with the numbers a recording must keep as sent: a number the upstream
    set out of place (a repeat), and an event sent without one."""
    return (
        responses_stream()
        .created()
        .in_progress()
        .message_added(0, "msg_1")
        .part_added(0, "msg_1")
        .text_delta(0, "msg_1", "Bonjour ")
        .text_delta(0, "msg_1", "à vous")
        .unnumbered()
        .event({"type": "response.output_text.delta", "sequence_number": 5, "delta": "!"})
        .completed(output=[], usage={"input_tokens": 5, "output_tokens": 3})
    )


def _record_responses(
    scenario: Scenario, tmp_path: Path, path: str = "/v1/responses"
) -> tuple[bytes, Saved]:
    """Record ``scenario`` played by the fake provider, asked with an OpenAI key."""
    with ServerThread(ScenarioRegistry([scenario])) as server:
        received, saved = asyncio.run(
            _record_through_proxy(
                f"{server.root_url}/{scenario.id}",
                path,
                tmp_path,
                headers={"Authorization": f"Bearer {OPENAI_KEY}", "OpenAI-Beta": "x"},
                min_pause_ms=math.inf,
            )
        )
    assert len(saved) == 1
    return received, saved[0]


@pytest.mark.parametrize("path", ["/v1/responses", "/responses"])
def test_a_responses_stream_is_recorded_as_numbered_events_and_replays_its_bytes(
    tmp_path: Path, path: str
) -> None:
    scenario = ScenarioBuilder("rs-text", dialect="openai-responses")
    scenario = scenario.attempt(_responses_text()).build()

    received, saved = _record_responses(scenario, tmp_path, path)

    assert saved.fixture is not None and saved.status == 200
    recorded = load_fixture(saved.fixture)
    assert recorded.dialect == "openai-responses"
    sent = _plan(scenario).body
    assert received == saved.dump.read_bytes() == sent
    assert _plan(recorded).body == sent
    with ServerThread(ScenarioRegistry([recorded])) as server, httpx.Client() as client:
        replayed = client.post(f"{server.sdk_base_url(recorded.id)}/responses", json={})
    assert replayed.content == sent
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    events = [step for step in attempt.stream.steps if isinstance(step, EventStep)]
    assert len(events) == len(attempt.stream.steps) == 8
    numbers = [step.event.get("sequence_number") for step in events]
    assert numbers == [0, 1, 2, 3, 4, None, 5, 7]  # as sent: the repeat and the gap kept
    assert [step.numbered for step in events] == [True] * 5 + [False, True, True]
    # What a person edits: the number recorded in the data, where the upstream wrote it.
    text = saved.fixture.read_text(encoding="utf-8")
    assert "numbered: false" in text and text.count("sequence_number:") == 7


def test_a_responses_number_the_encoder_writes_otherwise_stays_literal() -> None:
    written = b'event: keepalive\ndata: {"type":"keepalive","sequence_number":1e0}\n\n'
    plain = b'event: keepalive\ndata: {"type":"keepalive","sequence_number":1.0}\n\n'
    recording = dataclasses.replace(_recording(), url="http://h/v1/responses")

    exponent = recorded_scenario(dataclasses.replace(recording, reads=(Read(written),)), "x")
    decimal = recorded_scenario(dataclasses.replace(recording, reads=(Read(plain),)), "x")

    kept, evented = exponent.attempts[0], decimal.attempts[0]
    assert isinstance(kept, StreamAttempt) and isinstance(evented, StreamAttempt)
    assert [type(step) for step in kept.stream.steps] == [LiteralStep]
    assert [type(step) for step in evented.stream.steps] == [EventStep]
    assert (_plan(exponent).body, _plan(decimal).body) == (written, plain)


def test_a_responses_recording_redacts_the_key_and_keeps_the_error_body(tmp_path: Path) -> None:
    limited = http_error(429, retry_after=2)
    scenario = ScenarioBuilder("rs-429", dialect="openai-responses").attempt(limited).build()

    received, saved = _record_responses(scenario, tmp_path)

    assert saved.fixture is not None and saved.status == 429
    recorded = load_fixture(saved.fixture)
    assert recorded.dialect == "openai-responses"
    attempt = recorded.attempts[0]
    assert isinstance(attempt, ErrorAttempt)
    assert attempt.error.raw_body is not None and attempt.error.raw_body.encode() == received
    body = json.loads(received)
    assert isinstance(body["error"], dict) and "type" not in body  # chat's shape
    assert attempt.error.headers["retry-after"] == "2"
    for path in tmp_path.iterdir():
        assert OPENAI_KEY.encode() not in path.read_bytes(), path.name
    text = saved.fixture.read_text(encoding="utf-8")
    assert f"authorization: {REDACTED}" in text and "openai-beta: x" in text


# --- the command ---------------------------------------------------------------------------


class _RecordCommand:
    """A running `fakeprovider record`, its stdout read by a thread so no wait is unbounded."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self._lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=self._pump, args=(process.stdout,), daemon=True).start()

    def _pump(self, stdout: IO[str]) -> None:
        for line in stdout:
            self._lines.put(line)

    def line(self) -> str:
        try:
            return self._lines.get(timeout=LINE_DEADLINE_S)
        except queue.Empty:
            pytest.fail(f"`fakeprovider record` printed no line in {LINE_DEADLINE_S} s")

    def root_url(self) -> str:
        """The proxy's URL, from its first line (the second says where it saves)."""
        first = self.line()
        self.line()
        return first.split(" listening on ")[1].split(" ")[0]

    def stop(self, signum: signal.Signals) -> int:
        """Send ``signum`` and wait for the exit status."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=LINE_DEADLINE_S)


@contextlib.contextmanager
def _record_command(*options: str, sigint_ignored: bool = False) -> Iterator[_RecordCommand]:
    """`fakeprovider record` in a process group of its own, ended whatever the test does.

    ``sigint_ignored`` starts it as a shell starts a background job: SIGINT ignored.
    """
    command = [sys.executable, "-m", "fakeprovider", "record", "--port", "0", *options]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if sigint_ignored else None
    try:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    try:
        yield _RecordCommand(process)
    finally:
        _end_process_group(process)


def _end_process_group(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=LINE_DEADLINE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


def test_the_record_command_serves_and_saves(tmp_path: Path) -> None:
    original = load_fixture(STARTER / "utf8-byte-split.yaml")
    with ServerThread(ScenarioRegistry([original])) as server:
        upstream = f"http://me:{SECRET}@127.0.0.1:{server.port}"
        options = ["--upstream", upstream, "--out", str(tmp_path), "--name", "cap"]
        with _record_command(*options) as record:
            first = record.line()
            root = first.split(" listening on ")[1].split(" ")[0]
            record.line()  # "saving to ..."
            response = httpx.post(f"{root}/utf8-byte-split/v1/chat/completions", json={})
            saved_line = record.line()
            assert record.stop(signal.SIGINT) == 130
    assert first.strip().endswith(f"-> http://{REDACTED}@{upstream.partition('@')[2]}")
    assert response.content == _plan(original).body
    assert saved_line.strip() == f"HTTP 200: {tmp_path / 'cap-001.yaml'}"
    assert _plan(load_fixture(tmp_path / "cap-001.yaml")).body == _plan(original).body


def test_the_record_command_stops_on_sigint_even_started_ignoring_it(tmp_path: Path) -> None:
    options = ["--upstream", "http://127.0.0.1:9", "--out", str(tmp_path)]
    with _record_command(*options, sigint_ignored=True) as record:
        record.root_url()

        assert record.stop(signal.SIGINT) == 130


def test_sigterm_saves_the_answer_in_flight_and_exits(tmp_path: Path) -> None:
    original = load_fixture(STARTER / "stall-mid-reasoning.yaml")
    with (
        ServerThread(ScenarioRegistry([original])) as server,
        _record_command("--upstream", server.root_url, "--out", str(tmp_path)) as record,
        httpx.Client(timeout=LINE_DEADLINE_S) as client,
    ):
        url = f"{record.root_url()}/stall-mid-reasoning/v1/chat/completions"
        with client.stream("POST", url, json={}) as response:
            reads = response.iter_raw()  # kept: a dropped iterator closes the response
            first_read = next(reads)  # the upstream has answered; then it stalls

            assert record.stop(signal.SIGTERM) == 143

        saved_line = record.line()
    assert saved_line.startswith(f"HTTP 200: {tmp_path / 'recorded-001.yaml'} (partial: ")
    assert "the recorder stopped after" in saved_line
    assert (tmp_path / "recorded-001.sse").read_bytes().startswith(first_read)


def test_an_invalid_name_is_refused_before_listening(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "fakeprovider", "record", "--port", "0"]
    command += ["--upstream", "http://127.0.0.1:9", "--out", str(tmp_path), "--name", "a b"]

    result = subprocess.run(command, capture_output=True, text=True, timeout=LINE_DEADLINE_S)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("fakeprovider record: --name 'a b': ")
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


def test_an_unusable_upstream_is_refused_before_listening(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "fakeprovider", "record", "--port", "0"]
    command += ["--upstream", f"ftp://me:{SECRET}@example.com", "--out", str(tmp_path)]

    result = subprocess.run(command, capture_output=True, text=True, timeout=LINE_DEADLINE_S)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and SECRET not in result.stderr
    assert "not an http:// or https:// URL" in result.stderr
