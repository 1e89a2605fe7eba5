"""``conformance validate``: fixtures checked like code, ``expect`` against the oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fakeprovider.fixtures import Fixture, FixtureProblem, validate_fixtures

from ..options import DEFAULT_POLICY, RetryPolicyError, case_policy
from ..oracle import expect_disagreements
from ..quirks import recorded_only
from .options import ExitCode


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check the fixtures below PATHS, and each expect block against the oracle.

    First what `fakeprovider validate` checks (the schema, ids equal to file stems, streams
    that encode), then whether each fixture's expect states the outcome the oracle reads
    from its wire. One line per problem: file:line: field: reason. Exits 0 when there is
    none, 2 otherwise; warnings (a plain scalar cut short by ' #') do not count.
    """
    fixtures, problems = validate_fixtures(paths)
    for fixture in fixtures:
        problems += _expectation_problems(fixture)
    warnings = [warning for fixture in fixtures for warning in fixture.warnings]
    for problem in sorted([*problems, *warnings], key=lambda p: (str(p.path), p.line or 0)):
        click.echo(str(problem), err=True)
    if problems:
        files = len({problem.path for problem in problems})
        click.echo(f"{len(problems)} problem(s) in {files} fixture(s)", err=True)
        sys.exit(ExitCode.USAGE_ERROR)
    click.echo(f"{len(fixtures)} fixture(s) valid, expect agrees with the oracle")


def _expectation_problems(fixture: Fixture) -> list[FixtureProblem]:
    scenario = fixture.scenario
    try:
        case_policy(DEFAULT_POLICY, scenario)
    except RetryPolicyError as error:
        detail = str(error).removeprefix(f"scenario {scenario.id}: retry_policy: ")
        reason = f"does not fit the default retry policy ({detail})"
        return [fixture.problem(("retry_policy",), reason)]
    # An ambiguous quirk (tagged level:info) lists only what is unambiguous.
    found = expect_disagreements(scenario, exhaustive=not recorded_only(scenario))
    return [fixture.problem(d.location, d.reason) for d in found]
