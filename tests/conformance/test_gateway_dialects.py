"""Gateway mode across dialects: a translating gateway (translating_gateway.py) in front of
the fake provider, one per direction. Translating correctly it comes out with no failure;
each fault real gateways have is caught by the rule it breaks. Then the sans-IO judging
on its own: what the downstream cannot express is recorded, never failed."""

from __future__ import annotations

import asyncio
import functools
import socket

import pytest
from click.testing import CliRunner
from translating_gateway import Route, translating_gateway

from conformance.cli import main
from conformance.cli.options import ExitCode
from conformance.events import ReasoningBlock, TextBlock, ToolCallBlock, Usage
from conformance.gateway.capture import GatewayCapture, GatewayRead
from conformance.gateway.crossing import CROSSING_RULES, crossing_verdicts, judge_crossing
from conformance.gateway.downstream import downstream_attempt
from conformance.gateway.next_turn import next_turn_rules
from conformance.gateway.runner import GatewayOptions, run_gateway
from conformance.options import bundled_fixtures
from conformance.oracle import ExpectedAttempt
from conformance.results import RunResult
from conformance.spec import LATEST_SPEC
from fakeprovider.dialects import DIALECT_IDS, DialectId
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

pytestmark = pytest.mark.timeout(120)
CHAT, MESSAGES, RESPONSES = DIALECT_IDS
# Per upstream dialect: text, tools (parallel, chat's stop with tool calls), reasoning
# with its continuity tokens, usage with caches, refusals, pauses, failures before and
# in the stream.
CASES: dict[DialectId, tuple[str, ...]] = {
    CHAT: (
        "tool-parallel-interleaved",
        "tool-call-finish-stop",
        "usage-trailing-cached-reasoning",
        "error-object-mid-stream",
        "content-filter-finish",
        "reasoning-only-stop",
        "rate-limit-then-ok",
        "two-turn-parallel-tool-calls",
        "gw-duplicate-tool-ids-chat",
    ),
    MESSAGES: (
        "an-basic-text",
        "an-parallel-tools",
        "an-thinking-signature",
        "an-redacted-thinking",
        "an-usage-cumulative-repeat",
        "an-overloaded-midstream",
        "an-pause-turn",
        "an-refusal-empty-text",
        "an-two-turn-thinking-tool",
        "an-two-turn-redacted-tool",
        "gw-duplicate-tool-ids",
        "gw-an-thinking-signature-roundtrip",
    ),
    RESPONSES: (
        "resp-basic-text",
        "resp-parallel-calls",
        "resp-reasoning-encrypted",
        "resp-usage-cached-reasoning",
        "resp-failed-after-text",
        "resp-refusal",
        "resp-incomplete-max-output-tokens",
        "resp-text-then-function-call",
        "resp-two-turn-reasoning-function-call",
    ),
}
DIRECTIONS = [
    (up, down) for up in DIALECT_IDS for down in DIALECT_IDS if (up, down) != (CHAT, CHAT)
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@functools.cache
def _corpus() -> dict[str, Scenario]:
    return {scenario.id: scenario for scenario in load_fixtures([bundled_fixtures()])}


def _run(
    up: DialectId, down: DialectId, fault: str | None = None, spec: str = LATEST_SPEC
) -> RunResult:
    scenarios = [_corpus()[case_id] for case_id in CASES[up]]
    port = _free_port()
    with translating_gateway(Route(f"http://127.0.0.1:{port}/v1", up, down, fault)) as url:
        options = GatewayOptions(
            url,
            upstream_port=port,
            idle_timeout_s=5.0,  # generous: the machine may be loaded
            timeout_s=10.0,
            upstream_dialect=up,
            downstream_dialect=down,
            spec=spec,
        )
        return asyncio.run(run_gateway(scenarios, options))


def _verdicts(result: RunResult) -> dict[str, dict[str, str]]:
    return {
        case.case: {rule: verdict.verdict for rule, verdict in case.verdicts.items()}
        for case in result.cases
    }


def _flagged(result: RunResult) -> dict[str, dict[str, str]]:
    flagged = {
        case: {rule: v for rule, v in verdicts.items() if v in ("fail", "non-strict")}
        for case, verdicts in _verdicts(result).items()
    }
    return {case: rules for case, rules in flagged.items() if rules}


@pytest.mark.parametrize(("up", "down"), DIRECTIONS, ids=[f"{u}->{d}" for u, d in DIRECTIONS])
def test_a_correct_translation_is_clean_in_every_direction(up: DialectId, down: DialectId) -> None:
    result = _run(up, down)
    assert [case.status for case in result.cases] == ["completed"] * len(CASES[up])
    assert _flagged(result) == {}
    judged = {rule for verdicts in _verdicts(result).values() for rule in verdicts}
    assert {"GW-1", "GW-2", "GW-3", "GW-4", "GW-6"} <= judged, judged
    assert not {rule for rule in judged if rule.startswith("M")}  # chat both ways only
    wire_rules = {"chat-completions": "W", "anthropic-messages": "AN-W", "openai-responses": "RS-W"}
    assert set(next_turn_rules(up)) <= judged  # the two-turn case's next request
    lint = judged - set(CROSSING_RULES) - set(next_turn_rules(up))
    lint_families = {rule.rstrip("0123456789") for rule in lint}
    assert lint_families == {wire_rules[down]}  # the downstream's own wire rules
    assert result.options["downstream_dialect"] == down
    assert {entry["id"] for entry in result.catalogue} >= {"GW-1", "GW-6"}


def test_what_the_downstream_cannot_carry_is_recorded_not_failed() -> None:
    verdicts = _verdicts(_run(MESSAGES, CHAT))
    assert verdicts["an-thinking-signature"]["GW-5"] == "info"  # no signature in chat
    assert verdicts["an-redacted-thinking"]["GW-5"] == "info"  # nor redacted data
    assert verdicts["an-pause-turn"]["GW-3"] == "info"  # nor a paused turn
    assert verdicts["an-thinking-signature"]["GW-1"] == "pass"
    # The client had no signature to send back: its absence upstream is the crossing's.
    assert verdicts["an-two-turn-thinking-tool"]["AN-R2"] == "info"
    assert verdicts["an-two-turn-thinking-tool"]["N1"] == "pass"


@pytest.mark.parametrize(
    ("up", "down", "fault", "case", "rules"),
    [
        (MESSAGES, MESSAGES, "drop-replayed-tokens", "an-two-turn-thinking-tool", "AN-R2"),
        (MESSAGES, MESSAGES, "drop-replayed-tokens", "an-two-turn-redacted-tool", "AN-R2"),
        (
            RESPONSES,
            RESPONSES,
            "drop-replayed-tokens",
            "resp-two-turn-reasoning-function-call",
            "RS-R2",
        ),
        (MESSAGES, RESPONSES, "fresh-result-ids", "an-two-turn-thinking-tool", "N1 N2"),
        (RESPONSES, CHAT, "fresh-result-ids", "resp-two-turn-reasoning-function-call", "N1 N2"),
        (CHAT, MESSAGES, "fresh-result-ids", "two-turn-parallel-tool-calls", "N1 N2"),
    ],
)
def test_a_gateway_that_loses_the_next_request_fails_the_rule_it_breaks(
    up: DialectId, down: DialectId, fault: str, case: str, rules: str
) -> None:
    """``rules``: the ones the fault breaks (results under fresh ids answer calls the
    replayed history renames too)."""
    result = _run(up, down, fault)
    flagged = _flagged(result)
    assert flagged.pop(case) == dict.fromkeys(rules.split(), "fail")
    assert {c for c in flagged if _corpus()[c].follow_up is None} == set()  # first turns kept
    for rule in rules.split():
        reason = next(c for c in result.cases if c.case == case).verdicts[rule].reason
        assert "stream gave" in reason or "leaves out" in reason, reason


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        ("forget-history", "carries none of the first turn"),
        ("refuse-next-request", "answered HTTP 400 without calling the upstream"),
    ],
)
def test_a_next_request_that_never_reaches_the_upstream_is_n1s_loss(fault: str, why: str) -> None:
    result = _run(RESPONSES, MESSAGES, fault)
    case = next(c for c in result.cases if c.case == "resp-two-turn-reasoning-function-call")
    assert {r: v.verdict for r, v in case.verdicts.items() if v.verdict == "fail"} == {"N1": "fail"}
    assert why in case.verdicts["N1"].reason
    assert case.gateway is not None and "next_turn" in case.gateway


def test_a_token_lost_in_the_first_turn_is_failed_there_not_again_on_the_next_request() -> None:
    result = _run(MESSAGES, MESSAGES, "drop-signature")
    case = next(c for c in result.cases if c.case == "an-two-turn-thinking-tool")
    assert case.verdicts["GW-5"].verdict == "fail"
    assert case.verdicts["AN-R2"].verdict == "info"
    assert case.verdicts["AN-R2"].reason.startswith("follows from GW-5 in the first turn: ")


@pytest.mark.parametrize(
    ("up", "down", "fault", "case", "rule"),
    [
        (MESSAGES, MESSAGES, "drop-signature", "an-thinking-signature", "GW-5"),
        (RESPONSES, RESPONSES, "drop-signature", "resp-reasoning-encrypted", "GW-5"),
        (CHAT, MESSAGES, "end-turn-for-tools", "tool-call-finish-stop", "GW-3"),
        (CHAT, MESSAGES, "end-turn-for-tools", "tool-parallel-interleaved", "GW-3"),
        (MESSAGES, CHAT, "summed-usage", "an-usage-cumulative-repeat", "GW-4"),
        (CHAT, RESPONSES, "empty-snapshot", "tool-parallel-interleaved", "RS-W11"),
    ],
)
def test_each_fault_of_a_real_gateway_fails_the_rule_it_breaks(
    up: DialectId, down: DialectId, fault: str, case: str, rule: str
) -> None:
    result = _run(up, down, fault)
    assert _flagged(result)[case] == {rule: "fail"}
    reason = next(c for c in result.cases if c.case == case).verdicts[rule].reason
    assert "upstream" in reason or "streamed" in reason  # both sides are quoted


def test_under_spec_1_1_a_gateway_loss_across_dialects_is_only_observed() -> None:
    """The GW rules and the Anthropic wire rules are 1.2's: a gate wired under 1.1 sees the
    dropped signature as info, the reason saying why."""
    result = _run(MESSAGES, MESSAGES, "drop-signature", spec="1.1")
    assert _flagged(result) == {} and result.spec == "1.1"
    gw5 = next(c for c in result.cases if c.case == "an-thinking-signature").verdicts["GW-5"]
    assert gw5.verdict == "info" and gw5.reason.startswith("new since 1.1 (added in 1.2); ")
    assert {entry["level"] for entry in result.catalogue} == {"INFO"}


def test_the_cli_judges_across_dialects_and_posts_to_the_downstream_endpoint() -> None:
    port = _free_port()
    route = Route(f"http://127.0.0.1:{port}/v1", RESPONSES, MESSAGES, None)
    with translating_gateway(route) as url:
        common = ["gateway", "--gateway-url", url, "--upstream-port", str(port)]
        dialects = ["--upstream-dialect", RESPONSES, "--downstream-dialect", MESSAGES]
        clean = CliRunner().invoke(main, [*common, "-k", "resp-basic-text", *dialects])
        # Chat both ways (the default) asks the chat endpoint, which this gateway refuses.
        chat = CliRunner().invoke(main, [*common, "-k", "tool-call-finish-stop"])
    assert clean.exit_code == ExitCode.CONFORMANT, clean.output
    assert "GW-1" in clean.output
    assert chat.exit_code == ExitCode.NOT_CONFORMANT, chat.output
    assert "M5" in chat.output


# --- sans-IO ---------------------------------------------------------------------------


def _success(*blocks: object, reason: str = "stop") -> ExpectedAttempt:
    usage = Usage(input_tokens=5, output_tokens=7, cache_read_tokens=0)
    return ExpectedAttempt(1, reason, blocks=blocks, usage=usage)  # type: ignore[arg-type]


def _judged(
    up: ExpectedAttempt, down: ExpectedAttempt, source: DialectId, to: DialectId
) -> dict[str, str]:
    verdicts = crossing_verdicts(judge_crossing(up, down, source, to), strict=False)
    return {rule: verdict.verdict for rule, verdict in verdicts.items()}


def test_a_signature_made_up_downstream_fails_even_where_none_was_sent() -> None:
    reasoning = ReasoningBlock(text="think")
    signed = ReasoningBlock(text="think", signature="placeholder")
    judged = _judged(
        _success(reasoning, TextBlock(text="hi")),
        _success(signed, TextBlock(text="hi")),
        CHAT,
        MESSAGES,
    )
    assert judged["GW-5"] == "fail"


def test_a_failure_finish_read_as_a_success_fails_and_a_pause_read_as_a_stop_is_weaker() -> None:
    text = TextBlock(text="partial")
    openrouter_error = ExpectedAttempt(1, "error", "ERROR", blocks=(text,))
    paused = ExpectedAttempt(1, "error", "PAUSE_TURN")
    assert _judged(openrouter_error, _success(text), CHAT, MESSAGES)["GW-3"] == "fail"
    assert (
        _judged(openrouter_error, ExpectedAttempt(1, "error", "SERVER"), CHAT, MESSAGES)["GW-3"]
        == "info"
    )
    assert _judged(paused, _success(), MESSAGES, CHAT)["GW-3"] == "non-strict"


def test_block_order_counts_only_where_the_downstream_can_order_blocks() -> None:
    call = ToolCallBlock(id="call_1", name="get_time", arguments='{"tz": "UTC"}')
    up = _success(TextBlock(text="a"), call, TextBlock(text="b"), reason="tool-calls")
    down = _success(TextBlock(text="ab"), call, reason="tool-calls")
    assert _judged(up, down, MESSAGES, CHAT)["GW-1"] == "info"
    assert _judged(up, down, MESSAGES, RESPONSES)["GW-1"] == "fail"
    assert _judged(down, up, CHAT, MESSAGES)["GW-1"] == "info"  # chat never said the order


def test_arguments_equal_as_json_and_renamed_ids_are_kept_meaning() -> None:
    up = _success(ToolCallBlock(id="toolu_1", name="f", arguments='{"a": 1}'), reason="tool-calls")
    down = _success(ToolCallBlock(id="call_1", name="f", arguments='{"a":1}'), reason="tool-calls")
    assert _judged(up, down, MESSAGES, CHAT)["GW-2"] == "info"  # ids renamed one to one
    twice = _success(
        ToolCallBlock(id="call_1", name="f", arguments="{}"),
        ToolCallBlock(id="call_1", name="f", arguments="{}"),
        reason="tool-calls",
    )
    two = _success(
        ToolCallBlock(id="a", name="f", arguments=""),
        ToolCallBlock(id="b", name="f", arguments=""),
        reason="tool-calls",
    )
    assert _judged(two, twice, MESSAGES, CHAT)["GW-2"] == "fail"
    deep = "[" * 100_000  # no JSON, and too deep to parse: compared as written
    nested = _success(ToolCallBlock(id="a", name="f", arguments=deep), reason="tool-calls")
    assert _judged(nested, nested, MESSAGES, CHAT)["GW-2"] == "pass"


@pytest.mark.parametrize("dialect", DIALECT_IDS)
def test_an_html_answer_reads_as_a_failure_of_the_case(dialect: DialectId) -> None:
    html = GatewayCapture(
        200, (("content-type", "text/html"),), (GatewayRead(1.0, b"<html>oops</html>"),)
    )
    attempt = downstream_attempt(html, dialect, now=0.0)
    assert not attempt.success
    nothing = downstream_attempt(GatewayCapture(None, ending="timeout"), dialect, now=0.0)
    assert nothing.code == "TIMEOUT"


def test_cache_writes_without_a_counter_are_billed_input_and_an_estimate_is_recorded() -> None:
    sent = Usage(input_tokens=317, output_tokens=47, cache_read_tokens=0, cache_write_tokens=4425)
    up = ExpectedAttempt(1, "stop", blocks=(TextBlock(text="hi"),), usage=sent)

    def downstream(usage: Usage) -> ExpectedAttempt:
        return ExpectedAttempt(1, "stop", blocks=(TextBlock(text="hi"),), usage=usage)

    folded = Usage(input_tokens=4742, output_tokens=47, cache_read_tokens=0)
    dropped = Usage(input_tokens=317, output_tokens=47, cache_read_tokens=0)
    estimated = Usage(input_tokens=4742, output_tokens=47, cache_read_tokens=0, reasoning_tokens=9)
    assert _judged(up, downstream(folded), MESSAGES, CHAT)["GW-4"] == "pass"
    assert _judged(up, downstream(dropped), MESSAGES, CHAT)["GW-4"] == "fail"
    assert _judged(up, downstream(estimated), MESSAGES, CHAT)["GW-4"] == "info"
    assert _judged(up, downstream(dropped), MESSAGES, MESSAGES)["GW-4"] == "fail"  # writes lost


def test_an_answer_with_nothing_the_downstream_can_carry_may_be_empty() -> None:
    redacted = ExpectedAttempt(1, "stop", blocks=(ReasoningBlock(text="", redacted="Er"),))
    empty = ExpectedAttempt(1, "error", "EMPTY_RESPONSE")
    assert _judged(redacted, empty, MESSAGES, CHAT)["GW-3"] == "info"
    assert _judged(redacted, empty, MESSAGES, MESSAGES)["GW-3"] == "fail"


def test_ids_duplicated_upstream_are_not_the_gateways_loss() -> None:
    same = [ToolCallBlock(id="toolu_A", name="f", arguments="{}") for _ in range(2)]
    twice = _success(*same, reason="tool-calls")
    assert _judged(twice, twice, MESSAGES, CHAT)["GW-2"] == "pass"
