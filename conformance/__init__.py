"""Conformance suite for LLM streaming adapters: oracle, invariant catalogue, runner.

The plug-in contract (the adapter protocol v1, docs/adapter-protocol.md) is modelled in
:mod:`conformance.events`; adapters are loaded by :mod:`conformance.adapters`; reports live
in :mod:`conformance.report`. Names are imported on first use: the pytest plugin lives in
this package and must cost nothing in sessions that do not use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `X as X`: a type checker cannot read the computed __all__ below
    from .adapters.base import (
        AdapterLoadError as AdapterLoadError,
        AdapterSession as AdapterSession,
        CaseRun as CaseRun,
        load_python_adapter as load_python_adapter,
    )
    from .adapters.subprocess import SubprocessAdapterSession as SubprocessAdapterSession
    from .codes import ConformanceError as ConformanceError
    from .events import (
        Block as Block,
        BlockEnd as BlockEnd,
        BlockStart as BlockStart,
        Capabilities as Capabilities,
        End as End,
        Event as Event,
        Finish as Finish,
        Hello as Hello,
        ReasoningBlock as ReasoningBlock,
        ReasoningDelta as ReasoningDelta,
        Retry as Retry,
        RetryPolicy as RetryPolicy,
        RunCase as RunCase,
        TextBlock as TextBlock,
        TextDelta as TextDelta,
        Thrown as Thrown,
        ToolCallBlock as ToolCallBlock,
        ToolCallDelta as ToolCallDelta,
        Usage as Usage,
    )
    from .invariants import CATALOGUE as CATALOGUE, Invariant as Invariant
    from .invariants.evidence import Evidence as Evidence
    from .options import (
        DEFAULT_POLICY as DEFAULT_POLICY,
        RunOptions as RunOptions,
        default_request as default_request,
    )
    from .oracle import (
        ExpectedAttempt as ExpectedAttempt,
        ExpectedOutcome as ExpectedOutcome,
        expected_outcome as expected_outcome,
    )
    from .results import (
        CaseResult as CaseResult,
        InvariantVerdict as InvariantVerdict,
        RunResult as RunResult,
    )
    from .run.runner import judge as judge, run_suite as run_suite
    from .verdicts import Verdict as Verdict

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
    "ConformanceError": ".codes",
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
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
