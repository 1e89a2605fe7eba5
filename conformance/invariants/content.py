"""C — text, reasoning, arguments, usage and finish: what the caller is handed."""

from __future__ import annotations

from ..events import ReasoningBlock, TextBlock, arguments_match
from ..oracle import ExpectedAttempt
from ..quirks import Aspect
from ..verdicts import Cost
from .common import Compare, expected_failure, judge_attempts
from .evidence import (
    Evidence,
    ObservedAttempt,
    ending_cost,
    text_cost,
    texts,
    tool_calls,
    usage_cost,
    usage_difference,
)
from .registry import Judgement, breached, invariant

HARNESS = (
    "the harness the notes come from (its DeepSeek translator); "
    "examples/README.md#what-each-attempt-does"
)


def _success(wanted: ExpectedAttempt) -> bool:
    return wanted.success


def _text_equal(kind: type[TextBlock | ReasoningBlock], label: str) -> Compare:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence) -> Judgement | None:
        got, expected = texts(seen.blocks, kind), texts(wanted.blocks, kind)
        if got == expected:
            return None
        cost = text_cost(label, got, expected)
        return breached(f"{label} {got!r}, expected {expected!r}", cost=cost)

    return compare


@invariant(
    "C1",
    "MUST",
    'Text is the concatenation of the non-empty content strings; null, "" and absent open nothing.',
    source=HARNESS,
    reads=("text",),
    rationale=(
        "The text is what the user reads and what the next request sends back: a null written as "
        '"None" or a content chunk dropped corrupts it, and a null or "" that opens a block makes '
        "an empty completion look like an answer."
    ),
)
def check_text_assembly(evidence: Evidence) -> Judgement | None:
    return judge_attempts(evidence, _success, _text_equal(TextBlock, "text"), content=True)


@invariant(
    "C2",
    "MUST",
    "Reasoning is assembled likewise from reasoning_content; the empty first-chunk "
    "signature opens no block.",
    source=HARNESS,
    needs=("reasoning",),
    reads=("reasoning",),
    rationale=(
        "Reasoning is shown and stored apart from the answer: streamed into the text it pollutes "
        "the reply and the history the model reads again, and a block opened by DeepSeek's empty "
        "first-chunk signature hides an empty completion."
    ),
)
def check_reasoning_assembly(evidence: Evidence) -> Judgement | None:
    return judge_attempts(
        evidence, _success, _text_equal(ReasoningBlock, "reasoning"), content=True
    )


@invariant(
    "C3",
    "MUST",
    "Tool-call arguments are the raw concatenation of their fragments, never parsed or "
    're-serialised (interop: equal as JSON passes, a no-argument call\'s "" is {}; invalid '
    "JSON stays raw).",
    source=HARNESS,
    reads=("arguments",),
    rationale=(
        "Arguments are the tool's input exactly as the model wrote them: re-serialising changes "
        "numbers, key order and escapes in what is executed and replayed to the model, and "
        "parsing a partial or invalid string loses the call instead of passing it to the tool "
        "layer to refuse."
    ),
)
def check_arguments_raw(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, ev: Evidence) -> Judgement | None:
        got = [call.arguments for call in tool_calls(seen.blocks)]
        expected = [call.arguments for call in tool_calls(wanted.blocks)]
        # Interop: arguments equal as JSON are the same arguments; invalid JSON stays raw.
        # JSON the wire sent as an object has no raw text: any text of its value is raw.
        by_value = ev.contract == "interop" or "tool-arguments-object" in wanted.features
        same = (
            len(got) == len(expected) and all(map(arguments_match, got, expected))
            if by_value
            else got == expected
        )
        if same:
            return None
        # As many calls, different arguments; otherwise the calls themselves differ.
        aspect: Aspect = "arguments" if len(got) == len(expected) else "tool-calls"
        cost = Cost("corrupted", f"arguments {got!r} for {expected!r}")
        return breached(f"arguments {got!r}, expected {expected!r}", aspect, cost)

    return judge_attempts(
        evidence, lambda w: w.success and bool(tool_calls(w.blocks)), compare, content=True
    )


@invariant(
    "C4",
    "MUST",
    "Usage is disjoint (input excludes cached tokens) and the last non-null usage wins "
    "(interop: the wire's own input figure passes).",
    source=HARNESS + " (usage)",
    needs=("usage",),
    reads=("usage",),
    rationale=(
        "Usage drives billing, budgets and context accounting: counting cached tokens inside "
        "input bills them twice, and keeping the first of several usage objects reports the "
        "partial counts some providers send before the final ones."
    ),
)
def check_usage_mapping(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, ev: Evidence) -> Judgement | None:
        assert wanted.usage is not None
        if not seen.usages:
            # A thrown attempt hands over no usage: its failure's invariant judges the throw.
            if seen.thrown is not None:
                return None
            return breached("no usage reported, expected one", cost=usage_cost(None, wanted.usage))
        problem = usage_difference(seen.usages[-1], wanted.usage)
        if problem and ev.contract == "interop":
            # The wire's own figures (input including the cached tokens) lose nothing.
            cached = wanted.usage.cache_read_tokens or 0
            as_sent = wanted.usage.model_copy(
                update={"input_tokens": wanted.usage.input_tokens + cached}
            )
            problem = usage_difference(seen.usages[-1], as_sent) and problem
        if problem is None:
            return None
        return breached(problem, cost=usage_cost(seen.usages[-1], wanted.usage))

    return judge_attempts(evidence, lambda w: w.usage is not None, compare, content=True)


@invariant(
    "C5",
    "MUST",
    "Finish mapping: stop→stop, tool_calls→tool-calls, length→max-tokens, other→error with "
    "the upper-cased code; the last reason wins; none by [DONE] → stop (interop: tool-calls "
    "passes where tool calls were streamed).",
    source=HARNESS,
    reads=("finish",),
    rationale=(
        "The finish decides what the agent does next (run the tools, continue or compact, end the "
        "turn): length read as stop ends a truncated answer as if complete, and an unknown reason "
        "such as content_filter read as success hides that the reply was cut."
    ),
)
def check_finish_mapping(evidence: Evidence) -> Judgement | None:
    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, ev: Evidence) -> Judgement | None:
        if not wanted.success:  # an unknown reason: a failure under its upper-cased code
            return expected_failure(seen, wanted, ev)
        finish = seen.finish
        # Interop: a turn that streamed tool calls may end tool-calls whatever came last.
        calls_finish = (
            ev.contract == "interop"
            and finish is not None
            and finish.reason == "tool-calls"
            and bool(tool_calls(wanted.blocks))
        )
        if (finish is None or finish.reason != wanted.reason) and not calls_finish:
            reason = f"{seen.describe()}, expected finish {wanted.reason}"
            return breached(reason, cost=ending_cost(seen, wanted))
        return None

    return judge_attempts(evidence, lambda w: w.success or "finish-error" in w.features, compare)
