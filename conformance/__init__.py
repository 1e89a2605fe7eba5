"""Conformance suite for LLM streaming adapters: oracle, invariant catalogue, runner.

The plug-in contract (ADAPTER-PROTOCOL v1) is modelled in :mod:`conformance.events`;
adapters are loaded by :mod:`conformance.adapters`; reports live in
:mod:`conformance.report`. Names are imported on first use: the pytest plugin lives in
this package and must cost nothing in sessions that do not use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapters.base import AdapterLoadError, AdapterSession, CaseRun, load_python_adapter
    from .adapters.subprocess import SubprocessAdapterSession
    from .events import (
        Block,
        BlockEnd,
        BlockStart,
        Capabilities,
        End,
        Event,
        Finish,
        Hello,
        ReasoningBlock,
        ReasoningDelta,
        Retry,
        RetryPolicy,
        RunCase,
        TextBlock,
        TextDelta,
        Thrown,
        ToolCallBlock,
        ToolCallDelta,
        Usage,
    )
    from .invariants import CATALOGUE, Invariant
    from .invariants.evidence import Evidence
    from .options import DEFAULT_POLICY, RunOptions, default_request
    from .oracle import ExpectedAttempt, ExpectedOutcome, expected_outcome
    from .results import CaseResult, InvariantVerdict, RunResult
    from .run.runner import judge, run_suite
    from .verdicts import Verdict

_EXPORTS = {
    "AdapterLoadError": ".adapters.base",
    "AdapterSession": ".adapters.base",
    "Block": ".events",
    "BlockEnd": ".events",
    "BlockStart": ".events",
    "CATALOGUE": ".invariants",
    "Capabilities": ".events",
    "CaseResult": ".results",
    "CaseRun": ".adapters.base",
    "DEFAULT_POLICY": ".options",
    "End": ".events",
    "Event": ".events",
    "Evidence": ".invariants.evidence",
    "ExpectedAttempt": ".oracle",
    "ExpectedOutcome": ".oracle",
    "Finish": ".events",
    "Hello": ".events",
    "Invariant": ".invariants",
    "InvariantVerdict": ".results",
    "ReasoningBlock": ".events",
    "ReasoningDelta": ".events",
    "Retry": ".events",
    "RetryPolicy": ".events",
    "RunCase": ".events",
    "RunOptions": ".options",
    "RunResult": ".results",
    "SubprocessAdapterSession": ".adapters.subprocess",
    "TextBlock": ".events",
    "TextDelta": ".events",
    "Thrown": ".events",
    "ToolCallBlock": ".events",
    "ToolCallDelta": ".events",
    "Usage": ".events",
    "Verdict": ".verdicts",
    "default_request": ".options",
    "expected_outcome": ".oracle",
    "judge": ".run.runner",
    "load_python_adapter": ".adapters.base",
    "run_suite": ".run.runner",
}
__all__ = [
    "CATALOGUE",
    "DEFAULT_POLICY",
    "AdapterLoadError",
    "AdapterSession",
    "Block",
    "BlockEnd",
    "BlockStart",
    "Capabilities",
    "CaseResult",
    "CaseRun",
    "End",
    "Event",
    "Evidence",
    "ExpectedAttempt",
    "ExpectedOutcome",
    "Finish",
    "Hello",
    "Invariant",
    "InvariantVerdict",
    "ReasoningBlock",
    "ReasoningDelta",
    "Retry",
    "RetryPolicy",
    "RunCase",
    "RunOptions",
    "RunResult",
    "SubprocessAdapterSession",
    "TextBlock",
    "TextDelta",
    "Thrown",
    "ToolCallBlock",
    "ToolCallDelta",
    "Usage",
    "Verdict",
    "default_request",
    "expected_outcome",
    "judge",
    "load_python_adapter",
    "run_suite",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
