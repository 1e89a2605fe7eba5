"""The test phase of scripts/test: its schedule against pytest-xdist's own.

    python benchmarks/bench_test_phase.py [--workers 4] [--repeat 1] [--write]

Runs this checkout's tests as ``scripts/test`` does (``pytest -n W --dist loadfile
--no-loadscope-reorder``: a file per worker, files with a ``slow`` test handed out first, see
tests/conftest.py) and with pytest-xdist's own order for ``loadfile`` (the files with the
most tests first), each the best of ``--repeat`` runs. Per schedule: the wall time, the CPU
time of pytest and its workers, and the outcome line; the ratio is xdist's order over ours.
Run it with the project's environment (``.venv/bin/python``), on an otherwise idle machine.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from harness import arguments, command_line, machine, markdown_table, ratio, write_section

ROOT = Path(__file__).resolve().parents[1]
SCHEDULES = {
    "scripts/test: slow files first": ["--no-loadscope-reorder"],
    "xdist's order: most tests first": [],
}


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_phase(workers: int, extra: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one test phase, and pytest's last line."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-n", str(workers), "--dist", "loadfile", *extra]
    cpu_before, begun = children_cpu_s(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - begun, children_cpu_s() - cpu_before
    outcome = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "no output"
    return wall, cpu, re.sub(r"^=+ | =+$", "", outcome)


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4, help="pytest-xdist workers")
    parser.add_argument("--repeat", type=int, default=1, help="runs (the fastest wins)")
    args = parser.parse_args()
    best: dict[str, tuple[float, float, str]] = {}
    for _ in range(args.repeat):
        for name, extra in SCHEDULES.items():
            measured = timed_phase(args.workers, extra)
            if name not in best or measured[0] < best[name][0]:
                best[name] = measured
    ours, theirs = (best[name][0] for name in SCHEDULES)
    rows = [
        [name, f"{wall:.1f}", f"{cpu:.0f}", outcome] for name, (wall, cpu, outcome) in best.items()
    ]
    report = "\n".join(
        [
            markdown_table(["schedule", "wall s", "CPU s", "outcome"], rows),
            "",
            f"{args.workers} workers, best of {args.repeat}. xdist's order / ours: "
            f"{ratio(theirs, ours)}.",
        ]
    )
    print(machine(), report, sep="\n\n")
    if args.write:
        write_section("test-phase", command_line(), "## The test phase\n\n" + report)


if __name__ == "__main__":
    main()
