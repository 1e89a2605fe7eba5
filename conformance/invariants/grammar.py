"""G — the event grammar every adapter's stream must follow, whatever the provider sent."""

from __future__ import annotations

from collections.abc import Callable

from ..codes import is_canonical
from ..events import (
    BlockEnd,
    BlockStart,
    CallBlock,
    Event,
    Finish,
    ReasoningDelta,
    ServerToolBlock,
    TextDelta,
    ToolCallDelta,
    Usage,
    arguments_match,
    explicit_null_fields,
)
from ..verdicts import Cost
from .evidence import Evidence, ObservedAttempt
from .registry import EVERY_CASE, Judgement, breached, held, invariant

GRAMMAR = "the harness's event grammar; docs/adapter-protocol.md#the-grammar-of-an-attempt"
# The block types each delta builds: a server-tool block (protocol 1.1) streams its input as
# a tool call's arguments.
_DELTA_TYPES = {
    TextDelta: ("text",),
    ReasoningDelta: ("reasoning",),
    ToolCallDelta: ("tool-call", "server-tool"),
}
_AFTER_FINISH = ("retry", "end")


def _per_attempt(rule: Callable[[ObservedAttempt], str | None]) -> Callable[[Evidence], Judgement]:
    """Apply a rule to every attempt; the first problem found is the verdict's reason."""

    def check(evidence: Evidence) -> Judgement:
        for attempt in evidence.attempts:
            problem = rule(attempt)
            if problem:
                return breached(f"attempt {attempt.number}: {problem}")
        return held()

    return check


@invariant(
    "G1",
    "MUST",
    "Exactly one finish per attempt, and nothing after it but retry or end; an exception "
    "without a canonical code is a crash.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    rationale=(
        "The finish tells the caller that an attempt is over and how it ended: two finishes end a "
        "turn twice or turn a success into a failure, and an exception with no canonical code "
        "stops the agent loop instead of reaching its retry and error handling."
    ),
)
def check_one_finish(evidence: Evidence) -> Judgement:
    for attempt in evidence.attempts:
        thrown = attempt.thrown
        if thrown is not None and not is_canonical(thrown.code):
            first_line = thrown.message.partition("\n")[0]
            # A crash: whatever else the case shows follows from it (INVARIANTS.md "Contracts").
            return Judgement(
                False,
                f"attempt {attempt.number}: crashed, threw {_quoted(thrown.message)} with no "
                "canonical code",
                root_cause=True,
                cost=Cost("crash", f"raised {_quoted(first_line, 100)}"),
            )
    return _per_attempt(_one_finish)(evidence)


def _quoted(message: str, limit: int = 300) -> str:
    return repr(message if len(message) <= limit else message[: limit - 1] + "…")


def _one_finish(attempt: ObservedAttempt) -> str | None:
    terminal = [e for e in attempt.events if e.type in ("finish", "thrown")]
    if len(terminal) != 1:
        return f"{len(terminal)} finish/thrown events"
    after = attempt.events[attempt.events.index(terminal[0]) + 1 :]
    stray = [e.type for e in after if e.type not in _AFTER_FINISH]
    return f"{stray[0]} after the finish" if stray else None


@invariant(
    "G2",
    "MUST",
    "Usage at most once per attempt, before its finish.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    rationale=(
        "Usage is what the caller bills and budgets by: a second usage event counts the attempt's "
        "tokens twice, and one after the finish arrives when the turn is already accounted and is "
        "lost."
    ),
)
def check_usage_once(evidence: Evidence) -> Judgement:
    return _per_attempt(_usage_once)(evidence)


def _usage_once(attempt: ObservedAttempt) -> str | None:
    positions = [i for i, e in enumerate(attempt.events) if isinstance(e, Usage)]
    if len(positions) > 1:
        return f"{len(positions)} usage events"
    ends = [i for i, e in enumerate(attempt.events) if e.type in ("finish", "thrown")]
    if positions and ends and positions[0] > ends[0]:
        return "usage after the finish"
    return None


@invariant(
    "G3",
    "MUST",
    "A delta follows the block-start of its index, and its type matches the block's.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    needs=("deltas",),
    rationale=(
        "A caller builds each block from the deltas that follow its block-start: a delta before "
        "its block opens, after it closes or of another type is dropped or lands in the wrong "
        "block, so text leaks into tool arguments or vanishes."
    ),
)
def check_delta_after_start(evidence: Evidence) -> Judgement:
    return _per_attempt(_delta_after_start)(evidence)


def _delta_after_start(attempt: ObservedAttempt) -> str | None:
    opened: dict[int, str] = {}
    closed: set[int] = set()
    for event in attempt.events:
        if isinstance(event, BlockStart):
            opened[event.index] = event.block_type
        elif isinstance(event, BlockEnd):
            closed.add(event.index)
        elif isinstance(event, TextDelta | ReasoningDelta | ToolCallDelta):
            if event.index not in opened or event.index in closed:
                return f"{event.type} for index {event.index}, which is not open"
            if opened[event.index] not in _DELTA_TYPES[type(event)]:
                return f"{event.type} for index {event.index}, a {opened[event.index]} block"
    return None


@invariant(
    "G4",
    "MUST",
    "block-start indexes are distinct, non-negative, and allocated 0, 1, 2… in order.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    needs=("deltas",),
    rationale=(
        "Callers key blocks by index: a reused index merges two blocks (a tool call's arguments "
        "appended to the text), and a gap or a negative index breaks code that keeps blocks in an "
        "array."
    ),
)
def check_index_allocation(evidence: Evidence) -> Judgement:
    return _per_attempt(_index_allocation)(evidence)


def _index_allocation(attempt: ObservedAttempt) -> str | None:
    indexes = [e.index for e in attempt.events if isinstance(e, BlockStart)]
    if indexes != list(range(len(indexes))):
        return f"block-start indexes {indexes}, expected {list(range(len(indexes)))}"
    return None


@invariant(
    "G5",
    "MUST",
    "A block-end closes an open block of the same type, once.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    needs=("deltas",),
    rationale=(
        "A block-end is where a caller commits a block (stores a message part, dispatches a tool "
        "call): closing a block twice runs its tool twice or stores it twice, and closing it as "
        "another type stores text as a tool call."
    ),
)
def check_block_end_closes(evidence: Evidence) -> Judgement:
    return _per_attempt(_block_end_closes)(evidence)


def _block_end_closes(attempt: ObservedAttempt) -> str | None:
    opened: dict[int, str] = {}
    for event in attempt.events:
        if isinstance(event, BlockStart):
            opened[event.index] = event.block_type
        elif isinstance(event, BlockEnd):
            kind = opened.pop(event.index, None)
            if kind is None:
                return f"block-end for index {event.index}, which is not open"
            if kind != event.block.type:
                return f"block-end of a {event.block.type} closes a {kind} block"
    return None


@invariant(
    "G6",
    "MUST",
    "A success finish (stop, tool-calls, max-tokens) leaves no block open.",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    needs=("deltas",),
    rationale=(
        "After a success finish the caller treats the reply as complete: a block still open then "
        "is never committed, so a tool call the model made is not executed or text is missing "
        "from the history."
    ),
)
def check_success_closes_blocks(evidence: Evidence) -> Judgement:
    return _per_attempt(_success_closes_blocks)(evidence)


def _success_closes_blocks(attempt: ObservedAttempt) -> str | None:
    open_blocks: set[int] = set()
    for event in attempt.events:
        if isinstance(event, BlockStart):
            open_blocks.add(event.index)
        elif isinstance(event, BlockEnd):
            open_blocks.discard(event.index)
        elif isinstance(event, Finish) and event.reason not in ("error", "aborted") and open_blocks:
            return f"finish {event.reason} with block(s) {sorted(open_blocks)} still open"
    return None


@invariant(
    "G7",
    "MUST",
    "A block-end equals the concatenation of its deltas (text, reasoning, arguments).",
    source=GRAMMAR,
    reads=(),
    scope=EVERY_CASE,
    needs=("deltas",),
    rationale=(
        "A UI shows the deltas while the history keeps the block-end: when they differ, what the "
        "user watched stream is not what the agent remembers, sends back to the model or runs as "
        "a tool."
    ),
)
def check_block_end_matches_deltas(evidence: Evidence) -> Judgement:
    return _per_attempt(_block_end_matches_deltas)(evidence)


def _block_end_matches_deltas(attempt: ObservedAttempt) -> str | None:
    fragments: dict[int, list[str]] = {}
    for event in attempt.events:
        if isinstance(event, TextDelta | ReasoningDelta):
            fragments.setdefault(event.index, []).append(event.text)
        elif isinstance(event, ToolCallDelta):
            fragments.setdefault(event.index, []).append(event.arguments_delta)
        elif isinstance(event, BlockEnd):
            block = event.block
            if isinstance(block, ServerToolBlock) and event.index not in fragments:
                continue  # a provider-run tool may come whole: its block-end is all of it
            joined = "".join(fragments.get(event.index, []))
            assembled = block.arguments if isinstance(block, CallBlock) else block.text
            # Arguments re-serialised as equal JSON are C3's to judge, not a second breach.
            same = (
                arguments_match(assembled, joined)
                if isinstance(block, CallBlock)
                else assembled == joined
            )
            if not same:
                return f"block {event.index} ends as {assembled!r}, its deltas join to {joined!r}"
    return None


@invariant(
    "G8",
    "SHOULD",
    "Optional fields are absent, not null.",
    source="the harness's event grammar (optional keys omitted); docs/adapter-protocol.md#events",
    reads=(),
    scope=EVERY_CASE,
    rationale=(
        "Callers test an optional field for presence: a null where the field should be absent "
        'reaches code that expects a string, which then crashes or stores the text "null".'
    ),
)
def check_no_null_fields(evidence: Evidence) -> Judgement:
    for number, event in _all_events(evidence):
        nulls = explicit_null_fields(event)
        if nulls:
            return breached(f"attempt {number}: {event.type} has null {', '.join(nulls)}")
    return held()


def _all_events(evidence: Evidence) -> list[tuple[int, Event]]:
    return [(a.number, e) for a in evidence.attempts for e in a.events]
