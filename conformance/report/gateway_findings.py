"""The gateway section of ``reports/compatibility.md``: what a real gateway lost, per direction.

A gateway's runs, read by ``conformance matrix render``, are ``conformance gateway``
results saved under the matrix folder: ``gateways/<gateway>/results.json`` (chat both ways)
and ``gateways/<gateway>/<direction>/results.json`` (one per pair of dialects), as
``tox -e gateway-litellm`` writes them. Each failure is listed with its case, rule and
reason, and the causes written for it in ``fixtures/causes/``, which name the direction
(:func:`direction_key`) and the rules they explain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..results import RunResult
from .markdown import code_span, markdown_text
from .upstream import KnownCause, known_causes

GATEWAYS_FOLDER = "gateways"
"""Where the matrix folder keeps gateway runs, one folder per gateway."""

KNOWN_GATEWAYS = ("litellm-proxy",)
"""The gateways the project judges (``tox -e gateway-<name>``)."""


def direction_key(gateway: str, upstream: str, downstream: str) -> str:
    """How a cause names one direction of a gateway: ``litellm-proxy/anthropic-messages--
    chat-completions``. A gateway's translation differs per direction, and so do its bugs."""
    return f"{gateway}/{upstream}--{downstream}"


GATEWAYS_TITLE = "Gateways (judged by `conformance gateway`)"
GATEWAYS_NOTE = (
    "Each real gateway runs on loopback in front of the fake provider, in every direction it "
    "serves among chat-completions, Anthropic Messages and OpenAI Responses: the fake "
    "provider plays the upstream dialect's fixtures, the gateway's answer is read in the "
    "downstream dialect and compared with the upstream's meaning (M rules for chat both ways, "
    "GW rules across dialects), and the next request of each two-turn case is judged as the "
    "gateway sent it upstream (N1, N2, AN-R2, RS-R2). What the downstream cannot carry is "
    "info, never listed here. Reproduce a row with `tox -e gateway-litellm -- -k <direction>` "
    "and the case id."
)


@dataclass(frozen=True)
class GatewayRun:
    gateway: str  # the folder's name: how causes name the gateway
    result: RunResult

    @property
    def dialects(self) -> tuple[str, str]:
        options = self.result.options
        upstream = options.get("upstream_dialect", "chat-completions")
        return str(upstream), str(options.get("downstream_dialect", "chat-completions"))

    @property
    def direction(self) -> str:
        return " → ".join(self.dialects)

    @property
    def key(self) -> str:
        return direction_key(self.gateway, *self.dialects)


@dataclass(frozen=True)
class Finding:
    """The cases of one direction that one rule flags with one verdict."""

    rule: str
    verdict: str
    cases: tuple[str, ...]
    reason: str  # the first case's


def findings(run: GatewayRun) -> list[Finding]:
    """Every fail and non-strict verdict of ``run``, grouped by rule and verdict: fails
    first, then the rules flagging most cases."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for case in run.result.cases:
        for rule, verdict in case.verdicts.items():
            if verdict.verdict in ("fail", "non-strict"):
                grouped.setdefault((rule, verdict.verdict), []).append((case.case, verdict.reason))
    found = [
        Finding(rule, verdict, tuple(case for case, _ in shown), shown[0][1])
        for (rule, verdict), shown in grouped.items()
    ]
    return sorted(found, key=lambda f: (f.verdict != "fail", -len(f.cases), f.rule))


SHOWN_CASES = 8
"""Cases named per row; the rest are counted (every one is in the run's report)."""


def gateway_section(runs: Sequence[GatewayRun]) -> list[str]:
    """The section's Markdown lines; nothing when no gateway was judged."""
    if not runs:
        return []
    lines = ["", f"## {GATEWAYS_TITLE}", "", GATEWAYS_NOTE, ""]
    lines += [
        "| gateway | direction | cases | fail | non-strict | info |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        counts = run.result.counts()
        lines.append(
            f"| {markdown_text(run.gateway)} | {markdown_text(run.direction)} | "
            f"{len(run.result.cases)} | {counts['fail']} | {counts['non-strict']} | "
            f"{counts['info']} |"
        )
    for run in runs:
        lines += ["", f"### {markdown_text(run.gateway)}: {markdown_text(run.direction)}", ""]
        found = findings(run)
        if not found:
            lines.append("No failure.")
            continue
        lines += [
            "| rule | verdict | cases | first case's reason | causes written |",
            "|---|---|---|---|---|",
        ]
        lines += [_row(run.key, finding) for finding in found]
    return lines


def causes_of(key: str, finding: Finding) -> list[KnownCause]:
    """The causes written for this direction (``key``) that explain ``finding``: naming one of
    its cases, and its rule where the cause names rules."""
    return [
        known
        for known in known_causes()
        if key in known.libraries
        and (not known.rules or finding.rule in known.rules)
        and any(case in known.cases for case in finding.cases)
    ]


def _row(key: str, finding: Finding) -> str:
    shown = ", ".join(code_span(case) for case in finding.cases[:SHOWN_CASES])
    more = len(finding.cases) - SHOWN_CASES
    cases = f"{len(finding.cases)}: {shown}" + (f" and {more} more" if more > 0 else "")
    written = "; ".join(
        markdown_text(known.cause)
        + (f" ([{known.upstream_label}]({known.upstream}))" if known.upstream else "")
        for known in causes_of(key, finding)
    )
    cells = (
        markdown_text(finding.rule),
        finding.verdict,
        cases,
        markdown_text(_shortened(finding.reason)),
        written or "*not yet written*",
    )
    return "| " + " | ".join(cells) + " |"


def _shortened(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
