"""R judged against a policy the adapter declares (its hello's ``retry_policy``): what is about
meaning in both contracts, the rest by the harness's rules or by the declaration."""

from __future__ import annotations

import pytest
from retry_evidence import evidence, failed, ok, record, scenario, succeeded, verdict

from conformance.adapters.thirdparty.retry_policies import openai_sdk
from conformance.events import DeclaredRetryPolicy, Event
from conformance.invariants.evidence import Evidence
from conformance.invariants.judging import judge_evidence
from conformance.verdicts import CONTRACTS, Contract, Verdict
from fakeprovider.build import http_error, stream
from fakeprovider.registry import RequestRecord
from fakeprovider.scenario import Scenario

SDK = openai_sdk()  # openai-python's defaults, as its shims declare them


def judged(case: Evidence) -> dict[str, Verdict]:
    return {id: finding.verdict for id, finding in judge_evidence(case).items()}


def reason(invariant: str, case: Evidence) -> str:
    return judge_evidence(case)[invariant].reason


def hidden(
    built: Scenario,
    events: list[Event],
    requests: list[RequestRecord],
    contract: Contract,
    declared: DeclaredRetryPolicy = SDK,
) -> Evidence:
    """A library's case: its retries out of sight, only the last attempt's events."""
    return evidence(built, events, requests, declared=declared, contract=contract)


def test_hidden_retries_are_the_declared_layer_s_and_its_outcome_is_the_last_request_s() -> None:
    built = scenario(http_error(500), ok())
    requests = [record(1, 0, 1), record(2, 401, 410)]
    interop = judged(hidden(built, succeeded(), requests, "interop"))
    assert {id: interop[id] for id in ("H5", "R1", "R2", "R4", "R5", "R8", "C1")} == dict.fromkeys(
        ("H5", "R1", "R2", "R4", "R5", "R8", "C1"), "pass"
    )
    assert interop["R9"] == "info"  # the declaration promises no announcement
    assert "H1" not in interop  # the visible attempt is request 2's, a success
    harness = judged(hidden(built, succeeded(), requests, "harness"))
    assert harness["R9"] == "non-strict"  # the harness wants each retry announced
    assert harness["H5"] == "pass"
    undeclared = judged(evidence(built, succeeded(), requests))
    assert undeclared["H5"] == "fail"  # without a declaration: two requests, one attempt


@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_request_past_the_declared_budget_fails_r2_in_both_contracts(
    contract: Contract,
) -> None:
    built = scenario(http_error(500), ok())
    none = SDK.model_copy(update={"max_retries": 0})
    requests = [record(1, 0, 1), record(2, 401, 410)]
    case = hidden(built, succeeded(), requests, contract, none)
    assert verdict("R2", case) == "fail"
    assert "the declared max_retries 0 allows 1" in reason("R2", case)


def test_a_declared_budget_above_the_case_s_passes_interop_only() -> None:
    forever = scenario(http_error(429))
    four = [record(n, 500 * n, 500 * n + 1) for n in range(1, 5)]
    three = SDK.model_copy(update={"max_retries": 3})
    thrown = failed("RATE_LIMIT")
    assert verdict("R2", hidden(forever, thrown, four, "interop", three)) == "pass"
    assert verdict("R2", hidden(forever, thrown, four, "harness", three)) == "fail"
    harness = hidden(forever, thrown, four, "harness", three)
    assert "the case's max_retries 2 allows 3" in reason("R2", harness)


def test_r1_judges_declared_statuses_under_interop_and_the_harness_codes_under_harness() -> None:
    said_no = scenario(http_error(500, headers={"x-should-retry": "false"}), ok())
    once = [record(1, 0, 1)]
    assert verdict("R1", hidden(said_no, failed("SERVER"), once, "interop")) == "pass"
    assert verdict("R1", hidden(said_no, failed("SERVER"), once, "harness")) == "fail"
    bad_request = scenario(http_error(400), ok())
    twice = [record(1, 0, 1), record(2, 401, 410)]
    assert verdict("R1", hidden(bad_request, succeeded(), twice, "interop")) == "fail"
    assert verdict("R1", hidden(bad_request, succeeded(), twice, "harness")) == "fail"
    said = reason("R1", hidden(bad_request, succeeded(), twice, "interop"))
    assert "INVALID_REQUEST as the provider served it (retried out of the caller's sight)" in said
    assert "which the declared policy does not retry" in said
    assert "which the case's policy retries" in reason(
        "R1", hidden(said_no, failed("SERVER"), once, "harness")
    )


def test_no_retry_after_support_declared_is_no_failure_for_ignoring_it_under_interop() -> None:
    asked = scenario(http_error(429, retry_after=1), ok())
    deaf = SDK.model_copy(update={"retry_after": []})
    requests = [record(1, 0, 1), record(2, 401, 410)]
    events = [*failed("RATE_LIMIT", retry_ms=400), *succeeded()]
    interop = judged(hidden(asked, events, requests, "interop", deaf))
    assert "R6" not in interop and "H2" not in interop
    assert interop["R5"] == "pass"  # its backoff, within the declared bounds
    assert "fail" not in interop.values() and "non-strict" not in interop.values()
    harness = judged(hidden(asked, events, requests, "harness", deaf))
    assert harness["R6"] == harness["H2"] == "non-strict"  # the harness asks for it
    honours = judged(hidden(asked, events, requests, "interop"))
    assert honours["R6"] == "non-strict"  # it declared it waits what Retry-After asks


@pytest.mark.parametrize(("gap_ms", "interop"), [(50, "fail"), (400, "pass"), (7_900, "pass")])
def test_r5_under_interop_holds_the_backoff_to_the_declared_bounds(
    gap_ms: float, interop: Verdict
) -> None:
    built = scenario(http_error(503), ok())
    requests = [record(1, 0, 1), record(2, 1 + gap_ms, 10 + gap_ms)]
    assert verdict("R5", hidden(built, succeeded(), requests, "interop")) == interop


@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_discarded_attempt_s_text_out_of_sight_still_fails_r7_in_both_contracts(
    contract: Contract,
) -> None:
    built = scenario(stream().role().text("Hello wor").reset(), ok("Hello world!"))
    anywhere = SDK.model_copy(update={"mid_stream": True})
    requests = [record(1, 0, 1, ended="reset"), record(2, 401, 410)]
    leaked = judged(hidden(built, succeeded("Hello worHello world!"), requests, contract, anywhere))
    assert leaked["R7"] == "fail"
    clean = judged(hidden(built, succeeded("Hello world!"), requests, contract, anywhere))
    assert clean["R7"] == "pass"


@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_changed_body_on_a_hidden_retry_fails_r4_in_both_contracts(contract: Contract) -> None:
    built = scenario(http_error(500), ok())
    changed = [record(1, 0, 1), record(2, 401, 410, body=b'{"model":"other"}')]
    assert verdict("R4", hidden(built, succeeded(), changed, contract)) == "fail"


def test_r3_is_the_case_policy_s_rule_only() -> None:
    empty = scenario(stream().role().finish("stop").done(), ok())
    refused = failed("EMPTY_RESPONSE")
    assert verdict("R3", hidden(empty, refused, [record(1, 0, 1)], "harness")) == "fail"
    assert verdict("R3", hidden(empty, refused, [record(1, 0, 1)], "interop")) is None
