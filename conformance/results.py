"""The results of a run as data: the versioned JSON other tools read.

Schema ``streamconform.results`` version 1. A run holds the catalogue it was judged
against, the adapter's handshake, and per case: the scenario, how the case ended, a
verdict with a one-line reason per exercised invariant, the observed events, the
oracle's expected outcome, the provider's request log and, for a case with retries, the
attempts the provider saw and the waits it measured beside the expected ones. Saved
files are read back bounded (:func:`read_document`), a hand-edited one refused in one line.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib import metadata
from pathlib import Path
from signal import Signals
from typing import Any, Final, Literal, TypeVar

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict from 3.12 only

from .codes import ConformanceError
from .verdicts import (
    UNRECORDED_SPEC,
    VERDICTS,
    CaseStatus,
    CatalogueEntry,
    Contract,
    Cost,
    SpecVersion,
    Verdict,
    reading_order,
    worst,
)

SCHEMA: Final = "streamconform.results"
SCHEMA_VERSION: Final = 1


def suite_version() -> str:
    """The installed streamconform's version (a source tree that is not installed has none)."""
    try:
        return metadata.version("streamconform")
    except metadata.PackageNotFoundError:
        return "0+unknown"


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InvariantVerdict(_Result):
    verdict: Verdict
    reason: str = ""
    # What a failure cost the caller, as its checker states it (the compatibility page reads
    # it). Optional within schema version 1, and left out where none is stated: results
    # written before it existed still load, and read the same.
    cost: Cost | None = Field(default=None, exclude_if=lambda cost: cost is None)


class RetryWait(_Result):
    """The wait before one retry: measured at the provider, announced, and the spec's."""

    retry: int  # 1-based: the wait before request retry + 1
    after_code: str | None  # the failed attempt's code, as the oracle reads the scenario
    measured_ms: float | None  # end of the failed response to the next request's arrival
    announced_ms: float | None  # the adapter's `retry` event
    expected_min_ms: float | None  # the spec's bounds (R5 backoff, R6 Retry-After), before
    expected_max_ms: float | None  # the checkers' stated tolerances; None: retries were off
    basis: Literal["backoff", "retry-after"] | None = None
    # What R5 or R6 accepted: the bounds widened by its tolerances. No minimum where the
    # provider's clock could not judge one; both None when retries were off.
    tolerated_min_ms: float | None = None
    tolerated_max_ms: float | None = None


class RetrySummary(_Result):
    """A case's retries as the provider saw them (absent from cases without any)."""

    policy: dict[str, Any]  # the retry policy the case was run with
    attempts_seen: int  # requests the provider received
    attempts_expected: int  # attempts a conforming adapter makes
    waits: list[RetryWait] = Field(default_factory=list)


class CaseResult(_Result):
    case: str
    title: str = ""
    tags: list[str] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)
    status: CaseStatus
    detail: str = ""
    duration_s: float
    verdicts: dict[str, InvariantVerdict]
    events: list[dict[str, Any]]
    expected: dict[str, Any]
    requests: list[dict[str, Any]]
    stderr: str = ""
    scenario: dict[str, Any] = Field(default_factory=dict)
    # Gateway mode only: the gateway's answer as captured, the upstream attempt it was
    # served, and both lint results (conformance.gateway.runner).
    gateway: dict[str, Any] = Field(default_factory=dict)
    # Optional within schema version 1: results written before it existed still load.
    retry: RetrySummary | None = None
    # The wire of the case's scenario, left out for chat-completions: a chat case's result
    # reads as it did before dialects (optional within schema version 1).
    dialect: str | None = Field(default=None, exclude_if=lambda dialect: dialect is None)
    # Bytes left out by kind (events, stderr, request-bodies, gateway-capture) to keep the
    # case within MAX_CASE_BYTES (conformance.kept); absent when nothing was cut (optional
    # within schema version 1).
    cut: dict[str, int] = Field(default_factory=dict, exclude_if=lambda cut: not cut)

    @property
    def worst(self) -> Verdict | None:
        """The most severe verdict of the case (fail > non-strict > pass > info > n/a)."""
        return worst(v.verdict for v in self.verdicts.values())


class RunInterruption(_Result):
    """A run stopped by a signal: the cases that ended before it are the run's cases."""

    signal: str  # "SIGINT" or "SIGTERM"
    cases_selected: int  # how many the run was to run

    @classmethod
    def by(cls, signum: Signals | None, cases_selected: int) -> RunInterruption | None:
        """The interruption of a run of ``cases_selected`` cases that ``signum`` stopped;
        None when no signal came."""
        return None if signum is None else cls(signal=signum.name, cases_selected=cases_selected)

    def describe(self, cases_run: int) -> str:
        return f"interrupted by {self.signal} {self.progress(cases_run)}"

    def progress(self, cases_run: int) -> str:
        return f"after {cases_run} of {self.cases_selected} cases"


class MatrixColumnMeta(TypedDict, total=False):
    """What ``conformance matrix column`` adds to a column's options (``options.matrix``)."""

    column: str
    title: str
    versions: dict[str, str]


_READ_SHAPES: Final[dict[str, dict[str, TypeAdapter[Any]]]] = {
    "adapter": {"dialects": TypeAdapter(list[str])},
    "options": {"matrix": TypeAdapter(MatrixColumnMeta)},
}
"""The keys of the open ``adapter`` (the handshake) and ``options`` objects that reports
read, and their shapes: a hand-edited results file is refused at load, never a TypeError
in a report."""


def _readable(field: str, value: dict[str, Any]) -> dict[str, Any]:
    for key, shape in _READ_SHAPES[field].items():
        if key in value:
            try:
                shape.validate_python(value[key], strict=True)
            except ValidationError as error:
                raise ValueError(first_problem(error, key)) from None
    return value


class RunResult(_Result):
    schema_id: Literal["streamconform.results"] = Field(default=SCHEMA, alias="schema")
    schema_version: Literal[1] = SCHEMA_VERSION
    suite_version: str
    adapter: dict[str, Any]
    options: dict[str, Any]
    started_at: str
    finished_at: str
    contract: Contract = "harness"  # the contract the verdicts were judged under
    # The spec revision the verdicts were judged under; a file from before runs recorded
    # one was judged by 1.2's catalogue.
    spec: SpecVersion = UNRECORDED_SPEC
    catalogue: list[CatalogueEntry]
    cases: list[CaseResult]
    # Set when a signal stopped the run: the cases then are those that ended before it, and
    # a baseline comparison sees the others as not judged, never as fixed.
    interrupted: RunInterruption | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("adapter", "options")
    @classmethod
    def _shapes_read(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return _readable(str(info.field_name), value)

    def __repr__(self) -> str:
        # Short: asyncio.run, restoring SIGINT's handler, reprs the main task and with it
        # its result (signal._int_to_enum); a whole run's repr took 0.15 s each time.
        return f"RunResult(contract={self.contract!r}, cases={len(self.cases)})"

    def counts(self) -> dict[Verdict, int]:
        """How many case-and-invariant verdicts of each kind."""
        tally = Counter(v.verdict for case in self.cases for v in case.verdicts.values())
        return {verdict: tally.get(verdict, 0) for verdict in VERDICTS}

    def per_invariant(self) -> dict[str, dict[Verdict, int]]:
        """Verdict counts per rule, every catalogued rule included, in reading order."""
        table: dict[str, dict[Verdict, int]] = {
            entry["id"]: dict.fromkeys(VERDICTS, 0) for entry in self.catalogue
        }
        for case in self.cases:
            for invariant_id, verdict in case.verdicts.items():
                table.setdefault(invariant_id, dict.fromkeys(VERDICTS, 0))[verdict.verdict] += 1
        return {key: table[key] for key in sorted(table, key=reading_order)}

    @property
    def failed(self) -> bool:
        return self.counts()["fail"] > 0

    def to_json(self) -> str:
        # A run that ran to its end says nothing of interruption: its file reads as before.
        unset = {"interrupted"} if self.interrupted is None else None
        return self.model_dump_json(by_alias=True, indent=2, exclude=unset)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunResult:
        return cls.model_validate_json(text)


# Reading back the JSON the suite saved: results, baselines and matrix columns.
#
# Such a file may have been edited by hand, cut short or replaced by anything at all, so it is
# read as untrusted input: at most MAX_SAVED_BYTES, parsed by a parser whose nesting is
# bounded (pydantic-core's, 200 levels: a 100 000-deep file is an error, not a
# RecursionError), and validated by the model the suite wrote it from. Every problem is one
# line that names the file and what is wrong.

M = TypeVar("M", bound=BaseModel)

MAX_SAVED_BYTES: Final = 256 * 2**20
"""Far above what a run writes (its events, stderr and request logs are capped per run),
far below what would exhaust memory once parsed (about ten times the file's size)."""


class SavedFileError(ConformanceError, ValueError):
    """A saved JSON file that cannot be used; the message is one line naming the file."""


def read_document(path: Path, what: str) -> Any:
    """The JSON value in ``path``, ``what`` it should be ("the baseline") naming it in errors."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SAVED_BYTES + 1)
    except OSError as error:
        raise SavedFileError(f"{path}: cannot read {what} ({error.strerror or error})") from None
    if len(data) > MAX_SAVED_BYTES:
        raise SavedFileError(f"{path}: {what} is over {MAX_SAVED_BYTES // 2**20} MiB")
    try:
        return pydantic_core.from_json(data)
    except ValueError as error:  # not JSON, not UTF-8, or nested past the parser's bound
        raise SavedFileError(f"{path}: {what} is not JSON ({error})") from None


def validated(model: type[M], document: Any, path: Path, what: str) -> M:
    """``document`` as ``model``; its first problem (and how many more) otherwise."""
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise SavedFileError(f"{path}: invalid {what}: {first_problem(error)}") from None


def first_problem(error: ValidationError, *within: str) -> str:
    """A validation error in one line: where its first problem is, what, and how many more."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in (*within, *first["loc"])) or "(top level)"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


# Results without what the clock decides: what two runs of the same cases must share.
#
# A results file records time as well as behaviour. These fields depend on the clock or on
# chance, and :func:`reproducible_json` blanks them (sets them to ``null``):
#
# - when things happened: ``started_at``, ``finished_at``, and each request's
#   ``received_at`` and ``ended_at``;
# - how long they took: each case's ``duration_s``, the waits measured at the provider
#   (``retry.waits[].measured_ms``) and every duration quoted in a verdict's reason or cost
#   (``"waits 8 ms in [1, 1]"`` becomes ``"waits … ms in [1, 1]"``, and ``"gave up after
#   15.01 s"`` ``"gave up after … s"``; :func:`reproducible_reason`);
# - the waits the adapter chose, which random jitter or an HTTP-date ``Retry-After`` read
#   against the clock make vary: ``delay_ms`` of ``retry`` events and
#   ``retry.waits[].announced_ms``;
# - the port of the run's loopback server: the value of each request's ``Host`` header, and
#   the port of every URL quoted in a verdict's reason or cost, an event's ``message`` or the
#   adapter's stderr (an adapter's error message may name the URL it failed on:
#   ``http://127.0.0.1:41234/x`` becomes ``http://127.0.0.1:…/x``);
# - which came first, the provider's last write or the hang-up of an adapter that stopped
#   reading as it came (a payload it rejects): a request's ``ended`` reads ``complete`` for
#   ``client-disconnected``.
#
# Everything else — verdicts, events, request bodies, the catalogue — is a function of the
# fixtures (and the seed) and of the adapter: two runs against a deterministic adapter give
# byte-identical output, and any other difference is a bug.
#

_QUOTED_DURATION = re.compile(r"\d+(?:\.\d+)? (ms|s)\b")
_URL_PORT = re.compile(r"(//(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+)):\d+\b")


def reproducible_json(result: RunResult) -> str:
    """The results JSON (as ``--json`` writes it) with the clock's fields blanked."""
    data = json.loads(result.to_json())
    data["started_at"] = data["finished_at"] = None
    for case in data["cases"]:
        _blank_case(case)
    return json.dumps(data, indent=2, ensure_ascii=False)


def _blank_case(case: dict[str, Any]) -> None:
    case["duration_s"] = None
    for request in case["requests"]:
        request["received_at"] = request["ended_at"] = None
        if request["ended"] == "client-disconnected":
            request["ended"] = "complete"
        request["headers"] = [
            [name, None if name.lower() == "host" else value] for name, value in request["headers"]
        ]
    for event in case["events"]:
        if event["type"] == "retry":
            event["delay_ms"] = None
        if isinstance(event.get("message"), str):
            event["message"] = _URL_PORT.sub(r"\1:…", event["message"])
    case["stderr"] = _URL_PORT.sub(r"\1:…", case["stderr"])
    for wait in (case.get("retry") or {}).get("waits", []):
        wait["measured_ms"] = wait["announced_ms"] = None
    for verdict in case["verdicts"].values():
        verdict["reason"] = reproducible_reason(verdict["reason"])
        if "cost" in verdict:  # it quotes what the reason does (a crash's message)
            verdict["cost"]["detail"] = reproducible_reason(verdict["cost"]["detail"])


def reproducible_reason(reason: str) -> str:
    """A verdict's reason without the durations and URL ports it quotes (idempotent)."""
    return _URL_PORT.sub(r"\1:…", _QUOTED_DURATION.sub(r"… \1", reason))
