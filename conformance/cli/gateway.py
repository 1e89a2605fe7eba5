"""``conformance gateway`` and ``conformance lint``: judge a gateway, lint captured streams."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from fakeprovider.fixtures import FIXTURE_SUFFIXES, FixtureError, load_fixture
from fakeprovider.playback import DEFAULT_MODEL_PREFIX
from fakeprovider.wire import EncodeError

from ..gateway.runner import GatewayOptions, run_gateway
from ..lint import RULES, Wire, attempt_wire
from ..report import write_reports
from ..results import RunResult
from ..verdicts import ATTENTION
from .options import VERDICT_STYLE, fixtures_option, selected_scenarios


@click.command()
@click.option("--gateway-url", required=True, help="The gateway's base URL, e.g. .../v1.")
@click.option(
    "--upstream-port",
    default=8765,
    show_default=True,
    help="Port of the fake upstream; the gateway's upstream is http://127.0.0.1:PORT/v1.",
)
@fixtures_option
@click.option("-k", "select", default=None, help="Only cases whose id contains this text.")
@click.option(
    "--model-prefix",
    default=DEFAULT_MODEL_PREFIX,
    show_default=True,
    help="The upstream plays scenario <id> for a model of PREFIX<id>.",
)
@click.option("--model", default=None, help="The request's model, {id} replaced (PREFIX{id}).")
@click.option("--api-key", default="sk-test", show_default=True, help="Bearer token sent.")
@click.option("--name", default="", help="How the reports name the gateway.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write results JSON.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path), help="Write reports.")
@click.option("--strict", is_flag=True, help="Non-strict verdicts count as failures.")
@click.option("--idle-timeout", default=5.0, show_default=True, help="Seconds without a byte.")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds per case.")
def gateway(
    gateway_url: str,
    upstream_port: int,
    fixture_paths: tuple[Path, ...],
    select: str | None,
    model_prefix: str,
    model: str | None,
    api_key: str,
    name: str,
    json_path: Path | None,
    report_dir: Path | None,
    strict: bool,
    idle_timeout: float,
    timeout: float,
) -> None:
    """Judge a gateway: the fake provider is its upstream, each scenario goes through it.

    Meaning (M rules, MUST): the reference adapter reads the gateway's answer as the oracle
    reads the upstream's. Wire hazards (W rules, SHOULD): the lint of `conformance lint`;
    a hazard the upstream already had is info, one the gateway introduced is non-strict.
    Exits 0 only when no verdict is a failure.
    """
    scenarios = selected_scenarios(fixture_paths, select)
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
    )
    console = Console()
    try:
        result = asyncio.run(run_gateway(scenarios, options))
    except OSError as error:
        raise click.ClickException(f"cannot start the fake upstream: {error}") from None
    print_gateway_summary(console, result)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(result.to_json(), encoding="utf-8")
        console.print(f"results: {json_path}")
    if report_dir is not None:
        for kind, path in write_reports(result, report_dir).items():
            console.print(f"{kind}: {path}")
    sys.exit(1 if result.failed else 0)


def print_gateway_summary(console: Console, result: RunResult) -> None:
    """Per rule, how many cases held, and every case the gateway broke or changed."""
    console.print(f"[bold]{result.adapter.get('name')}[/] — {len(result.cases)} cases")
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
    for case in result.cases:
        for rule_id, verdict in case.verdicts.items():
            if verdict.verdict in ATTENTION:
                style = VERDICT_STYLE[verdict.verdict]
                console.print(
                    f"[{style}]{verdict.verdict}[/] {case.case} {rule_id}: {verdict.reason}",
                    highlight=False,
                )
    totals = ", ".join(f"{count} {verdict}" for verdict, count in result.counts().items())
    console.print(f"[bold]{'FAILED' if result.failed else 'OK'}[/]: {totals}")


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--include-usage/--no-include-usage",
    default=True,
    show_default=True,
    help="Whether the request asked for usage (stream_options.include_usage), as the "
    "suite's requests do.",
)
def lint(files: tuple[Path, ...], include_usage: bool) -> None:
    """Check captured SSE against the wire-hazard rules.

    FILE is a fixture (.yaml, .yml, .json: every attempt is linted as the fake provider
    sends it) or a raw byte dump of a response body (anything else, e.g. the .sse files of
    `fakeprovider record`). Prints one finding per line with its line and byte offset;
    exits 1 when there is any finding, 2 when a file cannot be read.
    """
    findings = 0
    for path in files:
        for label, wire in _wires(path):
            for finding in wire.lint(include_usage=include_usage).findings:
                rule = RULES[finding.rule]
                findings += 1
                click.echo(
                    f"{label}:{finding.position.line}: byte {finding.position.offset}: "
                    f"{finding.rule} {finding.message} (quirk family {rule.quirk_family}: "
                    f"{', '.join(rule.quirks)})"
                )
    click.echo(f"{findings} finding(s) in {len(files)} file(s)", err=True)
    sys.exit(1 if findings else 0)


def _wires(path: Path) -> list[tuple[str, Wire]]:
    """What to lint in a file: each attempt of a fixture, or the raw body of a dump."""
    try:
        if path.suffix not in FIXTURE_SUFFIXES:
            return [(str(path), Wire(path.read_bytes(), 200, "complete"))]
        scenario = load_fixture(path)
        return [
            (f"{path}#attempt{number}", attempt_wire(attempt))
            for number, attempt in enumerate(scenario.attempts, 1)
        ]
    except FixtureError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
    except (OSError, EncodeError) as error:
        click.echo(f"{path}: {error}", err=True)
    sys.exit(2)


COMMANDS = (gateway, lint)
