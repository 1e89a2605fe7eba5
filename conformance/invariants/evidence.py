"""What a case produced, arranged for the checkers: events split per attempt, the
assembled outcome of each attempt, the provider's request log and the oracle's view."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from fakeprovider.registry import RequestRecord
from fakeprovider.scenario import Scenario

from ..codes import MALFORMED_RESPONSE, STREAM_CLOSED
from ..events import (
    Block,
    BlockEnd,
    CallBlock,
    Capabilities,
    DeclaredRetryPolicy,
    Event,
    Finish,
    ReasoningBlock,
    Retry,
    RetryPolicy,
    TextBlock,
    Thrown,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    arguments_match,
)
from ..oracle import (
    AnyRetryPolicy,
    ExpectedAttempt,
    ExpectedOutcome,
    expected_attempt,
    expected_outcome,
)
from ..quirks import (
    ASPECT_TITLES,
    Aspect,
    admitted_readings,
    contested_aspects,
    unbounded_reading,
)
from ..spec import LATEST_SPEC
from ..verdicts import CaseStatus, Contract, Cost, SpecVersion


@dataclass(frozen=True)
class ObservedAttempt:
    """The events of one attempt, up to and including the ``retry`` that discarded it."""

    number: int
    events: tuple[Event, ...]

    # Each checker asks these again, and a long stream has thousands of events: read once.
    @functools.cached_property
    def finishes(self) -> tuple[Finish, ...]:
        return tuple(e for e in self.events if isinstance(e, Finish))

    @functools.cached_property
    def thrown(self) -> Thrown | None:
        return next((e for e in self.events if isinstance(e, Thrown)), None)

    @property
    def finish(self) -> Finish | None:
        finishes = self.finishes
        return finishes[0] if finishes else None

    @functools.cached_property
    def retry(self) -> Retry | None:
        return next((e for e in self.events if isinstance(e, Retry)), None)

    @functools.cached_property
    def usages(self) -> tuple[Usage, ...]:
        return tuple(e for e in self.events if isinstance(e, Usage))

    @functools.cached_property
    def blocks(self) -> tuple[Block, ...]:
        """Assembled blocks, in the order their block-ends arrived."""
        return tuple(e.block for e in self.events if isinstance(e, BlockEnd))

    @property
    def failed(self) -> bool:
        finish = self.finish
        return self.thrown is not None or finish is None or finish.reason in ("error", "aborted")

    @property
    def code(self) -> str | None:
        if self.finish is not None:
            return self.finish.code
        return self.thrown.code if self.thrown is not None else None

    def describe(self) -> str:
        """A short account of how the attempt ended, for verdict reasons."""
        if self.thrown is not None:
            return f"threw {self.thrown.code or '(no code)'}: {self.thrown.message[:120]}"
        finish = self.finish
        if finish is None:
            return "no finish"
        return f"finish {finish.reason}" + (f" {finish.code}" if finish.code else "")

    def shown(self) -> str:
        """What the caller was handed, block by block, then how the attempt ended."""
        return "; ".join([*map(block_summary, self.blocks), self.describe()])


@dataclass(frozen=True)
class Evidence:
    """Everything known about one case; checkers read it and never mutate it."""

    scenario: Scenario
    expected: ExpectedOutcome
    events: tuple[Event, ...]
    capabilities: Capabilities
    policy: RetryPolicy | None
    idle_timeout_s: float
    requests: tuple[RequestRecord, ...] = ()
    status: CaseStatus = "completed"
    detail: str = ""  # why the case is not `completed`
    # A protocol error in a readable event: the field that failed validation
    # (``tool-call-delta.id``), whose invariant owns the case's failure.
    invalid_field: str | None = None
    contract: Contract = "harness"  # checkers with an aspect the interop contract only records
    spec: SpecVersion = LATEST_SPEC  # the spec revision judging: later rules only observed
    timeout_s: float | None = None  # the case's bound, retries included
    # The policy the adapter runs instead of the case's (its hello's `retry_policy`); with
    # one, `policy` is the case's, which the harness contract still judges by.
    declared: DeclaredRetryPolicy | None = None
    # The next requests of a two-turn case (fakeprovider.follow_up), apart from `requests`,
    # which are the first turn's attempts.
    follow_ups: tuple[RequestRecord, ...] = ()
    attempts: tuple[ObservedAttempt, ...] = field(init=False)
    # The aspects of the outcome the scenario's ambiguous quirk leaves open, each with what
    # contests it (INVARIANTS.md §Q), where the outcome equals a reading the quirk admits;
    # empty for a stream with one reading, and for an outcome equal to no reading of it.
    contested: Mapping[Aspect, str] = field(init=False)
    # The oracle's outcome under the declared policy (None without one).
    declared_expected: ExpectedOutcome | None = field(init=False)

    def __post_init__(self) -> None:
        attempts = split_attempts(self.events)
        if self.declared is not None and len(self.requests) > len(attempts):
            # A library retries out of its caller's sight: the outcome it hands back is the
            # last request's, whatever came before.
            last = dataclasses.replace(attempts[-1], number=len(self.requests))
            attempts = (*attempts[:-1], last)
        object.__setattr__(self, "attempts", attempts)
        object.__setattr__(self, "contested", self._open_aspects())
        declared = None if self.declared is None else expected_outcome(self.scenario, self.declared)
        object.__setattr__(self, "declared_expected", declared)

    def _open_aspects(self) -> Mapping[Aspect, str]:
        """The aspects the scenario contests, if in them every attempt equals one reading of
        its wire the quirk admits (the oracle's or another): an outcome equal to no reading
        is judged in them too, at each invariant's own level (INVARIANTS.md v1.2)."""
        contested = contested_aspects(self.scenario)
        if not contested or unbounded_reading(self.scenario):
            return contested
        alternatives = admitted_readings(self.scenario)

        def equals_a_reading(seen: ObservedAttempt) -> bool:
            wire = [
                self.scenario_attempt(seen.number),
                *(
                    expected_attempt(self.scenario, seen.number, now=time.time(), alt=alt)
                    for alt in alternatives
                ),
            ]
            return any(
                all(
                    difference.aspect not in contested
                    for difference in outcome_differences(seen, reading, self.capabilities)
                )
                for reading in wire
            )

        return contested if all(map(equals_a_reading, self.attempts)) else {}

    @property
    def judged_policy(self) -> AnyRetryPolicy | None:
        """The policy the contract judges retry decisions and waits by (None: no retry
        layer). The case's, for an adapter that follows it and under the harness contract,
        whose rules it states; under interop, the one the adapter declared it runs."""
        if self.policy is None:
            return None
        if self.declared is not None and self.contract == "interop":
            return self.declared
        return self.policy

    @property
    def judged_expected(self) -> ExpectedOutcome:
        """The oracle's outcome under :attr:`judged_policy`."""
        if self.declared_expected is not None and self.judged_policy is self.declared:
            return self.declared_expected
        return self.expected

    def contest(self, aspects: Iterable[Aspect]) -> str | None:
        """Why a finding in ``aspects`` is only recorded: what leaves the first of them the
        scenario contests open; None when none is contested."""
        return next(
            (
                f"{self.contested[aspect]} leaves {ASPECT_TITLES[aspect]} open"
                for aspect in aspects
                if aspect in self.contested
            ),
            None,
        )

    def pairs(self, *, duty: bool = False) -> list[tuple[ObservedAttempt, ExpectedAttempt]]:
        """Observed attempt n beside the oracle's attempt n (the one the provider served), as
        the contract compares them (:meth:`compared_with`); beside the harness reading for a
        checker of the harness duty itself (``duty``), which judges how it was relaxed."""
        return [
            (seen, wanted if duty else self.compared_with(seen, wanted))
            for seen in self.attempts
            for wanted in (self.scenario_attempt(seen.number),)
        ]

    def compared_with(self, seen: ObservedAttempt, wanted: ExpectedAttempt) -> ExpectedAttempt:
        """What an observed attempt is compared with: the oracle's attempt, or under interop
        its reading with the harness duties relaxed (INVARIANTS.md v1.2) that the attempt
        ended as, the one it matches where several do: read as finished without [DONE], an
        empty stop passed through, a finish reason not exposed. An attempt read as a success
        where only a duty refuses one is compared with a relaxed success, so that what it
        lost is named."""
        readings = wanted.interop_readings
        if self.contract != "interop" or not readings or self._ended_as(seen, wanted):
            return wanted
        alike = [reading for reading in readings if self._ended_as(seen, reading)]
        if not alike and not seen.failed and not wanted.success:
            alike = [reading for reading in readings if reading.success]
        same = (r for r in alike if not self._differs(seen, r))
        return next(same, alike[0] if alike else wanted)

    def _differs(self, seen: ObservedAttempt, wanted: ExpectedAttempt) -> bool:
        return outcome_difference(seen, wanted, self.capabilities, self.contested) is not None

    def _ended_as(self, seen: ObservedAttempt, wanted: ExpectedAttempt) -> bool:
        if wanted.success:
            return (
                seen.finish is not None and not seen.failed and seen.finish.reason == wanted.reason
            )
        return seen.failed and (not self.capabilities.error_codes or seen.code == wanted.code)

    def scenario_attempt(self, number: int) -> ExpectedAttempt:
        if number <= len(self.expected.attempts):
            return self.expected.attempts[number - 1]
        # The adapter retried more than a conforming one would; the provider still served
        # the scenario's attempt `number` (not necessarily the last expected one): read it
        # afresh, dated by its request when the provider logged one.
        record = next((r for r in self.requests if r.attempt == number), None)
        now = record.received_at if record is not None else time.time()
        return expected_attempt(self.scenario, number, now=now)


def split_attempts(events: tuple[Event, ...]) -> tuple[ObservedAttempt, ...]:
    """Cut the event list after each ``retry`` event."""
    attempts: list[ObservedAttempt] = []
    current: list[Event] = []
    for event in events:
        if event.type == "end":
            continue
        current.append(event)
        if isinstance(event, Retry):
            attempts.append(ObservedAttempt(len(attempts) + 1, tuple(current)))
            current = []
    if current or not attempts:
        attempts.append(ObservedAttempt(len(attempts) + 1, tuple(current)))
    return tuple(attempts)


# --- comparing outcomes ---------------------------------------------------------------


def texts(blocks: Sequence[Block], kind: type[TextBlock | ReasoningBlock]) -> list[str]:
    return [b.text for b in blocks if isinstance(b, kind)]


def tool_calls(blocks: Sequence[Block]) -> list[ToolCallBlock]:
    return [b for b in blocks if isinstance(b, ToolCallBlock)]


def streamed_calls(events: Iterable[Event]) -> list[ToolCallBlock]:
    """Tool calls as their deltas announce them: identity as last known, arguments joined."""
    calls: dict[int, ToolCallBlock] = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            known = calls.get(event.index, ToolCallBlock(id="", name="", arguments=""))
            calls[event.index] = ToolCallBlock(
                id=event.id or known.id,
                name=event.name or known.name,
                arguments=known.arguments + event.arguments_delta,
            )
    return list(calls.values())


def usage_difference(observed: Usage, expected: Usage) -> str | None:
    differing = _usage_differing(observed, expected)
    if differing is None:
        return None
    name, seen, wanted = differing
    return f"usage {name} is {seen}, expected {wanted}"


def usage_cost(observed: Usage | None, expected: Usage) -> Cost:
    """What a usage that differs from the wire's (or none at all) cost the caller."""
    if observed is None:
        sent = ", ".join(f"{k} {v}" for k, v in expected.model_dump(exclude_none=True).items())
        return Cost("lost", f"the usage {sent}")
    name, seen, wanted = _usage_differing(observed, expected) or ("usage", None, None)
    if not seen:
        return Cost("lost", f"usage {name} {wanted}")
    return Cost("corrupted", f"usage {name} {seen} for {wanted}")


def _usage_differing(observed: Usage, expected: Usage) -> tuple[str, int | None, int | None] | None:
    """The first usage figure that differs: its name, the observed and the expected value."""
    pairs: list[tuple[str, int | None, int | None]] = [
        ("input_tokens", observed.input_tokens, expected.input_tokens),
        ("output_tokens", observed.output_tokens, expected.output_tokens),
        ("cache_read_tokens", observed.cache_read_tokens or 0, expected.cache_read_tokens or 0),
    ]
    # reasoning_tokens is optional in the protocol: leaving it out loses nothing the caller
    # relies on, reporting a different figure does.
    if expected.reasoning_tokens is not None and observed.reasoning_tokens is not None:
        pairs.append(("reasoning_tokens", observed.reasoning_tokens, expected.reasoning_tokens))
    return next(((n, seen, wanted) for n, seen, wanted in pairs if seen != wanted), None)


@dataclass(frozen=True)
class Difference:
    """One way an observed attempt differs from the expected one, in one aspect."""

    aspect: Aspect
    detail: str
    cost: Cost | None = None  # what the difference cost the caller, where it is a loss


def first_difference(
    differences: Iterable[Difference], contested: Collection[Aspect]
) -> Difference | None:
    """The first difference in an aspect that is not ``contested``, else the first one: a
    difference the case only records must not hide one it judges."""
    found = list(differences)
    return next((d for d in found if d.aspect not in contested), found[0] if found else None)


def outcome_difference(
    observed: ObservedAttempt,
    expected: ExpectedAttempt,
    capabilities: Capabilities,
    contested: Collection[Aspect] = (),
) -> Difference | None:
    """The first way the observed attempt differs from the expected one (see
    :func:`first_difference`), or None.

    Compares what the caller sees: finish (and code), text, reasoning, tool calls; a
    capability the adapter does not declare is left out of the comparison. Usage is C4's
    to judge and the raw form of arguments C3's: each root cause is reported once.
    """
    return first_difference(outcome_differences(observed, expected, capabilities), contested)


def outcome_differences(
    observed: ObservedAttempt, expected: ExpectedAttempt, capabilities: Capabilities
) -> Iterator[Difference]:
    """Every way the observed attempt differs, finish first; once one attempt failed and
    the other did not, what they hold is not compared: it follows from that."""
    if other_reading(observed, expected):
        return
    if expected.success != (not observed.failed):
        wanted = expected.reason + (f" {expected.code}" if expected.code else "")
        detail = f"{observed.describe()}, expected finish {wanted}"
        yield Difference("finish", detail, ending_cost(observed, expected))
        return
    if not expected.success:
        if capabilities.error_codes and observed.code != expected.code:
            detail = f"{observed.describe()}, expected code {expected.code}"
            yield Difference("finish", detail, ending_cost(observed, expected))
        return
    assert observed.finish is not None
    reasons = {observed.finish.reason, expected.reason}
    # stop ↔ tool-calls after streamed calls is C5's (its last-reason-wins rule) to judge.
    calls_finish = reasons == {"stop", "tool-calls"} and bool(tool_calls(expected.blocks))
    if observed.finish.reason != expected.reason and not calls_finish:
        yield Difference(
            "finish",
            f"finish {observed.finish.reason}, expected {expected.reason}",
            ending_cost(observed, expected),
        )
    yield from blocks_differences(observed.blocks, expected.blocks, capabilities)


# Wires the spec lets an adapter read or refuse as MALFORMED_RESPONSE: a comment re-wrapped
# as data (S6), a repeated start of the same Anthropic block (AN-G2, DIALECTS.md).
REFUSABLE = ("comment-as-data", "an-start-repeated")


def other_reading(observed: ObservedAttempt, expected: ExpectedAttempt) -> bool:
    """The attempt was read another way the spec allows: a ``data:`` payload that is a
    re-wrapped comment (``data: : …``), or a repeated start of an Anthropic block, refused
    as MALFORMED_RESPONSE rather than skipped; an
    in-band error object surfaced as a failure under a code of the adapter's choosing (S7 asks
    for a failure, not for a code); a reset a client cannot tell from a close; a 2xx error
    response read as a body that is no event stream."""
    if not observed.failed:
        return False
    if any(feature in expected.features for feature in REFUSABLE):
        return observed.code in (MALFORMED_RESPONSE, None)
    if "reset-as-close" in expected.features:
        return observed.code == STREAM_CLOSED
    if expected.status is not None and 200 <= expected.status < 300:
        # A 2xx answer that is no event stream: a status to classify, or a body that
        # ended before any event; either way a failure.
        return observed.code in (STREAM_CLOSED, MALFORMED_RESPONSE)
    return (
        "error-object" in expected.features
        and not expected.success
        and observed.code != expected.code
    )


def blocks_differences(
    observed: tuple[Block, ...], expected: tuple[Block, ...], capabilities: Capabilities
) -> Iterator[Difference]:
    kinds: list[tuple[Aspect, type[TextBlock | ReasoningBlock]]] = [("text", TextBlock)]
    if capabilities.reasoning:
        kinds.append(("reasoning", ReasoningBlock))
    for aspect, kind in kinds:
        seen, wanted = texts(observed, kind), texts(expected, kind)
        if seen != wanted:
            yield Difference(
                aspect,
                f"{aspect} blocks {_short(seen)}, expected {_short(wanted)}",
                text_cost(aspect, seen, wanted),
            )
    yield from tool_calls_differences(tool_calls(observed), tool_calls(expected))


def tool_calls_differences(
    observed: list[ToolCallBlock], expected: list[ToolCallBlock]
) -> Iterator[Difference]:
    """Which calls there are (their number, ids and names), then their arguments, call by
    call; arguments that are equal as JSON match (C3 alone judges the raw form), and calls
    that share a wire id may carry distinct ids (T3)."""
    if len(observed) != len(expected):
        yield Difference(
            "tool-calls",
            f"{len(observed)} tool call(s) {_calls(observed)}, expected {_calls(expected)}",
            _calls_cost(observed, expected),
        )
        return
    wire_ids = [call.id for call in expected]
    seen_ids = [call.id for call in observed]
    for position, (seen, wanted) in enumerate(zip(observed, expected, strict=True)):
        # An id the wire sent twice, or never, may be made unique (T3, T5 under interop).
        unique = bool(seen.id) and seen_ids.count(seen.id) == 1
        made_unique = unique and (wire_ids.count(wanted.id) > 1 or not wanted.id)
        if seen.id != wanted.id and not made_unique:
            yield _call_difference("ids", position, "id", seen.id, wanted.id)
        if seen.name != wanted.name:
            yield _call_difference("tool-calls", position, "name", seen.name, wanted.name)
        if not arguments_match(seen.arguments, wanted.arguments):
            yield _call_difference(
                "arguments", position, "arguments", seen.arguments, wanted.arguments
            )


def _call_difference(
    aspect: Aspect, position: int, part: str, seen: str, wanted: str
) -> Difference:
    return Difference(
        aspect,
        f"tool call {position} {part} {_short(seen)}, expected {_short(wanted)}",
        Cost("corrupted", f"call {position} {part} {_clip(seen)} for {_clip(wanted)}"),
    )


# --- what a difference cost the caller, in the words of the compatibility page -------------


def ending_cost(observed: ObservedAttempt, expected: ExpectedAttempt) -> Cost:
    """What an attempt that ended otherwise than the wire did cost the caller."""
    sent = "; ".join([*map(block_summary, expected.blocks), expected.reason])
    if expected.success and observed.thrown is None and observed.finish is None:
        return Cost(
            "lost", f"the ending: {observed.shown()}, nothing raised, where the stream ended {sent}"
        )
    if expected.success and observed.failed:
        return Cost("lost", f"the stream's {sent} came back as {observed.shown()}")
    if expected.success:
        return Cost("corrupted", f"finish {observed.describe()} for {expected.reason}")
    if not observed.failed:
        return Cost(
            "misreported",
            f"a failed stream reported as a success: {observed.shown()}, where the stream "
            f"failed {expected.code}",
        )
    if observed.thrown is None and observed.finish is None:
        return Cost(
            "misreported",
            f"a failed stream handed back without an error: {observed.shown()}, where it "
            f"failed {expected.code}",
        )
    return Cost("misreported", f"{observed.shown()}, where the stream failed {expected.code}")


def block_summary(block: Block) -> str:
    """A block as the caller was handed it, short."""
    if isinstance(block, CallBlock):
        kind = "call" if isinstance(block, ToolCallBlock) else "server tool"
        return f"{kind} {block.id!r}/{block.name!r} {_clip(block.arguments)}"
    return f"{block.type} {_clip(block.text)}"


def text_cost(aspect: str, seen: list[str], wanted: list[str]) -> Cost:
    got, sent = "".join(seen), "".join(wanted)
    if got == sent:  # the same text, cut into other blocks
        return Cost("corrupted", f"{aspect} blocks {_clip(seen)} for {_clip(wanted)}")
    if not got:
        return Cost("lost", f"the {aspect} {_clip(sent)}")
    if sent in got:
        return Cost("invented", f"{aspect} {_clip(got)} for {_clip(sent)}")
    if got in sent:
        return Cost("lost", f"part of the {aspect}, {_clip(got)} of {_clip(sent)}")
    return Cost("corrupted", f"{aspect} {_clip(got)} for {_clip(sent)}")


def _calls_cost(observed: list[ToolCallBlock], expected: list[ToolCallBlock]) -> Cost:
    """Calls dropped where every call handed back is one the wire sent; else corrupted."""
    if all(any(_same_call(call, sent) for sent in expected) for call in observed):
        missing = [sent for sent in expected if not any(_same_call(c, sent) for c in observed)]
        return Cost("lost", ", ".join(map(block_summary, missing)))
    shown = ", ".join(block_summary(call).removeprefix("call ") for call in observed)
    return Cost("corrupted", f"{len(observed)} tool calls for {len(expected)}: {shown}")


def _same_call(seen: ToolCallBlock, sent: ToolCallBlock) -> bool:
    same_identity = (seen.id, seen.name) == (sent.id, sent.name)
    return same_identity and arguments_match(seen.arguments, sent.arguments)


def _clip(value: object, limit: int = 48) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _calls(calls: list[ToolCallBlock]) -> str:
    return _short([(c.id, c.name, c.arguments) for c in calls])


def _short(value: object, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
