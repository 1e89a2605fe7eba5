"""Options of a conformance run, handed to adapter factories too."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.scenario import Scenario

from .codes import DEFAULT_RETRYABLE_CODES, ConformanceError
from .events import RetryPolicy
from .spec import LATEST_SPEC
from .verdicts import Contract, SpecVersion

Transport = Literal["loopback", "in-process"]
"""How a case reaches the fake provider: a loopback server, or in process through the
``http_client`` a Python adapter takes."""

# Small delays keep runs fast; a max_delay of 2 s still lets a `Retry-After: 1` be honoured.
DEFAULT_POLICY = RetryPolicy(
    max_retries=2,
    retryable_codes=list(DEFAULT_RETRYABLE_CODES),
    initial_delay_ms=1,
    max_delay_ms=2000,
    jitter_ratio=0,
)

# The tools every case offers, as data: (name, description, its one string parameter). Each
# dialect writes them in its own shape.
CASE_TOOLS: tuple[tuple[str, str, str | None], ...] = (
    ("get_weather", "Current weather for a city", "city"),
    ("get_time", "Current time in a time zone", "tz"),
)
QUESTION = "What is the weather in Paris?"
CALLED_TOOL = "A tool the case's stream calls"


def _schema(parameter: str | None) -> dict[str, Any]:
    if parameter is None:  # a tool only a fixture's stream names: any object
        return {"type": "object"}
    return {
        "type": "object",
        "properties": {parameter: {"type": "string"}},
        "required": [parameter],
    }


def _tool(dialect: DialectId, name: str, description: str, parameter: str | None) -> Any:
    """One offered tool, written the way ``dialect``'s requests write tools."""
    if dialect == "anthropic-messages":
        return {"name": name, "description": description, "input_schema": _schema(parameter)}
    if dialect == "openai-responses":
        return {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": _schema(parameter),
        }
    function = {"name": name, "description": description, "parameters": _schema(parameter)}
    return {"type": "function", "function": function}


DEFAULT_TOOLS: list[dict[str, Any]] = [_tool(DEFAULT_DIALECT, *tool) for tool in CASE_TOOLS]
# What each dialect's client POSTs for a case (the run line's `request`): the same question
# and tools, written the dialect's way.
CASE_REQUESTS: dict[DialectId, dict[str, Any]] = {
    "chat-completions": {
        "model": "fake-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": QUESTION}],
    },
    "anthropic-messages": {
        "model": "fake-model",
        "max_tokens": 1024,
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    },
    "openai-responses": {
        "model": "fake-model",
        "stream": True,
        "input": [{"role": "user", "content": QUESTION}],
    },
}


def default_request(
    dialect: DialectId = DEFAULT_DIALECT, called: Sequence[str] = ()
) -> dict[str, Any]:
    """The request a case of ``dialect`` POSTs (a fresh copy each time): the case tools and
    the other tools its stream ``called`` (a provider calls only what it was offered, and
    agent libraries refuse a call to a tool they were not given)."""
    names = dict.fromkeys(name for name in called if name)
    for name, _, _ in CASE_TOOLS:
        names.pop(name, None)
    tools = [_tool(dialect, *tool) for tool in CASE_TOOLS]
    tools += [_tool(dialect, name, CALLED_TOOL, None) for name in names]
    return copy.deepcopy(CASE_REQUESTS[dialect]) | {"tools": tools}


class RetryPolicyError(ConformanceError, ValueError):
    """A scenario's ``retry_policy`` does not merge into the run's policy."""


def case_policy(policy: RetryPolicy, scenario: Scenario) -> RetryPolicy:
    """The policy a case runs under: ``policy`` with the scenario's ``retry_policy`` fields.

    Raises RetryPolicyError naming the scenario when the merge is not a valid policy (e.g.
    its ``initial_delay_ms`` above the run's ``max_delay_ms``).
    """
    if scenario.retry_policy is None:
        return policy
    overrides = scenario.retry_policy.model_dump(exclude_none=True)
    try:
        return RetryPolicy.model_validate(policy.model_dump() | overrides, strict=False)
    except ValidationError as error:
        reasons = "; ".join(problem["msg"] for problem in error.errors(include_url=False))
        raise RetryPolicyError(f"scenario {scenario.id}: retry_policy: {reasons}") from None


def bundled_fixtures() -> Path:
    """The fixture corpus: ``fixtures/`` of a checkout, which an editable install reads in
    place and a wheel carries as ``conformance/fixtures``.

    Raises ConformanceError when the package is imported from an archive (a zipapp), where
    the corpus is no folder to read, or when neither folder is there; pass --fixtures then.
    """
    package = resources.files("conformance")
    if not isinstance(package, Path):
        raise ConformanceError(f"the bundled corpus is not a folder ({package}); pass --fixtures")
    # The wheel's copy first: an installed package's parent is site-packages, whose
    # fixtures/ would be anyone's.
    candidates = (package / "fixtures", package.parent / "fixtures")
    for corpus in candidates:
        if corpus.is_dir():
            return corpus
    raise ConformanceError(
        f"no bundled corpus at {' or '.join(map(str, candidates))}; pass --fixtures"
    )


@dataclass(frozen=True)
class RunOptions:
    policy: RetryPolicy = DEFAULT_POLICY
    idle_timeout_s: float = 1.0
    timeout_s: float = 15.0
    strict: bool = False
    contract: Contract = "harness"
    spec: SpecVersion = LATEST_SPEC  # the spec revision judging: later rules only observed
    transport: Transport = "loopback"
    api_key: str = "sk-test"
    extra: dict[str, Any] = field(default_factory=dict)  # adapter-specific settings
