"""``conformance fuzz --contract interop`` over the honest population, through the API the
command runs (:func:`conformance.run.family_pool.check_families`): every family, for each
adapter and seed. The dev profile takes minutes per adapter and seed, too long for the test
suite (which runs the ci profile, test_honest_population.py); run it from the repository's
root::

    .venv/bin/python -m tests.conformance.honest.fuzz                  # dev, seeds 1 and 2
    .venv/bin/python -m tests.conformance.honest.fuzz --adapter composite --seed 3 \
        --save-failures /tmp/honest

Each failing family prints its headline breach and every other breach of the shrunk case,
and exits 1; ``--save-failures`` writes each shrunk case as a fixture, to replay with
``conformance replay FIXTURE --contract interop --adapter tests.conformance.honest:NAME``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from conformance.cli.console import visible
from conformance.cli.generate import save_failure
from conformance.run.case_runner import GENERATED_OPTIONS, CaseRunner
from conformance.run.family_pool import FamilyJob, check_families, check_job
from conformance.run.properties import FamilyRun, families
from conformance.verdicts import Contract

from . import HONEST, Honest

CONTRACT: Contract = "interop"
SEEDS = (1, 2)


def fuzzed(honest: Honest, seed: int, profile: str, jobs: int) -> Iterator[FamilyRun]:
    """Every family's run for ``honest`` under interop, as ``conformance fuzz`` checks them."""
    options = replace(GENERATED_OPTIONS, contract=CONTRACT)
    with CaseRunner(honest.target, None, options) as runner:
        family_jobs = [
            FamilyJob(
                family, honest.target, None, runner.options, runner.transport, profile, None, seed
            )
            for family in families()
        ]
        yield from check_families(family_jobs, jobs, functools.partial(check_job, runner))


def describe(run: FamilyRun) -> list[str]:
    """The family's lines: ok, or its shrunk case and each breach (headline first)."""
    failure = run.failure
    if failure is None:
        return [f"ok {run.family}: {run.examples} examples in {run.seconds:.0f} s"]
    lines = [
        f"FAILED {run.family}: shrunk to {failure.size.events} events, "
        f"{failure.size.bytes} bytes ({failure.scenario.id})" + (" (flaky)" if run.flaky else "")
    ]
    lines += [f"  {b.invariant} {b.verdict}: {visible(b.reason)}" for b in failure.breaches]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--adapter", action="append", choices=sorted(HONEST), help="repeatable")
    parser.add_argument("--seed", action="append", type=int, help="repeatable (default 1 and 2)")
    parser.add_argument("--hypothesis-profile", dest="profile", default="dev")
    parser.add_argument("--jobs", type=int, default=2, help="families at once")
    parser.add_argument("--save-failures", type=Path)
    args = parser.parse_args(argv)
    failed = False
    for name in args.adapter or HONEST:
        honest = HONEST[name]
        for seed in args.seed or SEEDS:
            print(f"== {name} --seed {seed} --hypothesis-profile {args.profile}", flush=True)
            for run in fuzzed(honest, seed, args.profile, args.jobs):
                failed |= run.failure is not None
                print("\n".join(describe(run)), flush=True)
                if run.failure is not None and args.save_failures is not None:
                    directory = args.save_failures / name
                    invocation = f"--contract {CONTRACT} --adapter {honest.target}"
                    saved = save_failure(run.failure, directory, seed, args.profile, invocation)
                    print(f"  saved: {saved}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
