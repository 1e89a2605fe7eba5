"""Cases in flight: the default run and fuzz against their one-at-a-time selves.

    python benchmarks/bench_jobs.py [--jobs 4 8] [--repeat 1] [--fuzz "ARGS" ...] [--write]

Runs ``conformance run --json FILE`` (the bundled corpus, the reference adapter, loopback) as
a user would: with ``--jobs 1``, with no ``--jobs`` (the CPU count), and with each ``--jobs``
given. Per run: the wall time, that time over the longest case of the serial run (what no
number of jobs can go below), the speed-up over ``--jobs 1``, and whether every case's
status and verdicts equal the serial run's. Then ``conformance fuzz`` with ``--jobs 1`` and
``--jobs 2``, with each ``--fuzz`` ARGS (by default: none, the ci profile's 25 examples per
family, whose stalls in H take half the time; and ``--max-examples 100``). Each figure is
the best of ``--repeat`` runs.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import arguments, command_line, markdown_table, ratio, write_section

from conformance.cli.options import default_jobs
from conformance.results import RunResult

CLI = [sys.executable, "-m", "conformance"]


def wall_time(command: list[str]) -> float:
    begun = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - begun


def judged(result: RunResult) -> list[tuple[str, str, dict[str, str]]]:
    """Each case's status and verdicts, in order: what must not depend on --jobs."""
    return [
        (case.case, case.status, {name: v.verdict for name, v in case.verdicts.items()})
        for case in result.cases
    ]


def timed_run(jobs: str | None, repeat: int, folder: Path) -> tuple[float, RunResult]:
    """The best wall time of ``conformance run`` with ``--jobs jobs`` (None: the default),
    and the results of the last run."""
    results = folder / f"jobs-{jobs or 'default'}.json"
    command = [*CLI, "run", "--json", str(results), *(["--jobs", jobs] if jobs else [])]
    wall = min(wall_time(command) for _ in range(repeat))
    return wall, RunResult.from_json(results.read_bytes())


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--jobs", nargs="*", default=["4", "8"], help="more --jobs to time")
    parser.add_argument("--repeat", type=int, default=1, help="runs (the fastest wins)")
    parser.add_argument(
        "--fuzz",
        nargs="*",
        default=["", "--max-examples 100"],
        help="arguments for conformance fuzz (one run each)",
    )
    args = parser.parse_args()
    default = default_jobs()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as folder:
        serial_wall, serial = timed_run("1", args.repeat, Path(folder))
        longest = max(case.duration_s for case in serial.cases)
        for jobs in [None, *args.jobs]:
            wall, result = timed_run(jobs, args.repeat, Path(folder))
            label = f"default ({default})" if jobs is None else jobs
            same = "yes" if judged(result) == judged(serial) else "**no**"
            speed_up = ratio(serial_wall, wall)
            rows.append([label, f"{wall:.1f}", ratio(wall, longest), speed_up, same])
    fuzzed = []
    for fuzz_args in args.fuzz:
        fuzz = [*CLI, "fuzz", *shlex.split(fuzz_args)]
        serial_s = min(wall_time([*fuzz, "--jobs", "1"]) for _ in range(args.repeat))
        two_s = min(wall_time([*fuzz, "--jobs", "2"]) for _ in range(args.repeat))
        shown = shlex.join(["conformance", *fuzz[3:]])
        fuzzed.append(
            f"- `{shown}`: {serial_s:.1f} s with `--jobs 1`, {two_s:.1f} s with `--jobs 2`: "
            f"{ratio(serial_s, two_s)}."
        )
    header = ["--jobs", "wall s", "/ longest case", "speed-up", "verdicts as --jobs 1"]
    serial_row = ["1", f"{serial_wall:.1f}", ratio(serial_wall, longest), "1.00x", "yes"]
    report = "\n".join(
        [
            f"`conformance run` ({len(serial.cases)} cases; the longest, "
            f"`{max(serial.cases, key=lambda case: case.duration_s).case}`, takes "
            f"{longest:.2f} s alone):",
            "",
            markdown_table(header, [serial_row, *rows]),
            "",
            "`conformance fuzz`, families side by side in processes:",
            "",
            *fuzzed,
            "",
            f"Best of {args.repeat}. *Speed-up* is the `--jobs 1` wall time over this one.",
        ]
    )
    print(report)
    if args.write:
        write_section("jobs", command_line(), "## Cases in flight\n\n" + report)


if __name__ == "__main__":
    main()
