"""``fakeprovider show/validate/schema`` know Anthropic fixtures; ``conformance validate``
checks their expect against the Anthropic reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main as conformance_main
from conformance.options import bundled_fixtures
from fakeprovider.cli import main
from fakeprovider.fixtures import load_fixtures

ANTHROPIC = bundled_fixtures() / "anthropic"


def test_show_prints_named_events_and_anthropics_error_body() -> None:
    result = CliRunner().invoke(main, ["show", str(ANTHROPIC / "retry" / "an-http-529.yaml")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2] == (
        'body  {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "fake provider: 529 overloaded_error"}}'
    )
    assert 'write 1  event: message_start\\ndata: {"type":"message_start"' in result.output


def test_validate_names_file_field_and_reason_of_a_malformed_one(tmp_path: Path) -> None:
    path = tmp_path / "an-typo.yaml"
    path.write_text(
        "dialect: anthropic-messages\nattempts:\n  - stream:\n      steps:\n"
        "        - event: {type: ping}\n          event_lin: false\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert f"{path}:6: attempts[0].stream.steps[0].event_lin: unknown field" in result.output


BAD_EVENT_STEPS = {
    "untyped": (
        "- event: {index: 0}",
        "attempts[0].stream.steps[1]: the event has no string 'type' to name its event: line; "
        "give 'name', or 'event_line: false' for a data-only event",
    ),
    "named-without-line": (
        "- {event: {type: ping}, name: ping, event_line: false}",
        "attempts[0].stream.steps[1]: 'name' names the event: line that 'event_line: false' "
        "leaves out",
    ),
    "chat-step": (
        "- chunk: {choices: []}",
        "attempts[0].stream.steps[1]: chunk steps belong to chat-completions scenarios, and "
        "this one is anthropic-messages (set the scenario's dialect, or script this wire's "
        "own steps)",
    ),
    "name-over-two-lines": (
        '- {event: {type: ping}, name: "ping\\ndata: x"}',
        "attempts[0].stream.steps[1].name: String should match pattern '^[^\\r\\n]*$'",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_EVENT_STEPS))
def test_both_validators_name_file_line_field_and_reason_of_a_bad_event_step(
    tmp_path: Path, kind: str
) -> None:
    step, reason = BAD_EVENT_STEPS[kind]
    path = tmp_path / "an-bad-step.yaml"
    path.write_text(
        "id: an-bad-step\ndialect: anthropic-messages\nattempts:\n  - stream:\n"
        f"      steps:\n        - event: {{type: ping}}\n        {step}\n",
        encoding="utf-8",
    )
    for command, status in ((main, 1), (conformance_main, 2)):
        result = CliRunner().invoke(command, ["validate", str(tmp_path)])
        assert result.exit_code == status, result.output
        assert f"{path}:7: {reason}" in result.output


def test_schema_knows_the_dialect_and_event_steps() -> None:
    result = CliRunner().invoke(main, ["schema"])
    schema = json.loads(result.output)
    dialect = schema["properties"]["dialect"]
    assert dialect["enum"] == ["chat-completions", "anthropic-messages", "openai-responses"]
    assert dialect["default"] == "chat-completions"
    assert set(schema["$defs"]["EventStep"]["properties"]) == {
        "event",
        "name",
        "event_line",
        "event_end",
        "numbered",
    }


def test_conformance_validate_checks_an_anthropic_expect_against_its_oracle(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(conformance_main, ["validate", str(ANTHROPIC)])
    assert result.exit_code == 0, result.output
    assert f"{len(load_fixtures([ANTHROPIC]))} fixture(s) valid, expect agrees" in result.output
    # An expect the Anthropic reading contradicts is a problem, named by field.
    wrong = tmp_path / "an-basic-text.yaml"
    text = (ANTHROPIC / "content" / "an-basic-text.yaml").read_text(encoding="utf-8")
    wrong.write_text(text.replace("text: Hello", "text: Hel"), encoding="utf-8")
    result = CliRunner().invoke(conformance_main, ["validate", str(wrong)])
    assert result.exit_code == 2
    assert 'expect.text: "Hel", but the oracle reads "Hello"' in result.output
