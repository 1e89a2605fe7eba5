"""LiteLLM's proxy as a real gateway: started on loopback with the fake provider as its one
upstream (``openai/scenario/*`` at http://127.0.0.1:PORT/v1) and judged by ``conformance
gateway`` over the whole corpus. Only in ``tox -e gateway-litellm``, which installs
``litellm[proxy]`` and writes the report to reports/gateway-litellm/."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.results import RunResult

pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("STREAMCONFORM_GATEWAY_LITELLM"),
        reason="LiteLLM's proxy runs in its own environment: tox -e gateway-litellm",
    ),
    pytest.mark.timeout(600),
]
STARTUP_S = 120.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _config(upstream_port: int, master_key: str) -> str:
    # One wildcard route: model scenario/<id> goes upstream as scenario/<id>, which the fake
    # provider plays. LiteLLM's own retries are off so each case is one upstream attempt.
    return f"""
model_list:
  - model_name: "scenario/*"
    litellm_params:
      model: "openai/scenario/*"
      api_base: "http://127.0.0.1:{upstream_port}/v1"
      api_key: "sk-fake-upstream"
litellm_settings:
  num_retries: 0
  request_timeout: 20
  telemetry: false
general_settings:
  master_key: "{master_key}"
"""


@pytest.fixture(scope="module")
def litellm_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, str]]:
    """LiteLLM's proxy on loopback; yields its base URL, its upstream port and its key."""
    executable = shutil.which("litellm")
    assert executable, "litellm[proxy] is not installed in this environment"
    directory = tmp_path_factory.mktemp("litellm")
    upstream_port, port = _free_port(), _free_port()
    master_key = "sk-" + secrets.token_hex(32)
    (directory / "config.yaml").write_text(_config(upstream_port, master_key))
    log = (directory / "litellm.log").open("wb")
    environment = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "DO_NOT_TRACK": "1"}
    command = [executable, "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=directory, stdout=log, stderr=subprocess.STDOUT, env=environment
    )
    try:
        _wait_until_live(f"http://127.0.0.1:{port}", process, directory / "litellm.log")
        yield f"http://127.0.0.1:{port}/v1", upstream_port, master_key
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _wait_until_live(root: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"LiteLLM's proxy exited: {log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(f"{root}/health/liveliness", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"LiteLLM's proxy did not start in {STARTUP_S:g} s")


def _report_dir(tmp_path: Path) -> Path:
    configured = os.environ.get("STREAMCONFORM_GATEWAY_REPORT")
    return Path(configured) if configured else tmp_path / "report"


def test_litellm_proxy_through_conformance_gateway(
    litellm_proxy: tuple[str, int, str], tmp_path: Path
) -> None:
    url, upstream_port, key = litellm_proxy
    out = _report_dir(tmp_path)
    arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(upstream_port)]
    arguments += ["--api-key", key, "--name", "LiteLLM proxy", "--idle-timeout", "3"]
    arguments += ["--report", str(out)]

    invoked = CliRunner().invoke(main, arguments)

    assert invoked.exit_code in (0, 1), invoked.output  # 1: LiteLLM changed some meaning
    result = RunResult.from_json((out / "results.json").read_bytes())
    (out / "findings.md").write_text(findings_note(result), encoding="utf-8")
    assert (out / "index.html").exists() and (out / "junit.xml").exists()
    assert all(case.status == "completed" for case in result.cases)
    # The model field carried every scenario through the proxy to the fake upstream.
    assert all(case.gateway["upstream_requests"] >= 1 for case in result.cases)
    # Plain streams keep their meaning: text, tool calls, usage and finish.
    for case_id in ("utf8-byte-split", "tool-parallel-interleaved", "whitespace-only-text"):
        verdicts = next(case for case in result.cases if case.case == case_id).verdicts
        for rule in ("M1", "M2", "M3", "M5"):
            assert rule not in verdicts or verdicts[rule].verdict == "pass", (case_id, rule)


def findings_note(result: RunResult) -> str:
    """What the run found, per rule: the hazards LiteLLM introduced, the meaning it changed."""
    lines = [f"# {result.adapter.get('name')}: {len(result.cases)} cases", ""]
    totals = ", ".join(f"{count} {verdict}" for verdict, count in result.counts().items())
    lines += [f"Verdicts: {totals}.", ""]
    for entry in result.catalogue:
        rule = str(entry["id"])
        flagged = [
            (case.case, case.verdicts[rule])
            for case in result.cases
            if rule in case.verdicts and case.verdicts[rule].verdict in ("fail", "non-strict")
        ]
        if not flagged:
            continue
        lines.append(f"## {rule} ({entry['level']}): {entry['statement']}")
        lines += [
            f"- {verdict.verdict} `{case_id}`: {verdict.reason}" for case_id, verdict in flagged
        ]
        lines.append("")
    return "\n".join(lines)
