"""The control twin of a framed case: the same scenario with plain framing.

A case whose wire has framing features (CR or CRLF line ends, write splits, comments,
fields, a BOM, ``data:`` without a space, multi-line data: what S1-S3 judge) and fails
under S1-S3 and under another invariant is run once more with those features removed. If
the twin passes, the framing made the difference and S1-S3 own it; if the twin fails the
same way, the framing did not, and the other invariant does (INVARIANTS.md v1.2, "Who owns
a difference"). A passing adapter never pays for a twin.
"""

from __future__ import annotations

from fakeprovider.scenario import (
    CommentStep,
    ErrorAttempt,
    FaultAttempt,
    FieldStep,
    Scenario,
    StreamAttempt,
    WriteSplit,
)

from ..invariants.framing import FRAMING_FEATURES
from ..oracle import AnyRetryPolicy, ExpectedAttempt, expected_outcome

# What plain framing is: LF line ends, one write per event, no BOM, "data: " with its
# space, one data line per payload (the transfer coding and the JSON layout stay).
_PLAIN = {
    "line_ending": "lf",
    "split": WriteSplit(),
    "bom": False,
    "data_space": True,
    "multiline_data": False,
}
# Lines a reader skips: comments and non-data fields.
_SKIPPED = (CommentStep, FieldStep)


def plain_twin(scenario: Scenario, policy: AnyRetryPolicy | None) -> Scenario | None:
    """The scenario with plain framing, or None when it means something else than the
    scenario under ``policy`` (a removed comment line that ended an event, say) or is the
    scenario itself."""
    attempts = tuple(_plain_attempt(attempt) for attempt in scenario.attempts)
    if attempts == scenario.attempts:
        return None
    twin = scenario.model_copy(update={"id": f"{scenario.id[:120]}.plain", "attempts": attempts})
    wanted = expected_outcome(scenario, policy).attempts
    seen = expected_outcome(twin, policy).attempts
    if len(seen) != len(wanted) or not all(map(_same_meaning, seen, wanted)):
        return None
    return twin


def _plain_attempt(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt,
) -> StreamAttempt | ErrorAttempt | FaultAttempt:
    if not isinstance(attempt, StreamAttempt):
        return attempt
    stream = attempt.stream
    steps = tuple(step for step in stream.steps if not isinstance(step, _SKIPPED))
    framing = stream.framing.model_copy(update=_PLAIN)
    plain = stream.model_copy(update={"framing": framing, "steps": steps})
    return attempt.model_copy(update={"stream": plain})


def _same_meaning(twin: ExpectedAttempt, case: ExpectedAttempt) -> bool:
    """The same expected attempt, the framing features aside."""
    return (
        twin.reason == case.reason
        and twin.code == case.code
        and twin.blocks == case.blocks
        and twin.usage == case.usage
        and twin.billed_usage == case.billed_usage
        and twin.features == case.features - FRAMING_FEATURES
    )
