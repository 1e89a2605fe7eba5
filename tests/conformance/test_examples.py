"""The example subprocess adapters (Node.js, stdlib Python, the independent Node.js one) pass
the whole bundled corpus."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from conformance.adapters.subprocess import SubprocessAdapterSession
from conformance.options import RunOptions, bundled_fixtures
from conformance.results import RunResult
from conformance.run.runner import run_suite
from fakeprovider.fixtures import load_fixtures

REPO = Path(__file__).resolve().parents[2]
INDEPENDENT = REPO / "examples/independent-node-adapter"
EXAMPLES = {
    "node": ["node", str(REPO / "examples/node-adapter/adapter.js")],
    "python": [sys.executable, str(REPO / "examples/python-adapter/adapter.py")],
    # Written from the docs alone, on eventsource-parser: needs `npm ci` in its folder
    # (scripts/test runs it).
    "independent-node": ["node", str(INDEPENDENT / "main.js")],
}


async def run_example(command: list[str]) -> RunResult:
    session = await SubprocessAdapterSession.start(" ".join(command))
    try:
        return await run_suite(session, load_fixtures([bundled_fixtures()]), RunOptions())
    finally:
        await session.close()


@pytest.mark.parametrize("language", sorted(EXAMPLES))
def test_example_adapter_passes_every_invariant(language: str) -> None:
    command = EXAMPLES[language]
    if shutil.which(command[0]) is None:
        pytest.fail(f"{command[0]} is not installed; the examples need it")
    if language == "independent-node" and not (INDEPENDENT / "node_modules").is_dir():
        pytest.fail(f"its dependencies are not installed: npm ci --prefix {INDEPENDENT}")
    result = asyncio.run(run_example(command))
    problems = [
        f"{case.case} {invariant}: {verdict.verdict} {verdict.reason}"
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ("fail", "non-strict")
    ]
    assert problems == []
    assert all(case.status == "completed" for case in result.cases)
    assert result.counts()["pass"] > 300
