"""`fakeprovider record` within bounds: a large or endless answer is recorded up to
MAX_RECORDED_BYTES (and still relayed in full), a fixture is written only if `validate`
accepts it, saving never holds up the other relayed streams, a kill while saving leaves no
empty or cut fixture, and a compressed answer is recorded decoded (or refused, saying why).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import signal
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.fixtures import fixture_yaml, load_fixture, validate_fixtures
from fakeprovider.proxy import MAX_RECORDED_BYTES, RecordingProxy, Saved
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import DisconnectStep, PauseStep, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import encode_stream

pytestmark = pytest.mark.timeout(120)
PATH = "/v1/chat/completions"


def _event(number: int, size: int = 40) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": f"{number:08d}" + "x" * size}}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


Answer = Callable[[Callable[[bytes], None]], None]
"""Writes an answer's body, chunk by chunk, through the function it is given."""


@contextmanager
def raw_upstream(answer: Answer, headers: dict[str, str] | None = None) -> Iterator[str]:
    """A loopback upstream that answers every POST 200 with chunks ``answer`` writes."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

            def write(data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            try:
                answer(write)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # the proxy left

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _through_proxy(
    upstream: str, out_dir: Path, *, read_at_most: int | None = None
) -> tuple[bytes, list[Saved]]:
    """POST through a recording proxy; what the client got (it leaves after
    ``read_at_most`` bytes, when given, waiting first for the recording to be saved)."""
    saved: list[Saved] = []
    recorder = RecordingProxy(upstream, out_dir, on_saved=saved.append)
    async with recorder, httpx.AsyncClient(timeout=30.0) as client:
        received = bytearray()
        async with client.stream("POST", recorder.root_url + PATH, json={"model": "m"}) as answer:
            async for data in answer.aiter_raw():
                received += data
                if read_at_most is not None and len(received) >= read_at_most:
                    await _until(lambda: bool(saved))  # saved while the answer goes on
                    break
        await _until(lambda: bool(saved))
    return bytes(received), saved


async def _until(condition: Callable[[], bool], within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "not saved in time"
        await asyncio.sleep(0.02)


@contextmanager
def served(fixtures: Path) -> Iterator[str]:
    """``fakeprovider serve`` of ``fixtures`` on a free port; yields its root URL."""
    command = [sys.executable, "-m", "fakeprovider", "serve", "--port", "0"]
    server = subprocess.Popen(
        [*command, "--fixtures", str(fixtures)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split(" listening on ")[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=10)


def _valid(out_dir: Path) -> None:
    fixtures, problems = validate_fixtures([out_dir])
    assert problems == [] and fixtures


def _steps(saved: Saved) -> tuple[object, ...]:
    assert saved.fixture is not None
    attempt = load_fixture(saved.fixture).attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return attempt.stream.steps


def test_a_large_answer_is_relayed_whole_and_recorded_up_to_the_cap(tmp_path: Path) -> None:
    events = [_event(number, 200) for number in range(8 * 1024 * 1024 // 280)]
    body = b"".join(events)

    def answer(write: Callable[[bytes], None]) -> None:
        for start in range(0, len(events), 200):
            write(b"".join(events[start : start + 200]))

    with raw_upstream(answer) as upstream:
        received, (saved,) = asyncio.run(_through_proxy(upstream, tmp_path))

    assert received == body  # relayed whole
    assert f"stops at {MAX_RECORDED_BYTES} body bytes (MAX_RECORDED_BYTES)" in saved.partial
    assert saved.dump.read_bytes() == body[:MAX_RECORDED_BYTES]
    _valid(tmp_path)
    assert isinstance(_steps(saved)[-1], DisconnectStep)
    notes = load_fixture(saved.fixture or Path()).provenance.notes or ""
    assert "MAX_RECORDED_BYTES" in notes


def test_an_endless_answer_is_saved_at_the_cap_while_it_is_still_relayed(tmp_path: Path) -> None:
    def answer(write: Callable[[bytes], None]) -> None:
        number = 0
        while True:
            write(b"".join(_event(number + n) for n in range(100)))
            number += 100

    with raw_upstream(answer) as upstream:
        received, (saved,) = asyncio.run(
            _through_proxy(upstream, tmp_path, read_at_most=3 * MAX_RECORDED_BYTES)
        )

    assert len(received) >= 3 * MAX_RECORDED_BYTES
    assert "MAX_RECORDED_BYTES" in saved.partial
    assert len(saved.dump.read_bytes()) == MAX_RECORDED_BYTES
    _valid(tmp_path)


def test_a_fixture_validate_would_refuse_is_not_written(tmp_path: Path) -> None:
    # Each byte a YAML escape of its own (a control character): the file is some 6x the body.
    text = "\x01" * (MAX_RECORDED_BYTES - 64)
    body = b"data: " + text.encode() + b"\n\n"

    with raw_upstream(lambda write: write(body)) as upstream:
        _, (saved,) = asyncio.run(_through_proxy(upstream, tmp_path))

    assert saved.fixture is None
    assert saved.problem.startswith("`fakeprovider validate` would refuse it: ")
    assert "fixtures are at most" in saved.problem
    assert saved.dump.read_bytes() == body
    assert [path.name for path in tmp_path.iterdir()] == ["recorded-001.sse"]


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data, wbits=-zlib.MAX_WBITS)),  # raw
    ],
)
def test_a_compressed_answer_is_recorded_decoded(
    coding: str, compress: Callable[[bytes], bytes], tmp_path: Path
) -> None:
    body = b"".join(_event(number) for number in range(50)) + b"data: [DONE]\n\n"
    compressed = compress(body)

    def answer(write: Callable[[bytes], None]) -> None:
        for start in range(0, len(compressed), 100):
            write(compressed[start : start + 100])

    with raw_upstream(answer, {"content-encoding": coding}) as upstream:
        received, (saved,) = asyncio.run(_through_proxy(upstream, tmp_path))

    assert compressed[:100] in received  # relayed as sent, with its content-encoding
    assert saved.partial == "" and saved.fixture is not None
    assert saved.dump.read_bytes() == body
    recorded = load_fixture(saved.fixture)
    attempt = recorded.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    assert "content-encoding" not in {name.lower() for name in attempt.stream.headers}
    assert encode_stream(attempt.stream).body == body


def test_an_answer_in_a_coding_record_cannot_decode_is_refused_in_the_fixture(
    tmp_path: Path,
) -> None:
    with raw_upstream(lambda write: write(b"\x8b\x02\x80brotli?"), {"content-encoding": "br"}) as (
        upstream
    ):
        received, (saved,) = asyncio.run(_through_proxy(upstream, tmp_path))

    assert b"brotli?" in received
    assert saved.dump.read_bytes() == b""  # never compressed bytes as SSE
    assert "content-encoding 'br', which record does not decode" in saved.partial
    recorded = load_fixture(saved.fixture or Path())
    assert "partial" in recorded.tags
    assert "content-encoding 'br'" in (recorded.provenance.notes or "")
    assert _steps(saved) == (DisconnectStep(),)
    _valid(tmp_path)


def test_saving_a_recording_does_not_hold_up_another_relayed_stream(tmp_path: Path) -> None:
    """One answer is large (its YAML takes seconds to build and check); while it is saved,
    another streams an event every 20 ms: its recording shows no pause it did not make."""
    big = stream()
    for number in range(8_000):  # some 1.9 MB of events, within MAX_RECORDED_BYTES
        big.text(f"{number:08d} {'x' * 60}")
    steady = stream().text("start")
    for number in range(40):
        steady.text(f"tick {number}").pause(20)
    fixtures = tmp_path / "upstream"
    fixtures.mkdir()
    for scenario in [
        ScenarioBuilder("big").attempt(big.done()).build(),
        ScenarioBuilder("steady").attempt(steady.done()).build(),
    ]:
        (fixtures / f"{scenario.id}.yaml").write_text(fixture_yaml(scenario))
    out = tmp_path / "recorded"

    async def one_then_the_other(upstream: str) -> tuple[list[Saved], bool, float]:
        saved: list[Saved] = []
        saved_at: list[float] = []

        def on_saved(one: Saved) -> None:
            saved.append(one)
            saved_at.append(time.monotonic())

        recorder = RecordingProxy(upstream, out, on_saved=on_saved)
        async with recorder, httpx.AsyncClient(timeout=30.0) as client:

            async def read(scenario_id: str) -> None:
                url = f"{recorder.root_url}/{scenario_id}{PATH}"
                async with client.stream("POST", url, json={"model": "m"}) as answer:
                    async for _ in answer.aiter_raw():
                        pass

            await read("big")  # ended: its save begins
            big_ended = time.monotonic()
            await read("steady")
            saving_meanwhile = not saved
            await _until(lambda: len(saved) == 2)
        return saved, saving_meanwhile, saved_at[0] - big_ended

    with served(fixtures) as upstream:  # a process of its own: its work is not the proxy's
        saved, saving_meanwhile, saving_s = asyncio.run(one_then_the_other(upstream))

    assert saving_meanwhile, "the large save ended before the steady stream: it held it up"
    (steady_saved,) = [s for s in saved if s.dump.read_bytes().count(b"tick") == 40]
    pauses = [step.pause_ms for step in _steps(steady_saved) if isinstance(step, PauseStep)]
    # 20 ms each as the upstream paced them, give or take what a loaded machine adds (a
    # stray quarter second under CI's load): most near 20 ms, none near the save's length
    # (the pause a save holding the event loop recorded).
    assert len(pauses) >= 20, pauses
    assert statistics.median(pauses) < 60 and max(pauses) < saving_s * 1000 / 2, (pauses, saving_s)


KILLED_WHILE_SAVING = """
import asyncio, os, signal, sys
from pathlib import Path
import httpx
from fakeprovider import fixtures, proxy

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[3] == "yaml":
    proxy.fixture_yaml = killed  # while the YAML is built, the dump written
else:
    real_fsync = os.fsync
    calls = []
    def fsync(fd):  # while the fixture itself is written, its bytes half-way out
        calls.append(fd)
        if len(calls) == 2:
            os.write(fd, b"attempts: [")
            killed()
        real_fsync(fd)
    os.fsync = fsync

async def main():
    recorder = proxy.RecordingProxy(sys.argv[1], Path(sys.argv[2]))
    async with recorder, httpx.AsyncClient() as client:
        await client.post(recorder.root_url + "/v1/chat/completions", json={"model": "m"})
        await asyncio.sleep(10)

asyncio.run(main())
"""


@pytest.mark.parametrize("when", ["yaml", "write"])
def test_a_kill_while_saving_leaves_no_empty_or_cut_fixture(when: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded"
    (out).mkdir()
    scenario = ScenarioBuilder("s").attempt(stream().text("hello").done()).build()
    with ServerThread(ScenarioRegistry([scenario])) as server:
        upstream = f"{server.root_url}/s"
        script = [sys.executable, "-c", KILLED_WHILE_SAVING, upstream, str(out), when]
        ended = subprocess.run(script, timeout=60, capture_output=True, text=True)

    assert ended.returncode == -signal.SIGKILL, ended.stderr
    names = sorted(path.name for path in out.iterdir() if not path.name.startswith("."))
    assert names == ["recorded-001.sse"]  # the dump is whole; no fixture, empty or cut
    assert (out / "recorded-001.sse").read_bytes().startswith(b"data: ")
    assert validate_fixtures([out]) == ([], [])


def test_an_exclusive_write_never_replaces_and_leaves_nothing_when_cut(tmp_path: Path) -> None:
    from fakeprovider.files import write_atomic

    target = tmp_path / "recorded-001.yaml"
    write_atomic(target, "first", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomic(target, "second", exclusive=True)
    assert target.read_text() == "first"
    assert [path.name for path in tmp_path.iterdir()] == ["recorded-001.yaml"]


def test_a_cap_inside_a_character_cuts_before_it(tmp_path: Path) -> None:
    """The cap falls inside a two-byte character: the recording ends before it, so that
    its text is whole and the fixture is written."""
    body = b"data: x" + "\u00e9".encode() * MAX_RECORDED_BYTES  # 7 bytes, then 2 per character

    with raw_upstream(lambda write: write(body)) as upstream:
        _, (saved,) = asyncio.run(_through_proxy(upstream, tmp_path))

    assert saved.dump.read_bytes() == body[: MAX_RECORDED_BYTES - 1]
    assert saved.fixture is not None
    _valid(tmp_path)
