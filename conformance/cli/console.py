"""What the commands print: verdict colours, the run summary, the kill table.

Adapter- and stream-supplied text reaches the terminal through here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from fakeprovider.dialects import DEFAULT_DIALECT
from fakeprovider.shown import controls_shown as controls_shown  # where the CLI takes it from

from ..adapters.mutants import Mutant
from ..invariants import CATALOGUE
from ..report import BaselineDiff, fails_gate, format_baseline
from ..results import CaseResult, RetryWait, RunResult
from ..run.kill_table import KillRow
from ..verdicts import ATTENTION, VERDICTS, Verdict, family_of

VERDICT_STYLE: dict[Verdict, str] = {
    "pass": "green",
    "non-strict": "yellow",
    "info": "cyan",
    "n/a": "dim",
    "fail": "bold red",
}


def terminal(*, stderr: bool = False) -> Console:
    """The console every command prints on: no emoji codes (an adapter's `:smile:` stays
    text); markup is ours, adapter- and stream-supplied text goes through visible()."""
    return Console(stderr=stderr, emoji=False)


def visible(text: str) -> str:
    """Adapter- or stream-supplied ``text`` as rich markup that prints it literally: markup
    escaped, control characters shown as escapes (``\\x1b``, ``\\n``), never interpreted."""
    return escape(controls_shown(text))


def transient_progress(detail: str) -> Progress:
    """A progress bar on stderr that is gone when done; ``detail`` is its last column.

    Its columns are plain text, not markup (a progress column would read emoji codes
    whatever the console says): give them controls_shown() text."""
    return Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(detail, markup=False),
        console=terminal(stderr=True),
        transient=True,
    )


def print_summary(
    console: Console,
    result: RunResult,
    diff: BaselineDiff | None = None,
    *,
    verbose: bool = False,
) -> None:
    """The run at a glance: the invariants the cases exercised (``verbose``: all of them),
    the retries when a retry invariant needs attention (``verbose``: always), every verdict
    to look at, and the totals."""
    hello = result.adapter
    console.print(
        f"[bold]{visible(str(hello['name']))}[/] {visible(str(hello['version']))} — "
        f"{len(result.cases)} cases{_dialect_counts(result)}, {result.contract} contract, "
        f"spec {visible(result.spec)}"
    )
    print_interrupted(console, result)
    table = Table("invariant", "level", *VERDICTS, title="verdicts per invariant")
    for invariant_id, counts in result.per_invariant().items():
        if not verbose and not any(counts.values()):
            continue
        known = CATALOGUE.get(invariant_id)
        level = known.level_in(result.contract, result.spec) if known else "?"
        cells = [f"[{VERDICT_STYLE[v]}]{counts[v]}[/]" if counts[v] else "·" for v in VERDICTS]
        table.add_row(visible(invariant_id), level, *cells)
    console.print(table)
    _print_retries(console, result, verbose=verbose)
    print_attention(console, result)
    if diff is not None:
        console.print(format_baseline(diff), markup=False, highlight=False)
    print_totals(console, result, diff)


def print_interrupted(console: Console, result: RunResult) -> None:
    """Say that a signal stopped the run, if one did."""
    if result.interrupted is not None:
        stopped = result.interrupted.describe(len(result.cases))
        console.print(f"[bold yellow]{stopped}[/]: the cases that did not end are not counted")


def _dialect_counts(result: RunResult) -> str:
    """`` (40 chat-completions, 10 anthropic-messages)``, or nothing for a chat-only run."""
    counts = Counter(case.dialect or DEFAULT_DIALECT for case in result.cases)
    if set(counts) <= {DEFAULT_DIALECT}:
        return ""
    return " (" + ", ".join(f"{n} {dialect}" for dialect, n in sorted(counts.items())) + ")"


# The invariant that judges a wait of each basis.
_WAIT_JUDGE = {"backoff": "R5", "retry-after": "R6"}


def _print_retries(console: Console, result: RunResult, *, verbose: bool) -> None:
    """Each case with retries (unless ``verbose``, only those where a retry invariant needs
    attention): the requests the provider saw, and every wait it measured beside the spec's
    bounds and the range the R5 or R6 verdict accepted."""
    cases = [
        case
        for case in result.cases
        if case.retry is not None and (verbose or _retry_attention(case))
    ]
    if not cases:
        return
    table = Table("case", "requests", "waits in ms: measured (spec; accepted)", title="retries")
    for case in cases:
        assert case.retry is not None
        seen, expected = case.retry.attempts_seen, case.retry.attempts_expected
        requests = str(seen) if seen == expected else f"{seen} (expected {expected})"
        waits = "\n".join(_wait_cell(wait) for wait in case.retry.waits) or "·"
        table.add_row(visible(case.case), requests, waits)
    console.print(table)


def _retry_attention(case: CaseResult) -> bool:
    return any(
        family_of(rule_id) == "R" and verdict.verdict in ATTENTION
        for rule_id, verdict in case.verdicts.items()
    )


def _wait_cell(wait: RetryWait) -> str:
    measured = "?" if wait.measured_ms is None else f"{wait.measured_ms:.0f}"
    if wait.basis is None or wait.expected_max_ms is None or wait.tolerated_max_ms is None:
        return measured
    spec = _span(wait.expected_min_ms, wait.expected_max_ms)
    accepted = _span(wait.tolerated_min_ms, wait.tolerated_max_ms)
    return f"{measured} (spec {spec}; {_WAIT_JUDGE[wait.basis]} accepts {accepted})"


def _span(low: float | None, high: float) -> str:
    """A range of milliseconds: one value, ``low-high``, or ``≤high`` without a lower end."""
    if low is None or low <= 0:
        return f"≤{high:.0f}"
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"


def print_attention(console: Console, result: RunResult) -> None:
    """Every verdict a reader must look at, one line each."""
    for case in result.cases:
        for rule_id, verdict in case.verdicts.items():
            if verdict.verdict in ATTENTION:
                style = VERDICT_STYLE[verdict.verdict]
                dialect = f" [{case.dialect}]" if case.dialect else ""
                line = f"{case.case}{dialect} {rule_id}: {verdict.reason}"
                console.print(f"[{style}]{verdict.verdict}[/] {visible(line)}", highlight=False)


def print_totals(console: Console, result: RunResult, diff: BaselineDiff | None = None) -> None:
    """The last line: OK or FAILED (against the baseline when there is one), and counts."""
    totals = ", ".join(f"{count} {verdict}" for verdict, count in result.counts().items())
    gate = "" if diff is None else f"{diff.headline}; "
    console.print(f"[bold]{'FAILED' if fails_gate(result, diff) else 'OK'}[/]: {gate}{totals}")


def render_mutant_list(mutants: Sequence[Mutant]) -> Table:
    """Every mutant with its bug and the invariants that must catch it, without running any."""
    table = Table("mutant", "bug", "targets", title="mutants")
    for mutant in mutants:
        table.add_row(mutant.name, visible(mutant.bug), ", ".join(mutant.targets))
    return table


def render_kill_table(rows: Sequence[KillRow]) -> Table:
    """The kill table for a terminal: one row per mutant, its kills and what else failed."""
    table = Table("mutant", "bug", "targets", "killed by", "also failed", "cases", title="mutants")
    for row in rows:
        status = "[green]killed[/]" if row.killed else "[bold red]survived[/]"
        killed_by = [
            f"{target} ({len(row.cases_killing(target))} cases)" for target in row.killed_by
        ]
        if row.survived:
            killed_by.append(f"[red]missed: {', '.join(row.survived)}[/]")
        if row.timeout_only:
            killed_by.append(f"[yellow]only by timeout: {', '.join(row.timeout_only)}[/]")
        others = [invariant for invariant in row.failed if invariant not in row.targets]
        cut_off = f"\n[yellow]{len(row.timed_out)} cut off[/]" if row.timed_out else ""
        table.add_row(
            f"{row.mutant}\n{status}",
            visible(row.bug),
            ", ".join(row.targets),
            "\n".join(killed_by),
            ", ".join(others) or "·",
            f"{len(row.cases)}{cut_off}",
        )
    killed = sum(row.killed for row in rows)
    table.caption = f"{killed}/{len(rows)} mutants killed by their target invariants"
    return table
