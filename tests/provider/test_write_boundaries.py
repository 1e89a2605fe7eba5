"""Every attempt of every bundled fixture over the loopback server, write by write.

Write boundaries are part of a scenario, so the server's writes themselves are recorded
(each ``write`` of its socket transports) and compared with the transcript ``fakeprovider
show`` prints: the head, one write per scripted write (chunk-framed), the last chunk; an
error response in one write. In the load mode (``coalesce``) the same bytes go out as one
write per run that no pause parts.
"""

from __future__ import annotations

import concurrent.futures
import re
import socket
from asyncio.selector_events import _SelectorSocketTransport
from collections import defaultdict
from collections.abc import Iterator

import pytest
from raw_http import post_bytes

from conformance.options import bundled_fixtures
from fakeprovider.dialects import DIALECTS, DialectId
from fakeprovider.fixtures import load_fixtures
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Attempt, Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import LAST_CHUNK, attempt_transcript, frame_chunk

pytestmark = pytest.mark.timeout(60)

Timed = tuple[float, bytes]  # a write and the milliseconds waited before it
# A Retry-After date is the send time plus a delay; the transcript has a placeholder.
_DATED = re.compile(rb"(?im)^(retry-after: )(<HTTP date[^>]*>|\w{3}, \d\d \w{3} \d{4} [\d:]+ GMT)")


def scripted_writes(attempt: Attempt, dialect: DialectId) -> list[Timed]:
    """The writes the transcript shows, as the server makes them."""
    lines = attempt_transcript(attempt, dialect)
    if isinstance(attempt, StreamAttempt):
        chunked = attempt.stream.framing.transfer == "chunked"
        writes = [(line.delay_ms, line.data) for line in lines if line.label != "end"]
        writes = [writes[0]] + [
            (ms, frame_chunk(data) if chunked else data) for ms, data in writes[1:]
        ]
        end = lines[-1]
        tail = LAST_CHUNK if chunked and end.ending == "close" else b""
        return [*writes, (end.delay_ms, tail)]
    return [(0.0, b"".join(line.data for line in lines))]  # one write, or none for a fault


def coalesced(writes: list[Timed]) -> list[bytes]:
    """The writes joined between pauses."""
    runs: list[list[bytes]] = []
    for delay_ms, data in writes:
        if delay_ms > 0 or not runs:
            runs.append([])
        runs[-1].append(data)
    return [b"".join(run) for run in runs]


def sent(writes: list[bytes]) -> list[bytes]:
    return [_DATED.sub(rb"\1<date>", data) for data in writes if data]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[int, list[bytes]]:
    """Every write of a socket transport in this process, by the port of its peer."""
    writes: dict[int, list[bytes]] = defaultdict(list)
    write = _SelectorSocketTransport.write

    def recording(transport: _SelectorSocketTransport, data: bytes) -> None:
        writes[transport.get_extra_info("peername")[1]].append(bytes(data))
        write(transport, data)

    monkeypatch.setattr(_SelectorSocketTransport, "write", recording)
    return writes


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    loaded = load_fixtures([bundled_fixtures()])
    assert len(loaded) > 100
    return loaded


def play_all(server: ServerThread, scenarios: list[Scenario]) -> dict[tuple[str, int], int]:
    """Each scenario's attempts in order, on a connection each, the scenarios side by side;
    the client's port for each (scenario, attempt number)."""

    def play(scenario: Scenario) -> Iterator[tuple[tuple[str, int], int]]:
        for number, attempt in enumerate(scenario.attempts, 1):
            stalls = isinstance(attempt, StreamAttempt) and any(
                line.ending == "stall" for line in attempt_transcript(attempt)
            )
            length = (
                sum(len(data) for _, data in scripted_writes(attempt, scenario.dialect))
                if stalls
                else None
            )
            path = f"/{scenario.id}/v1/{DIALECTS[scenario.dialect].endpoint}"
            yield (scenario.id, number), request(server.port, path, length)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        return {
            key: port
            for played in pool.map(lambda s: list(play(s)), scenarios)
            for key, port in played
        }


def request(port: int, path: str, length: int | None) -> int:
    """Send one request to ``path`` and read its response to its end, or ``length`` bytes
    of it (a stall writes no end); the client's port."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(post_bytes(path, extra="Connection: close\r\n"))
        received = 0
        try:
            while (length is None or received < length) and (data := sock.recv(65536)):
                received += len(data)
        except ConnectionResetError:
            pass  # a scripted reset
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("coalesce", [False, True], ids=["scripted", "coalesced"])
def test_every_bundled_attempt_is_written_as_scripted(
    recorded: dict[int, list[bytes]], scenarios: list[Scenario], coalesce: bool
) -> None:
    with ServerThread(ScenarioRegistry(scenarios), coalesce=coalesce) as server:
        ports = play_all(server, scenarios)
    differing = []
    for scenario in scenarios:
        for number, attempt in enumerate(scenario.attempts, 1):
            writes = scripted_writes(attempt, scenario.dialect)
            expected = sent(coalesced(writes) if coalesce else [data for _, data in writes])
            if sent(recorded[ports[scenario.id, number]]) != expected:
                differing.append(f"{scenario.id} attempt {number}")
    assert differing == []
