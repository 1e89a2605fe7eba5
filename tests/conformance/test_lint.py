"""The wire-hazard lint: each rule flags the shape it guards against, with its position,
and keeps quiet on the canonical OpenAI stream; ``conformance lint`` on files."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.lint import RULES, LintResult, attempt_wire, lint
from conformance.lint.scan import scan
from conformance.options import bundled_fixtures
from fakeprovider.build import ScenarioBuilder, StreamBuilder, stream
from fakeprovider.fixtures import load_fixture

STARTER = bundled_fixtures() / "starter"


def _lint(builder: StreamBuilder, **context: bool) -> LintResult:
    scenario = ScenarioBuilder("lint").attempt(builder).build()
    return attempt_wire(scenario.attempts[0]).lint(
        include_usage=context.get("include_usage", True),
        upstream_failed=context.get("upstream_failed", False),
    )


def _canonical_tools() -> StreamBuilder:
    """OpenAI's own shape: identity on the first delta only, indexes 0 and 1, usage, [DONE]."""
    return (
        stream()
        .role()
        .tool_call(0, id="call_a", type="function", name="get_weather", arguments="")
        .tool_call(1, id="call_b", type="function", name="get_time", arguments="")
        .tool_call(0, arguments='{"city": "Paris"}')
        .tool_call(1, arguments='{"tz": "UTC"}')
        .finish("tool_calls")
        .usage(11, 7)
        .done()
    )


def _rules(result: LintResult) -> list[str]:
    return [finding.rule for finding in result.findings]


def test_the_canonical_stream_has_no_finding_and_exercises_the_tool_rules() -> None:
    result = _lint(_canonical_tools())

    assert result.findings == ()
    assert {"W1", "W2", "W3", "W4", "W6", "W8", "W10"} <= result.exercised
    assert not result.failed


@pytest.mark.parametrize(
    ("builder", "rule", "words"),
    [
        (
            stream().tool_call(0, type="function", name="f", arguments="").finish("tool_calls"),
            "W1",
            "tool call #1 lacks id",
        ),
        (
            stream().tool_call(id="c", type="function", name="f", arguments="").finish("stop"),
            "W1",
            "lacks index",
        ),
        (
            stream()
            .tool_call(0, id="c", type="function", name="f", arguments="")
            .tool_call(0, id=None, arguments="{}"),
            "W2",
            "tool call #1 continuation: id repeated as null",
        ),
        (
            stream()
            .tool_call(0, id="c", type="function", name="f", arguments="")
            .tool_call(0, name="", arguments="{}"),
            "W2",
            'name repeated as ""',
        ),
        (
            stream()
            .tool_call(0, id="c", type="function", name="f", arguments="")
            .tool_call(0, type="function", arguments="{}"),
            "W2",
            "type repeated",
        ),
        (
            stream()
            .tool_call(0, id="c", type="function", name="f", arguments="")
            .tool_call(0, id="other", arguments="{}"),
            "W2",
            'id changed to "other"',
        ),
        (
            stream().tool_call(1, id="c", type="function", name="f", arguments=""),
            "W3",
            "tool call #1 at index 1; expected 0",
        ),
        (
            stream()
            .tool_call(0, id="a", type="function", name="f", arguments="")
            .tool_call(2, id="b", type="function", name="g", arguments=""),
            "W3",
            "tool call #2 at index 2; expected 1",
        ),
        (stream().role().delta(role=None, content="x"), "W4", "delta.role is null"),
        (stream().role(content="").text(None), "W4", "delta.content is null"),
        (stream().role().reasoning(None), "W4", "delta.reasoning_content is null"),
        (
            stream().tool_call(0, id="c", type="function", name="f", arguments=None),
            "W4",
            "function.arguments is null",
        ),
        (stream().role().raw(": OPENROUTER PROCESSING"), "W5", "comment sent as data"),
        (stream().role().text("hi").finish("stop"), "W6", "ended cleanly without [DONE]"),
        (
            stream().role().chunk({"error": {"message": "boom"}}, envelope=False).done(),
            "W7",
            "[DONE] after an error payload",
        ),
        (stream().role().text("hi").finish("stop").done(), "W8", "no usage object"),
        (stream().role().raw("upstream timed out").done(), "W9", "data is not JSON"),
        (stream().role().text("hi").usage(1, 1).done(), "W10", "no non-empty finish_reason"),
    ],
)
def test_each_rule_flags_its_shape(builder: StreamBuilder, rule: str, words: str) -> None:
    result = _lint(builder)

    flagged = [finding for finding in result.findings if finding.rule == rule]
    assert flagged, _rules(result)
    assert words in flagged[0].message
    assert rule in result.exercised


def test_done_after_an_upstream_failure_is_flagged_only_in_that_context() -> None:
    masked = stream().role().text("partial").finish("stop").usage(1, 1).done()

    assert "W7" not in _rules(_lint(masked))
    assert _rules(_lint(masked, upstream_failed=True)) == ["W7"]


def test_usage_is_only_required_when_it_was_asked_for() -> None:
    without = stream().role().text("hi").finish("stop").done()

    assert _rules(_lint(without, include_usage=False)) == []
    assert "W8" not in _lint(without, include_usage=False).exercised


def test_a_cut_stream_is_a_failure_without_a_missing_done_finding() -> None:
    result = _lint(stream().role().text("hi").reset())

    assert result.failed
    assert "W6" not in result.exercised


def test_an_error_response_must_be_a_json_object() -> None:
    assert _rules(lint(b'{"error": {"message": "slow down"}}', status=429)) == []
    plain = lint(b"Too Many Requests", status=429)
    assert _rules(plain) == ["W9"]
    assert plain.failed


def test_positions_are_body_lines_and_byte_offsets() -> None:
    body = b"\xef\xbb\xbfdata: {}\r\n\r\n: ping\r\ndata: : ping\r\n\r\ndata: [DONE]\r\n\r\n"

    result = lint(body)

    (comment,) = result.of("W5")
    assert (comment.position.line, comment.position.offset) == (4, body.index(b"data: : ping"))
    assert str(comment.position) == f"line 4, byte {body.index(b'data: : ping')}"


def test_the_scan_dispatches_only_terminated_events() -> None:
    scanned = scan(b"data: a\ndata: b\n\ndata: c\n")

    assert [event.data for event in scanned.events] == ["a\nb"]
    assert scanned.unterminated


def test_every_rule_names_its_quirk_family() -> None:
    for rule in RULES.values():
        entry = rule.describe()
        assert entry["family"] == "W" and entry["level"] == "SHOULD"
        assert rule.quirk_family in "ABCDEFGHIJKL" and rule.quirks


# --- conformance lint ------------------------------------------------------------------------


def test_lint_command_reports_a_fixture_with_positions() -> None:
    fixture = STARTER / "tool-cont-null-id-name.yaml"

    result = CliRunner().invoke(main, ["lint", str(fixture)])

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert f"{fixture}#attempt1:3: byte 350: W4 delta.role is null" in lines[0]
    continuation = "W2 tool call #1 continuation: id repeated as null (quirk family A"
    assert any(continuation in line for line in lines)


def test_lint_command_reads_a_raw_dump_and_is_clean_on_a_clean_one(tmp_path: Path) -> None:
    scenario = load_fixture(STARTER / "utf8-byte-split.yaml")
    dump = tmp_path / "clean.sse"
    dump.write_bytes(attempt_wire(scenario.attempts[0]).body)
    dirty = tmp_path / "dirty.sse"
    body = b'data: {"choices": []}\n\n: keep-alive\n\n'
    dirty.write_bytes(body)

    clean = CliRunner().invoke(main, ["lint", str(dump)])
    flagged = CliRunner().invoke(main, ["lint", str(dump), str(dirty)])

    assert clean.exit_code == 0, clean.output
    assert flagged.exit_code == 1
    end = f"{dirty}:5: byte {len(body)}: W6 the body ended cleanly without [DONE]"
    assert end in flagged.stdout


def test_lint_command_rejects_a_broken_fixture(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: broken\nattempts: []\n")

    result = CliRunner().invoke(main, ["lint", str(broken)])

    assert result.exit_code == 2
    assert "broken.yaml" in result.stderr
