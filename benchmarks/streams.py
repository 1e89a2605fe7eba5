"""The stream the server benchmarks play, the three servers that play it, and the client.

One stream, byte for byte the shape aimock sends for a 4 000-character reply cut into
20-character pieces: a role chunk, 200 content chunks, a finish chunk and ``[DONE]``, each
a ``chat.completion.chunk`` with the same fields, one write (one HTTP chunk) per event.

- ``ours``: ``fakeprovider serve`` (the loopback server as shipped) in its own process;
  ``load``: the same with ``--coalesce`` (the load mode: a run of writes between pauses
  is one write); ``before``: ``fakeprovider serve`` from another checkout (an earlier
  commit, for a before/after in one run);
- ``baseline``: baseline_server.py, a minimal asyncio server writing the same precomputed
  bytes, the same writes, in its own process: the Python ceiling on this machine;
- ``aimock``: ``@copilotkit/aimock`` (Node), installed into benchmarks/node_modules from
  package-lock.json, serving the same reply from an aimock fixture.

The client is one asyncio process of raw sockets (the servers each get their own process):
it opens every connection first, then sends every request at once and reads every
response to its last chunk, so a measurement times the streaming, not the handshakes.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness import BENCHMARKS
from pydantic import JsonValue

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.scenario import Scenario
from fakeprovider.wire import LAST_CHUNK

CONTENT_CHUNKS = 200
PIECE = "abcdefghij" * 2  # aimock's --chunk-size 20
EVENTS = CONTENT_CHUNKS + 3  # role, content..., finish, [DONE]
_ENVELOPE: dict[str, JsonValue] = {
    "id": "chatcmpl-4WjmI0IqgI3VCgxZ",
    "object": "chat.completion.chunk",
    "created": 1796037115,
    "model": "gpt-4o",
}
_REQUEST = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "bench"}]}
AIMOCK_CLI = BENCHMARKS / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
_START_TIMEOUT_S = 30.0


def bench_scenario(pause_ms: float = 0.0, content_chunks: int = CONTENT_CHUNKS) -> Scenario:
    """The benchmark stream (``content_chunks + 3`` events); ``pause_ms`` before every event
    but ``[DONE]``, as aimock's ``--latency`` does."""
    body = stream().envelope(dict(_ENVELOPE))
    deltas: list[JsonValue] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": PIECE}] * content_chunks
    for delta in [*deltas, {}]:
        if pause_ms:
            body = body.pause(pause_ms)
        finish = None if delta else "stop"
        choice: JsonValue = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = body.chunk({"choices": [choice]})
    return ScenarioBuilder("bench").attempt(body.done()).build()


def request_bytes(path: str) -> bytes:
    body = json.dumps(_REQUEST).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


# --- the servers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A running server (its port and process id) and the path that plays the stream."""

    name: str
    port: int
    pid: int
    path: str


class AimockUnavailableError(RuntimeError):
    """aimock cannot be installed or started here; the message says why."""


@contextlib.contextmanager
def serving_ours(
    scenario: Scenario, *, coalesce: bool = False, checkout: Path | None = None
) -> Iterator[Target]:
    """``fakeprovider serve``: ``load`` with ``--coalesce``; ``before`` if from ``checkout``
    (a working tree of this repository, which must have ``--coalesce`` to be asked for it)."""
    name = "before" if checkout is not None else "load" if coalesce else "ours"
    # -m puts the working directory first on the path: the checkout's, for its package.
    env = None if checkout is None else {**os.environ, "PYTHONPATH": str(checkout)}
    with _fixture_file(scenario) as fixture:
        command = [sys.executable, "-m", "fakeprovider", "serve", "--port", "0"]
        command += ["--fixtures", str(fixture), *(["--coalesce"] if coalesce else [])]
        with _server(command, r"listening on \S+:(\d+)", env=env, cwd=checkout) as running:
            yield Target(name, *running, f"/{scenario.id}/v1/chat/completions")


@contextlib.contextmanager
def serving_baseline(scenario: Scenario) -> Iterator[Target]:
    with _fixture_file(scenario) as fixture:
        command = [sys.executable, str(BENCHMARKS / "baseline_server.py"), str(fixture)]
        with _server(command, r"port (\d+)") as running:
            yield Target("baseline", *running, "/v1/chat/completions")


@contextlib.contextmanager
def serving_aimock(latency_ms: float = 0.0) -> Iterator[Target]:
    """aimock on a free loopback port, with --log-level warn (no line per request)."""
    node = ensure_aimock()
    with tempfile.TemporaryDirectory(prefix="aimock-fixtures-") as folder:
        reply = {"match": {"userMessage": "bench"}, "response": {"content": PIECE * CONTENT_CHUNKS}}
        Path(folder, "bench.json").write_text(json.dumps({"fixtures": [reply]}))
        port = _free_port()
        command = [node, str(AIMOCK_CLI), "--port", str(port), "--fixtures", folder]
        command += ["--chunk-size", str(len(PIECE)), "--latency", f"{latency_ms:g}"]
        with _server([*command, "--log-level", "warn"], None, port) as running:
            yield Target("aimock", *running, "/v1/chat/completions")


@contextlib.contextmanager
def serving_all(
    scenario: Scenario,
    aimock_latency_ms: float = 0.0,
    *,
    load: bool = False,
    before: Path | None = None,
) -> Iterator[tuple[list[Target], str | None]]:
    """Ours (and the load mode, and ours from the checkout ``before``, if asked), the
    baseline and aimock, all playing ``scenario`` (aimock its equivalent, with
    ``--latency``); and, if aimock could not be, why not."""
    with contextlib.ExitStack() as running:
        targets = [running.enter_context(serving_ours(scenario))]
        if load:
            targets.append(running.enter_context(serving_ours(scenario, coalesce=True)))
        targets.append(running.enter_context(serving_baseline(scenario)))
        if before is not None:
            targets.append(running.enter_context(serving_ours(scenario, checkout=before)))
        try:
            targets.append(running.enter_context(serving_aimock(aimock_latency_ms)))
        except AimockUnavailableError as error:
            yield targets, str(error)
        else:
            yield targets, None


def ensure_aimock() -> str:
    """The node executable, once aimock is installed (``npm ci`` from package-lock.json)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        raise AimockUnavailableError("node is not installed")
    if not AIMOCK_CLI.exists():
        if npm is None:
            raise AimockUnavailableError("npm is not installed, so aimock cannot be")
        installed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(BENCHMARKS)],
            capture_output=True,
            text=True,
            check=False,
        )
        if installed.returncode != 0 or not AIMOCK_CLI.exists():
            raise AimockUnavailableError(f"npm ci failed: {installed.stderr.strip()[-500:]}")
    return node


@contextlib.contextmanager
def _fixture_file(scenario: Scenario) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="bench-fixture-") as folder:
        path = Path(folder, f"{scenario.id}.json")
        path.write_text(scenario.model_dump_json(), encoding="utf-8")
        yield path


@contextlib.contextmanager
def _server(
    command: list[str],
    port_pattern: str | None,
    port: int = 0,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[tuple[int, int]]:
    """Start a server process, yield its port and pid; the port comes from its stdout, or is
    given and polled."""
    # Only a port to read is piped: unread output could fill the pipe and stall the server.
    output = subprocess.PIPE if port_pattern is not None else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=output, text=True, env=env, cwd=cwd)
    try:
        if port_pattern is not None:
            port = _read_port(process, port_pattern)
        _wait_listening(process, port)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _read_port(process: subprocess.Popen[str], pattern: str) -> int:
    assert process.stdout is not None
    for line in process.stdout:
        if match := re.search(pattern, line):
            return int(match[1])
    raise RuntimeError(f"{process.args!r} exited before printing its port")


def _wait_listening(process: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args!r} is not listening on port {port}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --- the client ---------------------------------------------------------------------------


@dataclass
class Received:
    """One response as it arrived: each read and when (``time.perf_counter``)."""

    reads: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    @property
    def data(self) -> bytes:
        return b"".join(self.reads)

    def event_times(self) -> list[float]:
        """When each SSE event's last byte arrived (the read holding its blank line)."""
        ends, total = [], 0
        for read in self.reads:
            total += len(read)
            ends.append(total)
        data = self.data
        return [self.times[bisect.bisect_left(ends, m.end())] for m in re.finditer(b"\n\n", data)]


_BODY_END = b"\r\n" + LAST_CHUNK  # the end of the last data chunk, then the last chunk


class _Reader(asyncio.Protocol):
    """Reads one chunked response; done at its last chunk, since aimock keeps the
    connection open (``Connection: keep-alive``) whatever the request asks."""

    def __init__(self, received: Received, done: asyncio.Future[None]) -> None:
        self._received = received
        self._done = done
        self._tail = b""
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._received.times.append(time.perf_counter())
        self._received.reads.append(data)
        self._tail = (self._tail + data)[-len(_BODY_END) :]
        if self._tail == _BODY_END:
            self._finish()

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)
        if self._transport is not None:
            self._transport.close()


async def fetch_concurrently(target: Target, streams: int) -> tuple[list[Received], float]:
    """``streams`` responses read at once; the seconds from sending the requests to the
    last byte (the connections are opened before the clock starts)."""
    loop = asyncio.get_running_loop()
    request = request_bytes(target.path)
    received = [Received() for _ in range(streams)]
    done: list[asyncio.Future[None]] = [loop.create_future() for _ in range(streams)]
    transports = await asyncio.gather(
        *(
            loop.create_connection(functools.partial(_Reader, r, d), "127.0.0.1", target.port)
            for r, d in zip(received, done, strict=True)
        )
    )
    began = time.perf_counter()
    for transport, _ in transports:
        transport.write(request)
    await asyncio.gather(*done)
    return received, time.perf_counter() - began


def check_complete(responses: list[Received], events: int = EVENTS) -> None:
    """Every response is a 200 with all the stream's events: a benchmark of a server that
    failed some streams would measure nothing."""
    for number, response in enumerate(responses):
        data = response.data
        if not data.startswith(b"HTTP/1.1 200 ") or data.count(b"data: ") != events:
            raise RuntimeError(f"stream {number} is incomplete: {len(data)} bytes {data[:80]!r}")
