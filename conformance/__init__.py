"""Conformance suite for LLM streaming adapters: oracle, invariant catalogue, runner.

The plug-in contract (ADAPTER-PROTOCOL v1) is modelled in :mod:`conformance.events`;
adapters are loaded by :mod:`conformance.adapters`; reports live in
:mod:`conformance.report`.
"""

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
from .evidence import Evidence
from .invariants import CATALOGUE, Invariant, Verdict
from .options import DEFAULT_POLICY, RunOptions, default_request
from .oracle import ExpectedAttempt, ExpectedOutcome, expected_outcome
from .results import CaseResult, InvariantVerdict, RunResult
from .runner import judge, run_suite

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
