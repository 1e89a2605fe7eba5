"""Matrix columns side by side: their wall time against the sum of their own.

    python benchmarks/bench_matrix.py [--columns 4] [-k TEXT] [--repeat 1] [--write]

Each column is `conformance matrix column --adapter … --name …` (the reference adapter and
mutants, which need no third-party library), a process of its own, over the bundled corpus
(or the cases whose id contains ``-k``): first one after the other, then all at once, as
`tox -m matrix -p auto` or a CI job matrix runs them. Per column its wall time alone; then
the sum of those, the wall time of all at once, and the ratio of the two (the matrix's
target: at most half the sum). Each figure is the best of ``--repeat`` runs. Every column's
saved verdicts must be the same in both runs.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import arguments, command_line, machine, markdown_table, ratio, write_section

from conformance.results import RunResult

ADAPTERS = (
    "conformance.adapters.reference:factory",
    "conformance.adapters.mutants:identity_any_defined",
    "conformance.adapters.mutants:eof_is_done",
    "conformance.adapters.mutants:an_signature_dropped",
    "conformance.adapters.mutants:an_usage_summed",
    "conformance.adapters.mutants:args_to_last_call",
)


def column_command(number: int, out: Path, select: str | None) -> list[str]:
    adapter = ADAPTERS[number % len(ADAPTERS)]
    name = f"column-{number}"
    chosen = ["-k", select] if select else []
    return [
        *(sys.executable, "-m", "conformance", "matrix", "column"),
        *("--adapter", adapter, "--name", name, "--out", str(out), *chosen),
    ]


def run_all(commands: list[list[str]], together: bool) -> tuple[float, list[float]]:
    """The wall time of ``commands``, each alone (one after the other) or all at once."""
    begun = time.perf_counter()
    if together:
        running = [
            subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for c in commands
        ]
        for process in running:
            process.wait()
        return time.perf_counter() - begun, []
    alone = []
    for command in commands:
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        alone.append(time.perf_counter() - started)
    return time.perf_counter() - begun, alone


def verdicts(folder: Path) -> dict[str, list[tuple[str, dict[str, str]]]]:
    return {
        path.name: [
            (case.case, {rule: v.verdict for rule, v in case.verdicts.items()})
            for case in RunResult.from_json(path.read_bytes()).cases
        ]
        for path in sorted(folder.glob("*.json"))
    }


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--columns", type=int, default=4)
    parser.add_argument("-k", dest="select", default=None)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    best_alone: list[float] = [float("inf")] * args.columns
    best_together = float("inf")
    with tempfile.TemporaryDirectory() as scratch:
        for attempt in range(args.repeat):
            serial, parallel = (
                Path(scratch, f"serial-{attempt}"),
                Path(scratch, f"parallel-{attempt}"),
            )
            _, alone = run_all(
                [column_command(n, serial, args.select) for n in range(args.columns)], False
            )
            together, _ = run_all(
                [column_command(n, parallel, args.select) for n in range(args.columns)], True
            )
            if verdicts(serial) != verdicts(parallel):
                sys.exit("the columns judged side by side differ from those judged alone")
            best_alone = [min(a, b) for a, b in zip(best_alone, alone, strict=True)]
            best_together = min(best_together, together)
    total = sum(best_alone)
    rows = [
        [f"column-{n}", ADAPTERS[n % len(ADAPTERS)], f"{t:.1f} s"] for n, t in enumerate(best_alone)
    ]
    report = (
        f"Machine: {machine()}.\n\n"
        + markdown_table(["column", "adapter", "alone"], rows)
        + "\n\n"
        + markdown_table(
            ["columns", "sum of their times alone", "all at once", "at once / sum"],
            [
                [
                    str(args.columns),
                    f"{total:.1f} s",
                    f"{best_together:.1f} s",
                    ratio(best_together, total),
                ]
            ],
        )
        + "\n\nThe same verdicts either way. Best of "
        + f"{args.repeat}.\n"
    )
    print(report)
    if args.write:
        write_section("matrix", command_line(), "## Matrix columns side by side\n\n" + report)


if __name__ == "__main__":
    main()
