"""Transcripts, fixtures and the outcome diff a failing case shows."""

from __future__ import annotations

import pytest
import report_builders as build
import yaml

from conformance.options import bundled_fixtures
from conformance.report.transcript import (
    ReplayError,
    case_scenario,
    fixture_yaml,
    observed_attempts,
    outcome_diff,
    segments,
    transcript,
)
from fakeprovider.build import ScenarioBuilder, fault, http_error, stream
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

FIXTURES = [
    *load_fixtures([bundled_fixtures()]),
    build.hostile_scenario(),
]


@pytest.mark.parametrize("scenario", FIXTURES, ids=[s.id for s in FIXTURES])
def test_fixture_yaml_round_trips(scenario: Scenario) -> None:
    assert Scenario.model_validate(yaml.safe_load(fixture_yaml(scenario))) == scenario


def test_fixture_yaml_uses_bare_words_and_one_line_chunks() -> None:
    scenario = ScenarioBuilder("s").attempt(stream().text("hi").done(event_end=False).stall())
    text = fixture_yaml(scenario.build())
    assert "- chunk: {choices: [{index: 0, delta: {content: hi}" in text
    assert "- done: true\n      event_end: false\n" in text
    assert "- stall\n" in text


def test_segments_make_bytes_visible() -> None:
    parts = segments("\ufeffdata: é\r\n".encode())
    assert [(p.text, p.escape) for p in parts] == [
        ("\\xef", True),
        ("\\xbb", True),
        ("\\xbf", True),
        ("data: ", False),
        ("\\xc3", True),
        ("\\xa9", True),
        ("\\r", True),
        ("\\n", True),
    ]
    assert parts[-1].newline


def test_transcript_of_every_attempt_kind() -> None:
    scenario = (
        ScenarioBuilder("kinds")
        .attempt(fault("reset"))
        .attempt(http_error(429, headers={"Retry-After": "1"}))
        .attempt(stream().text("hi").pause(30).done())
        .build()
    )
    first, second, third = transcript(scenario)
    assert first.summary == "fault: reset"
    assert second.summary == "HTTP 429 error response"
    assert [row.label for row in second.rows] == ["head", "body"]
    assert third.summary.startswith("stream, HTTP 200,")
    assert [row.delay_ms for row in third.rows] == [0, 0, 30, 0]
    assert third.rows[-1].segments[0].text == "<close>"


def test_case_scenario_reports_an_unusable_recording() -> None:
    with pytest.raises(ReplayError, match="no scenario"):
        case_scenario(build.case("c", {}))
    # What `model_dump(exclude_defaults=True)` records for a `done` step: an empty dict.
    recorded = {"attempts": [{"stream": {"steps": [{}]}}]}
    with pytest.raises(ReplayError, match="does not validate"):
        case_scenario(build.case("c", {}, scenario=recorded))


def test_observed_attempts_split_on_retry() -> None:
    events = [
        {"type": "usage", "input_tokens": 3, "output_tokens": 0},
        {"type": "finish", "reason": "error", "code": "EMPTY_RESPONSE"},
        {"type": "retry", "attempt": 2, "code": "EMPTY_RESPONSE", "delay_ms": 1},
        {"type": "block-start", "index": 0, "block_type": "text"},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "hi"}},
        {"type": "thrown", "message": "boom", "code": "SERVER"},
        {"type": "end"},
    ]
    assert observed_attempts(events) == [
        {
            "attempt": 1,
            "finish": "error",
            "code": "EMPTY_RESPONSE",
            "usage": {"input_tokens": 3, "output_tokens": 0},
            "retried": True,
        },
        {
            "attempt": 2,
            "finish": "(threw)",
            "code": "SERVER",
            "blocks": [{"type": "text", "text": "hi"}],
        },
    ]


def test_outcome_diff_marks_the_first_divergence_once() -> None:
    expected = {
        "attempts": [
            {
                "attempt": 1,
                "finish": "stop",
                "blocks": [
                    {"type": "reasoning", "text": "think"},
                    {"type": "text", "text": "Hello"},
                ],
                "usage": {"input_tokens": 1, "output_tokens": 2},
                "features": ["crlf"],
            }
        ]
    }
    events = [
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "xHello"}},
        {"type": "finish", "reason": "stop"},
    ]
    case = build.case("c", {}, expected=expected, events=events)
    rows = outcome_diff(case, {"reasoning": False, "usage": False})
    assert [row.first for row in rows].count(True) == 1
    first = next(row for row in rows if row.first)
    assert first.expected is not None and '"Hello"' in first.expected
    assert first.observed is not None and '"xHello"' in first.observed
    text = "\n".join(row.expected or "" for row in rows)
    assert "reasoning" not in text and "usage" not in text and "features" not in text
    assert outcome_diff(build.case("d", {}, events=events), {}) != ()
