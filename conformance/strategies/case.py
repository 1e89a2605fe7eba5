"""A generated case from its parts, on any wire: the attempts that fail before the last,
the last one, and the ``expect`` that M and the retry policy give them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.scenario import Scenario

from ..events import RetryPolicy
from ..options import DEFAULT_POLICY
from ._drawing import Step
from .breaking import CHAT_FAILURES, FailureWire, failed_attempts, policy_overrides
from .intent import (
    CHAT_FINISHES,
    FinishMeanings,
    IntendedResponse,
    case_expect,
    failure_expect,
    response_expect,
)
from .shape import CaseShape


@dataclass(frozen=True)
class CaseWire:
    """What a wire brings to its generated cases: its dialect, how a case is titled and
    tagged, how its failures and finishes are written."""

    dialect: DialectId
    title: str
    tags: tuple[str, ...]
    failures: FailureWire
    finishes: FinishMeanings


CHAT_CASES = CaseWire(DEFAULT_DIALECT, "Generated case", (), CHAT_FAILURES, CHAT_FINISHES)


@st.composite
def generated_case(
    draw: st.DrawFn,
    family: str,
    shape: CaseShape,
    wire: CaseWire,
    *,
    response: IntendedResponse,
    call_order: Sequence[int],
    unidentified: bool,
    unended: Sequence[Step],
    last: dict[str, Any],
    code: str | None,
) -> Scenario:
    """The case whose last attempt is ``last`` (M's stream, broken with ``code`` if not
    None), after the attempts ``shape`` puts before it, each breaking ``unended`` (M's
    stream without its end)."""
    least, most = shape.failures_before
    before = draw(
        st.lists(
            failed_attempts(unended, slow=shape.slow, wire=wire.failures),
            min_size=least,
            max_size=most,
        )
    )
    if code is None:
        final = response_expect(
            response, call_order, unidentified=unidentified, finishes=wire.finishes
        )
    else:
        final = failure_expect(code)
    override = draw(policy_overrides()) if shape.retry_policy else None
    policy = RetryPolicy.model_validate(DEFAULT_POLICY.model_dump() | (override or {}))
    fields: dict[str, Any] = {} if wire.dialect == DEFAULT_DIALECT else {"dialect": wire.dialect}
    return Scenario.model_validate(
        {
            "id": "generated",
            **fields,
            "title": f"{wire.title} ({family} family)",
            "tags": ["generated", *wire.tags, family],
            "provenance": {"emitted_by": "streamconform generator (conformance.strategies)"},
            "expect": case_expect([failed for _, failed in before], final, policy),
            "retry_policy": override,
            "attempts": [*(attempt for attempt, _ in before), last],
        }
    )
