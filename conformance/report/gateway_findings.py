"""The gateway section of ``reports/compatibility.md``: what a real gateway lost, per direction.

A gateway's runs, read by ``conformance matrix render``, are ``conformance gateway``
results saved under the matrix folder: ``gateways/<gateway>/results.json`` (chat both ways)
and ``gateways/<gateway>/<direction>/results.json`` (one per pair of dialects), as
``tox -e gateway-litellm`` writes them. Each failure is listed with its case, rule and
reason, and the cause written for it in ``fixtures/causes/`` (keyed by the gateway's folder
name, as a library's by its column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..results import RunResult
from .markdown import code_span, markdown_text
from .upstream import cause_of

GATEWAYS_FOLDER = "gateways"
"""Where the matrix folder keeps gateway runs, one folder per gateway."""

KNOWN_GATEWAYS = ("litellm-proxy",)
"""The gateways the project judges (``tox -e gateway-<name>``): names causes may use."""

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
    def direction(self) -> str:
        options = self.result.options
        upstream = options.get("upstream_dialect", "chat-completions")
        downstream = options.get("downstream_dialect", "chat-completions")
        return f"{upstream} → {downstream}"


def _flagged(run: GatewayRun) -> list[tuple[str, str, str, str]]:
    """(case, rule, verdict, reason) of every fail and non-strict verdict, in run order."""
    return [
        (case.case, rule, verdict.verdict, verdict.reason)
        for case in run.result.cases
        for rule, verdict in case.verdicts.items()
        if verdict.verdict in ("fail", "non-strict")
    ]


def _shortened(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        flagged = _flagged(run)
        if not flagged:
            lines.append("No failure.")
        else:
            lines += ["| case | rule | verdict | what was lost | cause |", "|---|---|---|---|---|"]
            lines += [_row(run.gateway, *row) for row in flagged]
    return lines


def _row(gateway: str, case: str, rule: str, verdict: str, reason: str) -> str:
    known = cause_of(gateway, case)
    if known is None:
        cause = "*cause not yet written*"
    else:
        link = f" ([{known.upstream_label}]({known.upstream}))" if known.upstream else ""
        cause = markdown_text(known.cause) + link
    cells = (
        code_span(case),
        markdown_text(rule),
        verdict,
        markdown_text(_shortened(reason)),
        cause,
    )
    return "| " + " | ".join(cells) + " |"
