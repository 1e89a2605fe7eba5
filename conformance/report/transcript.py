"""A case's scenario made readable and replayable: wire transcript, fixture, commands.

The results keep the scenario as JSON; re-validating it and running the same encoder as
the fake provider gives the exact bytes each attempt sent. Everything here is plain text
(escaped, ASCII where bytes are concerned); the HTML template only lays it out.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from fakeprovider.dialects import DIALECTS
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.scenario import ErrorAttempt, FaultAttempt, Scenario, StreamAttempt
from fakeprovider.wire import EncodeError, TranscriptLine, attempt_transcript, escape_bytes

from ..codes import ConformanceError
from ..options import default_request
from ..oracle import called_tools
from ..results import CaseResult

FAKEPROVIDER_URL = "http://127.0.0.1:8765"
REPRO_DIR = "repro"
_ESCAPE = re.compile(r"(\\x[0-9a-f]{2}|\\[nrt\\])")


class ReplayError(ConformanceError, ValueError):
    """The case's scenario cannot be rebuilt from the results (missing or invalid)."""


# --- the scenario -----------------------------------------------------------------------


def case_scenario(case: CaseResult) -> Scenario:
    """The scenario the case ran, re-validated from the results."""
    if not case.scenario:
        raise ReplayError("the results hold no scenario for this case")
    try:
        return Scenario.model_validate(case.scenario | {"id": case.case})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReplayError(
            f"the recorded scenario does not validate ({error.error_count()} error(s); "
            f"first at {where}: {first['msg']})"
        ) from None


# --- wire transcript --------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """A run of escaped bytes: literal ASCII, or one escape sequence (``\\r``, ``\\xef``)."""

    text: str
    escape: bool = False

    @property
    def newline(self) -> bool:
        return self.text == "\\n"


@dataclass(frozen=True)
class WireRow:
    """One write (or the response head, or the ending) of an attempt."""

    label: str
    segments: tuple[Segment, ...] = ()
    size: int = 0
    delay_ms: float = 0.0


@dataclass(frozen=True)
class AttemptTranscript:
    number: int
    summary: str
    rows: tuple[WireRow, ...]


def segments(data: bytes) -> tuple[Segment, ...]:
    """The bytes as :func:`escape_bytes` shows them, cut into literal text and escapes."""
    parts = _ESCAPE.split(escape_bytes(data))
    return tuple(
        Segment(part, escape=position % 2 == 1) for position, part in enumerate(parts) if part
    )


def transcript(scenario: Scenario) -> tuple[AttemptTranscript, ...]:
    """Every attempt of the scenario as the fake provider sends it."""
    return tuple(
        _attempt_transcript(scenario, number) for number in range(1, len(scenario.attempts) + 1)
    )


def _attempt_transcript(scenario: Scenario, number: int) -> AttemptTranscript:
    attempt = scenario.attempt(number)
    try:
        lines = attempt_transcript(attempt, scenario.dialect)
    except EncodeError as error:
        problem = WireRow("error", (Segment(f"<cannot encode: {error}>"),))
        return AttemptTranscript(number, "stream that cannot be encoded", (problem,))
    rows = tuple(
        WireRow("end", (Segment(f"<{line.ending}>"),), delay_ms=line.delay_ms)
        if line.label == "end"
        else _row(line.label, line.data, line.delay_ms)
        for line in lines
    )
    return AttemptTranscript(number, _summary(attempt, lines), rows)


def _summary(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt, lines: list[TranscriptLine]
) -> str:
    if isinstance(attempt, FaultAttempt):
        return f"fault: {attempt.fault}"
    if isinstance(attempt, ErrorAttempt):
        return f"HTTP {attempt.error.status} error response"
    writes = [line for line in lines if line.label not in ("head", "end")]
    size = sum(len(line.data) for line in writes)
    return (
        f"stream, HTTP {attempt.stream.status}, {size} bytes in {len(writes)} "
        f"write{'s' if len(writes) != 1 else ''}, then {lines[-1].ending}"
    )


def _row(label: str, data: bytes, delay_ms: float = 0.0) -> WireRow:
    return WireRow(label, segments(data), len(data), delay_ms)


# --- reproducer -------------------------------------------------------------------------


@dataclass(frozen=True)
class Reproducer:
    """A fixture file for the case and the commands that replay it."""

    fixture_path: str
    fixture: str
    replay: str
    serve: str
    curl: str


def reproducer(case: CaseResult, scenario: Scenario, invocation: str = "") -> Reproducer:
    """How to replay a case: its fixture, the run command, and curl against the server."""
    path = f"{REPRO_DIR}/{scenario.id}.yaml"
    url = f"{FAKEPROVIDER_URL}/{scenario.id}/v1/{DIALECTS[scenario.dialect].endpoint}"
    curl = " ".join(
        [
            "curl -N -X POST",
            shlex.quote(url),
            "-H 'content-type: application/json'",
            "-d",
            shlex.quote(_request_body(case, scenario)),
        ]
    )
    return Reproducer(
        fixture_path=path,
        fixture=fixture_yaml(scenario),
        replay=f"conformance run --fixtures {shlex.quote(path)} "
        + (invocation or "--adapter ADAPTER"),
        serve=f"fakeprovider serve --fixtures {REPRO_DIR}",
        curl=curl,
    )


def _request_body(case: CaseResult, scenario: Scenario) -> str:
    """The body the adapter sent first, or the suite's request of the case's dialect."""
    for request in case.requests:
        body = request.get("body")
        if isinstance(body, str) and body:
            return body
    request = default_request(scenario.dialect, called_tools(scenario))
    return json.dumps(request, separators=(",", ":"))


# --- expected vs observed ---------------------------------------------------------------


@dataclass(frozen=True)
class DiffRow:
    """One line of the side-by-side view; ``None`` where a side has no line."""

    expected: str | None
    observed: str | None
    same: bool
    first: bool = False  # the first divergence


def outcome_diff(case: CaseResult, capabilities: dict[str, Any]) -> tuple[DiffRow, ...]:
    """The oracle's attempts beside the adapter's, line by line, first divergence marked."""
    left = _lines(expected_attempts(case.expected, capabilities))
    right = _lines(observed_attempts(case.events))
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            rows += [DiffRow(line, line, same=True) for line in left[a0:a1]]
            continue
        first = all(row.same for row in rows)
        pairs = itertools.zip_longest(left[a0:a1], right[b0:b1])
        rows += [DiffRow(a, b, False, first and n == 0) for n, (a, b) in enumerate(pairs)]
    return tuple(rows)


def _lines(value: object) -> list[str]:
    return json.dumps(value, indent=2, ensure_ascii=True, default=str).splitlines()


def expected_attempts(expected: dict[str, Any], capabilities: dict[str, Any]) -> list[Any]:
    """The oracle's summary, cut to what the adapter declared it reports."""
    attempts = expected.get("attempts")
    if not isinstance(attempts, list):
        return []
    out = []
    for position, attempt in enumerate(attempts, 1):
        if not isinstance(attempt, dict):
            continue
        shown = {key: attempt[key] for key in ("attempt", "finish", "code") if key in attempt}
        if not capabilities.get("error_codes"):
            shown.pop("code", None)
        blocks = [
            block
            for block in attempt.get("blocks", [])
            if capabilities.get("reasoning") or _kind(block) != "reasoning"
        ]
        if blocks:
            shown["blocks"] = blocks
        if capabilities.get("usage") and "usage" in attempt:
            shown["usage"] = attempt["usage"]
        if position < len(attempts):
            shown["retried"] = True
        out.append(shown)
    return out


def observed_attempts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The adapter's events in the oracle's shape: one summary per attempt."""
    attempts: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("type")
        if kind == "end":
            continue
        current.append(event)
        if kind == "retry":
            attempts.append(_observed_attempt(len(attempts) + 1, current))
            current = []
    if current or not attempts:
        attempts.append(_observed_attempt(len(attempts) + 1, current))
    return attempts


def _observed_attempt(number: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_kind.setdefault(str(event.get("type")), []).append(event)
    out: dict[str, Any] = {"attempt": number}
    if "finish" in by_kind:
        ending = by_kind["finish"][0]
        out["finish"] = ending.get("reason")
    elif "thrown" in by_kind:
        ending = by_kind["thrown"][0]
        out["finish"] = "(threw)"
    else:
        ending = {}
        out["finish"] = "(none)"
    if ending.get("code"):
        out["code"] = ending["code"]
    blocks = [event.get("block") for event in by_kind.get("block-end", [])]
    if blocks:
        out["blocks"] = blocks
    if "usage" in by_kind:
        last = by_kind["usage"][-1]
        out["usage"] = {key: value for key, value in last.items() if key not in ("type", "case")}
    if "retry" in by_kind:
        out["retried"] = True
    return out


def _kind(block: object) -> object:
    return block.get("type") if isinstance(block, dict) else None
