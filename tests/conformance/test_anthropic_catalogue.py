"""The AN rules of the catalogue: each proven by a synthetic adapter that keeps it (what a
conforming adapter reports) and one that breaks it, and owning the difference it judges."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from retry_evidence import record

from conformance.codes import MALFORMED_RESPONSE
from conformance.events import (
    Block,
    ReasoningBlock,
    ServerToolBlock,
    TextBlock,
    ToolCallBlock,
    ToolCallDelta,
)
from conformance.invariants import CATALOGUE
from conformance.invariants.conforming import conforming_events, conforming_evidence
from conformance.invariants.evidence import Evidence
from conformance.invariants.judging import judge_evidence
from conformance.options import RunOptions
from conformance.oracle import ExpectedAttempt, ExpectedOutcome
from conformance.verdicts import Contract
from fakeprovider.build import MessagesStreamBuilder, ScenarioBuilder, messages_stream as stream


def case(wire: MessagesStreamBuilder) -> Evidence:
    scenario = ScenarioBuilder("an-case", dialect="anthropic-messages").attempt(wire).build()
    evidence = conforming_evidence(scenario, RunOptions(policy=None))
    return dataclasses.replace(evidence, requests=(record(1, 0, 500),))


def reporting(evidence: Evidence, change: Callable[[ExpectedAttempt], ExpectedAttempt]) -> Evidence:
    """The case, with an adapter that reports its only attempt as ``change`` makes it."""
    attempt = change(evidence.expected.final)
    return dataclasses.replace(evidence, events=conforming_events(ExpectedOutcome((attempt,))))


def success(*blocks: Block, reason: str = "stop") -> Callable[[ExpectedAttempt], ExpectedAttempt]:
    def change(wanted: ExpectedAttempt) -> ExpectedAttempt:
        usage = wanted.billed_usage  # a refused attempt bills what a success reports
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


def started() -> MessagesStreamBuilder:
    return stream().message_start(input_tokens=5)


def text(wire: MessagesStreamBuilder, index: int, part: str) -> MessagesStreamBuilder:
    return wire.text_start(index).text_delta(index, part).block_stop(index)


def finished(wire: MessagesStreamBuilder, reason: str = "end_turn") -> MessagesStreamBuilder:
    return wire.message_delta(reason, output_tokens=3).message_stop()


CALL = ToolCallBlock(id="toolu_A", name="f", arguments="{}")

# id → (the wire, how a breaking adapter reports it, its verdict under harness)
NEXT_REQUEST = {id for id, rule in CATALOGUE.items() if "follow_up" in rule.needs}
BREAKS: dict[str, tuple[MessagesStreamBuilder, Callable[..., ExpectedAttempt], str]] = {
    "AN-G1": (
        finished(text(started(), 0, "Hi").text_delta(3, "zzz")),
        success(TextBlock(text="Hizzz")),
        "fail",
    ),
    "AN-G2": (
        finished(
            started().text_start(0).text_delta(0, "--").thinking_start(0).thinking_delta(0, "hm")
        ),
        success(TextBlock(text="--hm")),
        "fail",
    ),
    "AN-G3": (
        finished(
            started()
            .tool_use_start(0, "toolu_A", "f")
            .input_json(0, "{")
            .text_delta(0, "\n")
            .input_json(0, "}")
            .block_stop(0),
            "tool_use",
        ),
        success(ToolCallBlock(id="toolu_A", name="f", arguments="{\n}"), reason="tool-calls"),
        "fail",
    ),
    "AN-G4": (text(started(), 0, "Hel").end(), success(TextBlock(text="Hel")), "fail"),
    "AN-G5": (
        finished(text(started(), 0, "Hello")).text_delta(0, "LATE"),
        success(TextBlock(text="HelloLATE")),
        "fail",
    ),
    "AN-G6": (finished(text(stream(), 0, "Hi")), success(TextBlock(text="Hi")), "fail"),
    "AN-G7": (
        finished(
            text(started().block_start(0, {"type": "fallback"}).block_stop(0), 1, "Hello there")
        ),
        failure(MALFORMED_RESPONSE),
        "fail",
    ),
    "AN-C2": (
        finished(
            text(
                started()
                .thinking_start(0)
                .thinking_delta(0, "hm")
                .signature_delta(0, "EqQB")
                .block_stop(0),
                1,
                "Hi",
            )
        ),
        success(ReasoningBlock(text="hm"), TextBlock(text="Hi")),
        "fail",
    ),
    "AN-C3": (
        finished(text(started().redacted_thinking_start(0, "Er+/").block_stop(0), 1, "Hi")),
        success(ReasoningBlock(text="", redacted="Er+"), TextBlock(text="Hi")),
        "fail",
    ),
    "AN-T5": (
        finished(
            text(
                started()
                .block_start(
                    0,
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {},
                    },
                )
                .block_stop(0),
                1,
                "found",
            )
        ),
        success(
            ToolCallBlock(id="srvtoolu_1", name="web_search", arguments="{}"),
            TextBlock(text="found"),
        ),
        "fail",
    ),
    "AN-S2": (
        finished(text(started().data_only(), 0, "Hi").data_only()),
        failure(MALFORMED_RESPONSE),
        "non-strict",
    ),
    "AN-H2": (
        text(started(), 0, "Partial").error("overloaded_error"),
        success(TextBlock(text="Partial")),
        "fail",
    ),
}


def test_every_an_rule_has_a_proof_and_covers_anthropic_alone() -> None:
    an = {id for id in CATALOGUE if id.startswith("AN-")}
    # A rule of the next request is proven on two-turn cases (test_two_turn.py).
    assert an - NEXT_REQUEST == set(BREAKS) and an & NEXT_REQUEST == {"AN-R2"}
    assert all(CATALOGUE[id].dialects == ("anthropic-messages",) for id in an)


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_a_conforming_adapter_keeps_it(rule: str) -> None:
    evidence = case(BREAKS[rule][0])
    for contract in ("harness", "interop"):
        judged = verdicts(evidence, contract)
        assert judged[rule] in ("pass", "info"), (contract, judged)
        assert not attention(evidence, contract)


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_an_adapter_that_breaks_it_is_reported_under_it(rule: str) -> None:
    wire, change, verdict = BREAKS[rule]
    broken = reporting(case(wire), change)
    assert attention(broken) == {rule: verdict}


def test_a_repeated_start_of_one_block_may_be_refused_or_ignored() -> None:
    wire = started().tool_use_start(0, "toolu_A", "f").tool_use_start(0, "toolu_A", "f")
    evidence = case(finished(wire.input_json(0, "{}").block_stop(0), "tool_use"))
    assert verdicts(evidence)["AN-G2"] == "pass"
    assert not attention(reporting(evidence, failure(MALFORMED_RESPONSE)))


def test_interop_reads_past_a_misfit_and_records_a_repeated_start() -> None:
    misfit, _, _ = BREAKS["AN-G3"]
    lenient = reporting(case(misfit), success(CALL, reason="tool-calls"))
    assert attention(lenient, "harness") == {"AN-G3": "fail"}
    assert not attention(lenient, "interop")
    conflict, _, _ = BREAKS["AN-G2"]
    past = reporting(case(conflict), success(TextBlock(text="--")))
    assert verdicts(past, "interop")["AN-G2"] == "info"
    assert attention(past, "harness") == {"AN-G2": "fail"}


def test_server_tool_blocks_may_be_reported_as_such() -> None:
    wire, _, _ = BREAKS["AN-T5"]
    server = ServerToolBlock(id="srvtoolu_1", name="web_search", arguments="{}")
    assert not attention(reporting(case(wire), success(server, TextBlock(text="found"))))


def test_a_server_tool_block_may_come_whole_but_never_unlike_its_deltas() -> None:
    wire, _, _ = BREAKS["AN-T5"]
    server = ServerToolBlock(id="srvtoolu_1", name="web_search", arguments='{"query": "x"}')
    evidence = reporting(case(wire), success(server, TextBlock(text="found")))
    delta = next(e for e in evidence.events if isinstance(e, ToolCallDelta))
    whole = [e for e in evidence.events if e is not delta]
    assert "G7" not in attention(dataclasses.replace(evidence, events=whole))
    cut = delta.model_copy(update={"arguments_delta": '{"q'})
    unlike = [cut if e is delta else e for e in evidence.events]
    assert attention(dataclasses.replace(evidence, events=unlike))["G7"] == "fail"


def test_arguments_sent_as_an_object_are_raw_in_any_text_of_their_value() -> None:
    # JSON.stringify's compact text of a start's input is as raw as Python's spaced one.
    whole = started().tool_use_start(0, "toolu_A", "get_weather", {"city": "Paris"})
    whole = whole.block_stop(0)
    compact = ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"city":"Paris"}')
    evidence = case(finished(whole, "tool_use"))
    assert "C3" not in attention(reporting(evidence, success(compact, reason="tool-calls")))
    # Fragments have a raw text: re-serialising them is C3's breach under the harness.
    fragments = started().tool_use_start(0, "toolu_A", "get_weather")
    fragments = fragments.input_json(0, '{"city": "Paris"}').block_stop(0)
    evidence = case(finished(fragments, "tool_use"))
    assert attention(reporting(evidence, success(compact, reason="tool-calls")))["C3"] == "fail"
