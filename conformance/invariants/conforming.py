"""What a conforming adapter would report for a case, and the invariants that judges.

The pytest plugin predicts a case's items from it at collection, before any adapter runs.
"""

from __future__ import annotations

from fakeprovider.scenario import Scenario

from ..events import (
    Block,
    BlockEnd,
    BlockStart,
    CallBlock,
    Capabilities,
    End,
    Event,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    Retry,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ..options import RunOptions, case_policy
from ..oracle import ExpectedAttempt, ExpectedOutcome, expected_outcome
from .evidence import Evidence
from .registry import CATALOGUE, Invariant

# --- which invariants a case exercises ---------------------------------------------------


def predicted_invariants(scenario: Scenario, options: RunOptions) -> list[str]:
    """The invariants a conforming adapter with every capability is judged on for a case.

    A checker that cannot read the conforming evidence counts as exercised (the run decides).
    """
    try:
        evidence = conforming_evidence(scenario, options)
    except Exception:  # the oracle cannot state an outcome: let the run decide
        return list(CATALOGUE)
    return [invariant.id for invariant in CATALOGUE.values() if _exercised(invariant, evidence)]


def _exercised(invariant: Invariant, evidence: Evidence) -> bool:
    if not invariant.covers(evidence.scenario.dialect):
        return False
    try:
        return invariant.check(evidence) is not None
    except Exception:
        return True


def conforming_evidence(scenario: Scenario, options: RunOptions) -> Evidence:
    """The oracle's expected outcome, as the events a conforming adapter reports."""
    policy = case_policy(options.policy, scenario)
    expected = expected_outcome(scenario, policy)
    every = Capabilities(deltas=True, reasoning=True, usage=True, retry=True, error_codes=True)
    return Evidence(
        scenario=scenario,
        expected=expected,
        events=conforming_events(expected),
        capabilities=every,
        policy=policy,
        idle_timeout_s=options.idle_timeout_s,
    )


def conforming_events(outcome: ExpectedOutcome) -> tuple[Event, ...]:
    """The events an adapter reports that reads every attempt as ``outcome`` states."""
    events: list[Event] = []
    for attempt in outcome.attempts:
        events += _conforming_attempt(attempt, last=attempt is outcome.final)
    return (*events, End())


def _conforming_attempt(attempt: ExpectedAttempt, *, last: bool) -> list[Event]:
    events: list[Event] = []
    for index, block in enumerate(attempt.blocks):
        events += [BlockStart(index=index, block_type=block.type), _delta(index, block)]
        if attempt.success:  # a failed attempt leaves its blocks open
            events.append(BlockEnd(index=index, block=block))
    if attempt.usage is not None:  # optional counts left out, as G8 asks
        events.append(Usage.model_validate(attempt.usage.model_dump(exclude_none=True)))
    # A success has no code: absent, not null (G8).
    code = {"code": attempt.code} if attempt.code is not None else {}
    events.append(Finish.model_validate({"reason": attempt.reason, **code}))
    if not last:
        events.append(Retry(attempt=attempt.number, code=attempt.code or "", delay_ms=0))
    return events


def _delta(index: int, block: Block) -> Event:
    if isinstance(block, CallBlock):
        # An identity the wire never sent is absent, not null (G8).
        identity = {key: value for key, value in (("id", block.id), ("name", block.name)) if value}
        return ToolCallDelta.model_validate(
            {"index": index, "arguments_delta": block.arguments, **identity}
        )
    if isinstance(block, ReasoningBlock):
        return ReasoningDelta(index=index, text=block.text)
    return TextDelta(index=index, text=block.text)
