"""Running cases of another dialect (protocol 1.1): the run line a case of each dialect gets,
``n/a`` for an adapter that does not declare the case's dialect (decided before the oracle or
the adapter sees the case), a field the protocol does not know as one case's protocol error,
and ``conformance run --dialect``.

The adapters here only record what they are given: whether an Anthropic case passes is the
oracle reader's business, not this plumbing's.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.subprocess import SubprocessAdapterSession
from conformance.cli import main
from conformance.events import Capabilities, End, Event, Finish, Hello, RunCase
from conformance.invariants import CATALOGUE
from conformance.options import DEFAULT_POLICY, RunOptions, bundled_fixtures, default_request
from conformance.report.html import render_html
from conformance.report.transcript import reproducer, transcript
from conformance.results import RunResult
from conformance.run import runner
from conformance.run.runner import case_request, run_judged
from fakeprovider.build import ScenarioBuilder, http_error, messages_stream, stream
from fakeprovider.fixtures import fixture_yaml, load_fixtures
from fakeprovider.scenario import Scenario

CHAT = ScenarioBuilder("chat-text").attempt(stream().text("Hello").finish("stop")).build()
ANTHROPIC = (
    ScenarioBuilder("an-text", dialect="anthropic-messages")
    .attempt(
        messages_stream()
        .message_start()
        .text_start(0)
        .text_delta(0, "Hello")
        .block_stop(0)
        .message_delta(stop_reason="end_turn", output_tokens=3)
        .message_stop()
    )
    .build()
)
# The run line of a chat case as the suite wrote it before protocol 1.1 (commit 917ee7b):
# a protocol-1.0 adapter reads the very same bytes.
CHAT_RUN_LINE = (
    '{"type":"run","case":"chat-text","base_url":"http://127.0.0.1:1/chat-text/v1",'
    '"api_key":"sk-test","request":{"model":"fake-model","stream":true,'
    '"stream_options":{"include_usage":true},"messages":[{"role":"user","content":'
    '"What is the weather in Paris?"}],"tools":[{"type":"function","function":{"name":'
    '"get_weather","description":"Current weather for a city","parameters":{"type":"object",'
    '"properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function",'
    '"function":{"name":"get_time","description":"Current time in a time zone","parameters":'
    '{"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"]}}}]},'
    '"retry":{"max_retries":2,"retryable_codes":["EMPTY_RESPONSE","MALFORMED_TOOL_CALL",'
    '"RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],"initial_delay_ms":1.0,'
    '"max_delay_ms":2000.0,"jitter_ratio":0.0},"idle_timeout_s":1.0,"timeout_s":15.0}'
)
ENDPOINTS = {None: "/chat/completions", "anthropic-messages": "/v1/messages"}


class Recording:
    """An adapter that keeps each run line it is given and POSTs the case's request where
    the SDKs of its dialect would (``{base_url}/chat/completions``, ``{base_url}/v1/messages``),
    keeping the answer; it reports a bare ``stop``."""

    def __init__(self, hello: Hello) -> None:
        self.hello = hello
        self.cases: list[RunCase] = []
        self.answers: dict[str, httpx.Response] = {}

    async def run(self, case: RunCase, http_client: httpx.AsyncClient) -> AsyncIterator[Event]:
        self.cases.append(case)
        url = case.base_url + ENDPOINTS[case.dialect]
        self.answers[case.case] = await http_client.post(url, json=case.request)
        yield Finish(reason="stop")
        yield End()


def speaking(*dialects: Any, capabilities: Capabilities | None = None) -> Hello:
    capabilities = capabilities or Capabilities()
    return Hello(
        protocol=1.1,
        name="recording",
        version="0",
        capabilities=capabilities,
        dialects=list(dialects),
    )


PROTOCOL_1 = Hello(protocol=1, name="recording", version="0", capabilities=Capabilities())


def run(adapter: Recording, scenarios: list[Scenario]) -> RunResult:
    session = PythonAdapterSession(adapter)
    options = RunOptions(transport="in-process")
    return asyncio.run(run_judged(session, scenarios, options, ("harness",)))["harness"]


def test_a_chat_case_gets_the_run_line_of_protocol_1() -> None:
    case = case_request(CHAT, "http://127.0.0.1:1", DEFAULT_POLICY, RunOptions())
    assert case.to_json_line() == CHAT_RUN_LINE


def test_an_anthropic_case_gets_its_dialect_request_and_sdk_base_url() -> None:
    adapter = Recording(speaking("chat-completions", "anthropic-messages"))
    result = run(adapter, [CHAT, ANTHROPIC])
    chat, anthropic = adapter.cases
    assert "dialect" not in json.loads(chat.to_json_line())
    assert anthropic.dialect == "anthropic-messages"
    assert anthropic.request == default_request("anthropic-messages")
    assert anthropic.request["tools"][0]["input_schema"]["required"] == ["city"]
    # Anthropic's SDKs add /v1/messages to a base without /v1; OpenAI's add to one with it.
    assert chat.base_url.endswith("/chat-text/v1")
    assert anthropic.base_url.endswith("/an-text")
    answer = adapter.answers["an-text"]
    assert answer.status_code == 200
    assert "event: message_start" in answer.text and "event: message_stop" in answer.text
    assert [case.dialect for case in result.cases] == [None, "anthropic-messages"]
    dumped = json.loads(result.to_json())["cases"]
    assert "dialect" not in dumped[0] and dumped[1]["dialect"] == "anthropic-messages"


@pytest.mark.parametrize(
    ("case_id", "tool_name"),
    [
        ("resp-two-turn-reasoning-function-call", "get_forecast"),  # a Responses tools entry
        ("gw-duplicate-tool-ids", "lookup_order"),  # an Anthropic one
        ("gw-duplicate-tool-ids-chat", "lookup_order"),  # a chat one
    ],
)
def test_a_case_offers_every_tool_its_stream_calls(case_id: str, tool_name: str) -> None:
    """A provider calls only tools it was offered, and agent libraries refuse a call to one
    they were not given (openai-agents: "Tool get_forecast not found in agent"): a case
    whose stream calls a tool beyond the case tools offers it too."""
    (scenario,) = (s for s in load_fixtures([bundled_fixtures()]) if s.id == case_id)
    case = case_request(scenario, "http://127.0.0.1:1", DEFAULT_POLICY, RunOptions())
    tools = case.request["tools"]
    names = [tool.get("name") or tool["function"]["name"] for tool in tools]
    assert names == ["get_weather", "get_time", tool_name]
    assert case.request == default_request(scenario.dialect, [tool_name])
    # The case tools alone where the stream calls nothing else, as before.
    assert case_request(CHAT, "x", DEFAULT_POLICY, RunOptions()).request == default_request()


@pytest.mark.parametrize("hello", [PROTOCOL_1, speaking("chat-completions")])
def test_a_case_of_an_undeclared_dialect_is_n_a_and_never_reaches_the_adapter(
    hello: Hello, monkeypatch: pytest.MonkeyPatch
) -> None:
    consulted = runner.expected_outcome

    def oracle(scenario: Scenario, policy: Any) -> Any:
        assert scenario.dialect == "chat-completions", "the oracle was consulted"
        return consulted(scenario, policy)

    monkeypatch.setattr(runner, "expected_outcome", oracle)
    adapter = Recording(hello)
    result = run(adapter, [ANTHROPIC, CHAT])
    assert [case.case for case in adapter.cases] == ["chat-text"]
    anthropic, chat = result.cases
    assert set(anthropic.verdicts) == set(CATALOGUE)
    assert {(v.verdict, v.reason) for v in anthropic.verdicts.values()} == {
        ("n/a", "adapter speaks chat-completions only")
    }
    assert anthropic.status == "completed" and anthropic.detail.startswith("not run:")
    assert anthropic.events == [] and anthropic.requests == []
    assert chat.events and chat.expected  # the chat case ran and was judged


def test_an_adapter_that_speaks_anthropic_only_gets_chat_cases_n_a() -> None:
    adapter = Recording(speaking("anthropic-messages"))
    result = run(adapter, [CHAT, ANTHROPIC])
    assert [case.case for case in adapter.cases] == ["an-text"]
    reasons = {v.reason for v in result.cases[0].verdicts.values()}
    assert reasons == {"adapter speaks anthropic-messages only"}


STUB = """
import json, sys
hello = {"type": "hello", "protocol": 1.1, "name": "stub", "version": "0",
         "capabilities": {}, "dialects": ["chat-completions", "anthropic-messages"]}
print(json.dumps(hello), flush=True)
with open(sys.argv[1], "a", encoding="utf-8") as log:
    for line in sys.stdin:
        log.write(line)
        log.flush()
        case = json.loads(line)["case"]
        if case == "an-text":  # a protocol-1.1 field, misspelt
            block = {"type": "reasoning", "text": "", "signatur": "EqQB"}
            print(json.dumps({"case": case, "type": "block-end", "index": 0, "block": block}))
        print(json.dumps({"case": case, "type": "finish", "reason": "stop"}))
        print(json.dumps({"case": case, "type": "end"}), flush=True)
"""


def test_over_the_subprocess_protocol_a_misspelt_field_fails_its_case_alone(
    tmp_path: Path,
) -> None:
    script, log = tmp_path / "stub.py", tmp_path / "run-lines.jsonl"
    script.write_text(textwrap.dedent(STUB), encoding="utf-8")

    async def go() -> RunResult:
        session = await SubprocessAdapterSession.start(f"{sys.executable} {script} {log}")
        try:
            return await runner.run_suite(session, [ANTHROPIC, CHAT], RunOptions())
        finally:
            await session.close()

    result = asyncio.run(go())
    assert result.adapter["protocol"] == 1.1
    anthropic, chat = result.cases
    assert anthropic.status == "protocol-error"
    assert "signatur" in anthropic.detail
    assert anthropic.verdicts["G1"].verdict == "fail"
    assert chat.status == "completed"  # the run went on
    lines = log.read_text(encoding="utf-8").splitlines()
    written = {json.loads(line)["case"]: line for line in lines}
    assert '"dialect"' not in written["chat-text"]
    assert json.loads(written["an-text"])["dialect"] == "anthropic-messages"


CHAT_ONLY = """
import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "name": "chat-only", "version": "0",
                  "capabilities": {}}), flush=True)
for line in sys.stdin:
    case = json.loads(line)["case"]
    print(json.dumps({"case": case, "type": "finish", "reason": "stop"}))
    print(json.dumps({"case": case, "type": "end"}), flush=True)
"""


def test_conformance_run_selects_cases_by_dialect(tmp_path: Path) -> None:
    corpus = tmp_path / "fixtures"
    corpus.mkdir()
    for scenario in (CHAT, ANTHROPIC):
        (corpus / f"{scenario.id}.yaml").write_text(fixture_yaml(scenario), encoding="utf-8")
    script = tmp_path / "chat_only.py"
    script.write_text(textwrap.dedent(CHAT_ONLY), encoding="utf-8")
    adapter = ("--adapter-cmd", f"{sys.executable} {script}", "--fixtures", str(corpus))

    def selected(*dialects: str) -> list[str]:
        out = tmp_path / "r.json"
        options = [part for dialect in dialects for part in ("--dialect", dialect)]
        result = CliRunner().invoke(main, ["run", *adapter, *options, "--json", str(out)])
        assert result.exit_code in (0, 1), result.output
        return [case.case for case in RunResult.from_json(out.read_bytes()).cases]

    assert selected("anthropic-messages") == ["an-text"]
    assert selected("chat-completions") == ["chat-text"]
    assert sorted(selected()) == ["an-text", "chat-text"]
    assert sorted(selected("chat-completions", "anthropic-messages")) == ["an-text", "chat-text"]
    wrong = CliRunner().invoke(main, ["run", *adapter, "--dialect", "anthropic"])
    assert wrong.exit_code == 2 and "anthropic-messages" in wrong.output


def test_the_report_shows_an_anthropic_case_as_its_wire_escaped() -> None:
    hostile = "<script>alert(1)</script>"
    scenario = (
        ScenarioBuilder("an-hostile", dialect="anthropic-messages")
        .attempt(http_error(529))  # no body given: the dialect's own
        .attempt(
            messages_stream()
            .message_start()
            .text_start(0)
            .text_delta(0, hostile)
            .block_stop(0)
            .error("overloaded_error", hostile)
        )
        .build()
    )
    # It reports a plain stop for an overloaded stream: a case to look at, its wire shown.
    classifying = Capabilities(error_codes=True)
    adapter = Recording(speaking("anthropic-messages", capabilities=classifying))
    result = run(adapter, [scenario])
    case = result.cases[0]
    assert case.worst in ("fail", "non-strict")  # shown in detail
    error, stream = (
        "".join(segment.text for row in attempt.rows for segment in row.segments)
        for attempt in transcript(scenario)
    )
    assert '{"type": "error", "error": {"type": "overloaded_error"' in error  # Anthropic's shape
    assert "event: content_block_delta" in stream and "event: error" in stream
    repro = reproducer(case, scenario)
    assert "/an-hostile/v1/messages" in repro.curl
    page = render_html(RunResult.from_json(result.to_json()))
    assert "event: content_block_delta" in page and "overloaded_error" in page
    assert hostile not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
