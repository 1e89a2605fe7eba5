"""The next request of a two-turn case, as the fake provider reads it (sans-IO) and answers it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from conformance.options import default_request
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.dialects import DialectId
from fakeprovider.follow_up import (
    Call,
    FirstTurn,
    Token,
    answer_attempt,
    follow_up_problems,
    is_follow_up,
)
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import FollowUp, Scenario, StreamAttempt

SIGNATURE = "EqQBCkgIARAB\u00e9/+=="
REDACTED = "EmwKAhgBEgy3va3p"
CALL = Call("toolu_1")
RS_CALL = Call("call_1", item_id="fc_1")


def body(request: dict[str, Any]) -> bytes:
    return json.dumps(request).encode()


def anthropic(*assistant: dict[str, Any], results: tuple[object, ...] = ("toolu_1",)) -> bytes:
    answers = [{"type": "tool_result", "tool_use_id": r, "content": "ok"} for r in results]
    request = default_request("anthropic-messages")
    request["messages"] += [
        {"role": "assistant", "content": list(assistant)},
        {"role": "user", "content": answers},
    ]
    return body(request)


def thinking(signature: str | None = SIGNATURE) -> dict[str, Any]:
    block = {"type": "thinking", "thinking": "2 plus 2"}
    return block if signature is None else {**block, "signature": signature}


TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
SIGNED = FirstTurn((CALL,), (Token("signature", SIGNATURE),))


def responses(*items: dict[str, Any]) -> bytes:
    request = default_request("openai-responses")
    request["input"] += list(items)
    return body(request)


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="}
FUNCTION_CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
RS_TOKEN = "the reasoning item's encrypted_content (reasoning block 1)"
ENCRYPTED = FirstTurn((RS_CALL,), (Token("encrypted_content", "gAAA==", "rs_1"),))


def reasons(dialect: DialectId, first: FirstTurn, request: bytes) -> list[tuple[str, str]]:
    return [(p.rule, p.reason) for p in follow_up_problems(dialect, first, request)]


def test_a_faithful_next_request_has_no_problem_in_any_dialect() -> None:
    chat = default_request("chat-completions")
    chat["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_a"}, {"id": "call_b"}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "1"},
        {"role": "tool", "tool_call_id": "call_b", "content": "2"},
    ]
    assert (
        follow_up_problems(
            "chat-completions", FirstTurn((Call("call_a"), Call("call_b"))), body(chat)
        )
        == ()
    )
    assert follow_up_problems("anthropic-messages", SIGNED, anthropic(thinking(), TOOL_USE)) == ()
    request = responses(REASONING, FUNCTION_CALL, OUTPUT)
    assert follow_up_problems("openai-responses", ENCRYPTED, request) == ()


def test_the_item_id_for_the_call_id_is_named_as_such() -> None:
    request = responses(
        REASONING, {**FUNCTION_CALL, "call_id": "fc_1"}, {**OUTPUT, "call_id": "fc_1"}
    )
    found = reasons("openai-responses", ENCRYPTED, request)
    assert (
        "pairing",
        'a tool result\'s id "fc_1" is the item id of call "call_1", not its call_id',
    ) in found
    assert ("pairing", 'call "call_1" has no tool result') in found
    assert any(rule == "history" and "item id" in reason for rule, reason in found)


def test_results_that_match_nothing_twice_or_not_at_all_are_pairing_problems() -> None:
    invented = reasons(
        "anthropic-messages", SIGNED, anthropic(thinking(), TOOL_USE, results=("toolu_9",))
    )
    assert (
        "pairing",
        'a tool result\'s id "toolu_9" is no id the stream gave (it gave "toolu_1")',
    ) in invented
    twice = reasons(
        "anthropic-messages",
        SIGNED,
        anthropic(thinking(), TOOL_USE, results=("toolu_1", "toolu_1")),
    )
    assert twice == [("pairing", 'call "toolu_1" has 2 tool results')]


def test_a_call_replayed_twice_or_left_out_is_a_history_problem() -> None:
    twice = reasons("anthropic-messages", SIGNED, anthropic(thinking(), TOOL_USE, TOOL_USE))
    assert twice == [("history", 'the replayed turn has call "toolu_1" 2 times')]
    left_out = reasons("anthropic-messages", SIGNED, anthropic(thinking()))
    assert left_out == [("history", 'the replayed turn leaves out call "toolu_1"')]


@pytest.mark.parametrize(
    ("assistant", "reason"),
    [
        (
            (thinking(None), TOOL_USE),
            "the thinking block's signature (reasoning block 1) is missing",
        ),
        (
            (thinking(SIGNATURE[:-1]), TOOL_USE),
            "the thinking block's signature (reasoning block 1) is",
        ),
        ((TOOL_USE,), "the next request leaves out the thinking block's signature"),
        (
            ({"type": "redacted_thinking", "data": REDACTED}, TOOL_USE),
            "is replayed as a redacted_thinking block's data",
        ),
        (
            (thinking(), {"type": "redacted_thinking", "data": REDACTED}, TOOL_USE),
            "replays a redacted_thinking block's data the stream never gave",
        ),
    ],
)
def test_a_signature_not_replayed_byte_for_byte_in_order_is_a_replay_problem(
    assistant: tuple[dict[str, Any], ...], reason: str
) -> None:
    ((rule, found),) = reasons("anthropic-messages", SIGNED, anthropic(*assistant))
    assert rule == "replay" and reason in found


def test_a_json_escape_is_the_same_token() -> None:
    escaped = anthropic(thinking(), TOOL_USE).replace(b"\\u00e9", "\u00e9".encode())
    assert follow_up_problems("anthropic-messages", SIGNED, escaped) == ()


def test_encrypted_content_missing_or_under_another_id_is_a_replay_problem() -> None:
    bare = {key: value for key, value in REASONING.items() if key != "encrypted_content"}
    assert reasons("openai-responses", ENCRYPTED, responses(bare, FUNCTION_CALL, OUTPUT)) == [
        (
            "replay",
            f'{RS_TOKEN} is missing, the stream gave "gAAA=="',
        )
    ]
    empty_id = responses({**REASONING, "id": ""}, FUNCTION_CALL, OUTPUT)
    assert reasons("openai-responses", ENCRYPTED, empty_id) == [
        (
            "replay",
            f'{RS_TOKEN} is replayed under id "", the stream gave "rs_1"',
        )
    ]


def test_hostile_values_are_shown_escaped_and_cut() -> None:
    hostile = "\x1b[31m" + "x" * 100
    found = reasons(
        "anthropic-messages", SIGNED, anthropic(thinking(), TOOL_USE, results=(hostile, "toolu_1"))
    )
    ((_, reason),) = found
    assert "\x1b" not in reason and "\\u001b" in reason and "chars)" in reason


@pytest.mark.parametrize("dialect", ["chat-completions", "anthropic-messages", "openai-responses"])
def test_the_first_request_is_no_follow_up_and_a_body_that_is_no_json_neither(
    dialect: DialectId,
) -> None:
    assert not is_follow_up(dialect, body(default_request(dialect)))
    assert not is_follow_up(dialect, b"\xff not json")
    assert follow_up_problems(dialect, FirstTurn(), b"[1, 2]") == ()


SUNNY = FollowUp(tool_results=("Sunny",))


def two_turn(follow_up: FollowUp | None = SUNNY) -> Scenario:
    return (
        ScenarioBuilder("two-turn")
        .attempt(
            stream()
            .tool_call(0, id="call_a", name="get_weather", arguments="{}")
            .finish("tool_calls")
            .done()
        )
        .build()
        .model_copy(update={"follow_up": follow_up})
    )


def test_the_registry_answers_the_next_request_with_the_answer_and_marks_it() -> None:
    registry = ScenarioRegistry([two_turn()])
    first = body(default_request("chat-completions"))
    follow = default_request("chat-completions")
    follow["messages"] += [{"role": "tool", "tool_call_id": "call_a", "content": "Sunny"}]
    number, attempt = registry.begin_request(
        "two-turn", method="POST", path="/", headers=[], body=first
    )
    assert number == 1 and attempt == two_turn().attempts[0]
    number, attempt = registry.begin_request(
        "two-turn", method="POST", path="/", headers=[], body=body(follow)
    )
    assert number == 2 and attempt == answer_attempt("chat-completions", "Done.")
    assert [r.follow_up for r in registry.requests("two-turn")] == [False, True]


def test_a_one_turn_scenario_answers_a_history_as_its_next_attempt() -> None:
    registry = ScenarioRegistry([two_turn(None)])
    follow = default_request("chat-completions")
    follow["messages"] += [{"role": "tool", "tool_call_id": "call_a", "content": "Sunny"}]
    registry.begin_request("two-turn", method="POST", path="/", headers=[], body=b"{}")
    registry.begin_request("two-turn", method="POST", path="/", headers=[], body=body(follow))
    assert [r.follow_up for r in registry.requests("two-turn")] == [False, False]


@pytest.mark.parametrize("dialect", ["chat-completions", "anthropic-messages", "openai-responses"])
def test_the_answer_is_a_playable_stream_of_its_dialect(dialect: DialectId) -> None:
    answer = answer_attempt(dialect, "Done.")
    scenario = ScenarioBuilder("answer", dialect=dialect).attempt(answer).build()
    assert isinstance(scenario.attempts[0], StreamAttempt)
    assert scenario.attempts[0] == answer  # numbered as a scenario numbers it


def test_the_fixture_schema_holds_a_result_per_call() -> None:
    fixture = two_turn().model_dump(mode="json")
    fixture["expect"] = {"finish": "tool-calls", "tool_calls": [{"id": "call_a"}]}
    Scenario.model_validate(fixture)
    two_calls = {"finish": "tool-calls", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    with pytest.raises(ValidationError, match="1 result"):
        Scenario.model_validate({**fixture, "expect": two_calls})
    with pytest.raises(ValidationError, match="fails has no next request"):
        Scenario.model_validate({**fixture, "expect": {"finish": "error", "code": "SERVER"}})
    with pytest.raises(ValidationError, match="tool_results, a message, or both"):
        Scenario.model_validate({**fixture, "follow_up": {}})
