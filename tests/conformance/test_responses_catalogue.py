"""The RS rules of the catalogue: each proven by a synthetic adapter that keeps it (what a
conforming adapter reports) and one that breaks it, and owning the difference it judges."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from retry_evidence import record

from conformance.codes import MALFORMED_RESPONSE, RATE_LIMIT, STREAM_CLOSED
from conformance.events import Block, ReasoningBlock, TextBlock, ToolCallBlock
from conformance.invariants import CATALOGUE
from conformance.invariants.conforming import conforming_events, conforming_evidence
from conformance.invariants.evidence import Evidence
from conformance.invariants.judging import judge_evidence
from conformance.options import RunOptions
from conformance.oracle import ExpectedAttempt, ExpectedOutcome
from conformance.verdicts import Contract
from fakeprovider.build import ResponsesStreamBuilder, ScenarioBuilder, responses_stream

USAGE = {"input_tokens": 5, "output_tokens": 3}


def case(wire: ResponsesStreamBuilder) -> Evidence:
    scenario = ScenarioBuilder("rs-case", dialect="openai-responses").attempt(wire).build()
    evidence = conforming_evidence(scenario, RunOptions(policy=None))
    return dataclasses.replace(evidence, requests=(record(1, 0, 500),))


def reporting(evidence: Evidence, change: Callable[[ExpectedAttempt], ExpectedAttempt]) -> Evidence:
    """The case, with an adapter that reports its only attempt as ``change`` makes it."""
    attempt = change(evidence.expected.final)
    return dataclasses.replace(evidence, events=conforming_events(ExpectedOutcome((attempt,))))


def success(*blocks: Block, reason: str = "stop") -> Callable[[ExpectedAttempt], ExpectedAttempt]:
    def change(wanted: ExpectedAttempt) -> ExpectedAttempt:
        usage = wanted.billed_usage
        return dataclasses.replace(wanted, reason=reason, code=None, blocks=blocks, usage=usage)

    return change


def failure(code: str) -> Callable[[ExpectedAttempt], ExpectedAttempt]:
    return lambda wanted: dataclasses.replace(wanted, reason="error", code=code, usage=None)


def verdicts(evidence: Evidence, contract: Contract = "harness") -> dict[str, str]:
    judged = judge_evidence(dataclasses.replace(evidence, contract=contract))
    return {id: finding.verdict for id, finding in judged.items()}


def attention(evidence: Evidence, contract: Contract = "harness") -> dict[str, str]:
    return {
        id: verdict
        for id, verdict in verdicts(evidence, contract).items()
        if verdict in ("fail", "non-strict")
    }


def started() -> ResponsesStreamBuilder:
    return responses_stream().created()


def message(wire: ResponsesStreamBuilder, index: int, *parts: str) -> ResponsesStreamBuilder:
    wire.message_added(index, f"msg_{index}").part_added(index, f"msg_{index}")
    for part in parts:
        wire.text_delta(index, f"msg_{index}", part)
    return wire


def completed(wire: ResponsesStreamBuilder, **response: object) -> ResponsesStreamBuilder:
    return wire.completed(usage=USAGE, **response)  # type: ignore[arg-type]


def call(wire: ResponsesStreamBuilder, index: int = 0) -> ResponsesStreamBuilder:
    wire.function_call_added(index, "fc_1", "call_1", "get_weather")
    return wire.arguments_delta(index, "fc_1", "{}")


CALL = ToolCallBlock(id="call_1", name="get_weather", arguments="{}", item_id="fc_1")
SNAPSHOT = [{"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}]
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="}

# id → (the wire, how a breaking adapter reports it, its verdict under harness)
BREAKS: dict[str, tuple[ResponsesStreamBuilder, Callable[..., ExpectedAttempt], str]] = {
    "RS-G1": (
        completed(message(responses_stream(), 0, "Hi")),
        success(TextBlock(text="Hi")),
        "fail",
    ),
    "RS-G2": (
        completed(message(started(), 0, "Hi").text_delta(4, "msg_4", "zzz")),
        success(TextBlock(text="Hizzz")),
        "fail",
    ),
    "RS-G3": (
        completed(message(started(), 0, "Hel").text_delta(0, "msg_rotated", "lo")),
        failure(MALFORMED_RESPONSE),
        "non-strict",
    ),
    "RS-G4": (
        completed(message(started(), 0, "Hello").text_done(0, "msg_0", ""), output=SNAPSHOT),
        success(),
        "fail",
    ),
    "RS-G5": (message(started(), 0, "Hel").end(), success(TextBlock(text="Hel")), "fail"),
    "RS-G6": (
        completed(
            message(
                started().item_added(0, {"type": "custom_tool_call", "id": "ctc_1"}),
                1,
                "Hello",
            )
        ),
        failure(MALFORMED_RESPONSE),
        "fail",
    ),
    "RS-C2": (
        completed(message(started().reasoning_added(0, "rs_1").item_done(0, REASONING), 1, "Hi")),
        success(ReasoningBlock(text=""), TextBlock(text="Hi")),
        "fail",
    ),
    "RS-C6": (
        completed(message(started(), 0, "Hello"), output=[]),
        success(),
        "fail",
    ),
    "RS-T2": (
        completed(call(started())),
        success(CALL.model_copy(update={"id": "fc_1"}), reason="tool-calls"),
        "fail",
    ),
    "RS-H1": (
        message(started(), 0, "Partial").error("rate_limit_exceeded", nested=False).end(),
        success(TextBlock(text="Partial")),
        "fail",
    ),
}
# RS-S2 is INFO under both contracts: its breach is recorded, never failed.
RECORDED = {
    "RS-S2": (
        completed(message(started(), 0, "Hel").text_delta(0, "msg_0", "lo").unnumbered()),
        failure(MALFORMED_RESPONSE),
    ),
}


def test_every_rs_rule_has_a_proof_and_covers_responses_alone() -> None:
    rs = {id for id in CATALOGUE if id.startswith("RS-")}
    # A rule of the next request is proven on two-turn cases (test_two_turn.py).
    next_request = {id for id in rs if "follow_up" in CATALOGUE[id].needs}
    assert rs - next_request == set(BREAKS) | set(RECORDED) and next_request == {"RS-R2"}
    assert all(CATALOGUE[id].dialects == ("openai-responses",) for id in rs)


def test_the_dialect_blind_rules_cover_the_responses_wire() -> None:
    for id in ("C1", "C3", "C4", "C5", "T1", "T3", "T4", "E1", "E2", "E4", "S1", "H1", "R1"):
        assert "openai-responses" in CATALOGUE[id].dialects, id


@pytest.mark.parametrize("rule", sorted(BREAKS | RECORDED))
def test_a_conforming_adapter_keeps_it(rule: str) -> None:
    evidence = case((BREAKS | RECORDED)[rule][0])
    for contract in ("harness", "interop"):
        judged = verdicts(evidence, contract)
        assert judged[rule] in ("pass", "info"), (contract, judged)
        assert not attention(evidence, contract)


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_an_adapter_that_breaks_it_is_reported_under_it(rule: str) -> None:
    wire, change, verdict = BREAKS[rule]
    broken = reporting(case(wire), change)
    assert attention(broken) == {rule: verdict}


def test_sequence_numbers_refused_are_recorded_never_failed() -> None:
    wire, change = RECORDED["RS-S2"]
    broken = reporting(case(wire), change)
    assert verdicts(broken)["RS-S2"] == "info"
    assert "RS-S2" not in attention(broken)


def test_a_conflicting_done_payload_taken_over_the_deltas_is_recorded() -> None:
    wire = completed(message(started(), 0, "Hello").text_done(0, "msg_0", "Bye"))
    taken = reporting(case(wire), success(TextBlock(text="Bye")))
    assert verdicts(taken)["RS-G4"] == "info"
    assert "RS-G4" not in attention(taken)


def test_an_end_before_the_terminal_event_is_never_a_success_under_interop() -> None:
    wire, change, _ = BREAKS["RS-G5"]
    assert attention(reporting(case(wire), change), "interop") == {"RS-G5": "fail"}
    done = case(message(started(), 0, "Hel").done())
    assert not attention(reporting(done, failure(STREAM_CLOSED)))
    assert attention(reporting(done, success(TextBlock(text="Hel"))))["RS-G5"] == "fail"


def test_the_flat_error_event_is_the_failure_of_its_code() -> None:
    wire, _, _ = BREAKS["RS-H1"]
    assert not attention(reporting(case(wire), failure(RATE_LIMIT)))


def test_interop_tolerates_a_rotated_item_id_refused() -> None:
    wire, change, _ = BREAKS["RS-G3"]
    assert verdicts(reporting(case(wire), change), "interop")["RS-G3"] == "info"
