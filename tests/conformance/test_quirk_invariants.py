"""Q1/Q2 and ambiguous quirks: judged where the wire is clear, recorded where it is not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from click.testing import CliRunner

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli import main
from conformance.events import (
    PROTOCOL_VERSION,
    BlockEnd,
    BlockStart,
    Capabilities,
    Event,
    Finish,
    Hello,
    RunCase,
    ToolCallBlock,
    ToolCallDelta,
)
from conformance.options import RunOptions, bundled_fixtures
from conformance.quirks import INFO_TAG
from conformance.results import RunResult
from conformance.run.runner import run_suite
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.scenario import Scenario


class FixedCall:
    """Always reports one call_a/get_weather call with ``arguments``, whatever the wire said,
    and may leave a block open (a grammar breach, G6) to show grammar is judged on every
    reading."""

    def __init__(self, *, arguments: str = "{}", leave_open: bool = False) -> None:
        self.arguments = arguments
        self.leave_open = leave_open
        self.hello = Hello(
            protocol=PROTOCOL_VERSION,
            name="fixed",
            version="0",
            capabilities=Capabilities(deltas=True),
        )

    async def run(self, case: RunCase, http_client: httpx.AsyncClient) -> AsyncIterator[Event]:
        # One real request, its body read and ignored: the outcome is fixed.
        await http_client.post(f"{case.base_url}/chat/completions", json=case.request)
        call = ToolCallBlock(id="call_a", name="get_weather", arguments=self.arguments)
        yield BlockStart(index=0, block_type="tool-call")
        yield ToolCallDelta(
            index=0, id="call_a", name="get_weather", arguments_delta=self.arguments
        )
        if not self.leave_open:
            yield BlockEnd(index=0, block=call)
        yield Finish(reason="tool-calls")


def _same_index_calls(*tags: str) -> Scenario:
    """Quirk C2: two calls at index 0 (ambiguous), or A7-style repeats (clear)."""
    return (
        ScenarioBuilder("quirky", tags=tags)
        .attempt(
            stream()
            .tool_call(0, id="call_a", type="function", name="get_weather", arguments="{}")
            .tool_call(0, id="call_b", type="function", name="get_time", arguments="{}")
            .finish("tool_calls")
            .done()
        )
        .build()
    )


def _judge(adapter: object, scenario: Scenario) -> dict[str, str]:
    session = PythonAdapterSession(adapter)  # type: ignore[arg-type]
    result = asyncio.run(run_suite(session, [scenario], RunOptions(transport="in-process")))
    return {inv: v.verdict for inv, v in result.cases[0].verdicts.items()}


def test_an_ambiguous_quirk_read_another_way_is_recorded_not_failed() -> None:
    # Index 0 read as one call: the first id and name, the arguments joined (C2's other
    # reading). Would fail: the oracle reads two calls. The quirk contests the calls only.
    verdicts = _judge(FixedCall(arguments="{}{}"), _same_index_calls("quirk-C2", INFO_TAG))
    assert verdicts["Q2"] == "info"
    assert verdicts["C3"] == verdicts["T3"] == verdicts["Q1"] == "info"
    assert verdicts["C5"] == "pass"
    assert "fail" not in verdicts.values()


def test_an_ambiguous_quirk_read_no_way_fails() -> None:
    # One call with the first call's arguments only: no reading of index 0 loses the second.
    verdicts = _judge(FixedCall(), _same_index_calls("quirk-C2", INFO_TAG))
    assert verdicts["Q2"] == "info"
    assert [id for id, verdict in verdicts.items() if verdict == "fail"] == ["T3"]


def test_the_same_stream_is_judged_when_not_marked_ambiguous() -> None:
    verdicts = _judge(FixedCall(), _same_index_calls("quirk-A7"))
    assert verdicts["T3"] == "fail"
    assert verdicts["C3"] == verdicts["Q1"] == "n/a"  # the same difference, counted once
    assert "Q2" not in verdicts


def test_the_reference_keeps_calls_sharing_an_index_apart() -> None:
    verdicts = _judge(ReferenceAdapter(), _same_index_calls("quirk-C2", INFO_TAG))
    assert verdicts["C3"] == verdicts["T3"] == verdicts["Q1"] == "pass"


def test_grammar_is_judged_whatever_the_reading() -> None:
    verdicts = _judge(FixedCall(leave_open=True), _same_index_calls("quirk-C2", INFO_TAG))
    assert verdicts["G6"] == "fail"


def test_reference_adapter_keeps_q1_on_the_quirk_corpus() -> None:
    from fakeprovider.fixtures import load_fixtures

    scenarios = load_fixtures([bundled_fixtures() / "quirks"])
    session = PythonAdapterSession(ReferenceAdapter())
    result: RunResult = asyncio.run(
        run_suite(session, scenarios, RunOptions(transport="in-process"))
    )
    counts = result.per_invariant()
    assert counts["Q1"]["pass"] >= 40 and counts["Q1"]["fail"] == 0
    assert counts["Q2"]["info"] >= 10
    assert not result.failed


def test_run_selects_a_provider_profile(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    args = ["run", "--profile", "dashscope", "--transport", "in-process", "--json", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    result = RunResult.from_json(out.read_text())
    assert result.cases and all("dashscope" in c.scenario["profiles"] for c in result.cases)


def test_an_unknown_profile_lists_the_known_ones() -> None:
    done = CliRunner().invoke(main, ["run", "--profile", "no-such-provider"])
    assert done.exit_code == 2
    assert "dashscope" in done.output and "ollama" in done.output
