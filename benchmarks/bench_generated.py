"""Generated cases per second for the reference adapter, in process and over loopback.

    python benchmarks/bench_generated.py [--cases 600] [--seed 0] [--repeat 3] [--write]

The same generated cases (conformance.run.properties.sample_cases) run through one
CaseRunner per transport, the way `conformance fuzz` runs them; prints cases/s for each and
in-process/loopback. Cases that wait on purpose (stalls, an honoured Retry-After: the H and
R families) are left out, so that the figures measure the transports, not the sleeps.
Drawing the cases is timed on its own.
"""

from __future__ import annotations

import time

from harness import arguments, command_line, ratio, write_section

from conformance.options import Transport
from conformance.run.case_runner import CaseRunner
from conformance.run.properties import families, sample_cases
from fakeprovider.scenario import Scenario

QUICK_FAMILIES = [family for family in families() if family not in ("H", "R")]


def cases_per_second(transport: Transport, cases: list[Scenario]) -> float:
    with CaseRunner(transport=transport) as runner:
        begun = time.perf_counter()
        for scenario in cases:
            runner.run(scenario)
        return len(cases) / (time.perf_counter() - begun)


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    options = parser.parse_args()
    begun = time.perf_counter()
    cases = sample_cases(options.cases, options.seed, QUICK_FAMILIES)
    drawn = len(cases) / (time.perf_counter() - begun)
    rates: dict[Transport, float] = {"in-process": 0.0, "loopback": 0.0}
    for _ in range(options.repeat):
        for transport in rates:  # the transports take turns
            rates[transport] = max(rates[transport], cases_per_second(transport, cases))
    report = "\n".join(
        [
            f"{len(cases)} generated cases of the families {', '.join(QUICK_FAMILIES)} "
            f"(seed {options.seed}), best of {options.repeat}:",
            "",
            "| | cases/s |",
            "|---|---|",
            f"| drawing the cases (Hypothesis) | {drawn:.0f} |",
            f"| in process | {rates['in-process']:.0f} |",
            f"| loopback | {rates['loopback']:.0f} |",
            "",
            f"In process / loopback: {ratio(rates['in-process'], rates['loopback'])}",
        ]
    )
    print(report)
    if options.write:
        write_section("generated", command_line(), "## Generated cases\n\n" + report)


if __name__ == "__main__":
    main()
