"""Each Anthropic mutant has exactly the bug it names: on a wire that shows it, the reference
translator gives the dialect's reading and the mutant the bug's. (Their kill by the AN-*
checkers is the kill table's, once those checkers are in the catalogue.)"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_wire import (
    args,
    block,
    delta,
    ends,
    event,
    hello,
    hello_block,
    start,
    stop,
    text,
    text_block,
    tool_block,
    translate,
)
from click.testing import CliRunner

from conformance.adapters.mutants import AWAITING_CHECKERS, MUTANTS, Mutant
from conformance.adapters.reference import AnthropicTranslator
from conformance.cli import main
from conformance.events import (
    BlockEnd,
    Event,
    Finish,
    ReasoningBlock,
    ServerToolBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)


def outcome(events: list[Event]) -> tuple[Any, ...]:
    """What the caller is handed: the finish, the blocks, the usage."""
    finish = events[-1]
    assert isinstance(finish, Finish)
    blocks = [event.block for event in events if isinstance(event, BlockEnd)]
    usage = [(u.input_tokens, u.output_tokens) for u in events if isinstance(u, Usage)]
    return (finish.reason, finish.code, blocks, usage)


CALL = ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"city": "Paris"}')
MALFORMED: tuple[Any, ...] = ("error", "MALFORMED_RESPONSE", [], [(10, 1)])
HELLO = [TextBlock(text="Hello")]

# mutant -> (the wire, the reference's outcome, the mutant's)
CASES: dict[str, tuple[list[Any], tuple[Any, ...], tuple[Any, ...]]] = {
    "an_delta_to_last_block": (
        [start(), text_block(0), text(0, "Hi"), text(3, " there"), stop(0), *ends()],
        MALFORMED,
        ("stop", None, [TextBlock(text="Hi there")], [(10, 5)]),
    ),
    "an_restart_reroutes": (
        [
            start(),
            text_block(0),
            text(0, "---"),
            block(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, "thinking_delta", thinking="Hm."),
            stop(0),
            *ends(),
        ],
        MALFORMED,
        ("stop", None, [TextBlock(text="---"), ReasoningBlock(text="Hm.")], [(10, 5)]),
    ),
    "an_text_into_tool_block": (
        [
            start(),
            tool_block(0),
            args(0, '{"city": "Paris"}'),
            text(0, "!"),
            stop(0),
            *ends("tool_use"),
        ],
        MALFORMED,
        (
            "tool-calls",
            None,
            [CALL.model_copy(update={"arguments": '{"city": "Paris"}!'})],
            [(10, 5)],
        ),
    ),
    "an_usage_summed": (
        [start(317, 1), *hello_block(0), *ends(output_tokens=47, input_tokens=317)],
        ("stop", None, HELLO, [(317, 47)]),
        ("stop", None, HELLO, [(634, 48)]),
    ),
    "an_signature_dropped": (
        [
            start(),
            block(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, "thinking_delta", thinking="Hm."),
            delta(0, "signature_delta", signature="EqQB"),
            stop(0),
            *hello_block(1),
            *ends(),
        ],
        ("stop", None, [ReasoningBlock(text="Hm.", signature="EqQB"), *HELLO], [(10, 5)]),
        ("stop", None, [ReasoningBlock(text="Hm."), *HELLO], [(10, 5)]),
    ),
    "an_redacted_dropped": (
        [
            start(),
            block(0, {"type": "redacted_thinking", "data": "EmwK"}),
            stop(0),
            *hello_block(1),
            *ends(),
        ],
        ("stop", None, [ReasoningBlock(text="", redacted="EmwK"), *HELLO], [(10, 5)]),
        ("stop", None, HELLO, [(10, 5)]),
    ),
    "an_error_event_as_success": (
        [*hello({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})],
        ("error", "SERVER", [], [(10, 1)]),
        ("stop", None, HELLO, [(10, 1)]),
    ),
    "an_pause_turn_as_stop": (
        hello(*ends("pause_turn")),
        ("error", "PAUSE_TURN", HELLO, [(10, 5)]),
        ("stop", None, HELLO, [(10, 5)]),
    ),
    "an_refusal_as_stop": (
        hello(*ends("refusal")),
        ("error", "REFUSAL", HELLO, [(10, 5)]),
        ("stop", None, HELLO, [(10, 5)]),
    ),
    "an_truncated_call_callable": (
        [start(), tool_block(0), args(0, '{"city": "Par'), *ends("max_tokens")],
        ("max-tokens", None, [CALL.model_copy(update={"arguments": '{"city": "Par'})], [(10, 5)]),
        ("tool-calls", None, [CALL.model_copy(update={"arguments": '{"city": "Par'})], [(10, 5)]),
    ),
    "an_server_tool_as_client_call": (
        [
            start(),
            block(
                0,
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            ),
            args(0, '{"q": "x"}'),
            stop(0),
            *hello_block(1),
            *ends(),
        ],
        (
            "stop",
            None,
            [ServerToolBlock(id="srvtoolu_1", name="web_search", arguments='{"q": "x"}'), *HELLO],
            [(10, 5)],
        ),
        (
            "stop",
            None,
            [ToolCallBlock(id="srvtoolu_1", name="web_search", arguments='{"q": "x"}'), *HELLO],
            [(10, 5)],
        ),
    ),
    "an_reads_past_message_stop": (
        [*hello(*ends()), text_block(1), text(1, "Again"), stop(1)],
        ("stop", None, HELLO, [(10, 5)]),
        ("stop", None, [*HELLO, TextBlock(text="Again")], [(10, 5)]),
    ),
    "an_empty_partial_json_resets": (
        [start(), tool_block(0, input={"city": "Paris"}), args(0, ""), stop(0), *ends("tool_use")],
        ("tool-calls", None, [CALL], [(10, 5)]),
        ("tool-calls", None, [CALL.model_copy(update={"arguments": "{}"})], [(10, 5)]),
    ),
    "an_unknown_block_shifts": (
        [
            start(),
            block(0, {"type": "fallback", "from": {}, "to": {}}),
            stop(0),
            *hello_block(1),
            *ends(),
        ],
        ("stop", None, HELLO, [(10, 5)]),
        ("stop", None, [TextBlock(text=""), *HELLO], [(10, 5)]),
    ),
    "an_data_only_dropped": (
        [event(item, name=None) for item in hello(*ends())],
        ("stop", None, HELLO, [(10, 5)]),
        ("error", "STREAM_CLOSED", [], []),
    ),
}


def test_every_anthropic_mutant_is_shown_here_and_awaits_its_checkers() -> None:
    assert set(CASES) == set(AWAITING_CHECKERS)
    assert not set(AWAITING_CHECKERS) & set(MUTANTS)  # out of the kill table until then
    assert all(
        m.anthropic_translator is not AnthropicTranslator for m in AWAITING_CHECKERS.values()
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mutant_has_its_bug_and_the_reference_has_not(name: str) -> None:
    wire, reference, mutated = CASES[name]
    assert outcome(translate(*wire)) == reference
    mutant = AWAITING_CHECKERS[name].anthropic_translator
    assert outcome(translate(*wire, translator=mutant)) == mutated


def test_a_mutant_awaiting_its_checkers_names_proposed_ids_only() -> None:
    bug = AWAITING_CHECKERS["an_refusal_as_stop"].anthropic_translator
    ok = Mutant("ok", "refusal", ("AN-C6",), anthropic_translator=bug, awaits_checkers=True)
    assert ok.awaits_checkers
    with pytest.raises(ValueError, match="unknown or no target"):
        Mutant("typo", "refusal", ("AN-6",), anthropic_translator=bug, awaits_checkers=True)
    with pytest.raises(ValueError, match="unknown or no target"):
        Mutant("judged", "refusal", ("AN-C6",), anthropic_translator=bug)  # not catalogued yet
    with pytest.raises(ValueError, match="exactly one piece"):
        Mutant("none", "nothing", ("AN-C6",), awaits_checkers=True)


def test_conformance_mutants_lists_every_mutant_with_its_targets() -> None:
    result = CliRunner().invoke(main, ["mutants", "--list"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    for mutant in [*MUTANTS.values(), *AWAITING_CHECKERS.values()]:
        assert mutant.name in result.output
    assert result.output.count("awaits its checkers") == len(AWAITING_CHECKERS)
    assert "AN-H2, AN-G4" in result.output
