"""R1-R9 judged on hand-built evidence (provider log and events), the scenario features they
rely on, and the n/a rule for an adapter without a retry layer."""

from __future__ import annotations

import asyncio
import email.utils
import json
from collections.abc import AsyncGenerator

import httpx
import pytest
from pydantic import JsonValue, ValidationError
from retry_evidence import (
    BODY,
    R_IDS,
    evidence,
    failed,
    ok,
    record,
    scenario,
    succeeded,
    verdict,
)
from rich.console import Console

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli.console import print_summary
from conformance.events import (
    BlockStart,
    Capabilities,
    Event,
    Finish,
    RetryPolicy,
    RunCase,
    TextDelta,
    Usage,
)
from conformance.invariants import CATALOGUE
from conformance.invariants.evidence import Evidence
from conformance.invariants.retry import tolerated_range
from conformance.invariants.waits import waits
from conformance.options import DEFAULT_POLICY, RunOptions, bundled_fixtures, case_policy
from conformance.oracle import expected_outcome, retry_decision, wait_bounds
from conformance.results import RunResult
from conformance.run.runner import run_suite
from fakeprovider.build import fault, http_error, stream
from fakeprovider.fixtures import load_fixtures
from fakeprovider.registry import HowEnded
from fakeprovider.scenario import ErrorAttempt, ErrorResponse, Scenario
from fakeprovider.wire import error_headers, retry_after_date

# --- R1-R3: what is retried ------------------------------------------------------------------


def test_a_non_retryable_code_retried_breaks_r1() -> None:
    built = scenario(http_error(401), ok())
    retried = evidence(
        built,
        failed("AUTH", retry_ms=1) + succeeded(),
        [record(1, 0, 1), record(2, 5, 9)],
    )
    assert verdict("R1", retried) == "fail"
    final = evidence(built, failed("AUTH"), [record(1, 0, 1)])
    assert verdict("R1", final) == "pass"
    assert verdict("R2", final) is None  # no budget is consumed by a final code


def test_a_retryable_failure_left_alone_breaks_r1() -> None:
    built = scenario(http_error(500), ok())
    assert verdict("R1", evidence(built, failed("SERVER"), [record(1, 0, 1)])) == "fail"


def test_a_budget_overrun_and_an_empty_success_break_r2() -> None:
    built = scenario(http_error(500), policy={"max_retries": 1})
    events = failed("SERVER", retry_ms=1) + failed("SERVER", retry_ms=2, attempt=2)
    overrun = evidence(
        built,
        [*events, *failed("SERVER")],
        [record(1, 0, 1), record(2, 5, 6), record(3, 10, 11)],
    )
    assert verdict("R2", overrun) == "fail"
    empty = scenario(stream().role().finish("stop").usage(24, 0).done(), policy={"max_retries": 1})
    blank = evidence(
        empty,
        [*failed("EMPTY_RESPONSE", retry_ms=1), Finish(reason="stop")],
        [record(1, 0, 1), record(2, 5, 6)],
    )
    assert verdict("R2", blank) == "fail"


def test_retry_decisions_are_judged_on_what_the_adapter_reported() -> None:
    """An adapter that reads a mid-stream error as a success asks no retry decision: S7 owns
    the misreading, and R1-R3 do not fail it again with the oracle's code."""
    error_frame = stream().role().text("Hel").raw('{"error": {"message": "overloaded"}}').done()
    built = scenario(error_frame, ok())
    swallowed = evidence(built, succeeded("Hel"), [record(1, 0, 1)])
    assert {verdict(r, swallowed) for r in ("R1", "R2", "R3")} <= {"pass", None}
    reason = CATALOGUE["R1"].judge(
        evidence(scenario(http_error(500), ok()), failed("SERVER"), [record(1, 0, 1)])
    )
    assert reason is not None and "SERVER as the adapter reported it" in reason[1]


def test_a_removed_code_still_retried_breaks_r3() -> None:
    built = scenario(
        stream().role().finish("stop").done(), ok(), policy={"retryable_codes": ["SERVER"]}
    )
    retried = evidence(
        built,
        failed("EMPTY_RESPONSE", retry_ms=1) + succeeded(),
        [record(1, 0, 1), record(2, 5, 9)],
    )
    assert verdict("R3", retried) == "fail"
    assert verdict("R3", evidence(built, failed("EMPTY_RESPONSE"), [record(1, 0, 1)])) == "pass"


# --- R4: the same request --------------------------------------------------------------------


def test_a_changed_body_breaks_r4_and_names_the_byte() -> None:
    built = scenario(http_error(500), ok())
    changed = evidence(
        built,
        failed("SERVER", retry_ms=1) + succeeded(),
        [record(1, 0, 1), record(2, 5, 9, body=BODY.replace(b"true", b"True"))],
    )
    judged = CATALOGUE["R4"].judge(changed)
    assert judged is not None and judged[0] == "fail"
    assert f"byte {BODY.index(b'true')}" in judged[1]


# --- R5, R6: the wait, measured at the provider ----------------------------------------------

BACKOFF: dict[str, JsonValue] = {"initial_delay_ms": 100, "max_delay_ms": 100, "jitter_ratio": 0.0}


@pytest.mark.parametrize(
    ("gap_ms", "ended", "expected"),
    [
        (100.5, "complete", "pass"),
        (20, "complete", "fail"),  # too early: the provider's end time is a sound bound
        (20, "stalled", "pass"),  # logged after the fact: no lower bound from it
        (100 * 1.5 + 1500 + 50, "complete", "fail"),  # beyond the generous upper bound
    ],
)
def test_r5_judges_the_gap_between_attempts(gap_ms: float, ended: HowEnded, expected: str) -> None:
    built = scenario(http_error(500), ok(), policy=BACKOFF)
    case = evidence(
        built,
        failed("SERVER", retry_ms=100) + succeeded(),
        [record(1, 0, 10, ended=ended), record(2, 10 + gap_ms, 20 + gap_ms)],
    )
    assert verdict("R5", case) == expected


def test_a_retry_past_the_budget_is_r2_s_and_its_wait_is_not_judged() -> None:
    """The request that should not exist has no wait to keep: judging it too would count
    one overrun twice."""
    built = scenario(http_error(500), policy={**BACKOFF, "max_retries": 1})
    events = failed("SERVER", retry_ms=100) + failed("SERVER", retry_ms=100, attempt=2)
    in_time = [record(1, 0, 10), record(2, 110, 120)]
    overrun = evidence(built, [*events, *failed("SERVER")], [*in_time, record(3, 121, 130)])
    assert verdict("R2", overrun) == "fail"
    assert verdict("R5", overrun) == "pass"  # the one retry within the budget waited well


@pytest.mark.parametrize("ended", ["complete", "stalled"])
def test_r5_passes_exactly_the_waits_in_its_tolerated_range(ended: HowEnded) -> None:
    built = scenario(http_error(500), ok(), policy=BACKOFF)

    def case(gap_ms: float) -> Evidence:
        requests = [record(1, 0, 10, ended=ended), record(2, 10 + gap_ms, 20 + gap_ms)]
        return evidence(built, failed("SERVER", retry_ms=100) + succeeded(), requests)

    tolerated = tolerated_range(waits(case(100))[0])
    assert tolerated is not None
    lower, upper = tolerated
    assert upper > 100 and (lower is None) == (ended == "stalled")
    assert lower is None or verdict("R5", case(lower - 1)) == "fail"
    assert verdict("R5", case((lower or 0) + 1)) == verdict("R5", case(upper - 1)) == "pass"
    assert verdict("R5", case(upper + 1)) == "fail"


def test_r6_wants_retry_after_waited_and_an_over_cap_one_not_retried() -> None:
    waited = scenario(http_error(429, retry_after=1), ok())
    exact = [record(1, 0, 1), record(2, 1_002, 1_010)]
    early = [record(1, 0, 1), record(2, 12, 20)]
    events = failed("RATE_LIMIT", retry_ms=1000) + succeeded()
    assert verdict("R6", evidence(waited, events, exact)) == "pass"
    assert verdict("R6", evidence(waited, events, early)) == "non-strict"  # a SHOULD
    over_cap = scenario(http_error(429, retry_after=30), ok())
    retried = evidence(over_cap, failed("RATE_LIMIT", retry_ms=2000) + succeeded(), exact)
    assert verdict("R6", retried) == "non-strict"
    assert verdict("R6", evidence(over_cap, failed("RATE_LIMIT"), exact[:1])) == "pass"


def test_wait_bounds_are_the_spec_formula_and_retry_after_replaces_them() -> None:
    policy = RetryPolicy(max_retries=5, initial_delay_ms=40, max_delay_ms=100, jitter_ratio=0.25)
    failure = expected_outcome(scenario(http_error(500)), None).final
    bounds = [wait_bounds(policy, failure, n) for n in (1, 2, 3)]
    assert [(b.lower_ms, b.upper_ms) for b in bounds] == [(30, 50), (60, 100), (75, 125)]
    asked = expected_outcome(scenario(http_error(429, retry_after=2)), None).final
    assert wait_bounds(policy, asked, 1).source == "retry-after"
    assert retry_decision(asked, policy, 0) == "retry-after-over-cap"


# --- R7, R8: the visible outcome -------------------------------------------------------------


def test_a_replayed_prefix_breaks_r7_and_r8_but_a_restated_one_does_not() -> None:
    prefix = "The forecast for Paris is"
    built = scenario(stream().role().text(prefix).reset(), ok())
    discarded: list[Event] = [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text=prefix),
        *failed("TRANSPORT", retry_ms=1),
    ]
    requests = [record(1, 0, 1, ended="reset"), record(2, 5, 9)]
    clean = evidence(built, discarded + succeeded(), requests)
    assert (verdict("R7", clean), verdict("R8", clean)) == ("pass", "pass")
    leaked = evidence(built, discarded + succeeded(prefix + prefix + " sunny."), requests)
    assert (verdict("R7", leaked), verdict("R8", leaked)) == ("fail", "fail")


# --- R9: what the caller is told -------------------------------------------------------------


def test_r9_wants_each_retry_announced_truthfully_and_billed_usage_kept() -> None:
    built = scenario(stream().role().finish("stop").usage(24, 0).done(), ok())
    requests = [record(1, 0, 1), record(2, 50, 60)]
    usage = Usage(input_tokens=24, output_tokens=0, cache_read_tokens=0)
    told = [usage, *failed("EMPTY_RESPONSE", retry_ms=40), *succeeded()]
    assert verdict("R9", evidence(built, told, requests)) == "pass"
    unbilled = [*failed("EMPTY_RESPONSE", retry_ms=40), *succeeded()]
    assert verdict("R9", evidence(built, unbilled, requests)) == "non-strict"
    overstated = [usage, *failed("EMPTY_RESPONSE", retry_ms=500), *succeeded()]
    assert verdict("R9", evidence(built, overstated, requests)) == "non-strict"
    silent = [usage, *failed("EMPTY_RESPONSE"), *succeeded()]
    assert verdict("R9", evidence(built, silent, requests)) == "non-strict"


# --- n/a without a retry layer ---------------------------------------------------------------


def test_without_the_retry_capability_every_exercised_r_invariant_is_na() -> None:
    built = scenario(stream().role().text("The fore").reset(), ok())
    no_retry = Capabilities(deltas=True, reasoning=True, usage=True, error_codes=True)
    case = evidence(built, failed("TRANSPORT"), [record(1, 0, 1)], capabilities=no_retry)
    verdicts = {invariant: verdict(invariant, case) for invariant in R_IDS}
    # Judged by what a retrying adapter would do: TRANSPORT is retried by backoff.
    exercised = {"R1", "R2", "R4", "R5", "R7", "R8", "R9"}
    assert verdicts == {i: ("n/a" if i in exercised else None) for i in R_IDS}


class NoRetryLayer:
    """The reference adapter declaring no retry capability (so it runs with retries off)."""

    hello = ReferenceAdapter.hello.model_copy(
        update={
            "name": "no-retry-layer",
            "capabilities": ReferenceAdapter.hello.capabilities.model_copy(update={"retry": False}),
        }
    )

    def __init__(self) -> None:
        self._inner = ReferenceAdapter()

    def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        return self._inner.run(case, http_client)


def test_an_adapter_without_a_retry_layer_gets_na_on_the_retry_corpus() -> None:
    # Without the stall case: with retries off its one idle timeout adds nothing to prove.
    fixtures = [s for s in load_fixtures([bundled_fixtures() / "retry"]) if "stall" not in s.id]
    options = RunOptions(transport="in-process")
    result = asyncio.run(run_suite(PythonAdapterSession(NoRetryLayer()), fixtures, options))
    r_verdicts = [
        (case.case, invariant, judged.verdict)
        for case in result.cases
        for invariant, judged in case.verdicts.items()
        if invariant.startswith("R")
    ]
    assert {verdict for _, _, verdict in r_verdicts} == {"n/a"}
    assert {invariant for _, invariant, _ in r_verdicts} == set(R_IDS)
    assert all(len(case.requests) == 1 for case in result.cases)  # retries were off


# --- the scenario model: Retry-After dates, per-case policies --------------------------------


def test_a_retry_after_date_is_rendered_at_send_time() -> None:
    response = ErrorResponse(status=503, retry_after_date_in_s=2)
    headers = dict(error_headers(response, 0, now=1_700_000_000.4))
    sent = email.utils.parsedate_to_datetime(headers["retry-after"]).timestamp()
    assert sent == 1_700_000_002.0  # the nearest whole second
    assert retry_after_date(2, None) == "<HTTP date: send time + 2 s>"
    final = expected_outcome(scenario(ErrorAttempt(error=response)), None)
    assert final.final.retry_after_ms == 2000
    assert {"retry-after", "retry-after-date"} <= final.final.features


def test_a_retry_after_date_and_header_together_are_refused() -> None:
    with pytest.raises(ValidationError, match="not both"):
        ErrorResponse(status=503, headers={"Retry-After": "1"}, retry_after_date_in_s=1)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"retryable_codes": ["SERVER", "SERVER"]}, "twice"),
        ({"retryable_codes": []}, "at least 1"),
        ({"initial_delay_ms": 50, "max_delay_ms": 10}, "must not exceed"),
        ({"max_retrys": 1}, "Extra inputs"),
    ],
)
def test_a_bad_retry_policy_override_is_refused(override: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Scenario.model_validate(
            {"id": "s", "attempts": [{"fault": "reset"}], "retry_policy": override}
        )


def test_a_case_policy_merges_over_the_run_policy_or_names_the_scenario() -> None:
    built = scenario(fault("reset"), policy={"max_retries": 4, "retryable_codes": ["SERVER"]})
    merged = case_policy(DEFAULT_POLICY, built)
    assert (merged.max_retries, merged.retryable_codes) == (4, ["SERVER"])
    assert merged.max_delay_ms == DEFAULT_POLICY.max_delay_ms
    too_slow = scenario(fault("reset"), policy={"initial_delay_ms": 5000})
    with pytest.raises(ValueError, match=r"scenario s: retry_policy: .*must not exceed"):
        case_policy(DEFAULT_POLICY, too_slow)


# --- results and summary ---------------------------------------------------------------------


def test_results_carry_retries_optionally_and_the_summary_shows_them() -> None:
    retry = load_fixtures([bundled_fixtures() / "retry"])
    fixtures = [s for s in retry if s.id.startswith("retry-5")]
    options = RunOptions(transport="in-process")
    result = asyncio.run(run_suite(PythonAdapterSession(ReferenceAdapter()), fixtures, options))
    retry = result.cases[0].retry
    assert retry is not None and (retry.attempts_seen, retry.attempts_expected) == (3, 3)
    assert [wait.after_code for wait in retry.waits] == ["SERVER", "SERVER"]
    assert all(wait.measured_ms is not None for wait in retry.waits)
    console = Console(record=True, width=200)
    print_summary(console, result, verbose=True)
    assert "retry-500-503-then-text" in console.export_text()
    # Schema version 1 without the field (results written before it) still loads.
    document = json.loads(result.to_json())
    del document["cases"][0]["retry"]
    assert RunResult.model_validate(document).cases[0].retry is None
