"""A run in Markdown for a CI job's page (``--summary``, GitHub's ``GITHUB_STEP_SUMMARY``).

The gate's outcome and the verdict counts, then each verdict to look at once (invariant,
case, its reason on one line, the command that replays the case, and with a baseline
whether it is new, changed or known), then what else the baseline comparison found: its
stale entries and what is no longer judged. Every string from a fixture or an adapter is
a code span (:func:`.markdown.code_span`): shown as it is, never read as Markdown.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..results import RunResult
from ..spec import LATEST_SPEC
from ..verdicts import ATTENTION, VERDICTS
from .baseline import BaselineDiff, VerdictChange, baseline_sections, fails_gate
from .markdown import code_span

MAX_LISTED: Final = 100
"""Verdicts listed per section: GitHub keeps 1 MiB of a step's summary, a broken adapter
fails thousands."""

MAX_REASON_CHARS: Final = 300


def render_summary(
    result: RunResult, diff: BaselineDiff | None = None, fixtures: Sequence[Path] = ()
) -> str:
    """The Markdown summary of ``result`` (compared with a baseline when ``diff``);
    ``fixtures``: the run's --fixtures, which the replay commands repeat."""
    hello = result.adapter
    gate = "FAILED" if fails_gate(result, diff) else "OK"
    name = code_span(f"{hello.get('name', '')} {hello.get('version', '')}".strip())
    lines = [
        f"## streamconform: {gate} — {name}",
        "",
        f"{len(result.cases)} cases, {result.contract} contract, spec {code_span(result.spec)}"
        + ("" if diff is None else f"; against the baseline: {diff.headline}"),
        "",
        "| " + " | ".join(VERDICTS) + " |",
        "| " + " | ".join("---:" for _ in VERDICTS) + " |",
        "| " + " | ".join(str(count) for count in result.counts().values()) + " |",
    ]
    tags = {} if diff is None else _baseline_tags(diff)
    attention = [
        (case, invariant, verdict)
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ATTENTION
    ]
    if attention:
        lines += ["", f"### Verdicts to look at ({len(attention)})", ""]
    for case, invariant, verdict in attention[:MAX_LISTED]:
        tag = tags.get((case.case, invariant), "")
        lines += [
            f"- **{verdict.verdict}** {code_span(invariant)} · "
            f"{code_span(case.case)}{tag} — {code_span(_one_line(verdict.reason))}",
            f"  replay: {code_span(replay_command(result, case.case, fixtures))}",
        ]
    lines += _more(len(attention))
    if diff is not None:
        lines += _baseline_lines(diff)
    return "\n".join(lines) + "\n"


def replay_command(result: RunResult, case: str, fixtures: Sequence[Path] = ()) -> str:
    """The ``conformance run`` that runs ``case`` again, as ``result``'s run did."""
    options = result.options
    words = ["conformance", "run", *shlex.split(str(options.get("adapter") or ""))]
    for path in fixtures:
        words += ["--fixtures", str(path)]
    if options.get("generated"):
        words += ["--generate", str(options["generated"]), "--seed", str(options.get("seed"))]
    if options.get("strict"):
        words.append("--strict")
    if options.get("transport", "loopback") != "loopback":
        words += ["--transport", str(options["transport"])]
    if result.contract != "harness":
        words += ["--contract", result.contract]
    if result.spec != LATEST_SPEC:
        words += ["--spec", result.spec]
    return shlex.join([*words, "-k", case])


def _baseline_tags(diff: BaselineDiff) -> dict[tuple[str, str], str]:
    """What the baseline says of each current failure, as a suffix of its line."""
    tags = {(c.case, c.invariant): " (new)" for c in diff.new_failures}
    tags |= {(c.case, c.invariant): " (known)" for c in diff.known_failures}
    for change in diff.changed:
        was = code_span(_one_line(change.baseline_cause or ""))
        tags[change.case, change.invariant] = f" (changed; the baseline's cause: {was})"
    return tags


def _baseline_lines(diff: BaselineDiff) -> list[str]:
    """The comparison's lists that are not current failures: stale entries, not judged."""
    lines = []
    for title, changes, failing in baseline_sections(diff):
        if not changes or failing:
            continue
        lines += ["", f"### {title} ({len(changes)})", ""]
        lines += [f"- {_change_line(change)}" for change in changes[:MAX_LISTED]]
        lines += _more(len(changes))
    return lines


def _change_line(change: VerdictChange) -> str:
    before, after = change.before or "(none)", change.after or "(none)"
    return f"{code_span(change.invariant)} · {code_span(change.case)}: {before} → {after}"


def _more(count: int) -> list[str]:
    return [f"- … and {count - MAX_LISTED} more (see the report)"] if count > MAX_LISTED else []


def _one_line(text: str) -> str:
    """The first line of a reason, cut to MAX_REASON_CHARS."""
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= MAX_REASON_CHARS else first[: MAX_REASON_CHARS - 1] + "…"
