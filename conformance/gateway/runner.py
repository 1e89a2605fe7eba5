"""Gateway mode: the fake provider as the upstream, each scenario's request sent through the
gateway, the re-emitted stream judged for meaning and wire hazards.

Chat-completions both ways is judged by the M rules on the reference adapter's reading of
the answer, and chat's W rules. Any other pair of dialects (the fake provider speaks the
upstream one, the request and the answer are in the downstream one) is judged by the GW
rules on the two canonical readings, through the meaning map, and the downstream wire's
own lint rules.

The gateway is configured with one upstream base URL, ``http://127.0.0.1:PORT/v1``; each
request names its scenario by ``model`` (``scenario/<id>``) and the ``x-scenario-id``
header, whichever the gateway passes through. If the gateway retries upstream itself, its
answer is judged against the attempt it was last served.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from fakeprovider.dialects import DEFAULT_DIALECT, DIALECTS, DialectId
from fakeprovider.interrupts import Interruption
from fakeprovider.playback import DEFAULT_MODEL_PREFIX, SCENARIO_HEADER
from fakeprovider.redaction import redacted_headers
from fakeprovider.registry import RequestRecord, ScenarioRegistry
from fakeprovider.scenario import Scenario

from ..adapters.reference.next_request import next_request
from ..adapters.reference.wires import WIRES
from ..codes import ConformanceError
from ..invariants import CATALOGUE
from ..invariants.evidence import ObservedAttempt
from ..kept import Kept
from ..lint import (
    MESSAGES_RULES,
    RESPONSES_RULES,
    RULES,
    Finding,
    LintResult,
    LintRule,
    attempt_wire,
    lint,
)
from ..options import default_request
from ..oracle import ExpectedAttempt, called_tools, expected_attempt
from ..results import CaseResult, InvariantVerdict, RunInterruption, RunResult, suite_version
from ..run.estimate import estimated_duration_s, longest_first
from ..run.provider import fake_provider
from ..run.runner import MAX_RUN_BYTES, follow_up_turn, not_run_detail
from ..run.schedule import CaseSchedule, run_scheduled
from ..spec import LATEST_SPEC, SPEC
from ..verdicts import CatalogueEntry, RuleInfo, SpecVersion
from .capture import GatewayCapture, capture_response
from .crossing import CROSSING_RULES, crossing_verdicts, judge_crossing
from .downstream import downstream_attempt
from .meaning import MEANING_RULES, judge_meaning
from .next_turn import NextTurn, judge_next_turn, next_turn_rules, next_turn_verdicts
from .outcome import gateway_events
from .verdicts import hazard_verdicts, meaning_verdicts, observed_only_if_new

# The reference translator judges the gateway's bytes: it reports all of these, and the
# gateway mode never retries (one request per case, judged as one attempt).
JUDGE_CAPABILITIES = {
    "deltas": True,
    "reasoning": True,
    "usage": True,
    "retry": False,
    "error_codes": True,
}

# Each wire's lint rules, which a gateway's answer in that dialect must satisfy.
WIRE_RULES: dict[DialectId, dict[str, LintRule]] = {
    "chat-completions": RULES,
    "anthropic-messages": MESSAGES_RULES,
    "openai-responses": RESPONSES_RULES,
}


@dataclass(frozen=True)
class GatewayOptions:
    gateway_url: str  # the gateway's OpenAI base URL, e.g. http://127.0.0.1:4000/v1
    upstream_port: int = 8765
    upstream_host: str = "127.0.0.1"
    model_prefix: str = DEFAULT_MODEL_PREFIX  # what the fake upstream reads from ``model``
    model: str | None = None  # the request's model, ``{id}`` replaced; default prefix + id
    api_key: str = "sk-test"
    idle_timeout_s: float = 5.0
    timeout_s: float = 30.0
    strict: bool = False
    name: str = ""  # how reports name the gateway; default its URL
    upstream_dialect: DialectId = DEFAULT_DIALECT  # what the fake provider speaks
    downstream_dialect: DialectId = DEFAULT_DIALECT  # what the request and answer are in
    spec: SpecVersion = LATEST_SPEC  # the spec revision judging: later rules only observed

    def request_model(self, scenario_id: str) -> str:
        template = self.model if self.model is not None else self.model_prefix + "{id}"
        return template.replace("{id}", scenario_id)

    @property
    def request_url(self) -> str:
        return f"{self.gateway_url.rstrip('/')}/{DIALECTS[self.downstream_dialect].endpoint}"

    @property
    def crossing(self) -> bool:
        """Judged across dialects (GW rules): any pair but chat-completions both ways."""
        return (self.upstream_dialect, self.downstream_dialect) != (DEFAULT_DIALECT,) * 2


class GatewayUnreachableError(ConformanceError):
    """The gateway gave no HTTP answer before the run."""


async def check_gateway(options: GatewayOptions) -> None:
    """Raise GatewayUnreachableError unless the gateway answers ``GET …/models`` within the
    idle timeout; any HTTP status counts as an answer."""
    url = options.gateway_url.rstrip("/") + "/models"
    headers = {"authorization": f"Bearer {options.api_key}"}
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=options.idle_timeout_s) as client:
            await client.get(url, headers=headers)
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise GatewayUnreachableError(
            f"the gateway does not answer at {url}: {type(error).__name__}: {error}"
        ) from error


def catalogue(options: GatewayOptions | None = None) -> list[CatalogueEntry]:
    """The rules a gateway run judges: chat's M and W, or the GW and the downstream's lint."""
    rules: list[RuleInfo]
    if options is None or not options.crossing:
        rules = [*MEANING_RULES.values(), *RULES.values()]
    else:
        rules = [*CROSSING_RULES.values(), *WIRE_RULES[options.downstream_dialect].values()]
    spec = LATEST_SPEC if options is None else options.spec
    entries = [rule.describe() for rule in rules]
    source = DEFAULT_DIALECT if options is None else options.upstream_dialect
    entries += [CATALOGUE[rule_id].describe(spec) for rule_id in next_turn_rules(source)]
    return [
        entry | {"level": "INFO"} if SPEC.new_since(spec, entry["id"]) else entry
        for entry in entries
    ]


async def run_gateway(
    scenarios: Sequence[Scenario],
    options: GatewayOptions,
    *,
    on_case: Callable[[CaseResult], None] | None = None,
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> RunResult:
    """Send every scenario's request through the gateway and judge its answer, ``jobs``
    requests at a time (the longest first); the results keep scenario order. A signal
    ``interruption`` catches stops it: the results hold the cases that ended, marked
    interrupted."""
    started = _now()
    upstream_provider = fake_provider(
        ScenarioRegistry(scenarios, bound_each_scenario=True),
        "loopback",  # the gateway reaches its upstream over the network
        host=options.upstream_host,
        port=options.upstream_port,
        model_prefix=options.model_prefix,
    )
    cases: list[CaseResult | None] = [None] * len(scenarios)
    order = (
        longest_first([estimated_duration_s(s, None, options.idle_timeout_s) for s in scenarios])
        if jobs > 1
        else range(len(scenarios))
    )
    async with upstream_provider as provider, httpx.AsyncClient(trust_env=False) as client:
        upstream = f"{provider.root_url}/v1"

        schedule = CaseSchedule(order, MAX_RUN_BYTES)

        async def run_case(position: int) -> int:
            scenario = scenarios[position]
            if schedule.skips(position):
                result, kept_bytes = _not_run(scenario), 0
            else:
                result, kept_bytes = await _judge_case(client, provider.registry, scenario, options)
            cases[position] = result
            if on_case is not None:
                on_case(result)
            return kept_bytes

        stop = None if interruption is None else interruption.signalled()
        await run_scheduled(schedule, jobs, run_case, stop)
    stopped = None if interruption is None else interruption.signal
    for position in schedule.left_out:  # those that ran before that was known too
        cases[position] = _not_run(scenarios[position])
    return RunResult(
        suite_version=suite_version(),
        adapter={
            "name": options.name or f"gateway {options.gateway_url}",
            "version": "",
            "protocol": "gateway",
            "capabilities": JUDGE_CAPABILITIES,
        },
        options={
            "mode": "gateway",
            "gateway_url": options.gateway_url,
            "upstream": upstream,
            "model": options.request_model("{id}"),
            "upstream_dialect": options.upstream_dialect,
            "downstream_dialect": options.downstream_dialect,
            "idle_timeout_s": options.idle_timeout_s,
            "timeout_s": options.timeout_s,
            "strict": options.strict,
        },
        spec=options.spec,
        started_at=started,
        finished_at=_now(),
        catalogue=catalogue(options),
        cases=[case for case in cases if case is not None],
        interrupted=RunInterruption.by(stopped, len(scenarios)),
    )


def _request(scenario: Scenario, options: GatewayOptions) -> tuple[bytes, dict[str, str]]:
    request = default_request(options.downstream_dialect, called_tools(scenario))
    request["model"] = options.request_model(scenario.id)
    credentials = WIRES[options.downstream_dialect].auth_headers(options.api_key)
    headers = {name.lower(): value for name, value in credentials.items()} | {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "accept-encoding": "identity",  # the lint reads the bytes as the gateway sent them
        SCENARIO_HEADER: scenario.id,
    }
    return json.dumps(request, separators=(",", ":")).encode(), headers


async def _judge_case(
    client: httpx.AsyncClient,
    registry: ScenarioRegistry,
    scenario: Scenario,
    options: GatewayOptions,
) -> tuple[CaseResult, int]:
    """The case's result and the bytes it kept (the run's budget counts them)."""
    registry.clear_requests(scenario.id)
    body, headers = _request(scenario, options)
    kept = Kept()
    capture = await capture_response(
        client,
        options.request_url,
        body,
        headers,
        idle_timeout_s=options.idle_timeout_s,
        timeout_s=options.timeout_s,
        kept=kept,
    )
    requests = await registry.settled(scenario.id)
    upstream_requests = len(requests)  # of the first turn
    served = max(upstream_requests, 1)  # the attempt the gateway's answer is judged against
    now = time.time()
    expected = expected_attempt(scenario, served, now=now)
    # Across dialects each body is linted as its dialect; chat both ways as it always was,
    # the wire read from the body.
    crossing = options.crossing
    upstream_wire = attempt_wire(scenario.attempt(served), scenario.dialect if crossing else None)
    upstream = upstream_wire.lint(include_usage=True)
    gateway = lint(
        capture.body,
        status=capture.status,
        ending=capture.ending,
        include_usage=True,
        upstream_failed=upstream.failed,
        dialect=options.downstream_dialect if crossing else None,
    )
    hazards = hazard_verdicts(
        upstream, gateway, strict=options.strict, rules=WIRE_RULES[options.downstream_dialect]
    )
    if crossing:
        downstream = downstream_attempt(capture, options.downstream_dialect, now=now)
        events: list[dict[str, Any]] = []
        verdicts = _crossing_verdicts(expected, downstream, options) | hazards
        reading = {"downstream": summary} if (summary := _kept_reading(downstream, kept)) else {}
    else:
        observed = ObservedAttempt(1, tuple(gateway_events(capture)))
        dumped = (event.model_dump(mode="json", exclude_none=True) for event in observed.events)
        events = kept.leading("events", dumped)
        verdicts = meaning_verdicts(judge_meaning(expected, observed), strict=options.strict)
        verdicts |= hazards
        reading = {}
    next_turn: dict[str, Any] = {}
    if scenario.follow_up is not None and expected.success:
        handed = downstream_attempt(capture, options.downstream_dialect, now=now)
        if handed.success:  # else the case already failed the caller: nothing to answer
            turn, next_turn, later = await _next_turn(
                client, registry, scenario, options, handed, headers, kept
            )
            requests += later
            judged = judge_next_turn(expected, turn, scenario.dialect, options.downstream_dialect)
            verdicts |= next_turn_verdicts(judged, verdicts, strict=options.strict)
    registry.clear_requests(scenario.id)  # read: only cases in flight hold a log
    verdicts = observed_only_if_new(verdicts, options.spec, options.downstream_dialect)
    result = CaseResult(
        case=scenario.id,
        title=scenario.title,
        tags=list(scenario.tags),
        provenance=scenario.provenance.model_dump(mode="json"),
        status="completed" if capture.connected else "crash",
        detail=_detail(capture, upstream_requests),
        duration_s=capture.duration_s,
        verdicts=verdicts,
        events=events,
        expected={"attempts": [expected.summary()]},
        # The gateway's credentials for its upstream are its operator's: never in a report.
        requests=[
            record | {"headers": [list(pair) for pair in redacted_headers(record["headers"])]}
            for record in kept.requests(requests)
        ],
        scenario=scenario.model_dump(mode="json"),
        gateway={
            "url": options.request_url,
            "request_headers": [list(pair) for pair in redacted_headers(headers.items())],
            "upstream_attempt": served,
            "upstream_requests": upstream_requests,
            "capture": capture.to_json(),
            "lint": {"upstream": _findings(upstream), "gateway": _findings(gateway)},
        }
        | reading
        | next_turn,
        cut=dict(kept.cut),
    )
    return result, kept.bytes


async def _next_turn(
    client: httpx.AsyncClient,
    registry: ScenarioRegistry,
    scenario: Scenario,
    options: GatewayOptions,
    handed: ExpectedAttempt,
    headers: dict[str, str],
    kept: Kept,
) -> tuple[NextTurn, dict[str, Any], list[RequestRecord]]:
    """Send the client's next request through the gateway, built by the reference from
    what the gateway's answer handed it, and read its answer to the end (a caller's next
    turn). Returns what reached the upstream of it, the result's record of the turn, and
    the upstream's requests since the first turn."""
    before = len(registry.requests(scenario.id))
    first, _ = _request(scenario, options)
    turn = follow_up_turn(scenario)
    assert turn is not None
    asked = next_request(options.downstream_dialect, json.loads(first), handed.blocks, turn)
    body = json.dumps(asked, separators=(",", ":")).encode()
    capture = await capture_response(
        client,
        options.request_url,
        body,
        headers,
        idle_timeout_s=options.idle_timeout_s,
        timeout_s=options.timeout_s,
        kept=kept,
    )
    later = (await registry.settled(scenario.id))[before:]
    sent = next((record for record in later if record.follow_up), None)
    record = {"next_turn": {"capture": capture.to_json()}}
    if sent is not None:
        return NextTurn(base64.b64decode(sent.body_base64)), record, later
    if later:
        why = "the gateway's request carries none of the first turn (no assistant turn, no results)"
    elif capture.status is None:
        why = f"the gateway gave no answer ({capture.detail or capture.ending})"
    else:
        why = f"the gateway answered HTTP {capture.status} without calling the upstream"
    return NextTurn(None, why), record, later


def _kept_reading(downstream: ExpectedAttempt, kept: Kept) -> dict[str, Any] | None:
    """The downstream answer as read, if it fits in what the case may still keep."""
    return next(iter(kept.leading("events", [downstream.summary()])), None)


def _not_run(scenario: Scenario) -> CaseResult:
    """A case left out once the run's cases kept ``MAX_RUN_BYTES``: never sent."""
    return CaseResult(
        case=scenario.id,
        title=scenario.title,
        tags=list(scenario.tags),
        provenance=scenario.provenance.model_dump(mode="json"),
        status="protocol-error",
        detail=not_run_detail(),
        duration_s=0.0,
        verdicts={},
        events=[],
        expected={},
        requests=[],
        scenario=scenario.model_dump(mode="json"),
    )


def _crossing_verdicts(
    upstream: ExpectedAttempt, downstream: ExpectedAttempt, options: GatewayOptions
) -> dict[str, InvariantVerdict]:
    judged = judge_crossing(
        upstream, downstream, options.upstream_dialect, options.downstream_dialect
    )
    return crossing_verdicts(judged, strict=options.strict)


def _detail(capture: GatewayCapture, upstream_requests: int) -> str:
    notes = []
    if not capture.connected:
        notes.append(f"gateway unreachable: {capture.detail}")
    elif capture.detail:
        notes.append(capture.detail)
    if upstream_requests == 0:
        notes.append("the gateway never called the upstream")
    elif upstream_requests > 1:
        notes.append(f"the gateway called the upstream {upstream_requests} times")
    return "; ".join(notes)


def _findings(result: LintResult) -> list[dict[str, Any]]:
    return [_finding(finding) for finding in result.findings]


def _finding(finding: Finding) -> dict[str, Any]:
    position = finding.position
    return {
        "rule": finding.rule,
        "line": position.line,
        "byte": position.offset,
        "message": finding.message,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
