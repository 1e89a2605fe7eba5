"""Gateway mode keeps what a case may keep: a gateway that streams for ever is read up to the
case's bytes and no further, its result says what was cut, and the run's cap leaves out the
cases past it."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.kept import MAX_CASE_BYTES
from conformance.options import bundled_fixtures
from conformance.results import RunResult

pytestmark = pytest.mark.timeout(120)
TIMEOUT_S = 60.0  # far longer than reading a case's bytes takes: the cap, not the clock, ends
CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"x" * 60_000 + b'"}}]}\n\n'


class _EndlessGateway(BaseHTTPRequestHandler):
    """Answers every POST with an SSE stream that never ends (until the client leaves)."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # the run's reachability check: GET …/models
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        frame = b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK)
        try:
            while True:
                self.wfile.write(frame)
        except OSError:
            pass  # the run stopped reading and hung up

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def endless_gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EndlessGateway)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_an_endless_gateway_answer_is_read_up_to_the_case_bytes_and_the_cut_said(
    tmp_path: Path,
) -> None:
    fixtures = [
        "--fixtures",
        str(bundled_fixtures() / "starter"),
        "-k",
        "a",  # enough cases to pass the run's cap of four cases' bytes
    ]
    results, report = tmp_path / "results.json", tmp_path / "report"
    with endless_gateway() as url:
        arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(_free_port())]
        options = ["--timeout", str(TIMEOUT_S), "--jobs", "1"]
        CliRunner().invoke(
            main, [*arguments, *fixtures, *options, "--json", str(results), "--report", str(report)]
        )

    run = RunResult.from_json(results.read_bytes())
    read = [case for case in run.cases if case.gateway]
    not_run = [case for case in run.cases if case.detail.startswith("not run: the run's results")]
    assert len(read) == 4 and not_run and len(read) + len(not_run) == len(run.cases)
    for case in read:
        capture = case.gateway["capture"]
        assert capture["ending"] == "timeout"
        assert "not ended at 4 MiB (MAX_CASE_BYTES): not read on" in case.detail
        kept = sum(len(base64.b64decode(read["data_base64"])) for read in capture["reads"])
        assert MAX_CASE_BYTES - 4096 < kept <= MAX_CASE_BYTES
        assert case.cut["gateway-capture"] > 0
        # What the reading made of the capture draws on the same account: the events the
        # answer decodes to are cut where the capture used it up, never kept beside it.
        events = sum(len(json.dumps(event, separators=(",", ":"))) + 1 for event in case.events)
        assert kept + events <= MAX_CASE_BYTES and case.cut["events"] > 0
        assert case.duration_s < TIMEOUT_S / 4
    assert "gateway-capture: " in (report / "index.html").read_text()
