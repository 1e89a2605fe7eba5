"""A v1 adapter without ``retry_policy`` in its hello is judged exactly as before the field
existed: the same verdict for every invariant of every bundled case, under both contracts.
The adapters say protocol 1 and declare no dialect, so the same file holds protocol 1.1 to
its promise: a 1.0 adapter's chat verdicts are unchanged, and every case of another dialect
(``fixtures/anthropic``) is ``n/a`` on every invariant, with the reason, never a failure.

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

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.invariants import CATALOGUE
from conformance.options import RunOptions, bundled_fixtures
from conformance.results import RunResult
from conformance.run.runner import run_judged
from conformance.verdicts import CONTRACTS
from fakeprovider.fixtures import load_fixtures

GOLDEN = Path(__file__).parent / "golden" / "verdicts-without-retry-policy.json"
Verdicts = dict[str, dict[str, dict[str, str]]]  # adapter → contract → case → "R1:pass …"


UNSPOKEN = "adapter speaks chat-completions only"
# The reference as an adapter of protocol 1.0 (whatever dialects it declares today).
PROTOCOL_1 = {"protocol": 1, "dialects": None}


class Protocol1Reference(ReferenceAdapter):
    hello = ReferenceAdapter.hello.model_copy(update=PROTOCOL_1)


class WithoutRetryLayer(ReferenceAdapter):
    """The reference declaring no retry capability: run with retries off."""

    hello = ReferenceAdapter.hello.model_copy(
        update={
            "name": "retries-off",
            "capabilities": ReferenceAdapter.hello.capabilities.model_copy(update={"retry": False}),
            **PROTOCOL_1,
        }
    )


def current_verdicts() -> Verdicts:
    fixtures = load_fixtures([bundled_fixtures()])  # the Anthropic cases too: all n/a
    options = RunOptions(transport="in-process")
    adapters = {"reference": Protocol1Reference(), "retries-off": WithoutRetryLayer()}

    def run(adapter: ReferenceAdapter) -> dict[str, RunResult]:
        # R5 measures waits on the one event loop the in-process cases share: a few cases at
        # a time, one adapter after the other, so that judging never holds a wait past its slack.
        session = PythonAdapterSession(adapter)
        return asyncio.run(run_judged(session, fixtures, options, CONTRACTS, jobs=4))

    return {
        name: {contract: _verdicts(result) for contract, result in run(adapter).items()}
        for name, adapter in adapters.items()
    }


def _verdicts(result: RunResult) -> dict[str, str]:
    """Each chat case's verdicts; a case of another dialect, checked all n/a with the reason."""
    for case in result.cases:
        if case.dialect is not None:
            assert {(v.verdict, v.reason) for v in case.verdicts.values()} == {("n/a", UNSPOKEN)}
            assert set(case.verdicts) == set(CATALOGUE), case.case
    return {
        case.case: " ".join(f"{id}:{found.verdict}" for id, found in sorted(case.verdicts.items()))
        for case in result.cases
        if case.dialect is None
    }


@pytest.mark.timeout(180)
def test_the_verdicts_of_an_adapter_without_retry_policy_are_unchanged() -> None:
    golden: Verdicts = json.loads(GOLDEN.read_text(encoding="utf-8"))
    current = current_verdicts()
    for adapter, contracts in golden.items():
        hello = Protocol1Reference.hello if adapter == "reference" else WithoutRetryLayer.hello
        assert hello.retry_policy is None and hello.protocol == 1 and hello.dialects is None
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
