"""A gateway case made readable: the upstream's bytes beside the gateway's, and the lint.

Gateway mode keeps the gateway's answer as base64 reads (``CaseResult.gateway``); this
turns it into the same escaped wire rows as the upstream transcript, so the report lays
the two out side by side. Nothing here trusts the results: a malformed entry is shown as
missing, never raised.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from fakeprovider.scenario import Scenario

from ..results import CaseResult
from .transcript import AttemptTranscript, Segment, WireRow, segments, transcript

_VISIBLE_GAP_MS = 1.0  # shorter waits between reads are not worth a column entry


@dataclass(frozen=True)
class FindingLine:
    side: str  # upstream or gateway
    rule: str
    position: str
    message: str


@dataclass(frozen=True)
class GatewayView:
    url: str
    upstream_attempt: int
    upstream_requests: int
    upstream: AttemptTranscript | None
    summary: str
    rows: tuple[WireRow, ...]
    findings: tuple[FindingLine, ...]


def gateway_view(case: CaseResult, scenario: Scenario | None) -> GatewayView | None:
    """The side-by-side view of a gateway case; None for a case of an adapter run."""
    if not case.gateway:
        return None
    served = _int(case.gateway.get("upstream_attempt"), 1)
    upstream = None
    if scenario is not None and 1 <= served <= len(scenario.attempts):
        upstream = transcript(scenario)[served - 1]
    capture = case.gateway.get("capture")
    capture = capture if isinstance(capture, dict) else {}
    rows = _rows(capture)
    size = sum(row.size for row in rows if row.label.isdigit())
    reads = sum(1 for row in rows if row.label.isdigit())
    return GatewayView(
        url=str(case.gateway.get("url", "")),
        upstream_attempt=served,
        upstream_requests=_int(case.gateway.get("upstream_requests"), 0),
        upstream=upstream,
        summary=f"HTTP {capture.get('status')}, {size} bytes in {reads} read(s), "
        f"then {capture.get('ending', '?')}",
        rows=rows,
        findings=_findings(case.gateway.get("lint")),
    )


def _rows(capture: dict[str, Any]) -> tuple[WireRow, ...]:
    rows = []
    status, headers = capture.get("status"), capture.get("headers")
    if status is not None:
        pairs = headers if isinstance(headers, list) else []
        head = "".join(f"{_pair(pair)}\r\n" for pair in pairs)
        rows.append(_row("head", f"HTTP {status}\r\n{head}".encode()))
    previous = 0.0
    reads = capture.get("reads")
    for number, read in enumerate(reads if isinstance(reads, list) else [], 1):
        read = read if isinstance(read, dict) else {}
        at_ms = read.get("at_ms")
        at_ms = float(at_ms) if isinstance(at_ms, int | float) else previous
        gap = at_ms - previous
        previous = at_ms
        rows.append(_row(str(number), _bytes(read.get("data_base64")), gap))
    ending = str(capture.get("ending", "?"))
    detail = str(capture.get("detail") or "")
    text = f"<{ending}{': ' + detail if detail else ''}>"
    rows.append(WireRow("end", (Segment(text),)))
    return tuple(rows)


def _row(label: str, data: bytes, gap_ms: float = 0.0) -> WireRow:
    delay = round(gap_ms, 1) if gap_ms >= _VISIBLE_GAP_MS else 0.0
    return WireRow(label, segments(data), len(data), delay)


def _bytes(value: object) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return b"<not base64 in the results>"


def _pair(pair: object) -> str:
    if isinstance(pair, list | tuple) and len(pair) == 2:
        return f"{pair[0]}: {pair[1]}"
    return str(pair)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _findings(lint: object) -> tuple[FindingLine, ...]:
    if not isinstance(lint, dict):
        return ()
    lines = []
    for side in ("upstream", "gateway"):
        entries = lint.get(side)
        for entry in entries if isinstance(entries, list) else []:
            entry = entry if isinstance(entry, dict) else {}
            lines.append(
                FindingLine(
                    side,
                    str(entry.get("rule", "")),
                    f"line {entry.get('line')}, byte {entry.get('byte')}",
                    str(entry.get("message", "")),
                )
            )
    return tuple(lines)
