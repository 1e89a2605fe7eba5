"""``conformance gateway`` and ``conformance lint``: judge a gateway, lint captured streams."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from fakeprovider.dialects import DEFAULT_DIALECT, DIALECT_IDS, DialectId
from fakeprovider.fixtures import FIXTURE_SUFFIXES, FixtureError, load_fixture
from fakeprovider.interrupts import Interruption
from fakeprovider.playback import DEFAULT_MODEL_PREFIX
from fakeprovider.stopping import exit_interrupted, stops_on_signals, written
from fakeprovider.wire import EncodeError

from ..gateway.runner import (
    GatewayOptions,
    GatewayUnreachableError,
    check_gateway,
    run_gateway,
)
from ..lint import ALL_RULES, Wire, attempt_wire
from ..results import RunResult
from ..spec import LATEST_SPEC
from ..verdicts import ATTENTION, BY_SEVERITY, Verdict, reading_order
from .console import (
    VERDICT_STYLE,
    controls_shown,
    print_interrupted,
    print_totals,
    terminal,
    visible,
)
from .options import (
    ExitCode,
    SetupError,
    exit_judged,
    fixtures_option,
    jobs_option,
    json_option,
    report_option,
    select_option,
    selected_scenarios,
    spec_option,
    strict_option,
    timeout_options,
)
from .outputs import Output, Writes, check_outputs, write_outputs


@click.command()
@click.option("--gateway-url", required=True, help="The gateway's base URL, e.g. .../v1.")
@click.option(
    "--upstream-port",
    type=click.IntRange(1, 65535),
    default=8765,
    show_default=True,
    help="Port of the fake upstream; the gateway's upstream is http://127.0.0.1:PORT/v1.",
)
@click.option(
    "--upstream-dialect",
    type=click.Choice(DIALECT_IDS),
    default=DEFAULT_DIALECT,
    show_default=True,
    help="The wire the fake upstream speaks: the scenarios of this dialect are run.",
)
@click.option(
    "--downstream-dialect",
    type=click.Choice(DIALECT_IDS),
    default=DEFAULT_DIALECT,
    show_default=True,
    help="The wire the gateway serves: each request is POSTed to its endpoint in its shape "
    "and the answer read as it.",
)
@fixtures_option
@select_option
@click.option(
    "--model-prefix",
    default=DEFAULT_MODEL_PREFIX,
    show_default=True,
    help="The upstream plays scenario <id> for a model of PREFIX<id>.",
)
@click.option("--model", default=None, help="The request's model, {id} replaced (PREFIX{id}).")
@click.option("--api-key", default="sk-test", show_default=True, help="Bearer token sent.")
@click.option("--name", default="", help="How the reports name the gateway.")
@json_option
@report_option
@strict_option
@spec_option
@timeout_options(idle=5.0, case=30.0)
@jobs_option("Requests in flight through the gateway at once, the longest first.")
@stops_on_signals
def gateway(
    gateway_url: str,
    upstream_port: int,
    upstream_dialect: DialectId,
    downstream_dialect: DialectId,
    fixture_paths: tuple[Path, ...],
    select: str | None,
    model_prefix: str,
    model: str | None,
    api_key: str,
    name: str,
    json_path: Path | None,
    report_dir: Path | None,
    strict: bool,
    spec: str | None,
    idle_timeout: float,
    timeout: float,
    jobs: int,
    interruption: Interruption,
) -> None:
    """Judge a gateway: the fake provider is its upstream, each scenario goes through it.

    Meaning (M rules, MUST): the reference adapter reads the gateway's answer as the oracle
    reads the upstream's. Wire hazards (W rules, SHOULD): the lint of `conformance lint`;
    a hazard the upstream already had is info, one the gateway introduced is non-strict.
    Across dialects (any pair but chat-completions both ways), the GW rules (MUST) compare
    the two canonical readings through the meaning map: what the downstream wire cannot
    carry is info, what it can and the gateway lost fails; the answer must also keep the
    downstream wire's lint rules (AN-W, RS-W).
    The gateway must answer (any HTTP status to GET .../models) before the run starts.
    Exits 0 only when no verdict is a failure; 130 or 143 when SIGINT or SIGTERM stopped
    it, the cases that ended written, marked interrupted.
    """
    check_outputs(Output("--json", json_path), Output("--report", report_dir, directory=True))
    scenarios = selected_scenarios(fixture_paths, select, dialects=(upstream_dialect,))
    options = GatewayOptions(
        gateway_url=gateway_url,
        upstream_port=upstream_port,
        model_prefix=model_prefix,
        model=model,
        api_key=api_key,
        idle_timeout_s=idle_timeout,
        timeout_s=timeout,
        strict=strict,
        name=name,
        upstream_dialect=upstream_dialect,
        downstream_dialect=downstream_dialect,
        spec=spec or LATEST_SPEC,
    )
    try:
        asyncio.run(check_gateway(options))
    except GatewayUnreachableError as error:
        raise SetupError(str(error)) from None
    with interruption.deferred():  # a signal stops the cases: what ended is still written
        try:
            result = asyncio.run(
                run_gateway(scenarios, options, jobs=jobs, interruption=interruption)
            )
        except OSError as error:
            raise SetupError(f"cannot start the fake upstream: {error}") from None
        console = terminal()
        print_gateway_summary(console, result)
        writes = Writes()
        write_outputs(console, result, json_path, report_dir, writes)
    if interruption.signal is not None:
        progress = f"after {len(result.cases)} of {len(scenarios)} cases"
        exit_interrupted(interruption.signal, written([json_path, report_dir]), progress)
    writes.exit(result.failed)


def print_gateway_summary(console: Console, result: RunResult) -> None:
    """Per rule, how many cases held, and what the gateway broke or changed, per rule."""
    name = visible(str(result.adapter.get("name")))
    console.print(f"[bold]{name}[/] — {len(result.cases)} cases")
    print_interrupted(console, result)
    table = Table("rule", "level", "statement", "fail", "non-strict", "info", "pass")
    entries = {entry["id"]: entry for entry in result.catalogue}
    for rule_id, counts in result.per_invariant().items():
        entry = entries.get(rule_id)
        cells = [str(counts[v]) if counts[v] else "·" for v in ("fail", "non-strict", "info")]
        table.add_row(
            rule_id,
            entry["level"] if entry else "",
            entry["statement"] if entry else "",
            *cells,
            str(counts["pass"]),
        )
    console.print(table)
    _print_findings_per_rule(console, result)
    print_totals(console, result)


def _print_findings_per_rule(console: Console, result: RunResult) -> None:
    """One line per rule and verdict to look at: how many cases, and the first as example."""
    counts: Counter[tuple[str, Verdict]] = Counter()
    examples: dict[tuple[str, Verdict], tuple[str, str]] = {}
    for case in result.cases:
        for rule_id, judged in case.verdicts.items():
            if judged.verdict in ATTENTION:
                counts[rule_id, judged.verdict] += 1
                examples.setdefault((rule_id, judged.verdict), (case.case, judged.reason))
    for rule_id, verdict in sorted(
        counts, key=lambda key: (reading_order(key[0]), BY_SEVERITY.index(key[1]))
    ):
        count, (example, reason) = counts[rule_id, verdict], examples[rule_id, verdict]
        where = example if count == 1 else f"{count} cases, e.g. {example}"
        line = f"{rule_id}: {where}: {reason}"
        console.print(f"[{VERDICT_STYLE[verdict]}]{verdict}[/] {visible(line)}", highlight=False)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--include-usage/--no-include-usage",
    default=True,
    show_default=True,
    help="Whether the request asked for usage (stream_options.include_usage), as the "
    "suite's requests do (chat-completions).",
)
@click.option(
    "--dialect",
    type=click.Choice(DIALECT_IDS),
    default=None,
    help="The wire of a raw body (a fixture says its own). Default: read from the body, an "
    "event typed or named response.* being openai-responses, other named events or a first "
    "message_start anthropic-messages.",
)
def lint(files: tuple[Path, ...], include_usage: bool, dialect: DialectId | None) -> None:
    """Check captured SSE against its dialect's wire rules.

    FILE is a fixture (.yaml, .yml, .json: every attempt is linted as the fake provider
    sends it, under the fixture's dialect) or a raw byte dump of a response body (anything
    else, e.g. the .sse files of `fakeprovider record`). Chat-completions bodies are checked
    against the W rules, Anthropic Messages bodies against the AN wire rules (an index never
    started or reused, a delta unfit for its block, one end, events after message_stop,
    message_start first, a block left open, event names, empty data, tool ids and input,
    usage that decreases), OpenAI Responses bodies against the RS wire rules
    (response.created first, one terminal event and nothing after it, event names,
    sequence_number, output_index opened, in order and routed to its item's id, events
    that fit their item, no [DONE], a terminal output listing the streamed items, the error
    event's shape, empty data). Prints one finding per line with its line and byte offset;
    exits 1 when there is any finding, 2 when a file cannot be read.
    """
    findings = 0
    for path in files:
        for label, wire in _wires(path, dialect):
            for finding in wire.lint(include_usage=include_usage).findings:
                rule = ALL_RULES[finding.rule]
                findings += 1
                line = (
                    f"{label}:{finding.position.line}: byte {finding.position.offset}: "
                    f"{finding.rule} {finding.message} ({rule.cited})"
                )
                click.echo(controls_shown(line))
    click.echo(f"{findings} finding(s) in {len(files)} file(s)", err=True)
    exit_judged(findings > 0)


def _wires(path: Path, dialect: DialectId | None) -> list[tuple[str, Wire]]:
    """What to lint in a file: each attempt of a fixture, or the raw body of a dump."""
    try:
        if path.suffix not in FIXTURE_SUFFIXES:
            return [(str(path), Wire(path.read_bytes(), 200, "complete", dialect))]
        scenario = load_fixture(path)
        return [
            (f"{path}#attempt{number}", attempt_wire(attempt, scenario.dialect))
            for number, attempt in enumerate(scenario.attempts, 1)
        ]
    except FixtureError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
    except (OSError, EncodeError) as error:
        click.echo(controls_shown(f"{path}: {error}"), err=True)
    sys.exit(ExitCode.USAGE_ERROR)
