"""The matrix's retry column: each library's own retry layer, judged for R (the sections of
``reports/compatibility.md`` and of the HTML matrix that show it).

Each library runs the ``retry-profile`` fixtures with its default retry settings, and its
shim declares the policy the library runs (the hello's ``retry_policy``). One run, judged
under both contracts: under ``interop`` against that declaration, under ``harness`` by the
harness's own rules. Pure functions over saved results, as tables of plain text that the
Markdown summary and the HTML matrix both render.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..events import DeclaredRetryPolicy
from ..results import RunResult
from ..verdicts import (
    ATTENTION,
    CONTRACTS,
    VERDICTS,
    Contract,
    Verdict,
    family_of,
    reading_order,
)
from .compatibility import RETRY_NOTE, Column, Section, Table, counts_cell, retry_table

RetryRuns = Mapping[Contract, RunResult]
"""A library's retry column: its one run, judged under each contract."""

POLICY_NOTE = (
    "The retry policy each shim declares its library runs by default (the hello's "
    "`retry_policy`, read from the pinned version's source)."
)
VERDICTS_NOTE = (
    "R over the `retry-profile` fixtures, the library's retries on: judged under `interop` "
    "against the declared policy, under `harness` by the harness's rules (the case's "
    "policy). What is about meaning (no request past the declared budget, the same body, "
    "nothing of a discarded attempt in the answer) is judged against the declaration in both. "
    "Each cell: pass / fail (non-strict, info and n/a in brackets when present)."
)
FAILURES_NOTE = (
    "Each R invariant that fails (or is non-strict) in the retry column, per library and "
    "contract: the fixtures, and why in the first of them."
)


def retry_sections(columns: Sequence[Column]) -> list[Section]:
    """The retry column's tables; none when no library was measured."""
    measured = [(column.name, column.retries) for column in columns if column.retries]
    if not measured:
        return []
    return [
        Section("Declared policies", POLICY_NOTE, policies_table(measured)),
        Section("R verdicts", VERDICTS_NOTE, verdicts_table(measured)),
        Section("R failures", FAILURES_NOTE, failures_table(measured), code=4),
        Section("Requests and waits at the provider", RETRY_NOTE, retry_table(columns), code=0),
    ]


def policy_text(declared: Mapping[str, Any] | None) -> str:
    """A declared policy (a hello's ``retry_policy``, as results keep it) in a few words."""
    if not declared:
        return "no retry layer declared"
    try:
        policy = DeclaredRetryPolicy.model_validate(declared)
    except ValidationError:
        return "unreadable declaration"
    if policy.max_retries == 0:
        return "no retries"
    retried = [
        f"statuses {', '.join(map(str, policy.statuses))}" if policy.statuses else "",
        f"codes {', '.join(policy.codes)}" if policy.codes else "",
    ]
    where = "in a streamed body too" if policy.mid_stream else "before the body only"
    count = policy.max_retries
    parts = [
        f"up to {count} {'retry' if count == 1 else 'retries'}",
        f"retried: {' and '.join(filter(None, retried)) or 'nothing'}, {where}",
        f"backoff {policy.backoff_min_s:g}-{policy.backoff_max_s:g} s",
        _retry_after_text(policy),
    ]
    if policy.should_retry_header:
        parts.append("obeys x-should-retry")
    return "; ".join(parts)


def _retry_after_text(policy: DeclaredRetryPolicy) -> str:
    if not policy.retry_after:
        return "ignores Retry-After"
    cap = policy.retry_after_max_s
    capped = "" if cap is None else f" up to {cap:g} s, {policy.over_cap} above"
    return f"waits {' then '.join(policy.retry_after)}{capped}"


def policies_table(columns: Sequence[tuple[str, RetryRuns]]) -> Table:
    """Each measured library and the policy its shim declared."""
    rows = tuple(
        (name, policy_text(runs["harness"].adapter.get("retry_policy")))
        for name, runs in columns
        if "harness" in runs
    )
    return ("library", "declared policy"), rows


def verdicts_table(columns: Sequence[tuple[str, RetryRuns]]) -> Table:
    """R invariants by library and contract, each cell the verdict counts."""
    judged = [
        (f"{name} {contract}", runs[contract].per_invariant())
        for name, runs in columns
        for contract in CONTRACTS
        if contract in runs
    ]
    exercised = {
        id
        for _, table in judged
        for id, counts in table.items()
        if family_of(id) == "R" and any(counts[v] for v in VERDICTS if v != "n/a")
    }
    rows = tuple(
        (id, *(counts_cell(_exercised(table.get(id))) for _, table in judged))
        for id in sorted(exercised, key=reading_order)
    )
    return ("invariant", *(label for label, _ in judged)), rows


def _exercised(counts: Mapping[Verdict, int] | None) -> Mapping[Verdict, int] | None:
    """The counts of a run that judged the invariant at all (else None: shown as ·)."""
    return counts if counts and any(counts.values()) else None


def failures_table(columns: Sequence[tuple[str, RetryRuns]]) -> Table:
    """Per library, contract and R invariant that needs attention: its fixtures, and why."""
    header = ("library", "contract", "invariant", "verdict", "fixtures", "why (the first)")
    rows = tuple(
        (name, contract, id, verdict, ", ".join(case for case, _ in cases), cases[0][1])
        for name, runs in columns
        for contract in CONTRACTS
        if contract in runs
        for (id, verdict), cases in _needing_attention(runs[contract]).items()
    )
    return header, rows


def _needing_attention(result: RunResult) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(invariant, verdict) → the (case, reason) of each R verdict that fails or is
    non-strict, invariants in reading order."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for case in result.cases:
        for id, judged in case.verdicts.items():
            if family_of(id) == "R" and judged.verdict in ATTENTION:
                found.setdefault((id, judged.verdict), []).append((case.case, judged.reason))
    return dict(sorted(found.items(), key=lambda item: reading_order(item[0][0])))
