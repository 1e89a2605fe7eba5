"""A scenario's ``expect`` against the oracle: two readings of the spec, field by field.

A fixture author writes ``expect`` from the invariants; the oracle reads the outcome from
the wire. Where they differ, one of them is wrong, and the field says where to look.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from pydantic import JsonValue

from fakeprovider.fixtures import Location
from fakeprovider.scenario import (
    Expect,
    ExpectedFinish,
    ExpectedToolCall,
    ExpectedUsage,
    Scenario,
)

from ..events import ReasoningBlock, TextBlock, ToolCallBlock
from ..options import DEFAULT_POLICY, case_policy
from .expect import expected_outcome
from .outcome import ExpectedOutcome


@dataclass(frozen=True)
class Disagreement:
    """One field of ``expect`` that the oracle reads otherwise; None is "left out" / "none"."""

    location: Location  # a path into the fixture: ("expect", "tool_calls", 0, "id")
    expected: JsonValue
    oracle: JsonValue

    @property
    def reason(self) -> str:
        listed = "left out" if self.expected is None else _shown(self.expected)
        read = "none" if self.oracle is None else _shown(self.oracle)
        return f"{listed}, but the oracle reads {read}"


def _shown(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def outcome_expect(outcome: ExpectedOutcome) -> Expect:
    """The oracle's outcome as an ``expect`` block states it (fixtures/README.md)."""
    final = outcome.final
    blocks = final.blocks if final.success else ()
    calls = [block for block in blocks if isinstance(block, ToolCallBlock)]
    reasoning = [b for b in blocks if isinstance(b, ReasoningBlock)]
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    return Expect(
        finish=cast(ExpectedFinish, final.reason),
        code=final.code,
        # Each kind's blocks joined: chat has one of each, Anthropic may open several.
        text="".join(texts) if texts else None,
        reasoning="".join(b.text for b in reasoning) if reasoning else None,
        signature=next((b.signature for b in reasoning if b.signature is not None), None),
        redacted=next((b.redacted for b in reasoning if b.redacted is not None), None),
        encrypted_content=next(
            (b.encrypted_content for b in reasoning if b.encrypted_content is not None), None
        ),
        tool_calls=tuple(
            ExpectedToolCall(
                id=call.id, name=call.name, arguments=call.arguments, item_id=call.item_id
            )
            for call in calls
        )
        or None,
        usage=None
        if final.usage is None
        else ExpectedUsage.model_validate(final.usage.model_dump(exclude={"case", "type"})),
        attempts=len(outcome.attempts),
    )


def expect_disagreements(scenario: Scenario, *, exhaustive: bool) -> list[Disagreement]:
    """Where ``scenario.expect`` differs from the oracle's outcome (nothing when it has none).

    ``expect`` states the outcome under the default retry policy with the scenario's own
    ``retry_policy`` fields. ``exhaustive``: a block or usage it leaves out is one there is
    none of; otherwise (an ambiguous quirk) only what it lists is compared. Within a tool
    call only the keys it lists are compared either way. Once the finishes differ, the
    blocks and usage are not compared: they follow from it.
    """
    if scenario.expect is None:
        return []
    outcome = expected_outcome(scenario, case_policy(DEFAULT_POLICY, scenario))
    return _compare(scenario.expect, outcome_expect(outcome), exhaustive)


def _compare(mine: Expect, oracle: Expect, exhaustive: bool) -> list[Disagreement]:
    found = [
        Disagreement(("expect", key), getattr(mine, key), getattr(oracle, key))
        for key in ("finish", "code", "attempts")
        if getattr(mine, key) != getattr(oracle, key)
    ]
    if mine.finish != oracle.finish:
        return found
    for key in ("text", "reasoning", "signature", "redacted", "encrypted_content"):
        listed, read = getattr(mine, key), getattr(oracle, key)
        if listed != read and (listed is not None or exhaustive):
            found.append(Disagreement(("expect", key), listed, read))
    if mine.tool_calls is not None or exhaustive:
        found += _compare_calls(mine.tool_calls, oracle.tool_calls)
    if mine.usage is not None or exhaustive:
        found += _compare_usage(mine.usage, oracle.usage)
    return found


def _compare_calls(
    mine: tuple[ExpectedToolCall, ...] | None, oracle: tuple[ExpectedToolCall, ...] | None
) -> list[Disagreement]:
    if len(mine or ()) != len(oracle or ()):
        return [Disagreement(("expect", "tool_calls"), _dumped(mine), _dumped(oracle))]
    found = []
    for position, (call, read) in enumerate(zip(mine or (), oracle or (), strict=True)):
        for key, listed in call.model_dump(exclude_none=True).items():
            if listed != getattr(read, key):
                found.append(
                    Disagreement(
                        ("expect", "tool_calls", position, key), listed, getattr(read, key)
                    )
                )
    return found


def _compare_usage(mine: ExpectedUsage | None, oracle: ExpectedUsage | None) -> list[Disagreement]:
    if mine is None or oracle is None:
        if mine == oracle:
            return []
        return [Disagreement(("expect", "usage"), _dumped(mine), _dumped(oracle))]
    listed, read = _usage_fields(mine), _usage_fields(oracle)
    return [
        Disagreement(("expect", "usage", key), listed[key], read[key])
        for key in listed
        if listed[key] != read[key]
    ]


def _usage_fields(usage: ExpectedUsage) -> dict[str, JsonValue]:
    # No cache read is zero: the oracle reports the zero, expect leaves it out.
    return usage.model_dump() | {"cache_read_tokens": usage.cache_read_tokens or 0}


def _dumped(value: ExpectedUsage | tuple[ExpectedToolCall, ...] | None) -> JsonValue:
    if value is None:
        return None
    if isinstance(value, ExpectedUsage):
        return value.model_dump(exclude_none=True)
    return [call.model_dump(exclude_none=True) for call in value]
