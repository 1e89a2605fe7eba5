"""The gateway's part of ``docs/invariants.md``: the GW rules and the meaning map's data."""

from __future__ import annotations

from collections.abc import Sequence

from fakeprovider.scenario import Scenario

from ..report.markdown import markdown_text
from ..report.reference import fixture_list, since_line
from .crossing import CROSSING_RULES, CrossingRule
from .meaning_map import FINISH_CROSSINGS, SLOTS

_CROSSING_HEADER = """\
## GW: Gateways across dialects

Judged by `conformance gateway` when the upstream and downstream dialects are not both
chat-completions: the upstream attempt's canonical outcome (the oracle's reading of the
scenario) against the gateway's answer read by the downstream dialect's oracle reader. The
answer is also held to the downstream wire's own rules (`conformance lint`: W, AN-W, RS-W).
What the downstream wire has no place for is `info` ("not expressible"), never a failure:
"""

_NEXT_TURN = """\
A two-turn case goes on through the gateway: the client builds its next request in the
downstream dialect from what the gateway's answer handed it, and the request the gateway
sends upstream is judged by N1, N2 and the upstream wire's replay rule (AN-R2, RS-R2) against
the first turn the upstream streamed. Ids must come back as the upstream gave them. A
continuity token the downstream has no place for cannot come back from the client: its
absence upstream is `info`; a loss that follows from a first-turn GW-2, M1 or GW-5 failure is
`info` under that rule's name ("follows from GW-5 in the first turn"), so it is failed once.
"""


def _crossing_section(rule: CrossingRule, scenarios: Sequence[Scenario]) -> list[str]:
    tagged = [scenario for scenario in scenarios if rule.id in scenario.tags]
    return [
        f"### {rule.id}",
        "",
        rule.statement,
        "",
        f"- **Why it matters:** {rule.rationale}",
        f"- **Level:** {rule.level}",
        since_line(rule.id),
        f"- **Source:** {rule.source}",
        f"- **Fixtures:** {fixture_list(tagged)}",
        "",
    ]


def _meaning_map() -> list[str]:
    """The meaning map's data as two tables: the slots, then the non-success finishes."""
    lines = ["| aspect | carried by | elsewhere |", "| --- | --- | --- |"]
    for aspect, slot in SLOTS.items():
        carried = ", ".join(f"`{dialect}`" for dialect in sorted(slot.carried_by))
        lines.append(f"| {aspect} | {carried} | {markdown_text(slot.elsewhere)} |")
    lines += [
        "",
        "| finish | reads as, per downstream | read as a success |",
        "| --- | --- | --- |",
    ]
    for code, crossing in FINISH_CROSSINGS.items():
        reads = ", ".join(
            f"`{dialect}` {' or '.join(sorted(codes)) or 'not expressible'}"
            for dialect, codes in crossing.reads_as.items()
        )
        lines.append(f"| {code} | {reads} | {crossing.as_success} breach |")
    return [*lines, ""]


def crossing_reference(scenarios: Sequence[Scenario]) -> list[str]:
    """The GW section, its fixtures among ``scenarios``."""
    lines = [_CROSSING_HEADER, *_meaning_map()]
    for rule in CROSSING_RULES.values():
        lines += _crossing_section(rule, scenarios)
    return [*lines, "### The next request", "", _NEXT_TURN]
