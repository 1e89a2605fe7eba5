"""Results built directly for the report tests, including a hostile one.

The hostile result puts markup, ``javascript:`` URLs and invisible characters in every
string a report shows: scenario content, events, tool names, provenance, reasons,
catalogue text, adapter name, request log, stderr, options and ids. Every payload that
could run sets ``window.__pwned`` (or opens a dialog), which the browser test watches.
"""

from __future__ import annotations

from typing import Any

from conformance.invariants import CATALOGUE
from conformance.results import CaseResult, InvariantVerdict, RunResult
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.scenario import Provenance, Scenario

SCRIPT = "<script>window.__pwned=1;alert(1)</script>"
TEXTAREA = "</textarea><script>window.__pwned=2</script>"
IMG = '"><img src=x onerror="window.__pwned=3;alert(1)">'
JS_URL = "javascript:window.__pwned=4;alert(1)"
INVISIBLE = "a\r\nb\ufeffc\x00d\u202eevil\u202cf"
PAYLOADS = (SCRIPT, TEXTAREA, IMG)
HOSTILE = " ".join((*PAYLOADS, INVISIBLE))
HOSTILE_URLS = (
    JS_URL,
    "JaVaScRiPt:window.__pwned=5",
    " javascript:window.__pwned=6",
    "java\tscript:window.__pwned=7",
    "data:text/html,<script>window.__pwned=8</script>",
    "https://example.com/" + IMG,
    "//example.com/protocol-relative",
)
GOOD_URL = "https://github.com/example/adapter/issues/1"


def catalogue() -> list[dict[str, Any]]:
    return [invariant.describe() for invariant in CATALOGUE.values()]


def case(
    case_id: str,
    verdicts: dict[str, str | tuple[str, str]],
    *,
    scenario: Scenario | dict[str, Any] | None = None,
    **fields: Any,
) -> CaseResult:
    """A case with ``verdicts`` (invariant id -> verdict, or (verdict, reason)); a scenario
    model is recorded as an exact dump, a dict as given."""
    judged = {
        invariant: InvariantVerdict(verdict=value, reason="")
        if isinstance(value, str)
        else InvariantVerdict(verdict=value[0], reason=value[1])
        for invariant, value in verdicts.items()
    }
    defaults: dict[str, Any] = {
        "status": "completed",
        "duration_s": 0.01,
        "events": [],
        "expected": {"attempts": []},
        "requests": [],
    }
    if isinstance(scenario, Scenario):
        defaults["scenario"] = scenario.model_dump(mode="json")
        defaults["title"] = scenario.title
    elif scenario is not None:
        defaults["scenario"] = scenario
    return CaseResult(case=case_id, verdicts=judged, **(defaults | fields))


def result(
    cases: list[CaseResult],
    *,
    name: str = "example-adapter",
    version: str = "1.0.0",
    **fields: Any,
) -> RunResult:
    defaults: dict[str, Any] = {
        "suite_version": "0.1.0",
        "adapter": {
            "type": "hello",
            "protocol": 1,
            "name": name,
            "version": version,
            "capabilities": {
                "deltas": True,
                "reasoning": True,
                "usage": True,
                "retry": False,
                "error_codes": True,
            },
        },
        "options": {"strict": False, "transport": "loopback"},
        "started_at": "2026-01-02T03:04:05+00:00",
        "finished_at": "2026-01-02T03:04:09+00:00",
        "catalogue": catalogue(),
    }
    return RunResult(cases=cases, **(defaults | fields))


# --- the hostile result -----------------------------------------------------------------


def hostile_scenario() -> Scenario:
    body = (
        stream(line_ending="crlf", bom=True)
        .comment(f" {SCRIPT}")
        .field("event", TEXTAREA)
        .text(HOSTILE)
        .pause(250)
        .tool_call(0, id="call_1", type="function", name=f"get_{SCRIPT}", arguments=IMG)
        .raw(IMG)
        .finish("stop")
        .done()
    )
    provenance = Provenance(urls=(*HOSTILE_URLS, GOOD_URL), emitted_by=HOSTILE, notes=HOSTILE)
    builder = ScenarioBuilder(
        "hostile-content",
        title=f"Hostile title {SCRIPT}",
        description=f"Hostile description {HOSTILE}",
        provenance=provenance,
    )
    return builder.attempt(body).expect(finish="stop", text=HOSTILE).build()


def hostile_events() -> list[dict[str, Any]]:
    return [
        {"type": "block-start", "index": 0, "block_type": "text"},
        {"type": "text-delta", "index": 0, "text": HOSTILE},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": HOSTILE}},
        {
            "type": "block-end",
            "index": 1,
            "block": {"type": "tool-call", "id": TEXTAREA, "name": SCRIPT, "arguments": IMG},
        },
        {"type": "finish", "reason": "error", "code": SCRIPT, "message": HOSTILE},
        {"type": "end"},
    ]


def hostile_requests() -> list[dict[str, Any]]:
    return [
        {
            "scenario": "hostile-content",
            "attempt": 1,
            "method": "POST",
            "path": f"/hostile-content/v1/chat/completions?{IMG}",
            "headers": [["x-evil", HOSTILE], ["content-type", "application/json"]],
            "body": f'{{"model": "{SCRIPT}"}}',
            "body_base64": "",
            "received_at": 1700000000.0,
            "ended_at": 1700000000.25,
            "ended": "complete",
        }
    ]


def hostile_result() -> RunResult:
    scenario = hostile_scenario()
    content = case(
        scenario.id,
        {
            "C1": ("fail", f"text {HOSTILE}"),
            "T6": ("fail", f"tool call name {SCRIPT}"),
            "G8": ("non-strict", TEXTAREA),
            "T7": ("info", IMG),
            "H2": ("n/a", INVISIBLE),
            "G1": "pass",
        },
        scenario=scenario,
        tags=[SCRIPT, "tool-identity"],
        provenance=scenario.provenance.model_dump(mode="json"),
        detail=HOSTILE,
        events=hostile_events(),
        expected={"attempts": [{"attempt": 1, "finish": "stop", "features": [SCRIPT]}]},
        requests=hostile_requests(),
        stderr=f"Traceback: {HOSTILE}\n",
    )
    hostile_id = case(
        f"id-{SCRIPT}",
        {"C1": ("fail", JS_URL), "G1": "pass"},
        title=IMG,
        scenario={"attempts": [{"stream": {"steps": [{"raw": SCRIPT}]}}]},
    )
    passing = case("plain-pass", {"G1": "pass", "C1": "pass", "T7": ("info", SCRIPT)})
    hostile_catalogue = [
        *catalogue(),
        {
            "id": f"X{SCRIPT}",
            "family": f"X {IMG}",
            "family_title": HOSTILE,
            "level": IMG,
            "statement": HOSTILE,
            "source": JS_URL,
            "needs": [SCRIPT],
            "rationale": TEXTAREA,
        },
    ]
    return result(
        [content, hostile_id, passing],
        name=f"adapter {SCRIPT}",
        version=IMG,
        catalogue=hostile_catalogue,
        options={"strict": False, "note": HOSTILE, "policy": {"codes": [SCRIPT, TEXTAREA]}},
        suite_version=TEXTAREA,
    )
