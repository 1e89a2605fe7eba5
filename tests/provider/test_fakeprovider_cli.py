"""The ``fakeprovider`` command line: show, validate, schema."""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main as conformance_main
from conformance.options import bundled_fixtures
from fakeprovider import wire
from fakeprovider.cli import main
from fakeprovider.fixtures import load_fixture
from fakeprovider.wire import encode_stream

FIXTURE = """\
id: two-attempts
attempts:
  - error: {status: 429, headers: {Retry-After: "1"}}
  - stream:
      framing: {split: {mode: byte}, line_ending: crlf}
      steps:
        - chunk: {choices: [{index: 0, delta: {content: "é"}}]}
        - pause_ms: 5
        - done
"""


def fixture(tmp_path: Path) -> Path:
    path = tmp_path / "two-attempts.yaml"
    path.write_text(FIXTURE, encoding="utf-8")
    return path


def test_show_prints_one_escaped_write_per_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["show", str(fixture(tmp_path))])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "# attempt 1"
    assert lines[1].startswith("head  HTTP/1.1 429 Too Many Requests\\r\\n")
    assert "Retry-After: 1" in lines[1]
    writes = [line for line in lines if line.startswith("write ")]
    assert writes[0] == "write 1  d"
    assert any("\\xc3" in line for line in writes)
    assert any(line.startswith("write ") and " after 5 ms " in line for line in lines)
    assert lines[-1] == "<close>"


def test_show_raw_writes_exactly_the_body(tmp_path: Path) -> None:
    path = fixture(tmp_path)
    result = CliRunner().invoke(main, ["show", str(path), "--attempt", "2", "--raw"])
    assert result.exit_code == 0
    expected = encode_stream(load_fixture(path).attempts[1].stream).body  # type: ignore[union-attr]
    assert result.stdout_bytes == expected


def test_validate_passes_good_and_fails_bad(tmp_path: Path) -> None:
    fixture(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "1 fixture(s) valid",
        "`conformance validate` also checks each expect block against the oracle",
    ]
    (tmp_path / "bad.yaml").write_text("attempts: [{fault: explode}]\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "bad.yaml:1: attempts[0].fault: Input should be 'reset', 'close' or 'stall'" in (
        result.output
    )


def test_validate_reports_a_split_past_the_body(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "attempts: [{stream: {framing: {split: {mode: offsets, offsets: [500]}},"
        " steps: [done]}}]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert f"{path}:1: attempts[0].stream: split offset 500" in result.output


def test_schema_is_json_schema_of_a_scenario() -> None:
    result = CliRunner().invoke(main, ["schema"])
    schema = json.loads(result.output)
    assert schema["title"] == "Scenario"
    assert "attempts" in schema["required"]
    expect = schema["$defs"]["Expect"]
    assert expect["additionalProperties"] is False
    assert expect["properties"]["finish"]["enum"] == ["stop", "tool-calls", "max-tokens", "error"]
    assert schema["$defs"]["ExpectedToolCall"]["additionalProperties"] is False


def test_schema_names_its_dialect_and_itself() -> None:
    schema = json.loads(CliRunner().invoke(main, ["schema"]).output)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "urn:streamconform:fixture:scenario"


BACKSLASHES = r"""id: backslashes
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {content: "a\nb \"q\" c\\d"}}]}
        - literal: "x\\y\r\n"
"""


def unescape(shown: str) -> bytes:
    """The inverse of the view's escaping: one escape per byte."""
    return re.sub(
        rb"\\(x[0-9a-f]{2}|[nrt\\])",
        lambda m: {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"\\": b"\\"}.get(
            m[1], bytes.fromhex(m[1][1:].decode())
        ),
        shown.encode("ascii"),
    )


def test_show_escapes_each_byte_once(tmp_path: Path) -> None:
    path = tmp_path / "backslashes.yaml"
    path.write_text(BACKSLASHES, encoding="utf-8")
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == 0, result.output
    writes = [line.split("  ", 1)[1] for line in result.output.splitlines() if "  " in line]
    plan = encode_stream(load_fixture(path).attempts[0].stream)  # type: ignore[union-attr]
    assert [unescape(shown) for shown in writes[1:]] == [write.data for write in plan.writes]
    # the wire's JSON escape \n is two bytes, a backslash and an n: \\ then n
    assert r'"content":"a\\nb \\"q\\" c\\\\d"}}]}\n\n' in writes[1]
    assert writes[2] == r"x\\y\r\n"


CUT_SHORT = """\
id: cut
provenance:
  notes: seen in issue #8259, twice
  emitted_by: "quoted #1 stays whole"
  urls: [https://example.com/a#b]
attempts:
  - stream:
      steps:
        - done  # a comment set apart by two spaces
"""


def test_validate_warns_on_a_plain_scalar_cut_short_by_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "cut.yaml"
    path.write_text(CUT_SHORT, encoding="utf-8")
    assert load_fixture(path).provenance.notes == "seen in issue"  # type: ignore[union-attr]
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"{path}:3: provenance.notes: warning: this plain scalar ends at ' #', where YAML "
        "starts a comment, so the value is just 'seen in issue' and the rest of the line is "
        "dropped; quote the value to keep it, or put two spaces before a comment"
    ]
    assert result.stdout.startswith("1 fixture(s) valid")


def test_the_corpus_validates_without_warnings() -> None:
    result = CliRunner().invoke(main, ["validate", str(bundled_fixtures())])
    assert result.exit_code == 0
    assert result.stderr == ""


def test_validate_reports_an_attempt_whose_body_is_over_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "MAX_STREAM_BODY_BYTES", 64)  # a fixture file cannot reach 16 MiB
    path = fixture(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.output == (
        f"{path}:4: attempts[1].stream: the body is more than 64 bytes by step 0: a stream "
        "attempt encodes to at most that\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["fakeprovider", "validate"],
        ["fakeprovider", "serve", "--port", "0", "--fixtures"],
        ["conformance", "validate"],
        ["conformance", "run", "--fixtures"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_a_scalar_that_does_not_convert_is_one_line_everywhere(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "bad-date.yaml"
    path.write_text("attempts:\n  - stream:\n      steps: [{chunk: {created: 2024-02-30}}]\n")
    program = main if command[0] == "fakeprovider" else conformance_main
    result = CliRunner().invoke(program, [*command[1:], str(path)])
    assert result.exit_code in (1, 2)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == (
        f"{path}:3: attempts[0].stream.steps[0].chunk.created: '2024-02-30' is not a valid "
        "!!timestamp: day is out of range for month"
    )


# --- listening: loopback unless told otherwise, one line when the port is taken ------------

RECORD = ["record", "--upstream", "http://127.0.0.1:9"]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("command", [["serve"], RECORD], ids=["serve", "record"])
def test_a_port_in_use_is_one_line_and_exit_3(
    tmp_path: Path, taken_port: int, command: list[str]
) -> None:
    extra = ["--out", str(tmp_path)] if command == RECORD else []
    result = CliRunner().invoke(main, [*command, "--port", str(taken_port), *extra])
    assert result.exit_code == 3
    assert result.output == (
        f"Error: cannot listen on 127.0.0.1:{taken_port}: {os.strerror(errno.EADDRINUSE)}\n"
    )


@pytest.mark.parametrize("command", [["serve"], RECORD], ids=["serve", "record"])
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "my-laptop.lan"])
def test_a_host_that_is_not_loopback_needs_allow_remote(command: list[str], host: str) -> None:
    result = CliRunner().invoke(main, [*command, "--host", host, "--port", "0"])
    assert result.exit_code == 2
    assert f"'{host}' is not a loopback address" in result.output
    assert "--allow-remote" in result.output


def test_allow_remote_warns_before_listening(taken_port: int) -> None:
    """Bound to the wildcard, a port some loopback socket listens on is in use too (Linux):
    the command warns, then fails to listen, and never reaches beyond this machine."""
    command = [sys.executable, "-m", "fakeprovider", "serve", "--host", "0.0.0.0"]
    command += ["--allow-remote", "--port", str(taken_port)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert finished.stderr.splitlines()[0] == (
        "warning: listening on 0.0.0.0, which other machines may reach; the server has no "
        "authentication"
    )
    assert finished.returncode == 3


def test_serve_coalesce_says_it_is_the_load_mode(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "fakeprovider", "serve", "--port", "0", "--coalesce"]
    with subprocess.Popen(
        [*command, "--fixtures", str(fixture(tmp_path))], stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None
        try:
            lines = [server.stdout.readline() for _ in range(2)]
        finally:
            server.terminate()  # handled from before the first line: a clean stop
            assert server.wait(timeout=10) == 143
    assert lines[0].startswith("fakeprovider listening on http://127.0.0.1:")
    assert lines[1] == "load mode: each run of writes between pauses is sent as one write\n"
