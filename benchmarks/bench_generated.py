"""Generated cases per second for the reference adapter, in one process (one core).

    python benchmarks/bench_generated.py [--cases 600] [--examples 100] [--seed 0]
                                         [--repeat 3] [--write]

Cases come from the families whose cases do not wait on purpose (the H and R families'
stalls and honoured Retry-After would measure the sleeps, not the suite). Four figures:

- drawing: Hypothesis draws ``--cases`` cases (``conformance.run.properties.sample_cases``);
- run only, in process: those cases through one ``CaseRunner``, judged as ``conformance
  fuzz`` judges them (their verdicts), with the setup frozen out of the garbage collector's
  sight as ``fuzz`` does;
- drawn and run, in process: ``check_family`` over each family, ``--examples`` apiece,
  Hypothesis drawing every case just before it runs, as ``conformance fuzz`` does;
- run only, loopback: the drawn cases over a loopback server.

Each is set beside the previous code path where it can be switched back in the same
process: every case's whole result built (events, requests and the scenario dumped), the
heap not frozen and, over loopback, a TLS context (the CA bundle loaded) per case. The two
paths take turns; each figure is the best of ``--repeat``.
"""

from __future__ import annotations

import gc
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import hypothesis
from harness import arguments, command_line, markdown_table, ratio, write_section

from conformance.adapters.reference import ReferenceAdapter
from conformance.options import RunOptions, Transport
from conformance.run.case_runner import CaseRunner
from conformance.run.properties import check_family, families, sample_cases
from conformance.run.runner import ObservedCase
from conformance.strategies.profiles import PROFILES
from fakeprovider.scenario import Scenario

QUICK_FAMILIES = [family for family in families() if family not in ("H", "R")]
PREVIOUS_ADAPTER = "bench_generated:previous_adapter"


class _TlsContextPerCase(ReferenceAdapter):
    """The reference adapter as it was: each case's client loads the CA bundle anew."""

    @property
    def _tls_context(self) -> ssl.SSLContext:  # type: ignore[override]
        return httpx.create_ssl_context(trust_env=False)


def previous_adapter(options: RunOptions) -> ReferenceAdapter:
    return _TlsContextPerCase()


class _ResultPerCase(CaseRunner):
    """Builds every case's whole result, as the runner did before judging verdicts alone."""

    def observe(self, scenario: Scenario) -> ObservedCase:
        observed = super().observe(scenario)
        observed.judged(self.options.contract, strict=self.options.strict)
        return observed


@contextmanager
def _path(previous: bool) -> Iterator[None]:
    """The heap frozen after setup, as `conformance fuzz` runs; not, as it ran before."""
    if not previous:
        gc.collect()
        gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class Rate:
    """Cases per second of wall time and per second of this process's CPU time."""

    wall: float = 0.0
    cpu: float = 0.0

    def best(self, other: Rate) -> Rate:
        return Rate(max(self.wall, other.wall), max(self.cpu, other.cpu))


@contextmanager
def _timed(rates: list[Rate], cases: Callable[[], int]) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    count = cases()
    rates.append(Rate(count / (time.perf_counter() - wall), count / (time.process_time() - cpu)))


def run_only(runner: CaseRunner, cases: list[Scenario]) -> Rate:
    options = runner.options
    rates: list[Rate] = []
    with _timed(rates, lambda: len(cases)):
        for scenario in cases:
            runner.observe(scenario).verdicts(options.contract, strict=options.strict)
    return rates[0]


def drawn_and_run(runner: CaseRunner, examples: int, seed: int) -> Rate:
    settings = hypothesis.settings(PROFILES["ci"], max_examples=examples)  # as fuzz runs
    ran: list[int] = []
    rates: list[Rate] = []
    with _timed(rates, lambda: sum(ran)):
        for family in QUICK_FAMILIES:
            ran.append(check_family(runner, family, settings=settings, seed=seed).examples)
    return rates[0]


def drawing(count: int, seed: int) -> tuple[list[Scenario], Rate]:
    sample_cases(len(QUICK_FAMILIES), seed + 1, QUICK_FAMILIES)  # Hypothesis warms up
    drawn: list[Scenario] = []
    rates: list[Rate] = []
    with _timed(rates, lambda: len(drawn)):
        drawn += sample_cases(count, seed, QUICK_FAMILIES)
    return drawn, rates[0]


Measure = Callable[[CaseRunner], Rate]


def best_of(repeat: int, transport: Transport, measure: Measure) -> tuple[Rate, Rate]:
    """Cases per second now and on the previous path, the paths taking turns."""
    now_runner = CaseRunner(transport=transport)
    target = PREVIOUS_ADAPTER if transport == "loopback" else None
    previous_runner = _ResultPerCase(target, transport=transport)
    best = {False: Rate(), True: Rate()}
    with now_runner, previous_runner:
        for _ in range(repeat):
            for previous, runner in ((False, now_runner), (True, previous_runner)):
                with _path(previous):
                    best[previous] = best[previous].best(measure(runner))
    return best[False], best[True]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=600, help="cases drawn for the runs")
    parser.add_argument("--examples", type=int, default=100, help="per family, drawn and run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    options = parser.parse_args()
    cases, drawn = drawing(options.cases, options.seed)
    figures = {
        "run only, in process": best_of(
            options.repeat, "in-process", lambda runner: run_only(runner, cases)
        ),
        "drawn and run, in process": best_of(
            options.repeat,
            "in-process",
            lambda runner: drawn_and_run(runner, options.examples, options.seed),
        ),
        "run only, loopback": best_of(
            options.repeat, "loopback", lambda runner: run_only(runner, cases)
        ),
    }
    rows = [["drawing the cases (Hypothesis)", f"{drawn.wall:.0f}", f"{drawn.cpu:.0f}", "", "", ""]]
    rows += [
        [
            name,
            f"{now.wall:.0f}",
            f"{now.cpu:.0f}",
            f"{previous.wall:.0f}",
            f"{previous.cpu:.0f}",
            f"{ratio(now.wall, previous.wall)}, {ratio(now.cpu, previous.cpu)}",
        ]
        for name, (now, previous) in figures.items()
    ]
    report = "\n".join(
        [
            "## Generated cases",
            "",
            f"One process. {len(cases)} cases drawn from the families "
            f"{', '.join(QUICK_FAMILIES)} (seed {options.seed}); drawn and run: "
            f"{options.examples} examples a family. Best of {options.repeat}; the machine "
            "is shared with other jobs, so figures move with its load.",
            "",
            markdown_table(
                [
                    "",
                    "cases/s",
                    "cases/CPU-s",
                    "previous path: cases/s",
                    "cases/CPU-s",
                    "now / previous: wall, CPU",
                ],
                rows,
            ),
            "",
            "cases/CPU-s counts this process's CPU time only (the loopback server runs in it "
            "too): the figure a core gives when nothing else wants it. Previous path, "
            "switched back in the same process: each case's whole result "
            "built, the heap not frozen, over loopback a TLS context per case. Encoding a "
            "stream once for the provider and the oracle, and the reference decoder's "
            "cheaper reads, are in both columns.",
        ]
    )
    print(report)
    if options.write:
        write_section("generated", command_line(), report)


if __name__ == "__main__":
    main()
