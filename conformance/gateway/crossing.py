"""Meaning kept across dialects (sans-IO): the upstream attempt's canonical outcome against
the downstream's, each read by its own dialect's oracle reader, through the meaning map.

Each rule (reference dialects.md §8.4) judges one aspect a caller acts on. What the
downstream wire has no place for is recorded (info, "not expressible"), never failed; what
it can carry and the gateway lost fails, the reason quoting both sides. Content, usage and
reasoning are compared only when both sides succeeded: a failed attempt's partial blocks
are not part of its outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from fakeprovider.dialects import DialectId

from ..codes import EMPTY_RESPONSE
from ..events import Block, ReasoningBlock, TextBlock, ToolCallBlock, Usage
from ..oracle import ExpectedAttempt
from ..results import InvariantVerdict
from ..verdicts import RuleInfo, Verdict, verdict_for
from .meaning import failure_class_change, tool_calls
from .meaning_map import FINISH_CROSSINGS, SLOTS, TOOL_TURN_BY_CALLS, Aspect, carries

Kind = Literal["held", "unexpressed", "weaker", "lost"]
_WEIGHT: dict[Kind, int] = {"held": 0, "unexpressed": 1, "weaker": 2, "lost": 3}


@dataclass(frozen=True)
class Observation:
    kind: Kind
    reason: str


def _held(reason: str) -> Observation:
    return Observation("held", reason)


def _lost(reason: str) -> Observation:
    return Observation("lost", reason)


def _unexpressed(aspect: Aspect, to: DialectId, what: str) -> Observation:
    return Observation(
        "unexpressed", f"not expressible in {to}: {what} ({SLOTS[aspect].elsewhere})"
    )


@dataclass(frozen=True)
class Crossing:
    upstream: ExpectedAttempt
    downstream: ExpectedAttempt
    source: DialectId  # the upstream's dialect
    to: DialectId  # the downstream's dialect

    @property
    def both_succeeded(self) -> bool:
        return self.upstream.success and self.downstream.success


CrossingCheck = Callable[[Crossing], list[Observation]]


@dataclass(frozen=True, kw_only=True)
class CrossingRule(RuleInfo):
    rationale: str  # what a caller loses when the gateway breaks it
    check: CrossingCheck


def _shown(value: object, limit: int = 80) -> str:
    """A value quoted for a reason: repr escapes controls and quotes; long ones cut."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}…{text[-4:]}"


# --- GW-1 text -------------------------------------------------------------------------


def _text_of(blocks: Sequence[Block], kind: type[TextBlock | ReasoningBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, kind))


def _tokens(block: ReasoningBlock) -> dict[Aspect, str | None]:
    return {
        "signature": block.signature or None,
        "redacted": block.redacted or None,
        "encrypted_content": block.encrypted_content or None,
    }


def _shows(block: Block, to: DialectId) -> bool:
    """Whether a block has anything ``to`` can carry (a redacted block has no text)."""
    if isinstance(block, ReasoningBlock):
        carried = [aspect for aspect, token in _tokens(block).items() if token]
        return bool(block.text) or any(carries(to, aspect) for aspect in carried)
    return isinstance(block, TextBlock | ToolCallBlock)


def _order(blocks: Sequence[Block], to: DialectId) -> list[str]:
    """The kinds of the blocks in order, a run of text or of reasoning as one (block
    boundaries are no meaning a caller acts on); each tool call its own."""
    kinds: list[str] = []
    for block in blocks:
        if not _shows(block, to):
            continue
        if not kinds or block.type == "tool-call" or kinds[-1] != block.type:
            kinds.append(block.type)
    return kinds


def _text(crossing: Crossing) -> list[Observation]:
    up, down = crossing.upstream.blocks, crossing.downstream.blocks
    want, got = _text_of(up, TextBlock), _text_of(down, TextBlock)
    if not crossing.both_succeeded or not (want or got):
        return []
    if want != got:
        return [_lost(f"text: upstream {_shown(want)}, downstream {_shown(got)}")]
    seen = [_held("text byte for byte")]
    order = (_order(up, crossing.to), _order(down, crossing.to))
    if order[0] == order[1]:
        return seen
    differs = f"blocks in the order upstream {order[0]}, downstream {order[1]}"
    if carries(crossing.source, "block order") and carries(crossing.to, "block order"):
        return [*seen, _lost(differs)]
    lacking = crossing.to if not carries(crossing.to, "block order") else crossing.source
    return [*seen, _unexpressed("block order", lacking, differs)]


# --- GW-2 tool calls -------------------------------------------------------------------


def _json_equal(want: str, got: str) -> bool:
    """Arguments are equal as JSON ('' is {}); text that is no JSON compares as written."""
    try:
        return bool(json.loads(want or "{}") == json.loads(got or "{}"))
    except (ValueError, RecursionError):  # a gateway's arguments may nest without end
        return want == got


def _calls(crossing: Crossing) -> list[Observation]:
    want, got = tool_calls(crossing.upstream.blocks), tool_calls(crossing.downstream.blocks)
    if not crossing.both_succeeded or not (want or got):
        return []
    names = ([call.name for call in want], [call.name for call in got])
    if names[0] != names[1]:
        return [_lost(f"tool calls (by name): upstream {names[0]}, downstream {names[1]}")]
    for position, (expected, observed) in enumerate(zip(want, got, strict=True)):
        if not _json_equal(expected.arguments, observed.arguments):
            return [
                _lost(
                    f"arguments of call {position} ({expected.name}): upstream "
                    f"{_shown(expected.arguments)}, downstream {_shown(observed.arguments)}"
                )
            ]
    ids, sent = [call.id for call in got], [call.id for call in want]
    if (len(set(ids)) < len(ids) and len(set(sent)) == len(sent)) or not all(ids):
        return [_lost(f"tool-call ids not one per call downstream: {_shown(ids)}")]
    renamed = {e.id: o.id for e, o in zip(want, got, strict=True) if e.id != o.id}
    seen = [_held(f"{len(got)} tool call(s): names, arguments and order kept")]
    if renamed:
        # One id per call is kept; whether the tool results are mapped back is the next
        # request's question, not the stream's.
        seen.append(Observation("unexpressed", f"ids renamed one to one: {_shown(renamed)}"))
    return seen


# --- GW-3 finish, GW-6 failures --------------------------------------------------------


def _turn(attempt: ExpectedAttempt, dialect: DialectId) -> str:
    """What a successful finish tells the caller to do, as the wire's clients read it."""
    calls = tool_calls(attempt.blocks)
    if attempt.reason == "stop" and calls and dialect in TOOL_TURN_BY_CALLS:
        return "tool-calls"
    return attempt.reason


def _said(turn: str, reason: str) -> str:
    return turn if turn == reason else f"{turn} ({reason} with tool calls)"


def _finish(crossing: Crossing) -> list[Observation]:
    up, down = crossing.upstream, crossing.downstream
    if up.success:
        if down.code == EMPTY_RESPONSE and not any(_shows(b, crossing.to) for b in up.blocks):
            kept = f"not expressible in {crossing.to}: every block of the upstream's answer"
            return [Observation("unexpressed", f"{kept} (the answer is empty downstream)")]
        if not down.success:
            return [_lost(f"the upstream finished {up.reason}; downstream it failed {down.code}")]
        want, got = _turn(up, crossing.source), _turn(down, crossing.to)
        if want != got:
            shown = (_said(want, up.reason), _said(got, down.reason))
            return [_lost(f"finish: upstream {shown[0]}, downstream {shown[1]}")]
        return [_held(f"finish {want}")]
    mapping = FINISH_CROSSINGS.get(up.code or "")
    if mapping is None:
        return []  # a failure: GW-6
    wanted = mapping.reads_as[crossing.to]
    if down.success:
        change = f"the upstream's {up.code} finish arrived as a successful {down.reason}"
        return [Observation("lost" if mapping.as_success == "MUST" else "weaker", change)]
    if not wanted:
        return [
            Observation(
                "unexpressed",
                f"not expressible in {crossing.to}: {up.code}; arrived as the failure {down.code}",
            )
        ]
    if down.code not in wanted:
        return [
            _lost(f"the upstream's {up.code} finish should read {sorted(wanted)}, not {down.code}")
        ]
    mapped = "" if down.code == up.code else f" ({up.code} is {down.code} in {crossing.to})"
    return [_held(f"finish {down.code}{mapped}")]


def _failure(crossing: Crossing) -> list[Observation]:
    up, down = crossing.upstream, crossing.downstream
    if up.success or (up.code or "") in FINISH_CROSSINGS:
        return []
    if down.success:
        return [_lost(f"the upstream's failure ({up.code}) arrived as a successful {down.reason}")]
    judged = failure_class_change(up.code, down.code)
    return [
        Observation("held" if judged.held else "weaker" if judged.weaker else "lost", judged.reason)
    ]


# --- GW-4 usage ------------------------------------------------------------------------

_COUNTERS: tuple[tuple[str, Aspect | None], ...] = (
    ("input_tokens", None),
    ("output_tokens", None),
    ("cache_read_tokens", None),
    ("reasoning_tokens", "reasoning_tokens"),
    ("cache_write_tokens", "cache_write_tokens"),
)


def _count(usage: Usage, counter: str) -> int:
    """A counter; an optional one left out is none of it."""
    value = getattr(usage, counter)
    return value if isinstance(value, int) else 0


def _usage(crossing: Crossing) -> list[Observation]:
    if not crossing.both_succeeded:
        return []
    want, got = crossing.upstream.usage, crossing.downstream.usage
    if want is None:
        if got is None or not any(_count(got, counter) for counter, _ in _COUNTERS):
            return []  # Anthropic always sends counts: zeros stand for none
        return [Observation("weaker", f"usage the upstream never sent: {_counts(got)}")]
    if got is None:
        return [_lost(f"the upstream's usage {_counts(want)} was dropped")]
    expected = _counts(want, keep_writes=carries(crossing.to, "cache_write_tokens"))
    seen: list[Observation] = []
    for counter, aspect in _COUNTERS:
        sent, observed = expected.get(counter, 0), _count(got, counter)
        if aspect is None or (carries(crossing.source, aspect) and carries(crossing.to, aspect)):
            if sent != observed:
                seen.append(_lost(f"{counter}: upstream {sent}, downstream {observed}"))
        elif sent:
            seen.append(_unexpressed(aspect, crossing.to, f"{counter} {sent}"))
        elif observed:
            # A share the upstream's wire has no counter for: the gateway's estimate.
            wire = crossing.source
            seen.append(_unexpressed(aspect, wire, f"the downstream's {counter} {observed}"))
    return seen or [_held(f"usage {_counts(want)} under the downstream's convention")]


def _counts(usage: Usage, *, keep_writes: bool = True) -> dict[str, int]:
    """The counters that are not zero. Without a cache-write counter, the writes are billed
    input: counted in the input (reference §6 "usage: cache write")."""
    counts = {counter: _count(usage, counter) for counter, _ in _COUNTERS}
    if not keep_writes:
        counts["input_tokens"] += counts.pop("cache_write_tokens")
    return {counter: count for counter, count in counts.items() if count}


# --- GW-5 reasoning --------------------------------------------------------------------


def _token_lists(blocks: Sequence[Block]) -> dict[Aspect, list[str]]:
    reasoning = [block for block in blocks if isinstance(block, ReasoningBlock)]
    lists: dict[Aspect, list[str]] = {}
    for aspect in ("signature", "redacted", "encrypted_content"):
        lists[aspect] = [t for block in reasoning if (t := _tokens(block)[aspect]) is not None]
    return lists


def _reasoning(crossing: Crossing) -> list[Observation]:
    up, down = crossing.upstream.blocks, crossing.downstream.blocks
    want, got = _text_of(up, ReasoningBlock), _text_of(down, ReasoningBlock)
    tokens = (_token_lists(up), _token_lists(down))
    if not crossing.both_succeeded or not (
        want or got or any(tokens[0].values()) or any(tokens[1].values())
    ):
        return []
    seen: list[Observation] = []
    if want != got:
        seen.append(_lost(f"reasoning: upstream {_shown(want)}, downstream {_shown(got)}"))
    for aspect, sent in tokens[0].items():
        arrived = tokens[1][aspect]
        made_up = [token for token in arrived if token not in sent]
        if made_up:
            seen.append(_lost(f"{aspect} the upstream never sent: {_shown(made_up)}"))
        elif not carries(crossing.to, aspect):
            if sent:
                seen.append(_unexpressed(aspect, crossing.to, f"{len(sent)} {aspect}(s)"))
        elif sent != arrived:
            seen.append(_lost(f"{aspect}: upstream {_shown(sent)}, downstream {_shown(arrived)}"))
    return seen or [_held("reasoning text and continuity tokens verbatim")]


def _rule(
    number: int, statement: str, rationale: str, evidence: str, check: CrossingCheck
) -> CrossingRule:
    return CrossingRule(
        id=f"GW-{number}",
        family="GW-",
        family_title="Gateways across dialects",
        level="MUST",
        statement=statement,
        rationale=rationale,
        source=f"reference dialects.md §6, §8.4 GW-{number}; {evidence}",
        check=check,
    )


CROSSING_RULES: dict[str, CrossingRule] = {
    rule.id: rule
    for rule in (
        _rule(
            1,
            "The upstream's text reaches the caller byte for byte, in its place among the "
            "tool calls and reasoning where the downstream wire can order blocks.",
            "Text lost or moved across a tool call changes what the caller shows and replays.",
            "§4 A23, C11",
            _text,
        ),
        _rule(
            2,
            "Every client tool call arrives: same count, order, names and arguments (equal "
            "as JSON), one distinct id per call; parallel calls neither merged nor split.",
            "A call lost, merged or with other arguments runs the wrong tool, or none.",
            "§4 A1, A2, A5, A6, A10, G10, G12, §4.H",
            _calls,
        ),
        _rule(
            3,
            "The finish keeps its meaning: a tool turn stays a tool turn (even when the "
            "upstream said stop with tool calls), truncation stays truncation, a refusal or "
            "filter stays a non-success; a paused turn should not read as a plain stop.",
            "A tool turn read as end_turn never runs the tool; truncation read as a stop "
            "hands over a cut answer as whole.",
            "§4 C1-C4, C12, C13, G21; LiteLLM's stop -> end_turn",
            _finish,
        ),
        _rule(
            4,
            "Usage is the upstream's under the downstream's convention: input without cache "
            "reads, cache reads, cache writes, output and reasoning, never summed twice.",
            "Double-counted or dropped tokens bill and budget the caller wrongly.",
            "§4 D1-D9",
            _usage,
        ),
        _rule(
            5,
            "Reasoning text arrives as reasoning; signatures, redacted data and "
            "encrypted_content arrive verbatim and in order where the downstream has a "
            "place for them, and are never made up.",
            "A dropped or invented continuity token fails the next turn (400 Invalid signature).",
            "§4 B1-B12, G24-G29",
            _reasoning,
        ),
        _rule(
            6,
            "An upstream failure arrives as the downstream's failure, of the same code (or "
            "at least the same retryability), never as a success or a stop.",
            "A failure read as a success hands a partial answer over as complete and is "
            "never retried.",
            "§4 E5, E11-E13; LiteLLM's error -> stop",
            _failure,
        ),
    )
}


def judge_crossing(
    upstream: ExpectedAttempt, downstream: ExpectedAttempt, source: DialectId, to: DialectId
) -> dict[str, list[Observation]]:
    """What every crossing rule the pair exercises observed, from ``source`` to ``to``."""
    crossing = Crossing(upstream, downstream, source, to)
    judged = {rule.id: rule.check(crossing) for rule in CROSSING_RULES.values()}
    return {rule_id: seen for rule_id, seen in judged.items() if seen}


def crossing_verdicts(
    judged: dict[str, list[Observation]], *, strict: bool
) -> dict[str, InvariantVerdict]:
    """A rule's verdict is its heaviest observation; the reason, every one of that weight."""
    verdicts = {}
    for rule_id, seen in judged.items():
        heaviest = max(_WEIGHT[observation.kind] for observation in seen)
        kind = next(o.kind for o in seen if _WEIGHT[o.kind] == heaviest)
        reasons = "; ".join(o.reason for o in seen if o.kind == kind)
        verdicts[rule_id] = InvariantVerdict(verdict=_verdict(kind, strict), reason=reasons)
    return verdicts


def _verdict(kind: Kind, strict: bool) -> Verdict:
    return verdict_for(
        "MUST",
        kind == "held",
        weaker=kind == "weaker",
        strict=strict,
        recorded=kind == "unexpressed",
    )
