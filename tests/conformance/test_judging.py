"""A run's verdicts taken together: each root cause once, under the invariant that owns it,
at the level the contract gives it.

Each case starts from what a conforming adapter reports for a bundled fixture and changes one
thing, the way a real client differs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from functools import cache

import pytest
from judged_corpus import judged_fixtures
from retry_evidence import record

from conformance.events import (
    Block,
    BlockEnd,
    BlockStart,
    End,
    Event,
    Finish,
    ReasoningBlock,
    Retry,
    TextBlock,
    TextDelta,
    Thrown,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from conformance.invariants import CATALOGUE
from conformance.invariants.conforming import conforming_events, conforming_evidence
from conformance.invariants.evidence import Evidence
from conformance.invariants.judging import Finding, judge_evidence
from conformance.options import RunOptions
from conformance.oracle import ExpectedAttempt, ExpectedOutcome, expected_outcome
from conformance.quirks import admitted_readings
from conformance.verdicts import ATTENTION, CONTRACTS, AltReading, Contract, Cost
from fakeprovider.build import ScenarioBuilder, http_error, stream
from fakeprovider.registry import RequestRecord
from fakeprovider.scenario import Scenario


@cache
def fixtures() -> dict[str, Scenario]:
    return {scenario.id: scenario for scenario in judged_fixtures()}


def conforming(fixture: str) -> Evidence:
    """What a conforming adapter reports for ``fixture``, and the requests it made."""
    case = conforming_evidence(fixtures()[fixture], RunOptions())
    return dataclasses.replace(case, requests=tuple(map(served, case.expected.attempts)))


def served(attempt: ExpectedAttempt) -> RequestRecord:
    """The request a conforming adapter made for ``attempt``: one a second, half a second long."""
    start_ms = attempt.number * 1000
    return record(attempt.number, start_ms, start_ms + 500)


def verdicts(evidence: Evidence, contract: Contract = "harness") -> dict[str, str]:
    judged = judge_evidence(dataclasses.replace(evidence, contract=contract))
    return {id: finding.verdict for id, finding in judged.items()}


def failing(evidence: Evidence, contract: Contract = "harness") -> list[str]:
    return [id for id, verdict in verdicts(evidence, contract).items() if verdict == "fail"]


def with_events(evidence: Evidence, change: object) -> Evidence:
    events = [e for event in evidence.events for e in change(event)]  # type: ignore[operator]
    return dataclasses.replace(evidence, events=tuple(events))


@pytest.mark.parametrize("fixture", ["tool-late-id", "stall-mid-reasoning", "crlf-bom"])
@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_conforming_adapter_gets_no_failure(fixture: str, contract: Contract) -> None:
    assert failing(conforming(fixture), contract) == []


# --- one root cause, one failure -------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "status", "owner"),
    [
        ("stall-mid-reasoning", "timeout", "H4"),  # the stall it never timed out
        ("tool-late-id", "timeout", "G1"),
        ("tool-late-id", "crash", "G1"),
        ("usage-trailing-cached-reasoning", "protocol-error", "G1"),
    ],
)
def test_a_case_that_did_not_complete_gets_one_status_verdict(
    fixture: str, status: str, owner: str
) -> None:
    case = dataclasses.replace(conforming(fixture), status=status, detail="no end after 15 s")
    judged = judge_evidence(case)
    assert [id for id, f in judged.items() if f.verdict == "fail"] == [owner]
    assert judged[owner].reason == f"adapter {status}: no end after 15 s"
    others = {f.verdict for id, f in judged.items() if id != owner}
    assert others == {"n/a"}  # INFO and SHOULD invariants included


@pytest.mark.parametrize("fixture", ["ping-event-json", "bedrock-index-offset", "tool-late-id"])
@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_crash_is_one_failure_under_g1_tagged_fixture_or_not(
    fixture: str, contract: Contract
) -> None:
    """A client that throws a TypeError loses the answer: never info, never five failures."""
    crashed = dataclasses.replace(
        conforming(fixture),
        events=(Thrown(message="TypeError: Cannot read properties of undefined (reading '0')"),),
    )
    judged = judge_evidence(dataclasses.replace(crashed, contract=contract))
    assert [id for id, f in judged.items() if f.verdict == "fail"] == ["G1"]
    assert "TypeError: Cannot read properties" in judged["G1"].reason


def test_a_thrown_error_with_a_canonical_code_is_no_crash() -> None:
    refused = dataclasses.replace(
        conforming("reset-mid-stream"), events=(Thrown(message="ReadError", code="TRANSPORT"),)
    )
    assert verdicts(refused)["G1"] == "pass"
    assert verdicts(refused)["H3"] == "non-strict"  # thrown, not yielded: weaker, not a crash


def test_info_never_fails_and_should_only_with_strict() -> None:
    """An adapter that ignores an in-band error frame: one S7 (SHOULD), no R on top."""
    text = "The weather in"
    swallowed = dataclasses.replace(
        conforming("error-object-mid-stream"),
        events=(
            BlockStart(index=0, block_type="text"),
            TextDelta(index=0, text=text),
            BlockEnd(index=0, block=TextBlock(text=text)),
            Finish(reason="stop"),
            End(),
        ),
        requests=(served(conforming("error-object-mid-stream").expected.attempts[0]),),
    )
    assert verdicts(swallowed)["S7"] == "non-strict"
    assert failing(swallowed) == []
    strict = judge_evidence(swallowed, strict=True)
    assert [id for id, f in strict.items() if f.verdict == "fail"] == ["S7"]
    info = [id for id, inv in CATALOGUE.items() if inv.level == "INFO"]
    assert not {id for id in info if verdicts(swallowed).get(id) == "fail"}


def test_an_error_frame_may_be_surfaced_under_any_code() -> None:
    case = conforming("error-object-mid-stream")
    refused = (Finish(reason="error", code="MALFORMED_RESPONSE"), End())
    alone = dataclasses.replace(case, events=refused, requests=case.requests[:1])
    assert failing(alone) == []


def test_a_quirk_failure_is_counted_once() -> None:
    concatenated = with_events(
        conforming("tool-name-repeated"),
        lambda e: (
            [e.model_copy(update={"block": e.block.model_copy(update={"name": "aa"})})]
            if isinstance(e, BlockEnd) and isinstance(e.block, ToolCallBlock)
            else [e]
        ),
    )
    judged = verdicts(concatenated)
    assert judged.get("Q1") in (None, "n/a")
    assert len([v for v in judged.values() if v == "fail"]) == 1


# --- what each invariant judges ----------------------------------------------------------------


def test_an_omitted_optional_reasoning_tokens_loses_nothing() -> None:
    case = with_events(
        conforming("usage-trailing-cached-reasoning"),
        lambda e: (
            [e.model_copy(update={"reasoning_tokens": None})] if isinstance(e, Usage) else [e]
        ),
    )
    assert failing(case) == []


def _parsed_arguments(event: Event) -> list[Event]:
    """A client that hands back parsed-and-dumped arguments (`{"a": 1}` for `{"a":1}`)."""
    if isinstance(event, BlockEnd) and isinstance(event.block, ToolCallBlock):
        dumped = json.dumps(json.loads(event.block.arguments), indent=1)
        block = event.block.model_copy(update={"arguments": dumped})
        return [event.model_copy(update={"block": block})]
    return [event]


def test_json_equal_arguments_fail_only_c3_and_only_under_harness() -> None:
    case = with_events(conforming("tool-parallel-interleaved"), _parsed_arguments)
    assert failing(case, "harness") == ["C3"]
    assert failing(case, "interop") == []


def test_duplicate_wire_ids_made_unique_keep_t3() -> None:
    case = conforming("gemini-duplicate-ids")
    renamed: list[Event] = []
    for event in case.events:
        if isinstance(event, ToolCallDelta) and event.id:
            event = event.model_copy(update={"id": f"{event.id}-{event.index}"})
        if isinstance(event, BlockEnd) and isinstance(event.block, ToolCallBlock):
            block = event.block.model_copy(update={"id": f"{event.block.id}-{event.index}"})
            event = event.model_copy(update={"block": block})
        renamed.append(event)
    assert failing(dataclasses.replace(case, events=tuple(renamed))) == []


def test_a_rewrapped_comment_may_be_skipped_or_refused() -> None:
    skipped = conforming("comment-rewrapped-as-data")
    assert failing(skipped) == []
    refused = dataclasses.replace(
        skipped, events=(Finish(reason="error", code="MALFORMED_RESPONSE"),)
    )
    assert failing(refused) == []


# --- ambiguous quirks: only the contested aspect is recorded ---------------------------------


def read_as(fixture: str, change: Callable[[tuple[Block, ...]], tuple[Block, ...]]) -> Evidence:
    """``fixture`` as reported by an adapter that assembled ``change(blocks)`` instead."""
    case = conforming(fixture)
    final = case.expected.final
    return conforming_with(case, dataclasses.replace(final, blocks=change(final.blocks)))


def without_text(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    return tuple(block for block in blocks if not isinstance(block, TextBlock))


def merged_calls(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """What an index-keyed client assembles: every call folded into the first one."""
    calls = [block for block in blocks if isinstance(block, ToolCallBlock)]
    arguments = "".join(call.arguments for call in calls)
    return (*without_calls(blocks), calls[0].model_copy(update={"arguments": arguments}))


def without_calls(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    return tuple(block for block in blocks if not isinstance(block, ToolCallBlock))


@pytest.mark.parametrize("contract", CONTRACTS)
def test_losing_the_text_before_an_index_anomaly_fails_c1(contract: Contract) -> None:
    """The quirk (C3) contests the tool calls; the text before it has one reading."""
    lost = dataclasses.replace(read_as("bedrock-index-offset", without_text), contract=contract)
    judged = judge_evidence(lost)
    assert [id for id, f in judged.items() if f.verdict == "fail"] == ["C1"]
    assert judged["Q1"].verdict == "n/a"  # the same loss, reported once
    assert judged["Q2"].verdict == "info"


def with_phantom(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """A call with an invented id beside the real one (a position-indexed client filling
    the slot below the wire's index 1)."""
    return (ToolCallBlock(id="call_0", name="get_weather", arguments=""), *blocks)


@pytest.mark.parametrize("change", [without_calls, with_phantom])
@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_call_lost_or_invented_on_an_index_anomaly_fails(
    change: Callable[[tuple[Block, ...]], tuple[Block, ...]], contract: Contract
) -> None:
    """C3 (the first call at index 1): every reading gives the one call the wire sent."""
    judged = judge_evidence(
        dataclasses.replace(read_as("bedrock-index-offset", change), contract=contract)
    )
    assert [id for id, f in judged.items() if f.verdict == "fail"] == ["C3"]
    assert judged["C1"].verdict == judged["C5"].verdict == "pass"
    assert judged["Q2"].verdict == "info"


SHARED_INDEX = {"ollama-index-reused": "C2", "gemini-parallel-no-index": "E2"}


@pytest.mark.parametrize("fixture", SHARED_INDEX)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_calls_sharing_an_index_kept_apart_are_the_expected_reading(
    fixture: str, contract: Contract
) -> None:
    judged = verdicts(conforming(fixture), contract)
    assert [judged[id] for id in ("C3", "T3", "Q1")] == ["pass"] * 3
    assert "fail" not in judged.values()


@pytest.mark.parametrize("contract", CONTRACTS)
def test_calls_at_one_index_merged_are_a_reading_recorded_not_failed(contract: Contract) -> None:
    """C2: index 0 read as one call (first id and name, arguments joined) is a reading."""
    merged = dataclasses.replace(read_as("ollama-index-reused", merged_calls), contract=contract)
    judged = judge_evidence(merged)
    assert not [id for id, f in judged.items() if f.verdict == "fail"]
    for id in ("C3", "T3", "Q1"):
        assert judged[id].verdict == "info"
        assert "quirk C2 " in judged[id].reason
        assert "leaves the tool calls open" in judged[id].reason
    assert judged["C5"].verdict == judged["C4"].verdict == "pass"


@pytest.mark.parametrize("contract", CONTRACTS)
def test_calls_without_index_merged_into_invalid_json_fail(contract: Contract) -> None:
    """E2: each call whole with its own id and no index; every reading gives two calls with
    valid JSON, so one call with {…}{…} is a loss, not a reading."""
    merged = read_as("gemini-parallel-no-index", merged_calls)
    assert failing(merged, contract) == ["T3"]


@pytest.mark.parametrize("contract", CONTRACTS)
def test_one_call_split_in_four_fails(contract: Contract) -> None:
    """A8: one id on every entry and no index; an entry per call is no reading (T2)."""

    def split(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        (call,) = blocks
        assert isinstance(call, ToolCallBlock)
        pieces = ("", '{"ci', 'ty": "Pa', 'ris"}')
        return tuple(call.model_copy(update={"arguments": piece}) for piece in pieces)

    split_up = read_as("mock-identity-repeated-no-index", split)
    assert failing(split_up, contract) == ["T2"]
    assert verdicts(split_up, contract)["Q2"] == "info"


def _arguments(arguments: str) -> Callable[[tuple[Block, ...]], tuple[Block, ...]]:
    return lambda blocks: tuple(b.model_copy(update={"arguments": arguments}) for b in blocks)


@pytest.mark.parametrize("arguments", ["", '{"city":"Paris"}', '{"city": "Paris"}'])
@pytest.mark.parametrize("contract", CONTRACTS)
def test_object_arguments_read_either_way_are_recorded(arguments: str, contract: Contract) -> None:
    """D3: not a string, so no fragment (the letter), or the object as JSON."""
    case = read_as("minimax-arguments-object", _arguments(arguments))
    assert failing(case, contract) == []


@pytest.mark.parametrize("contract", CONTRACTS)
def test_object_arguments_equal_to_no_reading_fail(contract: Contract) -> None:
    case = read_as("minimax-arguments-object", _arguments("[object Object]"))
    assert failing(case, contract) == ["C3"]
    judged = judge_evidence(case)
    assert "leaves" not in judged["C3"].reason
    assert "the outcome is none of its readings" in judged["Q2"].reason


def _call(**fields: str) -> Callable[[tuple[Block, ...]], tuple[Block, ...]]:
    return lambda blocks: tuple(b.model_copy(update=fields) for b in blocks)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_conflicting_id_contests_the_id_only(contract: Contract) -> None:
    """LM Studio's new id on every delta: the first or the last id wins; the name and the
    arguments have one reading."""
    fixture = "lmstudio-id-changes-each-delta"
    last = read_as(fixture, _call(id="call_x4"))
    assert failing(last, contract) == []
    assert "leaves the tool-call ids open" in judge_evidence(last)["T1"].reason
    assert failing(read_as(fixture, _call(name="")), contract) == ["T1"]
    assert failing(read_as(fixture, _call(id="call_1call_x2call_x3call_x4")), contract) == ["T1"]


def _one_call_at_index_0(id: str, name: str) -> Callable[[tuple[Block, ...]], tuple[Block, ...]]:
    joined = '{"city": "Paris"}{"tz": "UTC"}'
    return lambda _: (ToolCallBlock(id=id, name=name, arguments=joined),)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_one_call_at_a_shared_index_keeps_the_first_or_the_last_identity(
    contract: Contract,
) -> None:
    """Ollama's calls all at index 0, read by index: one call whose id and name are the
    first's or the last's (an index-keyed client that assigns each field) is a reading;
    one whose id or name was concatenated is none."""
    fixture = "ollama-index-reused"
    for id, name in (("call_a", "get_weather"), ("call_b", "get_time")):
        assert failing(read_as(fixture, _one_call_at_index_0(id, name)), contract) == []
    concatenated = _one_call_at_index_0("call_acall_b", "get_weatherget_time")
    assert failing(read_as(fixture, concatenated), contract) != []


ADMITTED = [
    (scenario.id, alt) for scenario in fixtures().values() for alt in admitted_readings(scenario)
]


@pytest.mark.parametrize(("fixture", "alt"), ADMITTED)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_each_reading_an_ambiguous_fixture_admits_is_recorded_not_failed(
    fixture: str, alt: AltReading, contract: Contract
) -> None:
    """An adapter that reads the wire another way the quirk admits, in every attempt."""
    case = conforming(fixture)
    read = expected_outcome(case.scenario, case.policy, alt=alt)
    other = dataclasses.replace(
        case,
        events=conforming_events(read),
        requests=tuple(map(served, read.attempts)),
        contract=contract,
    )
    judged = judge_evidence(other)
    assert {id: f for id, f in judged.items() if f.verdict in ATTENTION} == {}
    assert any(f.verdict == "info" and f.reason.startswith("recorded: ") for f in judged.values())
    assert "the outcome is one of its readings" in judged["Q2"].reason


def test_an_arguments_quirk_leaves_the_call_identity_judged() -> None:
    """D5 (a final flush) contests the arguments only: the call's name has one reading."""
    fixture = "glm-arguments-final-flush"
    deduplicated = read_as(
        fixture,
        lambda blocks: tuple(
            b.model_copy(update={"arguments": '{"city": "Paris"}'}) for b in blocks
        ),
    )
    assert failing(deduplicated) == []
    assert verdicts(deduplicated)["C3"] == "info"
    renamed = read_as(
        fixture, lambda blocks: tuple(b.model_copy(update={"name": "get_time"}) for b in blocks)
    )
    assert failing(renamed) == ["T1"]


# --- the two contracts -----------------------------------------------------------------------


def test_every_invariant_declares_a_level_per_contract() -> None:
    for invariant in CATALOGUE.values():
        assert set(invariant.describe()["levels"]) == set(CONTRACTS)
    assert CATALOGUE["E1"].level_in("interop") == "INFO"
    assert CATALOGUE["T5"].level_in("interop") == "INFO"
    assert CATALOGUE["T6"].level_in("interop") == "INFO"
    assert CATALOGUE["T1"].level_in("interop") == "MUST"


@pytest.mark.parametrize(
    "fixture", ["no-done-clean-close", "done-without-blank-line", "last-event-unterminated"]
)
def test_a_finished_stream_without_done_is_a_harness_gap_only(fixture: str) -> None:
    case = conforming(fixture)
    finished = next(iter(case.expected.final.interop_readings), None)
    assert finished is not None
    read_whole = conforming_with(case, finished)
    assert failing(read_whole, "harness") == ["S5"]
    assert failing(read_whole, "interop") == []
    assert verdicts(read_whole, "interop")["S5"] == "info"


def conforming_with(case: Evidence, attempt: object) -> Evidence:
    """``case`` as reported by an adapter that read its last attempt as ``attempt``."""
    from conformance.invariants.conforming import _conforming_attempt

    events = _conforming_attempt(attempt, last=True)  # type: ignore[arg-type]
    return dataclasses.replace(case, events=(*events, *case.events[-1:]))


def test_an_empty_stop_passed_through_is_a_harness_gap_only() -> None:
    case = conforming("empty-stop-with-usage")
    first = case.expected.attempts[0]
    passed = dataclasses.replace(
        case,
        events=(*([first.usage] if first.usage else []), Finish(reason="stop"), End()),
        requests=case.requests[:1],
    )
    assert "E1" in failing(passed, "harness")
    assert failing(passed, "interop") == []
    assert verdicts(passed, "interop")["E1"] == "info"


# --- readings a client cannot help ------------------------------------------------------------


def _built(*attempts: object) -> Evidence:
    builder = ScenarioBuilder("built")
    for attempt in attempts:
        builder.attempt(attempt)  # type: ignore[arg-type]
    case = conforming_evidence(builder.build(), RunOptions())
    return dataclasses.replace(case, requests=tuple(map(served, case.expected.attempts)))


def test_a_reset_right_behind_a_close_delimited_body_may_read_as_a_close() -> None:
    """libuv hands over the bytes and reports a clean end; the provider's RST is not seen."""
    closed = stream().framing(transfer="close").role().text("Hel").reset()
    case = _built(closed, stream().role().text("Hello").finish("stop").done())
    seen = dataclasses.replace(
        case,
        events=(Finish(reason="error", code="STREAM_CLOSED"), End()),
        requests=case.requests[:1],
    )
    assert failing(seen) == []  # not retried: STREAM_CLOSED is final, as the adapter saw it


def test_a_retry_past_the_case_timeout_is_rightly_not_started() -> None:
    case = _built(http_error(503), stream().role().text("Hi").finish("stop").done())
    quick = dataclasses.replace(
        case,
        events=(Finish(reason="error", code="SERVER"), End()),
        requests=case.requests[:1],
    )
    assert "R1" in failing(quick)
    assert failing(dataclasses.replace(quick, timeout_s=0.001)) == []


def not_retried(fixture: str) -> Evidence:
    """``fixture`` as reported by an adapter that stops after its first attempt."""
    case = conforming(fixture)
    first = ExpectedOutcome(case.expected.attempts[:1])
    return dataclasses.replace(case, events=conforming_events(first), requests=case.requests[:1])


@pytest.mark.parametrize("fixture", ["retry-empty-then-text", "retry-unidentified-tool-then-tool"])
@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_default_refusal_code_not_retried_is_reported_once_under_r3(
    fixture: str, contract: Contract
) -> None:
    """R1 and R3 see the same decision; R3, the rule for exactly these codes, reports it."""
    judged = judge_evidence(dataclasses.replace(not_retried(fixture), contract=contract))
    attention = {id: f.verdict for id, f in judged.items() if f.verdict in ATTENTION}
    assert attention == {"R3": "fail"}
    assert judged["R1"] == Finding("n/a", "reported under R3")


def test_another_retryable_code_not_retried_is_r1_s() -> None:
    assert failing(not_retried("retry-500-503-then-text")) == ["R1"]


def test_a_2xx_error_response_may_be_read_as_a_body_with_no_events() -> None:
    case = _built(http_error(200))
    empty = dataclasses.replace(
        case,
        events=(Finish(reason="error", code="STREAM_CLOSED"), End()),
        requests=case.requests[:1],
    )
    assert not {v for v in verdicts(empty).values()} & {"fail", "non-strict"}


def test_a_call_the_wire_never_identified_handed_back_as_is_is_a_harness_gap_only() -> None:
    """openai's accumulator closes the call with id ''; nothing the provider sent is lost."""
    case = conforming("tool-never-identified")
    first = case.expected.attempts[0]
    call = next(b for b in first.blocks if isinstance(b, ToolCallBlock))
    closed = dataclasses.replace(
        case,
        events=(
            BlockStart(index=0, block_type="tool-call"),
            ToolCallDelta(index=0, name=call.name or None, arguments_delta=call.arguments),
            BlockEnd(index=0, block=call),
            Finish(reason="tool-calls"),
            End(),
        ),
        requests=case.requests[:1],
    )
    harness = judge_evidence(closed)
    assert [id for id, found in harness.items() if found.verdict == "fail"] == ["T5"]
    # One call closed unidentified: T6's boundary saw the same loss, reported once.
    assert harness["T6"] == Finding("n/a", "a consequence of what T5 reported")
    assert failing(closed, "interop") == []


# --- S4 owns what reading past [DONE] does, not every loss on a body that goes on after it ---


def _after_done(line_ending: str) -> Evidence:
    return _built(
        stream()
        .framing(line_ending=line_ending)
        .role()
        .text("Hello")
        .finish("stop")
        .done()
        .text(" again")
        .done()
    )


def test_a_reader_that_reads_past_done_fails_s4() -> None:
    def read_on(event: Event) -> list[Event]:
        if isinstance(event, TextDelta):
            return [event, TextDelta(index=event.index, text=" again")]
        if isinstance(event, BlockEnd):
            return [BlockEnd(index=event.index, block=TextBlock(text="Hello again"))]
        return [event]

    judged = judge_evidence(with_events(_after_done("lf"), read_on))
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["S4"]
    assert judged["S4"].reason == "attempt 1: text blocks ['Hello again'], expected ['Hello']"


def test_a_cr_stream_that_dispatched_nothing_is_s1_s_though_data_follows_done() -> None:
    """A reader that splits lines on LF alone sees no event on a CR stream: it lost what came
    before [DONE], which reading on never does."""
    case = _after_done("cr")
    nothing = dataclasses.replace(
        case, events=(Finish(reason="error", code="STREAM_CLOSED"), End())
    )
    judged = judge_evidence(nothing)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["S1"]
    assert judged["S4"].verdict == "pass"


def test_data_after_a_done_the_reading_never_reaches_is_not_judged() -> None:
    """A payload that fails the attempt before [DONE] ends the reading: S4 has nothing to say."""
    malformed = stream().role().text("Hi").raw("not json").done().text(" again").done()
    case = _built(malformed)
    assert "after-done" not in case.expected.attempts[0].features
    assert "S4" not in verdicts(case)


# --- the empty-response family owns refusals, not content ---------------------------------


def test_reasoning_text_assembled_wrong_is_c2s_not_e2s() -> None:
    """A reasoning-only answer handed over as a successful stop is what E2 asks; a reasoning
    text that lost a delta is C2's to report, where its maintainer should look."""
    case = _built(stream().role().reasoning("0").finish("stop").done())
    garbled = dataclasses.replace(
        case,
        events=(
            BlockStart(index=0, block_type="reasoning"),
            BlockEnd(index=0, block=ReasoningBlock(text="")),
            Finish(reason="stop"),
            End(),
        ),
    )
    judged = judge_evidence(garbled)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["C2"]
    assert judged["E2"].verdict == "pass"


def test_a_reasoning_only_answer_refused_as_empty_is_e2s() -> None:
    case = _built(stream().role().reasoning("0").finish("stop").done())
    refused = dataclasses.replace(
        case, events=(Finish(reason="error", code="EMPTY_RESPONSE"), End())
    )
    judged = judge_evidence(refused)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["E2"]


# --- one difference two invariants of one rank see is reported once ---


def _cr_stream_split_per_byte() -> Evidence:
    stream_ = stream().framing(line_ending="cr").split("byte").role().text("Hello")
    return _built(stream_.finish("stop").done())


def test_a_difference_two_framing_invariants_see_is_reported_once() -> None:
    lost = dataclasses.replace(
        _cr_stream_split_per_byte(), events=(Finish(reason="error", code="STREAM_CLOSED"), End())
    )
    judged = judge_evidence(lost)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["S1"]
    assert judged["S2"] == Finding("n/a", "reported under S1")


def test_the_heavier_verdict_reports_a_difference_seen_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reported under an info verdict, a failure would be hidden."""
    monkeypatch.setitem(CATALOGUE, "S1", dataclasses.replace(CATALOGUE["S1"], interop="INFO"))
    lost = dataclasses.replace(
        _cr_stream_split_per_byte(),
        contract="interop",
        events=(Finish(reason="error", code="STREAM_CLOSED"), End()),
    )
    judged = judge_evidence(lost)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["S2"]
    assert judged["S1"] == Finding("n/a", "reported under S2")


def test_what_a_failed_attempt_did_not_hand_over_follows_from_its_failure() -> None:
    """No text and no usage from an attempt that failed: C5 reports the failure, once."""
    case = _built(stream().role().text("Hello").finish("stop").usage(5, 2).done())
    failed = dataclasses.replace(case, events=(Finish(reason="error", code="SERVER"), End()))
    judged = judge_evidence(failed)
    assert [id for id, found in judged.items() if found.verdict == "fail"] == ["C5"]
    assert not {"C1", "C4"} & judged.keys()  # not exercised: the attempt held nothing


# --- interop compares with the interop reading (INVARIANTS.md v1.2) ---
# Each case is the smallest stream that showed a false failure, read by a small honest
# adapter that makes one lossless choice a real library makes.


def read_once(case: Evidence, *events: Event) -> Evidence:
    """``case`` as reported by an adapter that made one request and reported ``events``."""
    return dataclasses.replace(case, events=(*events, End()), requests=case.requests[:1])


def no_arguments_as_braces(event: Event) -> list[Event]:
    """A library that hands over a no-argument call's ``""`` as ``"{}"``."""
    if isinstance(event, ToolCallDelta) and not event.arguments_delta.strip():
        return [event.model_copy(update={"arguments_delta": "{}"})]
    block = event.block if isinstance(event, BlockEnd) else None
    if isinstance(block, ToolCallBlock) and not block.arguments.strip():
        return [event.model_copy(update={"block": block.model_copy(update={"arguments": "{}"})})]
    return [event]


def _no_argument_stop() -> Evidence:
    call = stream().role().tool_call(0, id="call_1", type="function", name="now", arguments="")
    return _built(call.finish("stop").done())


@pytest.mark.parametrize(
    "case",
    [
        lambda: conforming("no-arg-call-empty-arguments"),
        lambda: conforming("llamacpp-parallel-first-args-empty"),  # T3 saw it too
        _no_argument_stop,  # and E5, a call that ends stop
    ],
)
def test_a_no_argument_call_handed_over_as_braces_loses_nothing(
    case: Callable[[], Evidence],
) -> None:
    braces = with_events(case(), no_arguments_as_braces)
    assert failing(braces, "interop") == []
    assert failing(braces, "harness") == ["C3"]  # the raw form is the harness's rule


def test_a_no_argument_call_handed_over_as_braces_after_a_discarded_call_is_no_leak() -> None:
    """Attempt 1's unidentified call sent {}: the retried call's {} is no argument of it (R7)."""
    unidentified = stream().role().tool_call(0, type="function", name="now", arguments="{}")
    retried = stream().role().tool_call(0, id="call_1", type="function", name="now", arguments="")
    case = _built(unidentified.finish("tool_calls").done(), retried.finish("tool_calls").done())
    braces = with_events(case, no_arguments_as_braces)
    assert verdicts(braces, "interop")["R7"] == "pass"
    assert failing(braces, "interop") == []


def test_a_no_argument_call_handed_over_as_braces_holds_no_fragment_of_a_discarded_call() -> None:
    """Attempt 1 was reset after the fragment {: the retried call's {} holds none of it (R7)."""
    call = stream().role().tool_call(0, id="call_1", type="function", name="now", arguments="{")
    retried = stream().role().tool_call(0, id="call_1", type="function", name="now", arguments="")
    case = _built(call.reset(), retried.finish("tool_calls").done())
    braces = with_events(case, no_arguments_as_braces)
    assert verdicts(braces, "interop")["R7"] == "pass"
    assert failing(braces, "interop") == []


@pytest.mark.parametrize(
    "ending",
    ["", "data: [DO"],  # a cut [DONE]: discarded unterminated (WHATWG), or unreadable flushed
)
def test_a_finish_without_done_read_as_an_empty_stop_is_recorded_under_interop(
    ending: str,
) -> None:
    """E1's refusal is INFO under interop: S5 compares with the finished reading as the
    interop contract reads it, not with one that refuses the empty stop."""
    case = _built(stream().finish("stop").literal(ending))
    stop = read_once(case, Finish(reason="stop"))
    assert failing(stop, "interop") == []
    assert failing(stop) == ["S5"]
    # Read as finished and refused as E1 asks: S5 records that reading too (R1 then asks
    # for the retry of EMPTY_RESPONSE).
    refused = read_once(case, Finish(reason="error", code="EMPTY_RESPONSE"))
    assert verdicts(stop, "interop")["S5"] == verdicts(refused, "interop")["S5"] == "info"


def test_an_empty_stop_before_data_after_done_read_as_sent_keeps_s4() -> None:
    """The client read nothing past [DONE]: E1's INFO-level refusal is no S4 difference."""
    case = _built(stream().role().finish("stop").done().text(" again").done())
    judged = verdicts(read_once(case, Finish(reason="stop")), "interop")
    assert judged["S4"] == "pass"
    assert "fail" not in judged.values()


def test_a_tool_calls_finish_without_calls_reported_stop_loses_nothing_under_interop() -> None:
    """A library that exposes no finish reason reports stop: its caller acts as for
    tool-calls with no call."""
    case = with_events(
        conforming("tool-calls-finish-without-calls"),
        lambda e: [Finish(reason="stop")] if isinstance(e, Finish) else [e],
    )
    assert failing(case, "interop") == []
    assert failing(case, "harness") == ["E4"]


def test_a_reset_after_the_finish_read_as_a_clean_close_loses_nothing_under_interop() -> None:
    """A close-delimited body reset right behind its finish: the client reads a close."""
    case = _built(stream().framing(transfer="close").role().text("Hi").finish("stop").reset())
    text = TextBlock(text="Hi")
    closed = read_once(
        case,
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Hi"),
        BlockEnd(index=0, block=text),
        Finish(reason="stop"),
    )
    judged = verdicts(closed, "interop")
    assert judged["H3"] == "pass"
    assert "fail" not in judged.values()
    assert failing(closed, "harness") == ["H3"]


@pytest.mark.parametrize("ending", ["reset", "disconnect"])
def test_a_reset_after_the_finish_of_a_chunked_body_read_as_complete_loses_nothing(
    ending: str,
) -> None:
    """All the provider sent had arrived when the connection was reset or cut (here before
    [DONE], after the usage): a library that reads the attempt as finished loses nothing
    under interop, as S5 allows for a close; the harness asks for TRANSPORT and its retry."""
    finished_stream = stream().role().text("Hi").finish("stop").usage(5, 1)
    case = _built(getattr(finished_stream, ending)())
    text = TextBlock(text="Hi")
    finished = read_once(
        case,
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Hi"),
        BlockEnd(index=0, block=text),
        Usage(input_tokens=5, output_tokens=1, cache_read_tokens=0),
        Finish(reason="stop"),
    )
    assert failing(finished, "interop") == []
    assert failing(finished, "harness") == ["H3"]
    # Or read as a close and refused for want of [DONE]: a failure, as the provider's was.
    refused = read_once(case, *finished.events[:4], Finish(reason="error", code="STREAM_CLOSED"))
    assert failing(refused, "interop") == []
    assert failing(refused, "harness") == ["H3"]


def test_an_unidentified_call_given_a_unique_synthetic_id_loses_nothing_under_interop() -> None:
    """T5's refusal is the harness's duty: the call the wire never gave an id, handed back
    with one the library made up, is what the provider sent, in every comparison (S2's on
    a body split byte by byte among them)."""
    call_without_id = stream().split("byte").role().tool_call(0, name="get_weather", arguments="{}")
    case = _built(call_without_id.finish("tool_calls").done())
    call = ToolCallBlock(id="call_made_up", name="get_weather", arguments="{}")
    synthetic = read_once(
        case,
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="call_made_up", name="get_weather", arguments_delta="{}"),
        BlockEnd(index=0, block=call),
        Finish(reason="tool-calls"),
    )
    assert failing(synthetic, "interop") == []
    assert "T5" in failing(synthetic, "harness")


LENGTH_REFUSED = (
    "ModelBehaviorError: stream terminated with finish_reason='length' but produced no output"
)


@pytest.mark.parametrize(
    "refusal",
    [
        (Thrown(message=LENGTH_REFUSED, code="MAX_TOKENS"),),
        (
            Usage(input_tokens=45, output_tokens=256, cache_read_tokens=0, reasoning_tokens=256),
            Finish(reason="error", code="MAX_TOKENS"),
        ),
    ],
)
def test_a_typed_refusal_of_a_length_turn_with_no_output_is_no_crash(
    refusal: tuple[Event, ...],
) -> None:
    case = read_once(conforming("length-no-content"), *refusal)
    assert verdicts(case, "interop")["G1"] == verdicts(case, "harness")["G1"] == "pass"
    assert not {"fail", "non-strict"} & set(verdicts(case, "interop").values())
    assert failing(case, "harness") == ["E4"]  # the harness asks for the max-tokens finish


def test_a_thrown_failure_with_the_expected_code_passes_under_interop() -> None:
    thrown = read_once(
        conforming("reset-mid-stream"), Thrown(message="ReadError", code="TRANSPORT")
    )
    assert verdicts(thrown, "interop")["H3"] == "pass"
    assert verdicts(thrown, "harness")["H3"] == "non-strict"


def test_usage_a_thrown_refusal_could_not_hand_over_is_not_c4s() -> None:
    """A library that reads a finished body as complete and raises its own E1 refusal:
    the usage is lost with the throw, which the failure's invariant judges."""
    case = _built(stream().role().finish("stop").usage(5, 0))
    thrown = read_once(case, Thrown(message="ValueError: empty", code="EMPTY_RESPONSE"))
    judged = verdicts(thrown, "interop")
    assert judged["C4"] == "pass"
    assert judged["S5"] == "info"  # read as finished; R1 asks for EMPTY_RESPONSE's retry


def test_a_retry_announcing_the_code_its_attempt_failed_with_keeps_r9() -> None:
    """S7 accepts an error frame surfaced under any code: R9 does not judge it again."""

    def as_server(event: Event) -> list[Event]:
        if isinstance(event, Finish | Retry) and event.code == "RATE_LIMIT":
            return [event.model_copy(update={"code": "SERVER"})]
        return [event]

    case = with_events(conforming("openrouter-error-in-chunk-envelope"), as_server)
    for contract in CONTRACTS:
        assert verdicts(case, contract)["R9"] == "pass"


def test_a_tool_calls_finish_where_a_failure_came_last_is_described_as_reported() -> None:
    """tool_calls, then content_filter: the last reason wins, a failure; the client's
    tool-calls is named as it reported it."""
    call = stream().role().tool_call(0, id="call_1", type="function", name="now", arguments="{}")
    case = _built(call.finish("tool_calls").finish("content_filter").done())
    final = case.expected.final
    reported = conforming_with(case, dataclasses.replace(final, reason="tool-calls", code=None))
    for contract in CONTRACTS:
        judged = judge_evidence(dataclasses.replace(reported, contract=contract))
        assert judged["C5"] == Finding(
            "fail",
            "attempt 1: finish tool-calls, expected finish error CONTENT_FILTER",
            Cost(
                "misreported",
                "a failed stream reported as a success: call 'call_1'/'now' '{}'; finish "
                "tool-calls, where the stream failed CONTENT_FILTER",
            ),
        )
