"""docs/adapter-protocol.md says what the code does: its tables name every event, field,
capability and canonical code, its numbers are the code's constants, and its Python example
is an adapter the suite runs."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import types
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

from conformance import codes, events
from conformance.adapters.base import GRACE_S, TRACEBACK_LINES, PythonAdapterSession
from conformance.adapters.case_log import MAX_CASE_BYTES, MAX_EVENTS_PER_CASE
from conformance.adapters.subprocess import (
    MAX_LINE_BYTES,
    STDERR_KEEP_BYTES,
    SubprocessAdapterSession,
)
from conformance.events import Capabilities, RetryPolicy, RunCase
from conformance.invariants import CATALOGUE
from conformance.options import DEFAULT_POLICY, RunOptions, bundled_fixtures, default_request
from conformance.run.runner import MAX_RUN_BYTES, case_request
from fakeprovider.build import ScenarioBuilder, messages_stream
from fakeprovider.fixtures import load_fixtures

DOC = Path(__file__).resolve().parents[1] / "docs" / "adapter-protocol.md"
TEXT = DOC.read_text(encoding="utf-8")
FLAT = " ".join(TEXT.split())  # prose with its line breaks as spaces


def section(heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = TEXT.index(f"\n{heading}\n")
    ends = [TEXT.find(f"\n{'#' * n} ", start + 1) for n in range(2, len(level) + 1)]
    return TEXT[start : min((end for end in ends if end != -1), default=len(TEXT))]


def event_classes() -> list[type[events.EventBase]]:
    union = events.Event
    if get_origin(union) is Annotated:
        union = get_args(union)[0]
    return list(get_args(union))


def test_every_event_and_its_fields_are_in_the_events_table() -> None:
    table = section("## Events")
    for model in event_classes():
        name = model.model_fields["type"].default
        (row,) = (line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        for field in set(model.model_fields) - {"type", "case"}:
            assert f"`{field}`" in row, f"{name}: {field}"


def test_the_handshake_and_run_line_tables_list_every_field() -> None:
    handshake, run_line = section("## The handshake"), section("## A case: the run line")
    for field in events.Hello.model_fields:
        assert f"| `{field}` |" in handshake
    for capability in Capabilities.model_fields:
        assert f"| `{capability}` |" in handshake
    for field in set(RunCase.model_fields) - {"type"}:
        assert f"| `{field}` |" in run_line
    for field in RetryPolicy.model_fields:
        assert f"| `{field}` |" in run_line


def test_every_canonical_code_is_listed_with_its_default_retryability() -> None:
    table = section("### Failure codes")
    for code in codes.CANONICAL_CODES:
        (row,) = (line for line in table.splitlines() if line.startswith(f"| `{code}` |"))
        retryable = "yes" if code in codes.DEFAULT_RETRYABLE_CODES else "no"
        assert row.endswith(f"| {retryable} |"), row
    assert "| `HTTP_<status>` |" in table


def test_the_numbers_are_the_codes() -> None:
    start = inspect.signature(SubprocessAdapterSession.start).parameters
    hello_timeout = start["hello_timeout_s"].default
    line_bytes = f"{MAX_LINE_BYTES:,}".replace(",", " ")
    assert f"| line length | {MAX_LINE_BYTES // 2**20} MiB ({line_bytes} bytes)" in FLAT
    assert f"| {events.MAX_DEPTH} levels |" in FLAT
    assert range(-(2**63), 2**63) == events.INT_RANGE and "| integers | signed 64-bit" in FLAT
    assert f"| {MAX_EVENTS_PER_CASE:,} |".replace(",", " ") in FLAT
    assert f"| {MAX_CASE_BYTES // 2**20} MiB | `MAX_CASE_BYTES` |" in FLAT
    assert f"| {MAX_RUN_BYTES // 2**20} MiB: each case after that" in FLAT
    assert f"within {hello_timeout:g} seconds" in FLAT
    assert f"`timeout_s` + {GRACE_S:g} s" in FLAT
    assert f"last {TRACEBACK_LINES} lines of its traceback" in FLAT
    assert f"(the last {STDERR_KEEP_BYTES // 1024} KiB)" in FLAT
    assert events.PROTOCOL_VERSIONS == (1, 1.1)
    assert "speaks versions 1 and 1.1" in FLAT
    defaults = RunOptions()
    assert f"`idle_timeout_s` {defaults.idle_timeout_s:g}" in FLAT
    assert f"`timeout_s` {defaults.timeout_s:g} (`--timeout`)" in FLAT
    policy = DEFAULT_POLICY
    assert policy.jitter_ratio == 0 and len(policy.retryable_codes) == 6
    assert (
        f"(`max_retries` {policy.max_retries}, the six default retryable codes, waits of "
        f"{policy.initial_delay_ms:g} ms doubling up to {policy.max_delay_ms:g} ms, no jitter)"
    ) in FLAT
    assert '"model":"fake-model"' in FLAT and default_request()["model"] == "fake-model"


def test_the_python_example_is_an_adapter_the_suite_runs() -> None:
    (source,) = re.findall(r"```python\n(.*?)```", section("## Python adapters"), re.DOTALL)
    module = types.ModuleType("doc_example")
    module.my_client = types.SimpleNamespace(complete=lambda *_: "Sunny.")
    exec(compile(source, str(DOC), "exec"), module.__dict__)
    session = PythonAdapterSession(module.factory(RunOptions()))
    case = RunCase(
        case="c-1",
        base_url="http://127.0.0.1:1/c-1/v1",
        api_key="sk-test",
        request=default_request(),
        retry=DEFAULT_POLICY,
        idle_timeout_s=1,
        timeout_s=5,
    )
    run = asyncio.run(session.run_case(case, None))
    assert run.status == "completed"
    assert [event.type for event in run.events] == [
        "block-start",
        "text-delta",
        "block-end",
        "finish",
        "end",
    ]


VERSION_1_1 = "## Version 1.1: dialects"


def json_examples(text: str) -> list[dict[str, Any]]:
    """Each JSON line or block of ``text``'s json code blocks, decoded."""
    found: list[dict[str, Any]] = []
    for block in re.findall(r"```json\n(.*?)```", text, re.DOTALL):
        try:
            found.append(json.loads(block))
        except json.JSONDecodeError:  # one message per line
            found += [json.loads(line) for line in block.splitlines() if line.strip()]
    return found


def test_version_1_1_examples_are_messages_the_suite_writes_and_reads() -> None:
    hello, run_line, *block_ends = json_examples(section(VERSION_1_1))
    parsed = events.parse_hello_line(json.dumps(hello))
    assert parsed.protocol == 1.1 and "anthropic-messages" in parsed.spoken_dialects
    case = events.parse_run_line(json.dumps(run_line))
    # The example is the line the suite writes for an Anthropic case, but for the port.
    scenario = (
        ScenarioBuilder(case.case, dialect="anthropic-messages")
        .attempt(messages_stream().message_start().message_stop())
        .build()
    )
    written = case_request(scenario, "http://127.0.0.1:41234", DEFAULT_POLICY, RunOptions())
    assert case == written
    assert case.request == default_request("anthropic-messages")
    assert case.base_url.endswith(f"/{case.case}")  # Anthropic's SDKs add /v1/messages
    for line in block_ends:
        events.parse_event_line(json.dumps(line))


def test_version_1_1_names_every_field_it_adds() -> None:
    text = section(VERSION_1_1)
    added = {
        events.ReasoningBlock: ("signature", "redacted", "encrypted_content", "item_id"),
        events.ToolCallBlock: ("item_id",),
        events.Usage: ("cache_write_tokens",),
        events.Hello: ("dialects",),
        events.RunCase: ("dialect",),
    }
    for model, fields in added.items():
        for field in fields:
            assert field in model.model_fields and f"`{field}`" in text, field
    assert "`server-tool`" in text and "server-tool" in get_args(events.BlockType)
    for dialect in get_args(events.ProtocolDialect):
        assert f"`{dialect}`" in text
    for code in (codes.REFUSAL, codes.PAUSE_TURN, codes.CONTENT_FILTER):
        assert f"`{code}`" in text and code in codes.CANONICAL_CODES
    # A chat case's run line stays the version-1 one: no dialect.
    assert "a chat case's line has no `dialect`" in " ".join(text.split()).lower()


def test_the_two_turn_example_is_the_line_the_suite_writes_for_its_fixture() -> None:
    text = section("## Two-turn cases")
    (run_line,) = json_examples(text)
    case = events.parse_run_line(json.dumps(run_line))
    (scenario,) = (
        s for s in load_fixtures([bundled_fixtures()]) if s.id == case.case and s.follow_up
    )
    written = case_request(scenario, "http://127.0.0.1:41234", DEFAULT_POLICY, RunOptions())
    assert case == written and case.follow_up is not None
    # The rules it names are the ones that need the capability it documents.
    needing = {id for id, rule in CATALOGUE.items() if "follow_up" in rule.needs}
    assert needing == {"N1", "N2", "AN-R2", "RS-R2"}
    assert all(f"{id}" in text for id in needing)
    assert "`follow_up`" in section("## The handshake") and "follow_up" in Capabilities.model_fields
