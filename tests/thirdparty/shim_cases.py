"""Running one shim over named fixtures, for the per-library tests."""

from __future__ import annotations

import asyncio

from conformance.adapters.thirdparty import SHIMS
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


def handshake_version(column: str) -> tuple[str, str]:
    """(version the shim announces, version installed) of the column's main library."""
    shim = SHIMS[column]

    async def announced() -> str:
        session = await shim.open(RunOptions())
        try:
            return session.hello.version
        finally:
            await session.close()

    return asyncio.run(announced()), next(iter(shim.versions().values()), "not installed")


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
