"""LiteLLM's proxy as a real gateway: started on loopback with the fake provider as its one
upstream (``openai/scenario/*`` at http://127.0.0.1:PORT/v1) and judged by ``conformance
gateway`` over the whole corpus; then across dialects, each direction it serves among
chat-completions, Anthropic Messages and OpenAI Responses, the upstream dialect chosen by
the route's provider. Only in ``tox -e gateway-litellm``, which installs ``litellm[proxy]``
and writes the reports to reports/matrix/gateways/litellm-proxy/ (one folder per direction),
which `conformance matrix render` turns into the gateway section of reports/compatibility.md."""

from __future__ import annotations

import contextlib
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
from conformance.options import default_request
from conformance.results import RunResult
from fakeprovider.dialects import DIALECTS, DialectId

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


# Per upstream dialect, LiteLLM's provider that speaks it and the base it is given. Each is a
# wildcard route: model <route>/scenario/<id> goes upstream as scenario/<id>, which the fake
# provider plays (the chat route keeps its old name, scenario/*).
UPSTREAM_ROUTES: dict[str, tuple[str, str]] = {
    # route prefix: (LiteLLM provider/model prefix, base path)
    "": ("openai/", "/v1"),
    "an/": ("anthropic/", ""),
    # A chat-only provider (hosted_vllm/ speaks Responses too, deepseek/ Anthropic): every
    # endpoint goes through LiteLLM's translation to chat.
    "cc/": ("lm_studio/", "/v1"),
}
# The directions judged across dialects: (upstream, downstream, the route that gives it).
# A Responses upstream is left out: LiteLLM 1.108.7 sent its upstream Responses requests
# without stream: true (the fake provider's request log), then could not read the stream
# it was answered (each case a 500 "OpenAIException - event: response.created ...", or no
# answer at all); why it does not stream for these models is not known yet.
DIRECTIONS: tuple[tuple[DialectId, DialectId, str], ...] = (
    ("chat-completions", "anthropic-messages", "cc/"),
    ("chat-completions", "openai-responses", "cc/"),
    ("anthropic-messages", "chat-completions", "an/"),
    ("anthropic-messages", "anthropic-messages", "an/"),
    ("anthropic-messages", "openai-responses", "an/"),
)


def _route(prefix: str, upstream_port: int) -> str:
    provider, base = UPSTREAM_ROUTES[prefix]
    lines = [
        f'  - model_name: "{prefix}scenario/*"',
        "    litellm_params:",
        f'      model: "{provider}scenario/*"',
        f'      api_base: "http://127.0.0.1:{upstream_port}{base}"',
        '      api_key: "sk-fake-upstream"',
    ]
    return "\n" + "\n".join(lines)


def _config(upstream_port: int, master_key: str) -> str:
    # LiteLLM's own retries are off so each case is one upstream attempt.
    routes = "".join(_route(prefix, upstream_port) for prefix in UPSTREAM_ROUTES)
    return f"""
model_list:{routes}
litellm_settings:
  num_retries: 0
  request_timeout: 20
  telemetry: false
general_settings:
  master_key: "{master_key}"
"""


class LiteLLMProxy:
    """LiteLLM's proxy on loopback, started again before a test if it died during the last
    one (1.108.7 was seen to segfault in libpython once in three runs): each direction is
    judged against a live proxy, and a death is reported as such, not as 164 crashed cases."""

    def __init__(self, directory: Path) -> None:
        executable = shutil.which("litellm")
        assert executable, "litellm[proxy] is not installed in this environment"
        self.directory = directory
        self.upstream_port, self.port = _free_port(), _free_port()
        self.key = "sk-" + secrets.token_hex(32)
        (directory / "config.yaml").write_text(_config(self.upstream_port, self.key))
        self.command = [executable, "--config", "config.yaml", "--host", "127.0.0.1"]
        self.command += ["--port", str(self.port)]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def live(self) -> tuple[str, int, str]:
        """Its base URL, its upstream port and its key, the proxy (re)started if need be."""
        if self.process is None or self.process.poll() is not None:
            log = (self.directory / "litellm.log").open("ab")
            environment = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "DO_NOT_TRACK": "1"}
            self.process = subprocess.Popen(
                self.command,
                cwd=self.directory,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
            )
            log.close()
            _wait_until_live(f"http://127.0.0.1:{self.port}", self.process, self.log)
        return self.url, self.upstream_port, self.key

    @property
    def log(self) -> Path:
        return self.directory / "litellm.log"

    def died(self) -> str:
        """Why the proxy is gone, or "" while it runs."""
        if self.process is None or self.process.poll() is None:
            return ""
        return f"LiteLLM's proxy exited ({self.process.returncode}) during the run: {self.log}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def litellm_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteLLMProxy]:
    proxy = LiteLLMProxy(tmp_path_factory.mktemp("litellm"))
    try:
        yield proxy
    finally:
        proxy.stop()


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
    litellm_proxy: LiteLLMProxy, tmp_path: Path
) -> None:
    url, upstream_port, key = litellm_proxy.live()
    out = _report_dir(tmp_path)
    arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(upstream_port)]
    arguments += ["--api-key", key, "--name", "LiteLLM proxy", "--idle-timeout", "3"]
    arguments += ["--report", str(out)]

    invoked = CliRunner().invoke(main, arguments)

    assert not litellm_proxy.died(), litellm_proxy.died()  # its own crash, not a verdict
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


@pytest.mark.parametrize(
    ("upstream", "downstream", "route"),
    DIRECTIONS,
    ids=[f"{up}-to-{down}" for up, down, _ in DIRECTIONS],
)
def test_litellm_proxy_across_dialects(
    litellm_proxy: LiteLLMProxy,
    tmp_path: Path,
    upstream: DialectId,
    downstream: DialectId,
    route: str,
) -> None:
    url, upstream_port, key = litellm_proxy.live()
    out = _report_dir(tmp_path) / f"{upstream}--{downstream}"
    arguments = ["gateway", "--gateway-url", url, "--upstream-port", str(upstream_port)]
    arguments += ["--upstream-dialect", upstream, "--downstream-dialect", downstream]
    arguments += ["--model", f"{route}scenario/{{id}}", "--api-key", key]
    arguments += ["--name", f"LiteLLM proxy {upstream} -> {downstream}", "--idle-timeout", "3"]
    arguments += ["--jobs", "4", "--report", str(out)]

    _warm_up(url, route, downstream, key)
    invoked = CliRunner().invoke(main, arguments)

    assert not litellm_proxy.died(), litellm_proxy.died()  # its own crash, not a verdict
    assert invoked.exit_code in (0, 1), invoked.output  # 1: LiteLLM changed some meaning
    result = RunResult.from_json((out / "results.json").read_bytes())
    (out / "findings.md").write_text(findings_note(result), encoding="utf-8")
    assert all(case.status == "completed" for case in result.cases)
    # The route carried the scenarios through the proxy to the fake upstream.
    reached = sum(case.gateway["upstream_requests"] >= 1 for case in result.cases)
    assert reached >= len(result.cases) // 2, invoked.output


def _warm_up(url: str, route: str, downstream: DialectId, key: str) -> None:
    """One request down the route first: LiteLLM loads a provider's code on its first call,
    which takes longer than a case's idle timeout (its upstream is not up yet: any answer)."""
    request = default_request(downstream) | {"model": f"{route}scenario/warm-up"}
    endpoint = f"{url}/{DIALECTS[downstream].endpoint}"
    headers = {"authorization": f"Bearer {key}", "x-api-key": key}
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(endpoint, json=request, headers=headers, timeout=60.0)


def findings_note(result: RunResult) -> str:
    """What the run found, per rule: the hazards LiteLLM introduced, the meaning it changed."""
    lines = [f"# {result.adapter.get('name')}: {len(result.cases)} cases", ""]
    totals = ", ".join(f"{count} {verdict}" for verdict, count in result.counts().items())
    lines += [f"Verdicts: {totals}.", ""]
    unsent = [case.case for case in result.cases if not case.gateway["upstream_requests"]]
    if unsent:
        lines += [f"Never called the upstream ({len(unsent)}): {', '.join(unsent)}.", ""]
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
