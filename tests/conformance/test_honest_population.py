"""The honest-library population (honest/, issue 22): adapters that each make a deliberate,
lossless choice real libraries make get no fail under the interop contract, on the whole
corpus and on generated cases; and each does make its choice (it is not the reference).

The generated cases here are the ci profile's; the acceptance budget (dev profile, seeds 1
and 2) takes minutes per adapter: ``python -m tests.conformance.honest.fuzz``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import replace

import pytest
from honest import HONEST
from honest.choices import CHOICES
from judged_corpus import judged_fixtures

from conformance.adapters.base import load_python_adapter
from conformance.options import RunOptions
from conformance.results import CaseResult, RunResult
from conformance.run.case_runner import GENERATED_OPTIONS, CaseRunner
from conformance.run.properties import check_family, families
from conformance.run.runner import run_suite

pytestmark = pytest.mark.slow

FIXTURES = judged_fixtures()
OPTIONS = RunOptions(transport="in-process", timeout_s=5.0, contract="interop")
REFERENCE = "conformance.adapters.reference:factory"


@pytest.fixture(scope="module")
def corpus() -> dict[str, RunResult]:
    """Every honest adapter and the reference over the corpus, all at once, in process."""

    async def run_one(target: str) -> RunResult:
        session = load_python_adapter(target, OPTIONS)
        try:
            return await run_suite(session, FIXTURES, OPTIONS, jobs=8)
        finally:
            await session.close()

    async def run_all() -> list[RunResult]:
        targets = [REFERENCE, *(honest.target for honest in HONEST.values())]
        return await asyncio.gather(*(run_one(target) for target in targets))

    reference, *honest = asyncio.run(run_all())
    return {"reference": reference, **dict(zip(HONEST, honest, strict=True))}


def _verdicts(result: RunResult, verdict: str) -> list[str]:
    return [
        f"{case.case} {invariant}: {found.reason}"
        for case in result.cases
        for invariant, found in case.verdicts.items()
        if found.verdict == verdict
    ]


@pytest.mark.parametrize("name", list(HONEST))
def test_no_fail_on_the_corpus(corpus: dict[str, RunResult], name: str) -> None:
    assert _verdicts(corpus[name], "fail") == []
    assert {case.status for case in corpus[name].cases} == {"completed"}


@pytest.mark.parametrize("name", list(HONEST))
def test_no_non_strict_on_the_corpus(corpus: dict[str, RunResult], name: str) -> None:
    assert _verdicts(corpus[name], "non-strict") == []


# Where each choice shows: a corpus case on which it changes what the caller is handed.
SHOWS_ON = {
    "empty_arguments_as_object": "no-arg-call-empty-arguments",
    "raises_with_code": "http-429-forever",
    "no_finish_reason": "tool-calls-finish-without-calls",
    "reset_after_finish_as_close": "retry-discarded-text-and-tool-call",
    "assembled_only": "utf8-byte-split",
    "empty_stop_accepted": "empty-stop-with-usage",
    "synthetic_call_id": "tool-never-identified",
    "finish_without_done_complete": "no-done-clean-close",
}


def _case(result: RunResult, case_id: str) -> CaseResult:
    return next(case for case in result.cases if case.case == case_id)


def _changed(corpus: dict[str, RunResult], name: str, case_id: str) -> bool:
    """Whether ``name`` hands over other events than the reference on ``case_id``."""
    return _case(corpus[name], case_id).events != _case(corpus["reference"], case_id).events


@pytest.mark.parametrize("name", list(SHOWS_ON))
def test_each_adapter_makes_its_choice(corpus: dict[str, RunResult], name: str) -> None:
    """Not the reference under another name: its choice shows where it should, and the
    composite makes every choice."""
    assert {choice.name for choice in CHOICES} == set(SHOWS_ON)
    assert _changed(corpus, name, SHOWS_ON[name])
    assert _changed(corpus, "composite", SHOWS_ON[name])


def test_each_adapter_is_judged_with_its_capabilities(corpus: dict[str, RunResult]) -> None:
    capabilities = {name: result.adapter["capabilities"] for name, result in corpus.items()}
    assert capabilities["assembled_only"]["deltas"] is False
    assert capabilities["composite"]["deltas"] is False
    assert capabilities["raises_with_code"] == capabilities["reference"]


# --- generated cases ----------------------------------------------------------------

# The composite makes every choice: it runs every family here; each single choice's
# generated cases are the dev run's (honest/fuzz.py), which takes too long for the suite.


@pytest.fixture(scope="module")
def runner_of() -> Iterator[Callable[[str], CaseRunner]]:
    """One runner per honest adapter, opened as its first family asks for it."""
    with ExitStack() as stack:
        opened: dict[str, CaseRunner] = {}

        def runner(name: str) -> CaseRunner:
            if name not in opened:
                options = replace(GENERATED_OPTIONS, contract="interop")
                opened[name] = stack.enter_context(CaseRunner(HONEST[name].target, options=options))
            return opened[name]

        yield runner


@pytest.mark.parametrize("family", families())
def test_no_fail_on_generated_cases(runner_of: Callable[[str], CaseRunner], family: str) -> None:
    run = check_family(runner_of("composite"), family)
    assert run.failure is None, str(run.failure)
