"""Running one shim over named fixtures, for the per-library tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from conformance.adapters.thirdparty import SHIMS
from conformance.adapters.thirdparty.common import NATIVE_RETRY
from conformance.events import Hello
from conformance.options import RunOptions, bundled_fixtures
from conformance.report.compatibility import outcome
from conformance.results import CaseResult
from conformance.run.runner import run_suite
from fakeprovider.fixtures import load_fixtures

CORPUS = {s.id: s for s in load_fixtures([bundled_fixtures()])}


def run_cases(
    column: str, *case_ids: str, options: RunOptions | None = None
) -> dict[str, CaseResult]:
    """The shim's results for these fixtures, by case id."""
    shim = SHIMS[column]

    async def run() -> dict[str, CaseResult]:
        session = await shim.open(options or RunOptions())
        try:
            result = await run_suite(
                session, [CORPUS[i] for i in case_ids], options or RunOptions()
            )
        finally:
            await session.close()
        return {case.case: case for case in result.cases}

    return asyncio.run(run())


def seen(case: CaseResult) -> str:
    return outcome(case)


def announced_hello(column: str, options: RunOptions | None = None) -> Hello:
    """The handshake the column's shim sends for a run with these options."""

    async def announced() -> Hello:
        session = await SHIMS[column].open(options or RunOptions())
        try:
            return session.hello
        finally:
            await session.close()

    return asyncio.run(announced())


def handshake_version(column: str) -> tuple[str, str]:
    """(version the shim announces, version installed) of the column's main library."""
    installed = next(iter(SHIMS[column].versions().values()), "not installed")
    return announced_hello(column).version, installed


def check_column(column: str, expected: dict[str, str]) -> None:
    """The shim announces the installed version, and each fixture gives the outcome the
    library is known for (real-adapters.md §2) at the pinned version."""
    announced, installed = handshake_version(column)
    assert announced == installed
    results = run_cases(column, *expected)
    observed = {case_id: seen(results[case_id]) for case_id in expected}
    assert observed == expected


def usages(case: CaseResult) -> list[dict[str, object]]:
    """The usage events the shim reported in the case (its content cases run one attempt)."""
    return [
        {k: v for k, v in event.items() if k != "type"}
        for event in case.events
        if event.get("type") == "usage"
    ]


# One case per part of a declared policy: the budget, a header-directed wait, an obeyed
# x-should-retry, a connection error before the response, a reset in the body.
DECLARATION_CASES = (
    "http-429-forever",
    "http-429-retry-after-ms-then-ok",
    "http-500-should-retry-false",
    "retry-reset-before-headers-then-text",
    "reset-mid-stream-then-ok",
)


def check_declared_retries(column: str, cases: Sequence[str] = DECLARATION_CASES) -> None:
    """With the library's own retries on, the shim declares the policy it runs, and the
    library keeps it: no R verdict needs attention under the interop contract."""
    options = RunOptions(contract="interop", timeout_s=40.0, extra={NATIVE_RETRY: True})
    assert announced_hello(column, options).retry_policy is not None
    results = run_cases(column, *cases, options=options)
    problems = [
        f"{case.case} {id}: {verdict.verdict} ({verdict.reason})"
        for case in results.values()
        for id, verdict in case.verdicts.items()
        if id.startswith(("R", "H5")) and verdict.verdict in ("fail", "non-strict")
    ]
    assert not problems
