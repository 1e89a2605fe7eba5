"""What a failure cost the caller is stated by the checker that finds it, and the
compatibility page reads it: built cases judged under the interop contract by the real
checkers, saved as results JSON and read back, as ``conformance matrix`` does.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from retry_evidence import record

from conformance.events import (
    BlockEnd,
    BlockStart,
    End,
    Event,
    Finish,
    TextBlock,
    TextDelta,
    Thrown,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from conformance.invariants.conforming import conforming_evidence
from conformance.options import RunOptions
from conformance.oracle import ExpectedAttempt
from conformance.report.compatibility import Column, damage, meaning_lost, render_compatibility
from conformance.results import CaseResult, RunResult, reproducible_json
from conformance.run.runner import judge
from conformance.verdicts import CaseStatus
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.registry import RequestRecord

HELLO = stream().role().text("Hello").finish("stop").done()
CACHED = stream().role().text("Hi").finish("stop").usage(1320, 9, cached_tokens=1280).done()


def _weather(*, repeat_id: bool = False) -> Any:
    """A call to get_weather; ``repeat_id``: its id sent again with the arguments (a builder
    grows with each step, so each case gets its own)."""
    call = stream().role().tool_call(0, id="call_1", type="function", name="get_weather")
    again = {"id": "call_1"} if repeat_id else {}
    return call.tool_call(0, arguments='{"a": 1}', **again).finish("tool_calls").done()


CLOSED = stream().role().text("Hel").end()


def _text(text: str) -> list[Event]:
    block = TextBlock(text=text)
    delta = TextDelta(index=0, text=text)
    return [BlockStart(index=0, block_type="text"), delta, BlockEnd(index=0, block=block)]


def _call(id: str, name: str = "get_weather", arguments: str = '{"a": 1}') -> list[Event]:
    call = ToolCallBlock(id=id, name=name, arguments=arguments)
    delta = ToolCallDelta(index=0, id=id, name=name, arguments_delta=arguments)
    return [BlockStart(index=0, block_type="tool-call"), delta, BlockEnd(index=0, block=call)]


def _served(attempt: ExpectedAttempt) -> RequestRecord:
    """The request a conforming adapter made for ``attempt``."""
    return record(attempt.number, attempt.number * 1000, attempt.number * 1000 + 500)


def judged(
    attempt: Any, *events: Event, status: CaseStatus = "completed", detail: str = ""
) -> CaseResult:
    """The case ``attempt`` (one response) as an adapter that reported ``events`` (the
    conforming ones when none are given), judged under the interop contract."""
    builder = ScenarioBuilder("built")
    builder.attempt(attempt)
    evidence = conforming_evidence(builder.build(), RunOptions())
    seen = (*events, End()) if events else evidence.events
    evidence = dataclasses.replace(
        evidence, events=seen, status=status, detail=detail, contract="interop"
    )
    made = evidence.expected.attempts[: len(evidence.attempts)]  # one request per attempt
    evidence = dataclasses.replace(evidence, requests=tuple(map(_served, made)))
    return CaseResult(
        case="built",
        status=status,
        detail=detail,
        duration_s=0.0,
        verdicts=judge(evidence, strict=False),
        events=[event.model_dump(mode="json", exclude_none=True) for event in evidence.events],
        expected=evidence.judged_expected.summary(),
        requests=[],
    )


def saved(cases: list[CaseResult]) -> RunResult:
    """The cases as a results file written and read back."""
    result = RunResult(
        suite_version="0",
        adapter={"name": "lib"},
        options={},
        started_at="",
        finished_at="",
        contract="interop",
        catalogue=[],
        cases=cases,
    )
    return RunResult.from_json(result.to_json())


def column(cases: list[CaseResult]) -> Column:
    interop = saved(cases)
    return Column("lib", "t", {}, interop.model_copy(update={"contract": "harness"}), interop)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        pytest.param(
            judged(HELLO, Thrown(message="TypeError: 'NoneType' object\nis not iterable")),
            ["crash: raised \"TypeError: 'NoneType' object\""],
            id="an exception without a canonical code is a crash",
        ),
        pytest.param(
            judged(HELLO, status="timeout", detail="no end within 16 s"),
            ["hang: no end within 16 s"],
            id="a case that never ended is a hang",
        ),
        pytest.param(
            judged(HELLO, status="crash", detail="exited 1"),
            ["crash: exited 1"],
            id="an adapter process that died",
        ),
        pytest.param(
            judged(HELLO, *_text("lo"), Finish(reason="stop")),
            ["lost: part of the text, 'lo' of 'Hello'"],
            id="part of the text",
        ),
        pytest.param(
            judged(HELLO, *_text("Hello again"), Finish(reason="stop")),
            ["invented: text 'Hello again' for 'Hello'"],
            id="text read after [DONE]",
        ),
        pytest.param(
            judged(HELLO, Thrown(message="JSONDecodeError: x", code="MALFORMED_RESPONSE")),
            [
                "lost: the stream's text 'Hello'; stop came back as threw MALFORMED_RESPONSE: "
                "JSONDecodeError: x"
            ],
            id="a complete response refused",
        ),
        pytest.param(
            judged(_weather(repeat_id=True), *_call("call_1call_1"), Finish(reason="tool-calls")),
            ["corrupted: call 0 id 'call_1call_1' for 'call_1'"],
            id="a concatenated id",
        ),
        pytest.param(
            judged(_weather(), *_call("call_1", arguments='{"a": 2}'), Finish(reason="tool-calls")),
            ["corrupted: arguments ['{\"a\": 2}'] for ['{\"a\": 1}']"],
            id="other arguments",
        ),
        pytest.param(
            judged(
                CACHED,
                *_text("Hi"),
                Usage(input_tokens=80, output_tokens=9, cache_read_tokens=1280),
                Finish(reason="stop"),
            ),
            ["corrupted: usage input_tokens 80 for 40"],
            id="usage input miscounted",
        ),
        pytest.param(
            judged(CLOSED, *_text("Hel"), Finish(reason="stop")),
            [
                "misreported: a failed stream reported as a success: text 'Hel'; finish stop, "
                "where the stream failed STREAM_CLOSED"
            ],
            id="a truncated stream reported as a success",
        ),
        pytest.param(
            judged(CLOSED, *_text("Hel"), Thrown(message="InternalServerError", code="SERVER")),
            [
                "misreported: text 'Hel'; threw SERVER: InternalServerError, where the stream "
                "failed STREAM_CLOSED"
            ],
            id="a close reported as a server error",
        ),
    ],
)
def test_the_page_reads_the_cost_the_failing_checker_states(
    case: CaseResult, expected: list[str]
) -> None:
    [reread] = saved([case]).cases
    assert damage(reread) == expected


def test_a_failure_carries_its_cost_into_the_results_json_and_onto_the_page() -> None:
    case = judged(HELLO, *_text("lo"), Finish(reason="stop"))
    written = json.loads(saved([case]).to_json())["cases"][0]["verdicts"]
    assert written["C1"]["cost"] == {"kind": "lost", "detail": "part of the text, 'lo' of 'Hello'"}
    assert "cost" not in written["G1"]  # a pass states none, and the file says nothing
    page = render_compatibility([column([case])], fixtures="f")
    assert "| `built` | C1 | lost: part of the text, 'lo' of 'Hello' |" in page


def test_a_crash_cost_quotes_no_port_in_reproducible_results() -> None:
    """A cost quotes the crash's message, which may name the URL the adapter failed on."""
    crash = Thrown(message="ConnectError: http://127.0.0.1:41234/v1 refused")
    data = json.loads(reproducible_json(saved([judged(HELLO, crash)])))
    cost = data["cases"][0]["verdicts"]["G1"]["cost"]
    assert cost == {
        "kind": "crash",
        "detail": "raised 'ConnectError: http://127.0.0.1:…/v1 refused'",
    }


def test_results_written_before_costs_load_and_show_no_loss() -> None:
    case = judged(HELLO, *_text("lo"), Finish(reason="stop"))
    data = json.loads(saved([case]).to_json())
    for verdict in data["cases"][0]["verdicts"].values():
        verdict.pop("cost", None)
    old = RunResult.model_validate(data)
    [row] = meaning_lost(Column("lib", "t", {}, old, old))
    assert row.damage == ()
    assert row.cause == "no loss shown: the caller got text 'lo'; stop, as the stream carried it"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            judged(CLOSED, *_text("Hel"), Thrown(message="ReadError: x", code="STREAM_CLOSED")),
            id="thrown with the right code",
        ),
        pytest.param(
            judged(
                stream().role().text("Hi").finish("stop").usage(5, 1).reset(),
                *_text("Hi"),
                Usage(input_tokens=5, output_tokens=1, cache_read_tokens=0),
                Finish(reason="stop"),
            ),
            id="a reset after the finish read as finished",
        ),
        pytest.param(
            judged(
                _weather(), *_call("call_1", arguments='{ "a":1 }'), Finish(reason="tool-calls")
            ),
            id="arguments equal as JSON",
        ),
        pytest.param(
            judged(
                stream()
                .role()
                .tool_call(0, name="get_weather", arguments="{}")
                .finish("tool_calls"),
                *_call("call_made_up", arguments="{}"),
                Finish(reason="tool-calls"),
            ),
            id="an unidentified call handed back with a unique made-up id",
        ),
        pytest.param(
            judged(
                CACHED,
                *_text("Hi"),
                Usage(input_tokens=1320, output_tokens=9, cache_read_tokens=1280),
                Finish(reason="stop"),
            ),
            id="the wire's own input figure",
        ),
    ],
)
def test_what_the_checkers_pass_under_interop_is_no_meaning_lost(case: CaseResult) -> None:
    """The page keeps no interop rules of its own: a case the checkers pass is not listed,
    and nothing is said lost in it (the page's own copy of the rules read a reset after the
    finish as a failed stream reported as a success, and a made-up id as a corrupted one)."""
    assert meaning_lost(column([case])) == []
    assert damage(case) == []
