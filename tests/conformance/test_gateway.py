"""Gateway mode: the example gateway (examples/gateway/gateway.py) in front of the fake
provider. Its pass-through mode must come out clean; its faulty mode must be flagged with
the rule ids of the faults it injects. Then the sans-IO parts on their own."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from text_case import write_text_case

from conformance import codes
from conformance.cli import main
from conformance.cli.gateway import print_gateway_summary
from conformance.cli.options import ExitCode
from conformance.events import BlockEnd, Event, Finish, TextBlock, ToolCallBlock, Usage
from conformance.gateway.capture import GatewayCapture, GatewayRead
from conformance.gateway.meaning import judge_meaning
from conformance.gateway.outcome import gateway_events
from conformance.gateway.runner import GatewayOptions, run_gateway
from conformance.gateway.verdicts import hazard_verdicts
from conformance.invariants.evidence import ObservedAttempt
from conformance.lint import lint
from conformance.options import bundled_fixtures
from conformance.oracle import ExpectedAttempt
from conformance.results import RunResult
from fakeprovider.fixtures import load_fixture
from fakeprovider.recording import ClientEnding

pytestmark = pytest.mark.timeout(120)
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gateway" / "gateway.py"
CASES = (
    "tool-parallel-interleaved",
    "tool-late-id",
    "reset-mid-stream",
    "comment-keepalive-openrouter",
    "rate-limit-then-ok",
    "error-object-mid-stream",
    "two-turn-parallel-tool-calls",  # the next request, forwarded as the client built it
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def example_gateway(upstream_port: int, mode: str) -> Iterator[str]:
    """The example gateway on a free loopback port; yields its base URL."""
    command = [sys.executable, str(EXAMPLE), "--port", "0", "--mode", mode]
    command += ["--upstream", f"http://127.0.0.1:{upstream_port}/v1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().split(" listening on ")[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def _run(mode: str, *case_ids: str, jobs: int = 1) -> RunResult:
    scenarios = [load_fixture(bundled_fixtures() / "starter" / f"{id_}.yaml") for id_ in case_ids]
    port = _free_port()
    with example_gateway(port, mode) as url:
        options = GatewayOptions(url, upstream_port=port, idle_timeout_s=1.0, timeout_s=10.0)
        return asyncio.run(run_gateway(scenarios, options, jobs=jobs))


@pytest.fixture(scope="module")
def faulty() -> RunResult:
    return _run("faulty", *CASES)


@pytest.fixture(scope="module")
def passthrough() -> RunResult:
    return _run("passthrough", *CASES)


def test_requests_in_flight_through_the_gateway_are_judged_as_one_at_a_time(
    faulty: RunResult,
) -> None:
    """Four requests through the gateway at once: each case's events and verdicts, in
    scenario order, as one at a time (the fake upstream tells the requests apart)."""
    concurrent = _run("faulty", *CASES, jobs=4)
    assert _judged(concurrent) == _judged(faulty)


def _judged(result: RunResult) -> list[tuple[str, str, list[dict[str, Any]], dict[str, str]]]:
    return [
        (case.case, case.status, case.events, _verdicts(result, case.case)) for case in result.cases
    ]


def _verdicts(result: RunResult, case_id: str) -> dict[str, str]:
    case = next(case for case in result.cases if case.case == case_id)
    return {rule: verdict.verdict for rule, verdict in case.verdicts.items()}


def _flagged(result: RunResult, case_id: str) -> dict[str, str]:
    verdicts = _verdicts(result, case_id)
    return {rule: v for rule, v in verdicts.items() if v in ("fail", "non-strict")}


def test_the_pass_through_gateway_is_clean(passthrough: RunResult) -> None:
    assert [case.case for case in passthrough.cases] == list(CASES)
    for case in passthrough.cases:
        assert _flagged(passthrough, case.case) == {}, case.case
        assert case.gateway["upstream_requests"] == 1
    assert not passthrough.failed
    # Exercised, and judged: meaning rules on every case, tool rules on tool cases.
    assert {"M1", "M2", "M5", "W1", "W2", "W3"} <= set(
        _verdicts(passthrough, "tool-parallel-interleaved")
    )
    assert _verdicts(passthrough, "reset-mid-stream")["M6"] == "pass"
    two_turn = _verdicts(passthrough, "two-turn-parallel-tool-calls")
    assert two_turn["N1"] == two_turn["N2"] == "pass"  # the next request reached upstream whole


def test_inherited_hazards_are_info_not_the_gateways_fault(passthrough: RunResult) -> None:
    assert _verdicts(passthrough, "error-object-mid-stream")["W7"] == "info"


def test_the_faulty_gateway_is_flagged_with_the_rule_ids_of_its_faults(
    faulty: RunResult,
) -> None:
    # null identities (A1, A2) and an index offset (C3): hazards, meaning kept.
    assert _flagged(faulty, "tool-parallel-interleaved") == {"W2": "non-strict", "W3": "non-strict"}
    assert _verdicts(faulty, "tool-parallel-interleaved")["M1"] == "pass"
    # A comment re-wrapped as data (I2).
    assert _flagged(faulty, "comment-keepalive-openrouter") == {"W5": "non-strict"}
    # [DONE] after the upstream's reset (J4): the failure reaches the client as a success.
    assert _flagged(faulty, "reset-mid-stream") == {
        "M6": "fail",
        "W7": "non-strict",
        "W8": "non-strict",
        "W10": "non-strict",
    }
    # Nulling the continuation destroys a late id: the call can no longer be identified.
    flagged = _flagged(faulty, "tool-late-id")
    assert flagged["M5"] == "fail"
    assert {"W2", "W3"} <= set(flagged)
    assert _flagged(faulty, "rate-limit-then-ok") == {}
    # Hazards in the first turn, ids kept: the next request still answers every call.
    assert _flagged(faulty, "two-turn-parallel-tool-calls") == {
        "W2": "non-strict",
        "W3": "non-strict",
    }
    assert _verdicts(faulty, "two-turn-parallel-tool-calls")["N1"] == "pass"
    assert faulty.failed


def test_reports_keep_both_transcripts_and_the_findings(faulty: RunResult) -> None:
    case = next(case for case in faulty.cases if case.case == "reset-mid-stream")
    assert case.gateway["capture"]["ending"] == "complete"
    assert case.gateway["lint"]["upstream"] == []
    assert [f["rule"] for f in case.gateway["lint"]["gateway"]] == ["W7", "W8", "W10"]
    assert RunResult.from_json(faulty.to_json()) == faulty
    (request,) = case.requests
    assert dict(request["headers"])["authorization"] == "[REDACTED]"  # the gateway's key
    assert [entry["id"] for entry in faulty.catalogue][:2] == ["M1", "M2"]


def test_the_summary_rolls_findings_up_per_rule_with_one_example(faulty: RunResult) -> None:
    console = Console(record=True, width=400)
    print_gateway_summary(console, faulty)
    lines = console.export_text().splitlines()
    w2 = [line for line in lines if line.startswith("non-strict W2:")]
    assert len(w2) == 1 and w2[0].startswith("non-strict W2: 3 cases, e.g. ")
    assert any(line.startswith("fail M6: reset-mid-stream: ") for line in lines)


def test_the_gateway_command_writes_reports_and_fails_on_a_meaning_change(
    tmp_path: Path,
) -> None:
    port = _free_port()
    fixture = bundled_fixtures() / "starter" / "reset-mid-stream.yaml"
    with example_gateway(port, "faulty") as url:
        arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(port)]
        arguments += ["--fixtures", str(fixture), "--idle-timeout", "1", "--report", str(tmp_path)]
        result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 1, result.output
    assert "fail M6: reset-mid-stream:" in result.output
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Upstream vs gateway" in html and "Wire-hazard findings" in html
    assert 'classname="W.W7" name="reset-mid-stream"' in (tmp_path / "junit.xml").read_text()


def test_an_unreachable_gateway_is_a_crashed_case() -> None:
    scenario = load_fixture(bundled_fixtures() / "starter" / "utf8-byte-split.yaml")
    options = GatewayOptions(
        f"http://127.0.0.1:{_free_port()}/v1", upstream_port=_free_port(), idle_timeout_s=1.0
    )

    (case,) = asyncio.run(run_gateway([scenario], options)).cases

    assert case.status == "crash"
    assert "gateway unreachable" in case.detail
    assert case.verdicts["M5"].verdict == "fail"


def _gateway_cli(tmp_path: Path, url: str, upstream_port: int) -> Result:
    fixture = write_text_case(tmp_path)
    arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(upstream_port)]
    return CliRunner().invoke(main, [*arguments, "--fixtures", str(fixture)])


def test_a_gateway_that_does_not_answer_stops_the_run_with_exit_3(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    result = _gateway_cli(tmp_path, url, _free_port())
    assert result.exit_code == ExitCode.SETUP_ERROR
    assert result.output.startswith(f"Error: the gateway does not answer at {url}/models: ")
    assert "text-hello" not in result.output  # no case ran


def test_an_upstream_port_in_use_stops_the_run_with_exit_3(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with example_gateway(port, "passthrough") as url:
            result = _gateway_cli(tmp_path, url, port)
    assert result.exit_code == ExitCode.SETUP_ERROR
    assert result.output.startswith("Error: cannot start the fake upstream: ")


# --- the sans-IO parts ----------------------------------------------------------------------


def _capture(
    body: bytes, status: int | None = 200, ending: ClientEnding = "complete"
) -> GatewayCapture:
    return GatewayCapture(status, reads=(GatewayRead(0.0, body),), ending=ending)


def _code(capture: GatewayCapture) -> str | None:
    finish = gateway_events(capture)[-1]
    assert isinstance(finish, Finish)
    return finish.code


def test_the_reference_core_reads_the_captured_answer() -> None:
    good = (
        b'data: {"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )

    assert gateway_events(_capture(good))[-1] == Finish(reason="stop")
    assert _code(_capture(good[:40], ending="reset")) == codes.TRANSPORT
    assert _code(_capture(b"", ending="timeout")) == codes.TIMEOUT
    assert _code(_capture(b"", status=None, ending="no-response")) == codes.TRANSPORT
    limited = gateway_events(_capture(b'{"error": {"message": "slow"}}', status=429))
    assert limited == [Finish(reason="error", code=codes.RATE_LIMIT, message="slow")]


def _expected(reason: str, code: str | None = None, **more: Any) -> ExpectedAttempt:
    return ExpectedAttempt(1, reason, code, **more)


def _observed(*events: Event) -> ObservedAttempt:
    return ObservedAttempt(1, events)


def test_meaning_tells_a_masked_failure_from_a_renamed_one() -> None:
    masked = judge_meaning(_expected("error", codes.TRANSPORT), _observed(Finish(reason="stop")))
    renamed = judge_meaning(
        _expected("error", codes.TRANSPORT),
        _observed(Finish(reason="error", code=codes.SERVER)),
    )
    reclassed = judge_meaning(
        _expected("error", codes.TRANSPORT),
        _observed(Finish(reason="error", code=codes.INVALID_REQUEST)),
    )

    assert not masked["M6"].held and not masked["M6"].weaker
    assert renamed["M6"].weaker
    assert not reclassed["M6"].held and not reclassed["M6"].weaker
    assert "M5" not in masked


def test_meaning_compares_content_only_when_both_sides_succeeded() -> None:
    call = ToolCallBlock(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
    renamed = call.model_copy(update={"id": "call_gw"})
    expected = _expected("tool-calls", blocks=(TextBlock(text="ok"), call))

    judged = judge_meaning(
        expected,
        _observed(
            BlockEnd(index=0, block=TextBlock(text="ok")),
            BlockEnd(index=1, block=renamed),
            Finish(reason="tool-calls"),
        ),
    )

    assert not judged["M1"].held and judged["M2"].held and judged["M3"].held
    assert judged["M5"].held
    assert "M4" not in judged


def test_usage_details_added_by_the_gateway_are_weaker_a_zero_is_not() -> None:
    upstream = Usage(input_tokens=11, output_tokens=7, cache_read_tokens=0)
    expected = _expected("stop", usage=upstream, blocks=(TextBlock(text="x"),))
    ending = (BlockEnd(index=0, block=TextBlock(text="x")), Finish(reason="stop"))

    def judged(**update: int) -> tuple[bool, bool]:
        observed = upstream.model_copy(update=update)
        judgement = judge_meaning(expected, _observed(observed, *ending))["M4"]
        return judgement.held, judgement.weaker

    assert judged(reasoning_tokens=0) == (True, False)
    assert judged(reasoning_tokens=3) == (False, True)
    assert judged(output_tokens=8) == (False, False)


def test_a_hazard_counts_against_the_gateway_only_when_it_introduced_it() -> None:
    clean = lint(b'data: {"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}\n\n')
    keepalive = b"data: : keep-alive\n\n"
    rewrapped = lint(keepalive + b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n')

    introduced = hazard_verdicts(clean, rewrapped, strict=False)["W5"]
    inherited = hazard_verdicts(rewrapped, rewrapped, strict=False)["W5"]
    repaired = hazard_verdicts(rewrapped, clean, strict=False)["W5"]

    assert (introduced.verdict, inherited.verdict, repaired.verdict) == (
        "non-strict",
        "info",
        "pass",
    )
    assert "introduced by the gateway: line 1, byte 0: W5" in introduced.reason
    assert hazard_verdicts(clean, rewrapped, strict=True)["W5"].verdict == "fail"
