"""Meaning preserved (sans-IO): the gateway's answer, as the reference adapter reads it,
against the oracle's outcome for the upstream attempt the gateway was served.

Each aspect a client acts on is its own MUST rule, so a report says *what* changed:
identity and arguments of tool calls, text, usage, the finish, and the class of a failure.
Content is compared only when both sides succeeded: a failed attempt's partial blocks
are not part of its outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..codes import DEFAULT_RETRYABLE_CODES
from ..events import Block, ReasoningBlock, TextBlock, ToolCallBlock, Usage
from ..invariants import Judgement, breached, held, weaker
from ..invariants.evidence import ObservedAttempt
from ..oracle import ExpectedAttempt
from ..verdicts import RuleInfo


@dataclass(frozen=True)
class _Sides:
    expected: ExpectedAttempt
    observed: ObservedAttempt

    @property
    def both_succeeded(self) -> bool:
        return self.expected.success and not self.observed.failed


MeaningCheck = Callable[[_Sides], Judgement | None]


@dataclass(frozen=True, kw_only=True)
class MeaningRule(RuleInfo):
    check: MeaningCheck


def _rule(id: str, statement: str, check: MeaningCheck) -> MeaningRule:
    return MeaningRule(
        id=id,
        family="M",
        family_title="Meaning through the gateway",
        level="MUST",
        statement=statement,
        source="the oracle's outcome for the upstream attempt the gateway was served",
        check=check,
    )


def tool_calls(blocks: Sequence[Block]) -> list[ToolCallBlock]:
    return [block for block in blocks if isinstance(block, ToolCallBlock)]


def _identity(sides: _Sides) -> Judgement | None:
    expected, observed = tool_calls(sides.expected.blocks), tool_calls(sides.observed.blocks)
    if not sides.both_succeeded or not (expected or observed):
        return None
    want = [(call.id, call.name) for call in expected]
    got = [(call.id, call.name) for call in observed]
    if want == got:
        return held(f"{len(got)} tool call(s) with the upstream's ids and names")
    return breached(f"tool calls (id, name): upstream {want}, through the gateway {got}")


def _arguments(sides: _Sides) -> Judgement | None:
    expected, observed = tool_calls(sides.expected.blocks), tool_calls(sides.observed.blocks)
    if not sides.both_succeeded or not (expected or observed):
        return None
    want, got = [call.arguments for call in expected], [call.arguments for call in observed]
    if want == got:
        return held("arguments byte for byte")
    return breached(f"arguments: upstream {want!r}, through the gateway {got!r}")


def _texts(blocks: Sequence[Block]) -> dict[str, str]:
    return {
        kind: "".join(block.text for block in blocks if isinstance(block, block_type))
        for kind, block_type in (("text", TextBlock), ("reasoning", ReasoningBlock))
    }


def _text(sides: _Sides) -> Judgement | None:
    expected, observed = _texts(sides.expected.blocks), _texts(sides.observed.blocks)
    if not sides.both_succeeded or not any((*expected.values(), *observed.values())):
        return None
    changed = [kind for kind in expected if expected[kind] != observed[kind]]
    if not changed:
        return held("text and reasoning unchanged")
    kind = changed[0]
    return breached(f"{kind}: upstream {expected[kind]!r}, through the gateway {observed[kind]!r}")


def _counts(usage: Usage | None) -> dict[str, object] | None:
    return None if usage is None else usage.model_dump(exclude={"case", "type"})


def _usage(sides: _Sides) -> Judgement | None:
    usages = sides.observed.usages
    # A failed attempt reports the usage the wire billed before its failure (R9).
    expected = _counts(sides.expected.usage or sides.expected.billed_usage)
    observed = _counts(usages[-1] if usages else None)
    if expected is None and observed is None:
        return None
    if expected is None:
        return weaker(f"the gateway reported usage {observed} the upstream never sent")
    if observed is None:
        return breached(f"the upstream's usage {expected} was dropped")
    added = _added_detail(expected, observed)
    if {**expected, **added} != observed:
        return breached(f"usage: upstream {expected}, through the gateway {observed}")
    if any(added.values()):
        return weaker(f"the gateway added {added}, which the upstream never reported")
    return held("usage unchanged" + (" (a zero detail added)" if added else ""))


def _added_detail(expected: dict[str, object], observed: dict[str, object]) -> dict[str, object]:
    """Details (reasoning tokens) the upstream left out and the gateway reports."""
    return {
        key: observed[key]
        for key, value in expected.items()
        if value is None and observed.get(key) is not None
    }


def _finish(sides: _Sides) -> Judgement | None:
    if not sides.expected.success:
        return None
    if sides.observed.failed:
        return breached(
            f"the upstream finished {sides.expected.reason}; through the gateway the "
            f"attempt {sides.observed.describe()}"
        )
    reason = sides.observed.finish.reason if sides.observed.finish else "(none)"
    if reason == sides.expected.reason:
        return held(f"finish {reason}")
    return breached(f"finish: upstream {sides.expected.reason}, through the gateway {reason}")


def _error_class(sides: _Sides) -> Judgement | None:
    expected = sides.expected
    if expected.success:
        return None
    observed = sides.observed
    if not observed.failed:
        return breached(
            f"the upstream's failure ({expected.code}) reached the client as a success: "
            f"{observed.describe()}"
        )
    return failure_class_change(expected.code, observed.code)


def failure_class_change(expected: str | None, observed: str | None) -> Judgement:
    """A failure passed on: held with its code, weaker with another of the same
    retryability, breached when a retryable failure became final or the reverse."""
    if observed == expected:
        return held(f"failure {expected}")
    retryable = (expected in DEFAULT_RETRYABLE_CODES, observed in DEFAULT_RETRYABLE_CODES)
    change = f"failure {expected} reached the client as {observed}"
    if retryable[0] == retryable[1]:
        kind = "retryable" if retryable[0] else "final"
        return weaker(f"{change} (still {kind})")
    return breached(
        f"{change}: a {'retryable' if retryable[0] else 'final'} failure became "
        f"{'retryable' if retryable[1] else 'final'}"
    )


MEANING_RULES: dict[str, MeaningRule] = {
    rule.id: rule
    for rule in (
        _rule("M1", "Tool calls keep the upstream's ids and names, in order.", _identity),
        _rule("M2", "Tool-call arguments are the upstream's, byte for byte.", _arguments),
        _rule("M3", "Text and reasoning are the upstream's, byte for byte.", _text),
        _rule("M4", "Usage is the upstream's: not dropped, changed or made up.", _usage),
        _rule("M5", "A successful upstream finish reaches the client unchanged.", _finish),
        _rule(
            "M6",
            "An upstream failure reaches the client as a failure of the same code (or at "
            "least the same retryability), never as a success.",
            _error_class,
        ),
    )
}


def judge_meaning(expected: ExpectedAttempt, observed: ObservedAttempt) -> dict[str, Judgement]:
    """The judgement of every meaning rule the pair exercises."""
    sides = _Sides(expected, observed)
    judged = {rule.id: rule.check(sides) for rule in MEANING_RULES.values()}
    return {rule_id: judgement for rule_id, judgement in judged.items() if judgement is not None}
