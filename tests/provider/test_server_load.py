"""Load: a thousand concurrent streams, each byte-exact, and the server's heap afterwards.

The server runs in its own process (probed_server.py) so that its heap is measured apart
from the clients'. Every stream is checked against the wire encoder's plan: its chunks
(the server's writes) must arrive complete, in order and unaltered.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import resource
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from raw_http import dechunk, post_bytes, split_response

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.wire import encode_stream

pytestmark = pytest.mark.timeout(90)

STREAMS = 1000
SCENARIOS = 50  # distinct bodies: a stream crossed with another one's is caught
TEXT_CHUNKS = 8
HOLD_MS = 2000  # each stream pauses after its first chunk, so that all are in flight at once
RETAINED_TOLERANCE = 1024 * 1024
"""Heap the server may keep after the load: under 1 KiB per stream, so leaking anything
per stream (a task, a read buffer, a request record) exceeds it, while the one-off growth
of a hash table does not."""
PROBE = Path(__file__).with_name("probed_server.py")


@dataclass(frozen=True)
class Fingerprint:
    """A checksum of a stream's chunks: a lost, reordered or altered write changes it."""

    chunks: int
    sha256: str

    @classmethod
    def of(cls, chunks: list[bytes]) -> Fingerprint:
        digest = hashlib.sha256()
        for chunk in chunks:
            digest.update(b"%d:%s" % (len(chunk), chunk))
        return cls(len(chunks), digest.hexdigest())


def load_scenario(number: int) -> Scenario:
    body = stream().role().pause(HOLD_MS)
    for position in range(TEXT_CHUNKS):
        body = body.text(f"stream {number} chunk {position} " + "é" * (number % 7))
    return ScenarioBuilder(f"load-{number}").attempt(body.finish("stop").done()).build()


def planned(scenario: Scenario) -> Fingerprint:
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return Fingerprint.of([write.data for write in encode_stream(attempt.stream).writes])


class ProbedServer:
    """The server subprocess: its control API over HTTP, its heap over stdin/stdout."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(PROBE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.port = int(self._reply()["port"])
        self.root_url = f"http://127.0.0.1:{self.port}"

    def start_tracing(self) -> None:
        self._ask("trace")

    def traced_heap(self) -> tuple[int, int]:
        """The heap traced since start_tracing: (bytes now, peak bytes)."""
        reply = self._ask("measure")
        return reply["current"], reply["peak"]

    def stop(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _ask(self, command: str) -> dict[str, int]:
        assert self._process.stdin is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._reply()

    def _reply(self) -> dict[str, int]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        assert line, "the probed server exited"
        reply: dict[str, int] = json.loads(line)
        return reply


@pytest.fixture(scope="module")
def enough_descriptors() -> None:
    """Room for a thousand sockets in this process and in the server (which inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = STREAMS + 200
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"needs {needed} file descriptors; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


@pytest.fixture(scope="module")
def server(enough_descriptors: None) -> Iterator[ProbedServer]:
    probed = ProbedServer()
    try:
        yield probed
    finally:
        probed.stop()


async def fetch_all(port: int, paths: list[str]) -> list[bytes]:
    """Open every connection, then send every request, then read every response to EOF."""
    connections = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port) for _ in paths))
    for (_, writer), path in zip(connections, paths, strict=True):
        writer.write(post_bytes(path, extra="Connection: close\r\n"))
    try:
        return await asyncio.gather(*(reader.read() for reader, _ in connections))
    finally:
        for _, writer in connections:
            writer.close()


def stream_problems(responses: list[bytes], expected: list[Fingerprint]) -> list[str]:
    problems = []
    for number, (raw, wanted) in enumerate(zip(responses, expected, strict=True)):
        status, headers, body = split_response(raw)
        if status != "HTTP/1.1 200 OK" or headers.get("transfer-encoding") != "chunked":
            problems.append(f"stream {number}: {status!r}")
        elif (got := Fingerprint.of(dechunk(body))) != wanted:
            problems.append(f"stream {number}: {got} instead of {wanted}")
    return problems


def run_load(
    server: ProbedServer, scenarios: list[Scenario], http: httpx.Client
) -> list[dict[str, Any]]:
    """One round of STREAMS concurrent streams, checked; returns and clears the request log."""
    chosen = [scenarios[number % len(scenarios)] for number in range(STREAMS)]
    paths = [f"/{scenario.id}/v1/chat/completions" for scenario in chosen]
    responses = asyncio.run(fetch_all(server.port, paths))

    assert stream_problems(responses, [planned(scenario) for scenario in chosen]) == []
    records: list[dict[str, Any]] = []
    for scenario in scenarios:
        log = f"{server.root_url}/_scenarios/{scenario.id}/requests"
        records += http.get(log).json()["requests"]
        http.delete(log)
    assert len(records) == STREAMS
    assert {record["ended"] for record in records} == {"complete"}
    return records


def test_a_thousand_concurrent_streams_are_byte_exact_and_leave_no_heap(
    server: ProbedServer,
) -> None:
    scenarios = [load_scenario(number) for number in range(SCENARIOS)]
    with httpx.Client(timeout=10) as http:
        for scenario in scenarios:
            put = http.put(
                f"{server.root_url}/_scenarios/{scenario.id}", content=scenario.model_dump_json()
            )
            assert put.status_code == 201, put.text
        # The first round also warms up what is allocated once (the loop's tables, caches);
        # the heap is traced over the second, which tracemalloc slows several-fold.
        records = run_load(server, scenarios, http)
        server.start_tracing()
        run_load(server, scenarios, http)
    retained, peak = server.traced_heap()

    # The last request arrived before the first response ended: all were in flight at once.
    assert max(r["received_at"] for r in records) < min(r["ended_at"] for r in records)
    assert peak > 4 * RETAINED_TOLERANCE, "the probe must have seen the load's heap"
    assert retained < RETAINED_TOLERANCE, f"{retained} bytes retained (peak {peak})"
