"""What a generated Anthropic Messages or OpenAI Responses case costs against a chat case.

    python benchmarks/bench_dialects.py [--cases 300] [--examples 50] [--seed 0]
                                        [--repeat 3] [--write]

The acceptance point of issues 24 and 25: a generated Anthropic or Responses case costs at
most 1.2x a chat case in the same run. Every dialect's cases come from the same families,
those whose cases do not wait on purpose (the H and R families' stalls and honoured
Retry-After would measure the sleeps), and go through each stage of a generated case, the
dialects taking turns, each figure the best of ``--repeat``:

- drawn: Hypothesis draws ``--cases`` cases (``sample_cases``);
- read by the oracle: each drawn case's expected outcome under the default policy;
- run and judged: the drawn cases through one ``CaseRunner`` (the reference adapter in
  process), judged as ``conformance fuzz`` judges them (their verdicts);
- one case, the three stages added up: the acceptance figure;
- drawn, run and judged: ``check_family`` over each family, ``--examples`` apiece, as
  ``conformance fuzz`` runs them, Hypothesis's own work included; a family that fails
  shrinks, and a shrinking example costs more than a drawn one (its whole result is
  built), so this row compares the dialects only where both pass.

A stage the adapter (the reference one, or ``--adapter-cmd``) cannot run for a dialect (it
does not declare it) is shown as such and left out of the ratio.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import hypothesis
from harness import arguments, command_line, markdown_table, ratio, write_section

from conformance.options import DEFAULT_POLICY, case_policy
from conformance.oracle import expected_outcome
from conformance.run.case_runner import CaseRunner
from conformance.run.properties import check_family, families, sample_cases
from conformance.strategies.profiles import PROFILES
from fakeprovider.dialects import DialectId
from fakeprovider.scenario import Scenario

CHAT: DialectId = "chat-completions"
MESSAGES: DialectId = "anthropic-messages"
RESPONSES: DialectId = "openai-responses"
DIALECTS = (CHAT, MESSAGES, RESPONSES)
OTHERS = (MESSAGES, RESPONSES)  # each compared with chat
QUICK_FAMILIES = [
    family
    for family in families(CHAT)
    if all(family in families(dialect) for dialect in OTHERS) and family not in ("H", "R")
]


@contextmanager
def _frozen() -> Iterator[None]:
    """The heap frozen after setup, as `conformance fuzz` runs."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def per_case_ms(work: Callable[[], int]) -> float:
    """Milliseconds of wall time per case ``work`` reports having done."""
    begun = time.perf_counter()
    count = work()
    return (time.perf_counter() - begun) * 1000.0 / max(count, 1)


def drawing(count: int, seed: int, dialect: DialectId) -> Callable[[], int]:
    return lambda: len(sample_cases(count, seed, QUICK_FAMILIES, dialect))


def reading(cases: list[Scenario]) -> Callable[[], int]:
    def read() -> int:
        for scenario in cases:
            expected_outcome(scenario, case_policy(DEFAULT_POLICY, scenario))
        return len(cases)

    return read


def running(runner: CaseRunner, cases: list[Scenario]) -> Callable[[], int]:
    options = runner.options

    def run() -> int:
        for scenario in cases:
            runner.observe(scenario).verdicts(options.contract, strict=options.strict)
        return len(cases)

    return run


def fuzzing(runner: CaseRunner, examples: int, seed: int, dialect: DialectId) -> Callable[[], int]:
    settings = hypothesis.settings(PROFILES["ci"], max_examples=examples)  # as fuzz runs

    def fuzz() -> int:
        ran = 0
        for family in QUICK_FAMILIES:
            run = check_family(runner, family, settings=settings, seed=seed, dialect=dialect)
            ran += run.examples
        return ran

    return fuzz


Stage = dict[DialectId, Callable[[], int] | None]  # None: the adapter cannot run it


def best_of(repeat: int, stage: Stage) -> dict[DialectId, float | None]:
    """Each dialect's best per-case time, the dialects taking turns."""
    best: dict[DialectId, float | None] = dict.fromkeys(stage)
    for _ in range(repeat):
        for dialect, work in stage.items():
            if work is None:
                continue
            with _frozen():
                measured = per_case_ms(work)
            known = best[dialect]
            best[dialect] = measured if known is None else min(known, measured)
    return best


def visible_adapter(command: str | None) -> str:
    return "the reference adapter in process" if command is None else f"`{command}` over loopback"


def _shown(value: float | None) -> str:
    return "not run" if value is None else f"{value:.2f}"


DIALECT_NAMES: dict[DialectId, str] = {MESSAGES: "Anthropic", RESPONSES: "Responses"}


def _whole_ratio(whole: dict[DialectId, float | None], dialect: DialectId) -> str:
    chat, other = whole[CHAT], whole[dialect]
    if chat is None or other is None:
        return f"an unmeasured multiple of a chat case (the adapter does not speak {dialect})"
    return f"{ratio(other, chat)} a chat case"


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300, help="cases drawn per dialect")
    parser.add_argument("--examples", type=int, default=50, help="per family, drawn and run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--adapter-cmd", help="a subprocess adapter instead of the reference")
    options = parser.parse_args()
    for dialect in DIALECTS:  # Hypothesis and the strategies warm up
        sample_cases(len(QUICK_FAMILIES), options.seed + 1, QUICK_FAMILIES, dialect)
    cases = {d: sample_cases(options.cases, options.seed, QUICK_FAMILIES, d) for d in DIALECTS}
    with CaseRunner(None, options.adapter_cmd) as runner:
        spoken = runner.session.hello.spoken_dialects
        stages: dict[str, Stage] = {
            "drawn": {d: drawing(options.cases, options.seed, d) for d in DIALECTS},
            "read by the oracle": {d: reading(cases[d]) for d in DIALECTS},
            "run and judged": {
                d: running(runner, cases[d]) if d in spoken else None for d in DIALECTS
            },
            "drawn, run and judged (conformance fuzz)": {
                d: fuzzing(runner, options.examples, options.seed, d) if d in spoken else None
                for d in DIALECTS
            },
        }
        figures = {name: best_of(options.repeat, stage) for name, stage in stages.items()}
    staged = ("drawn", "read by the oracle", "run and judged")
    figures = {
        **{name: figures[name] for name in staged},
        "one case: drawn, read and run": {
            d: None
            if any(figures[name][d] is None for name in staged)
            else sum(figures[name][d] or 0.0 for name in staged)
            for d in DIALECTS
        },
        "drawn, run and judged (conformance fuzz)": figures[
            "drawn, run and judged (conformance fuzz)"
        ],
    }
    rows = []
    for name, best in figures.items():
        chat = best[CHAT]
        row = [name, _shown(chat)]
        for dialect in OTHERS:
            other = best[dialect]
            row.append(_shown(other))
            row.append(ratio(other, chat) if chat is not None and other is not None else "-")
        rows.append(row)
    whole = figures["one case: drawn, read and run"]
    verdicts = [
        f"A generated {DIALECT_NAMES[dialect]} case costs {_whole_ratio(whole, dialect)}."
        for dialect in OTHERS
    ]
    headers = ["ms per case", CHAT]
    for dialect in OTHERS:
        headers += [dialect, f"{DIALECT_NAMES[dialect]} / chat"]
    report = "\n".join(
        [
            "## An Anthropic case and a Responses case against a chat case",
            "",
            f"One process, {visible_adapter(options.adapter_cmd)}. Per dialect {options.cases} "
            f"cases drawn from the families {', '.join(QUICK_FAMILIES)} (seed "
            f"{options.seed}); drawn, run and judged: {options.examples} examples a family. "
            f"Best of {options.repeat}, the dialects taking turns; the machine is shared "
            "with other jobs, so figures move with its load.",
            "",
            markdown_table(headers, rows),
            "",
            " ".join(verdicts) + " Acceptance: at most 1.2x each.",
        ]
    )
    print(report)
    if options.write:
        write_section("dialects", command_line(), report)


if __name__ == "__main__":
    main()
