"""The example subprocess adapters (Node.js, stdlib Python, the independent Node.js one) pass
the bundled chat corpus, and the Node.js and Python ones its Anthropic cases; with four cases
in flight (a pool of four processes) the stdlib Python one gets the results it gets one case
at a time."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import sys
from pathlib import Path

import pytest
from judged_corpus import judged_fixtures

from conformance.adapters.subprocess import SubprocessAdapterSession
from conformance.options import DEFAULT_POLICY, RunOptions, bundled_fixtures, default_request
from conformance.results import RunResult, reproducible_json
from conformance.run.runner import run_suite
from conformance.verdicts import Contract
from fakeprovider.build import ScenarioBuilder, messages_stream
from fakeprovider.fixtures import load_fixtures

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
INDEPENDENT = REPO / "examples/independent-node-adapter"
EXAMPLES = {
    "node": ["node", str(REPO / "examples/node-adapter/adapter.js")],
    "python": [sys.executable, str(REPO / "examples/python-adapter/adapter.py")],
    # Written from the docs alone, on eventsource-parser: needs `npm ci` in its folder
    # (scripts/test runs it).
    "independent-node": ["node", str(INDEPENDENT / "main.js")],
}


def require_runtime(language: str) -> None:
    """Skip, loudly, an example whose runtime is not installed: Node.js is optional for the
    test command, and a missing one must read as skipped, never as passed or failed."""
    runtime = EXAMPLES[language][0]
    if shutil.which(runtime) is None:
        pytest.skip(
            f"SKIPPED, NOT PASSED: `{runtime}` is not on PATH, so the {language} example "
            "adapter is not checked. Install Node.js >= 20 (with npm) to run it."
        )
    if language == "independent-node" and not (INDEPENDENT / "node_modules").is_dir():
        pytest.skip(
            f"SKIPPED, NOT PASSED: {INDEPENDENT / 'node_modules'} is missing, so the "
            f"independent-node example adapter is not checked. Run: npm ci --prefix {INDEPENDENT}"
        )


@functools.cache
def example_run(language: str, jobs: int) -> RunResult:
    """The corpus run of the example in ``language``, ``jobs`` cases in flight (once per
    module: two tests read the same run)."""

    async def run() -> RunResult:
        session = await SubprocessAdapterSession.start(" ".join(EXAMPLES[language]))
        try:
            return await run_suite(session, judged_fixtures(), RunOptions(), jobs=jobs)
        finally:
            await session.close()

    return asyncio.run(run())


@pytest.mark.parametrize("language", sorted(EXAMPLES))
def test_example_adapter_passes_every_invariant(language: str) -> None:
    require_runtime(language)
    result = example_run(language, jobs=4)  # cases mostly wait on the provider's clock
    problems = [
        f"{case.case} {invariant}: {verdict.verdict} {verdict.reason}"
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ("fail", "non-strict")
    ]
    assert problems == []
    assert all(case.status == "completed" for case in result.cases)
    assert result.counts()["pass"] > 300


def test_four_jobs_give_the_serial_results_but_for_the_clock() -> None:
    serial, concurrent = example_run("python", jobs=1), example_run("python", jobs=4)
    assert reproducible_json(concurrent) == reproducible_json(serial)


# --- Where Node.js or the npm dependency is missing: a loud skip, not a failure. ---


def test_without_node_on_path_the_node_examples_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no node anywhere
    for language in ("node", "independent-node"):
        with pytest.raises(pytest.skip.Exception) as skipped:
            require_runtime(language)
        message = str(skipped.value)
        assert message.startswith("SKIPPED, NOT PASSED: `node` is not on PATH")
        assert f"the {language} example adapter is not checked" in message
    require_runtime("python")  # the interpreter running the tests: never skipped


def test_without_node_modules_the_independent_example_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = tmp_path / "bin" / "node"
    node.parent.mkdir()
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", str(node.parent))
    monkeypatch.setattr(sys.modules[__name__], "INDEPENDENT", tmp_path / "independent")
    require_runtime("node")
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_runtime("independent-node")
    assert "node_modules is missing" in str(skipped.value)
    assert f"npm ci --prefix {tmp_path / 'independent'}" in str(skipped.value)


# --- Anthropic Messages: each example's own path, on scenarios of the fake provider. -------
# Until the oracle reads this dialect, what the examples report is compared with what the
# stream says, here; the corpus run judges them once it does.

TEXT = (
    messages_stream()
    .message_start(input_tokens=25, output_tokens=1)
    .text_start(0)
    .ping()
    .text_delta(0, "Hel")
    .text_delta(0, "lo")
    .block_stop(0)
    .message_delta(stop_reason="end_turn", output_tokens=15)
    .message_stop()
)
TOOL = (
    messages_stream()
    .message_start(input_tokens=30, cache_read_input_tokens=100, cache_creation_input_tokens=7)
    .thinking_start(0)
    .thinking_delta(0, "Paris?")
    .signature_delta(0, "EqQB")
    .block_stop(0)
    .tool_use_start(1, "toolu_1", "get_weather")
    .input_json(1, "")
    .input_json(1, '{"city":')
    .input_json(1, '"Paris"}')
    .block_stop(1)
    .message_delta(stop_reason="tool_use", output_tokens=9)
    .message_stop()
)
OVERLOADED = messages_stream().message_start().text_start(0).text_delta(0, "Hi").error()
REFUSED = (
    messages_stream()
    .message_start(input_tokens=4)
    .message_delta(stop_reason="refusal", output_tokens=2)
    .message_stop()
)
ANTHROPIC_CASES = {
    "an-text": (
        TEXT,
        [
            {"type": "block-start", "index": 0, "block_type": "text"},
            {"type": "text-delta", "index": 0, "text": "Hel"},
            {"type": "text-delta", "index": 0, "text": "lo"},
            {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello"}},
            {"type": "usage", "input_tokens": 25, "output_tokens": 15, "cache_read_tokens": 0},
            {"type": "finish", "reason": "stop"},
        ],
    ),
    "an-tool": (
        TOOL,
        [
            {"type": "block-start", "index": 0, "block_type": "reasoning"},
            {"type": "reasoning-delta", "index": 0, "text": "Paris?"},
            {"type": "block-start", "index": 1, "block_type": "tool-call"},
            *(
                {"type": "tool-call-delta", "index": 1, "id": "toolu_1", "name": "get_weather"}
                | {"arguments_delta": fragment}
                for fragment in ("", '{"city":', '"Paris"}')
            ),
            {
                "type": "block-end",
                "index": 0,
                "block": {"type": "reasoning", "text": "Paris?", "signature": "EqQB"},
            },
            {
                "type": "block-end",
                "index": 1,
                "block": {
                    "type": "tool-call",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "arguments": '{"city":"Paris"}',
                },
            },
            {
                "type": "usage",
                "input_tokens": 30,
                "output_tokens": 9,
                "cache_read_tokens": 100,
                "cache_write_tokens": 7,
            },
            {"type": "finish", "reason": "tool-calls"},
        ],
    ),
    "an-overloaded": (
        OVERLOADED,
        [
            {"type": "block-start", "index": 0, "block_type": "text"},
            {"type": "text-delta", "index": 0, "text": "Hi"},
            {"type": "usage", "input_tokens": 0, "output_tokens": 1, "cache_read_tokens": 0},
            {"type": "finish", "reason": "error", "code": "SERVER", "message": "Overloaded"},
        ],
    ),
    "an-refused": (
        REFUSED,
        [
            {"type": "usage", "input_tokens": 4, "output_tokens": 2, "cache_read_tokens": 0},
            {
                "type": "finish",
                "reason": "error",
                "code": "REFUSAL",
                "message": "model stopped: refusal",
            },
        ],
    ),
}


@pytest.mark.parametrize("language", ["node", "python"])
def test_example_adapter_speaks_anthropic_messages(language: str) -> None:
    require_runtime(language)
    scenarios = [
        ScenarioBuilder(id, dialect="anthropic-messages").attempt(attempt).build()
        for id, (attempt, _) in ANTHROPIC_CASES.items()
    ]

    async def run() -> RunResult:
        session = await SubprocessAdapterSession.start(" ".join(EXAMPLES[language]))
        try:
            assert "anthropic-messages" in session.hello.spoken_dialects
            once = RunOptions(policy=DEFAULT_POLICY.model_copy(update={"max_retries": 0}))
            return await run_suite(session, scenarios, once)
        finally:
            await session.close()

    result = asyncio.run(run())
    for case in result.cases:
        reported = [{k: v for k, v in event.items() if k != "case"} for event in case.events]
        assert reported == [*ANTHROPIC_CASES[case.case][1], {"type": "end"}], case.case
        (request,) = case.requests
        assert request["path"] == f"/{case.case}/v1/messages"  # the SDK convention
        assert json.loads(request["body"]) == default_request("anthropic-messages")
        headers = {name.lower(): value for name, value in request["headers"]}
        assert headers["x-api-key"] == "sk-test" and "anthropic-version" in headers


@pytest.mark.parametrize("contract", ["harness", "interop"])
@pytest.mark.parametrize("language", ["python", "node"])
def test_example_adapter_passes_the_anthropic_corpus(language: str, contract: Contract) -> None:
    require_runtime(language)
    corpus = [s for s in load_fixtures([bundled_fixtures()]) if s.dialect == "anthropic-messages"]

    async def run() -> RunResult:
        session = await SubprocessAdapterSession.start(" ".join(EXAMPLES[language]))
        try:
            # No case of this dialect stalls, so a patient idle timeout judges nothing
            # differently; the default 1 s is a false TIMEOUT when the test workers crowd the CPU.
            options = RunOptions(contract=contract, idle_timeout_s=5.0)
            return await run_suite(session, corpus, options, jobs=4)
        finally:
            await session.close()

    result = asyncio.run(run())
    problems = [
        f"{case.case} {invariant}: {verdict.verdict} {verdict.reason}"
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ("fail", "non-strict")
    ]
    assert corpus and problems == []
    assert all(case.dialect == "anthropic-messages" for case in result.cases)
    # Every case ran (the examples declare the dialect); only the next request of a two-turn
    # case is not judged, the examples not declaring follow_up.
    not_judged = {
        (invariant, verdict.reason)
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict == "n/a"
    }
    assert not_judged == {("N1", "the adapter does not declare follow_up")}
