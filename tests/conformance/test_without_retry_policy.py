"""A v1 adapter without ``retry_policy`` in its hello is judged exactly as before the field
existed: the same verdict for every invariant of every bundled case, under both contracts.

``golden/verdicts-without-retry-policy.json`` holds the verdicts the suite gave before
``retry_policy`` (commit 3c0810d): the reference adapter, which follows each case's policy,
and the same adapter without a retry layer, as a shim's content column runs. A new case is
not compared; a verdict that changed is. A deliberate change of a checker rewrites the file
with ``python tests/conformance/test_without_retry_policy.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from judged_corpus import judged_fixtures

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.options import RunOptions
from conformance.results import RunResult
from conformance.run.runner import run_judged
from conformance.verdicts import CONTRACTS

GOLDEN = Path(__file__).parent / "golden" / "verdicts-without-retry-policy.json"
Verdicts = dict[str, dict[str, dict[str, str]]]  # adapter → contract → case → "R1:pass …"


class WithoutRetryLayer(ReferenceAdapter):
    """The reference declaring no retry capability: run with retries off."""

    hello = ReferenceAdapter.hello.model_copy(
        update={
            "name": "retries-off",
            "capabilities": ReferenceAdapter.hello.capabilities.model_copy(update={"retry": False}),
        }
    )


def current_verdicts() -> Verdicts:
    fixtures = judged_fixtures()
    options = RunOptions(transport="in-process")
    adapters = {"reference": ReferenceAdapter(), "retries-off": WithoutRetryLayer()}

    async def run() -> list[dict[str, RunResult]]:
        runs = (
            run_judged(PythonAdapterSession(adapter), fixtures, options, CONTRACTS, jobs=8)
            for adapter in adapters.values()
        )
        return list(await asyncio.gather(*runs))

    return {
        name: {contract: _verdicts(result) for contract, result in judged.items()}
        for name, judged in zip(adapters, asyncio.run(run()), strict=True)
    }


def _verdicts(result: RunResult) -> dict[str, str]:
    return {
        case.case: " ".join(f"{id}:{found.verdict}" for id, found in sorted(case.verdicts.items()))
        for case in result.cases
    }


@pytest.mark.timeout(180)
def test_the_verdicts_of_an_adapter_without_retry_policy_are_unchanged() -> None:
    golden: Verdicts = json.loads(GOLDEN.read_text(encoding="utf-8"))
    current = current_verdicts()
    for adapter, contracts in golden.items():
        hello = ReferenceAdapter.hello if adapter == "reference" else WithoutRetryLayer.hello
        assert hello.retry_policy is None
        for contract, cases in contracts.items():
            now = current[adapter][contract]
            assert cases.keys() <= now.keys(), f"{adapter}: cases gone from the corpus"
            changed = {
                case: (verdicts, now[case])
                for case, verdicts in cases.items()
                if now[case] != verdicts
            }
            assert not changed, f"{adapter}, {contract}: verdicts changed (before, now): {changed}"


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(current_verdicts(), indent=1, sort_keys=True) + "\n")
