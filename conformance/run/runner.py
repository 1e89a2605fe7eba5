"""Runs cases against an adapter and judges them; knows nothing of reports.

Each case gets its scenario on the fake provider (a loopback server, or the in-process
transport for Python adapters that take an ``http_client``), a ``run`` request, a time
bound, and then every invariant in the catalogue looks at the evidence. What a run keeps of
what the case kept is bounded: per case by its account (``conformance.kept``: events,
stderr, request bodies), per run here (``MAX_RUN_BYTES``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from fakeprovider.dialects import DEFAULT_DIALECT, DIALECTS
from fakeprovider.interrupts import Interruption
from fakeprovider.registry import RequestRecord, ScenarioRegistry
from fakeprovider.scenario import Scenario

from ..adapters.base import AdapterSession, CaseRun
from ..adapters.case_log import byte_count
from ..events import FollowUpTurn, Hello, RetryPolicy, RunCase
from ..invariants import CATALOGUE
from ..invariants.evidence import Evidence
from ..invariants.judging import documented_order, framing_in_question, judge_evidence
from ..invariants.retry import tolerated_range
from ..invariants.waits import Wait, waits
from ..options import RunOptions, case_policy, default_request
from ..oracle import called_tools, expected_outcome
from ..results import (
    CaseResult,
    InvariantVerdict,
    RetrySummary,
    RetryWait,
    RunInterruption,
    RunResult,
    suite_version,
)
from ..spec import LATEST_SPEC
from ..verdicts import CONTRACTS, Contract, SpecVersion
from .control import plain_twin
from .estimate import estimated_duration_s, longest_first
from .provider import Provider, session_provider
from .schedule import CaseSchedule, run_scheduled

# Bytes kept per run (each case's account); once a run's cases have kept this much, the remaining
# cases (in scenario order, however many run at once) are recorded as not run. The run's
# results then hold at most this plus one case's cap.
MAX_RUN_BYTES = 16 * 1024 * 1024


def effective_policy(
    session: AdapterSession, options: RunOptions, scenario: Scenario | None = None
) -> RetryPolicy:
    """The policy sent to the adapter: the run's, with the scenario's own retry-policy
    fields; retries off when it has no retry layer."""
    policy = options.policy if scenario is None else case_policy(options.policy, scenario)
    if session.hello.capabilities.retry:
        return policy
    return policy.model_copy(update={"max_retries": 0})


def judge(
    evidence: Evidence, *, strict: bool, control: Evidence | None = None
) -> dict[str, InvariantVerdict]:
    """Every exercised invariant's verdict, each root cause reported once; ``control`` is
    what the case's plain-framed twin showed, if it ran."""
    return {
        id: InvariantVerdict(verdict=finding.verdict, reason=finding.reason, cost=finding.cost)
        for id, finding in judge_evidence(evidence, strict=strict, control=control).items()
    }


async def run_suite(
    session: AdapterSession,
    scenarios: Sequence[Scenario],
    options: RunOptions,
    *,
    on_case: Callable[[CaseResult], None] | None = None,
    invocation: str = "",
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> RunResult:
    """Run every scenario as a case; ``invocation`` is how to name the adapter on a
    command line (``--adapter …`` or ``--adapter-cmd …``), for reproducers; ``jobs`` cases
    at a time, until ``interruption`` says stop (see :func:`run_judged`)."""
    runs = await run_judged(
        session,
        scenarios,
        options,
        (options.contract,),
        on_case=on_case,
        invocation=invocation,
        jobs=jobs,
        interruption=interruption,
    )
    return runs[options.contract]


async def run_judged(
    session: AdapterSession,
    scenarios: Sequence[Scenario],
    options: RunOptions,
    contracts: Sequence[Contract],
    *,
    on_case: Callable[[CaseResult], None] | None = None,
    invocation: str = "",
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> dict[Contract, RunResult]:
    """Run every scenario once and judge what each case showed under each of ``contracts``:
    one result per contract, all of the same observed behaviour (``options.contract`` is
    not consulted). ``on_case`` sees each case as the first contract judges it, as it ends.

    With ``jobs`` above 1, that many cases are in flight at once, the longest (by their
    scenarios' scripted waits) started first; the results list the cases in scenario order
    and leave out the same cases past ``MAX_RUN_BYTES`` as a run of one case at a time.

    A signal ``interruption`` catches stops the run: the cases in flight are cancelled (a
    subprocess adapter's process trees are killed as the session closes), and the results
    hold the cases that ended before it, marked interrupted.
    """
    started = _now()
    policy = effective_policy(session, options)
    # Every case's policy up front: a scenario whose retry_policy cannot apply stops the
    # run before any case, not half-way.
    policies = [effective_policy(session, options, s) for s in scenarios]
    sent: dict[int, RunCase] = {}  # each case's run request, by position
    judged: list[dict[Contract, CaseResult]] = [{} for _ in scenarios]
    order = dispatch_order(scenarios, policies, session, options, jobs)
    schedule = CaseSchedule(order, MAX_RUN_BYTES)
    # Each case's log bounded on its own: cases in flight together never push out each
    # other's records, however large their requests; a log is forgotten once read.
    registry = ScenarioRegistry(scenarios, bound_each_scenario=True)

    def judge_all(observed: Observed) -> dict[Contract, CaseResult]:
        return {c: observed.judged(c, strict=options.strict, spec=options.spec) for c in contracts}

    async with session_provider(session, registry, options.transport) as providers:

        async def run_case(position: int) -> int:
            scenario = scenarios[position]
            provider = await providers.current()
            case = case_request(scenario, provider.root_url, policies[position], options)
            sent[position] = case
            observed: Observed
            if schedule.skips(position):
                observed = not_run_case(session.hello, scenario, case)
            else:
                observed = await observe_case(session, provider, scenario, case)
            # Judging is CPU-bound: off the loop, so the waits of the cases still in flight
            # (R5 measures them at the provider, on this loop) are not held up by it.
            judged[position] = await asyncio.to_thread(judge_all, observed)
            if on_case is not None:
                on_case(judged[position][contracts[0]])
            return observed.run.kept_bytes

        stop = None if interruption is None else interruption.signalled()
        await run_scheduled(schedule, jobs, run_case, stop)
    for position in schedule.left_out:  # those that ran before that was known too
        not_run = not_run_case(session.hello, scenarios[position], sent[position])
        judged[position] = judge_all(not_run)
    finished = _now()
    stopped = None if interruption is None else interruption.signal
    interrupted = RunInterruption.by(stopped, len(scenarios))
    return {
        contract: RunResult(
            suite_version=suite_version(),
            adapter=session.hello.model_dump(mode="json", exclude_none=True),
            options={
                "adapter": invocation,
                "policy": policy.model_dump(mode="json"),
                "idle_timeout_s": options.idle_timeout_s,
                "timeout_s": options.timeout_s,
                "strict": options.strict,
                "transport": options.transport,
            },
            contract=contract,
            spec=options.spec,
            started_at=started,
            finished_at=finished,
            catalogue=[invariant.describe(options.spec) for invariant in CATALOGUE.values()],
            cases=[results[contract] for results in judged if results],
            interrupted=interrupted,
        )
        for contract in contracts
    }


def dispatch_order(
    scenarios: Sequence[Scenario],
    policies: Sequence[RetryPolicy],
    session: AdapterSession,
    options: RunOptions,
    jobs: int,
) -> list[int]:
    """The order the cases start in: scenario order for one at a time, else the longest
    first (no result depends on it)."""
    if jobs <= 1:
        return list(range(len(scenarios)))
    retries_on = session.hello.capabilities.retry
    return longest_first(
        [
            estimated_duration_s(scenario, policy if retries_on else None, options.idle_timeout_s)
            for scenario, policy in zip(scenarios, policies, strict=True)
        ]
    )


def case_request(
    scenario: Scenario, root: str, policy: RetryPolicy, options: RunOptions
) -> RunCase:
    """The ``run`` request of a case whose provider answers under ``root``: the request
    body of the scenario's dialect, and the base URL its SDKs take. A chat case's line
    carries no ``dialect``: a protocol-1.0 adapter reads the line it always did."""
    return RunCase(
        case=scenario.id,
        dialect=None if scenario.dialect == DEFAULT_DIALECT else scenario.dialect,
        base_url=sdk_base_url(root, scenario),
        api_key=options.api_key,
        request=default_request(scenario.dialect, called_tools(scenario)),
        retry=policy,
        idle_timeout_s=options.idle_timeout_s,
        timeout_s=options.timeout_s,
        follow_up=follow_up_turn(scenario),
    )


def follow_up_turn(scenario: Scenario) -> FollowUpTurn | None:
    """What the shim of a two-turn case hands its client for the next request."""
    if scenario.follow_up is None:
        return None
    spec = scenario.follow_up
    return FollowUpTurn(tool_results=list(spec.tool_results), message=spec.message)


def sdk_base_url(root: str, scenario: Scenario) -> str:
    """The base URL the SDKs of the scenario's dialect take for its case under ``root``:
    with ``/v1`` for chat-completions, without for Anthropic Messages."""
    return f"{root}/{scenario.id}{DIALECTS[scenario.dialect].base_suffix}"


def unspoken_reason(hello: Hello, scenario: Scenario) -> str | None:
    """Why an adapter is not given a case: its hello does not declare the case's dialect;
    None when it does."""
    spoken = hello.spoken_dialects
    if scenario.dialect in spoken:
        return None
    return f"adapter speaks {' and '.join(spoken)} only"


def case_fields(scenario: Scenario) -> dict[str, Any]:
    """What a case's result says of its scenario; ``dialect`` only when it is not chat, so
    a chat case's result reads as it did before dialects."""
    dialect = {} if scenario.dialect == DEFAULT_DIALECT else {"dialect": scenario.dialect}
    return {
        "case": scenario.id,
        "title": scenario.title,
        "tags": list(scenario.tags),
        "provenance": scenario.provenance.model_dump(mode="json"),
        "scenario": scenario.model_dump(mode="json"),
        **dialect,
    }


@dataclass(frozen=True)
class UnspokenCase:
    """A case of a dialect the adapter does not declare: never run, the oracle never
    consulted, every invariant ``n/a`` with the reason (never a failure)."""

    scenario: Scenario
    reason: str
    control: None = None  # no plain-framed twin: nothing ran

    @property
    def run(self) -> CaseRun:
        return CaseRun(detail=f"not run: {self.reason}")

    def verdicts(
        self, contract: Contract, *, strict: bool, spec: SpecVersion = LATEST_SPEC
    ) -> dict[str, InvariantVerdict]:
        return {
            id: InvariantVerdict(verdict="n/a", reason=self.reason)
            for id in documented_order(CATALOGUE)
        }

    def judged(
        self, contract: Contract, *, strict: bool, spec: SpecVersion = LATEST_SPEC
    ) -> CaseResult:
        return CaseResult(
            **case_fields(self.scenario),
            status="completed",
            detail=self.run.detail,
            duration_s=0.0,
            verdicts=self.verdicts(contract, strict=strict),
            events=[],
            expected={},
            requests=[],
        )


@dataclass(frozen=True)
class ObservedCase:
    """What one case showed, before any contract judged it."""

    scenario: Scenario
    run: CaseRun
    evidence: Evidence
    duration_s: float
    # What the same case with plain framing showed: run when framing is in question
    # (conformance.run.control); it decides whether S1-S3 own the case's differences.
    control: Evidence | None = None
    # The request log as the results keep it: the bodies within the case's bytes (the
    # checkers judge the log in full, as the provider kept it).
    requests: tuple[dict[str, Any], ...] = ()

    def verdicts(
        self, contract: Contract, *, strict: bool, spec: SpecVersion = LATEST_SPEC
    ) -> dict[str, InvariantVerdict]:
        """Every exercised invariant's verdict under ``contract`` and revision ``spec``,
        without the result's dumps of events, requests and scenario (a generated case reads
        only these)."""
        evidence = replace(self.evidence, contract=contract, spec=spec)
        return judge(evidence, strict=strict, control=self._twin(contract, spec))

    def _twin(self, contract: Contract, spec: SpecVersion) -> Evidence | None:
        twin = self.control
        return None if twin is None else replace(twin, contract=contract, spec=spec)

    def judged(
        self, contract: Contract, *, strict: bool, spec: SpecVersion = LATEST_SPEC
    ) -> CaseResult:
        """The case's result with every exercised invariant judged under ``contract``
        and revision ``spec``."""
        evidence = replace(self.evidence, contract=contract, spec=spec)
        return CaseResult(
            **case_fields(self.scenario),
            status=self.run.status,
            detail=self.run.detail,
            duration_s=round(self.duration_s, 4),
            verdicts=judge(evidence, strict=strict, control=self._twin(contract, spec)),
            events=[event.model_dump(mode="json", exclude_none=True) for event in self.run.events],
            expected=evidence.judged_expected.summary(),
            requests=list(self.requests),
            stderr=self.run.stderr,
            retry=_retry_summary(evidence),
            cut=dict(self.run.kept.cut),
        )


Observed = ObservedCase | UnspokenCase
"""What one case showed: run and beside the oracle's outcome, or not given to the adapter."""


async def observe_case(
    session: AdapterSession, provider: Provider, scenario: Scenario, case: RunCase
) -> Observed:
    """Run one case on ``provider``: the adapter's events beside the oracle's outcome, and
    what its plain-framed twin showed when the framing is in question. A case of a dialect
    the adapter does not speak is decided first, without the oracle or the adapter."""
    reason = unspoken_reason(session.hello, scenario)
    if reason is not None:
        return UnspokenCase(scenario, reason)
    observed = await _observe_once(session, provider, scenario, case)
    twin = _twin_needed(observed)
    if twin is None:
        return observed
    provider.registry.register(twin)
    try:
        twin_case = case.model_copy(
            update={"case": twin.id, "base_url": sdk_base_url(provider.root_url, twin)}
        )
        control = await _observe_once(session, provider, twin, twin_case)
    finally:
        provider.registry.remove(twin.id)
    return replace(observed, control=control.evidence)


def _twin_needed(observed: ObservedCase) -> Scenario | None:
    """The plain-framed twin of a case whose framing is in question under some contract."""
    evidence = observed.evidence
    if not any(framing_in_question(replace(evidence, contract=c)) for c in CONTRACTS):
        return None
    return plain_twin(observed.scenario, evidence.policy)


async def _observe_once(
    session: AdapterSession, provider: Provider, scenario: Scenario, case: RunCase
) -> ObservedCase:
    provider.registry.clear_requests(scenario.id)
    begun = time.monotonic()
    run = await session.run_case(case, provider.client)
    duration = time.monotonic() - begun
    requests = await provider.registry.settled(scenario.id)
    provider.registry.clear_requests(scenario.id)  # read: only cases in flight hold a log
    return observation(session.hello, scenario, case, run, tuple(requests), duration)


def not_run_case(hello: Hello, scenario: Scenario, case: RunCase) -> ObservedCase:
    """A case left out because the run's results reached ``MAX_RUN_BYTES``: a protocol
    error that never reached the adapter or the provider."""
    run = CaseRun(status="protocol-error", detail=not_run_detail())
    return observation(hello, scenario, case, run)


def not_run_detail() -> str:
    """Why a case past the run's budget did not run."""
    return f"not run: the run's results reached {byte_count(MAX_RUN_BYTES)} (MAX_RUN_BYTES)"


def observation(
    hello: Hello,
    scenario: Scenario,
    case: RunCase,
    run: CaseRun,
    requests: tuple[RequestRecord, ...] = (),
    duration_s: float = 0.0,
) -> ObservedCase:
    """What ``run`` of ``case`` showed beside the oracle's outcome for an adapter saying
    ``hello``, with the ``requests`` the provider saw."""
    retries_on = hello.capabilities.retry
    expected = expected_outcome(scenario, case.retry if retries_on else None)
    evidence = Evidence(
        scenario=scenario,
        expected=expected,
        events=tuple(run.events),
        capabilities=hello.capabilities,
        policy=case.retry if retries_on else None,
        idle_timeout_s=case.idle_timeout_s,
        requests=tuple(record for record in requests if not record.follow_up),
        follow_ups=tuple(record for record in requests if record.follow_up),
        status=run.status,
        detail=run.detail,
        invalid_field=run.invalid_field,
        timeout_s=case.timeout_s,
        declared=hello.retry_policy,
    )
    # What the results keep beside the events, charged to the case's account in this order:
    # the stderr that tells why a case crashed, then the request bodies.
    run = replace(run, stderr=run.kept.tail("stderr", run.stderr))
    kept_requests = tuple(run.kept.requests(requests))
    return ObservedCase(scenario, run, evidence, duration_s, requests=kept_requests)


def _retry_summary(evidence: Evidence) -> RetrySummary | None:
    """Attempts and waits as the provider saw them; None for a case without retries."""
    seen, expected = len(evidence.requests), len(evidence.judged_expected.attempts)
    if seen < 2 and expected < 2:
        return None
    policy = evidence.judged_policy
    return RetrySummary(
        policy=policy.model_dump(mode="json") if policy else {},
        attempts_seen=seen,
        attempts_expected=expected,
        waits=[_retry_wait(wait) for wait in waits(evidence)],
    )


def _retry_wait(wait: Wait) -> RetryWait:
    tolerated_min, tolerated_max = tolerated_range(wait) or (None, None)
    return RetryWait(
        retry=wait.retry,
        after_code=wait.failed.code,
        measured_ms=_rounded(wait.measured_ms),
        announced_ms=wait.announced_ms,
        expected_min_ms=wait.bounds.lower_ms if wait.bounds else None,
        expected_max_ms=wait.bounds.upper_ms if wait.bounds else None,
        basis=wait.bounds.source if wait.bounds else None,
        tolerated_min_ms=tolerated_min,
        tolerated_max_ms=tolerated_max,
    )


def _rounded(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 1)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
