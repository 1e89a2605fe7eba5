"""The report of a gateway case: upstream and gateway transcripts side by side, the lint
findings, every byte escaped, and nothing raised by a hand-edited results file."""

from __future__ import annotations

import base64
from typing import Any

import report_builders as build

from conformance.gateway.runner import catalogue
from conformance.report import render_html, render_junit
from conformance.report.gateway import gateway_view

HOSTILE_BYTES = (
    b"data: " + build.SCRIPT.encode() + b"\r\n\xef\xbb\xbf" + build.INVISIBLE.encode() + b"\n\n"
)


def _gateway(reads: list[Any], findings: list[Any]) -> dict[str, Any]:
    return {
        "url": "http://127.0.0.1:4000/v1/chat/completions",
        "upstream_attempt": 1,
        "upstream_requests": 1,
        "capture": {
            "status": 200,
            "headers": [["content-type", build.IMG]],
            "reads": reads,
            "ending": "complete",
            "detail": "",
        },
        "lint": {"upstream": [], "gateway": findings},
    }


def _case(gateway: dict[str, Any]) -> Any:
    return build.case(
        "gw-case",
        {"W5": ("non-strict", f"introduced by the gateway: {build.SCRIPT}"), "M5": "pass"},
        scenario=build.hostile_scenario(),
        gateway=gateway,
    )


def _reads() -> list[dict[str, Any]]:
    return [
        {"at_ms": 1.5, "data_base64": base64.b64encode(HOSTILE_BYTES).decode()},
        {"at_ms": 90.0, "data_base64": base64.b64encode(b"data: [DONE]\n\n").decode()},
    ]


def _finding() -> dict[str, Any]:
    return {"rule": "W5", "line": 3, "byte": 40, "message": build.SCRIPT}


def test_the_case_shows_both_streams_and_the_findings() -> None:
    result = build.result([_case(_gateway(_reads(), [_finding()]))], catalogue=catalogue())

    page = render_html(result)

    assert "Upstream vs gateway" in page
    assert "after 88.5 ms" in page  # the wait before the gateway's second read
    assert "line 3, byte 40" in page
    assert build.SCRIPT not in page and "<img" not in page.lower()
    assert "&lt;script&gt;" in page and '<span class="esc">\\xef</span>' in page
    assert "Wire hazards" in page and "Meaning through the gateway" in page
    assert 'classname="W.W5"' in render_junit(result)


def test_a_malformed_gateway_entry_is_shown_as_missing_not_raised() -> None:
    junk = _gateway([{"at_ms": "soon", "data_base64": "%%%"}, "not a read"], ["not a finding"])
    junk["upstream_attempt"] = 99
    junk["lint"] = "nope"

    view = gateway_view(_case(junk), build.hostile_scenario())

    assert view is not None
    assert view.upstream is None and view.findings == ()
    assert [row.label for row in view.rows] == ["head", "1", "2", "end"]
    assert "not base64" in "".join(segment.text for segment in view.rows[1].segments)


def test_an_adapter_case_has_no_gateway_view() -> None:
    assert gateway_view(build.case("plain", {"C1": "pass"}), None) is None
