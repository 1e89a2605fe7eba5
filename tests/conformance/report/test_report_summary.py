"""The Markdown summary of a run: counts, each verdict to look at once with its replay
command, the baseline's stale entries; untrusted strings render as themselves."""

from __future__ import annotations

import html
import shlex
from pathlib import Path

import pytest
import report_builders as build
from markdown_it import MarkdownIt

from conformance.report import compare_baseline
from conformance.report.markdown import code_span
from conformance.report.summary import MAX_LISTED, render_summary, replay_command
from conformance.results import RunResult
from fakeprovider.shown import controls_shown

# CommonMark with GitHub's tables and strikethrough: what a job summary is rendered with.
GFM = MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE_TEXT = [
    build.HOSTILE,
    "**bold** _em_ `code` [link](javascript:alert(1)) ![img](x) <b>tag</b> &amp; | a | b |",
    "# heading\n- item\n> quote\n\n---\n1. list",
    "back\\slash \\* ~~struck~~ @someone #123 www.example.com http://x.test",
    "``` fence `` two ` one",
]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_a_code_span_shows_any_text_as_it_is_on_one_line(text: str) -> None:
    span = code_span(text)
    assert "\n" not in span
    rendered = GFM.render(span)
    assert rendered.startswith("<p><code>") and rendered.endswith("</code></p>\n")
    inside = rendered.removeprefix("<p><code>").removesuffix("</code></p>\n")
    assert html.unescape(inside) == controls_shown(text)
    assert "\\u202e" in controls_shown(build.INVISIBLE)  # a bidi override shown, not obeyed


def failing_run(reason: str = "attempt 1: id '' | expected 'call_1'") -> RunResult:
    return build.result(
        [
            build.case("tool-a", {"C1": "pass", "T1": ("fail", reason + "\nsecond line")}),
            build.case("tool-b", {"T1": ("non-strict", "late id"), "G8": "pass"}),
            build.case("clean", {"C1": "pass"}),
        ],
        options={"adapter": "--adapter-cmd 'node my adapter.js'", "strict": False},
    )


def test_each_verdict_to_look_at_is_listed_once_with_its_replay_command() -> None:
    text = render_summary(failing_run())
    assert text.startswith("## streamconform: FAILED — ` example-adapter 1.0.0 `\n")
    assert "| 3 | 1 | 0 | 0 | 1 |" in text  # pass, non-strict, info, n/a, fail
    assert text.count("**fail** ` T1 ` · ` tool-a `") == 1
    assert text.count("**non-strict** ` T1 ` · ` tool-b `") == 1
    assert "second line" not in text  # the cause is one line
    assert "— ` attempt 1: id '' | expected 'call_1' `\n" in text
    replay = "conformance run --adapter-cmd 'node my adapter.js' -k tool-a"
    assert f"  replay: ` {replay} `" in text
    assert shlex.split(replay)[3] == "node my adapter.js"
    assert "clean" not in text


def test_replay_repeats_the_runs_fixtures_generation_and_contract() -> None:
    run = build.result(
        [build.case("gen-t-1", {"T1": "fail"})],
        options={
            "adapter": "--adapter m:f",
            "generated": 5,
            "seed": 7,
            "strict": True,
            "transport": "in-process",
        },
        contract="interop",
    )
    assert replay_command(run, "gen-t-1", [Path("my fixtures")]) == (
        "conformance run --adapter m:f --fixtures 'my fixtures' --generate 5 --seed 7 "
        "--strict --transport in-process --contract interop -k gen-t-1"
    )


def test_the_baseline_part_tags_failures_and_lists_stale_entries() -> None:
    baseline = build.result(
        [
            build.case("tool-a", {"C1": ("fail", "old"), "T1": ("fail", "other cause")}),
            build.case("tool-b", {"T1": ("non-strict", "late id")}),
            build.case("gone", {"T1": ("fail", "x")}),
        ]
    )
    current = failing_run()
    diff = compare_baseline(current, baseline, strict=True)
    text = render_summary(current, diff)
    assert "; against the baseline: 1 known failure (baseline), 0 new, 1 changed, 1 stale" in text
    assert "` tool-a ` (changed; the baseline's cause: ` other cause `) —" in text
    assert "` tool-b ` (known) —" in text
    assert "### Stale baseline entries" in text and "(--baseline-strict) (1)" in text
    assert "- ` C1 ` · ` tool-a `: fail → pass" in text
    assert "### No longer judged (1)\n\n- ` T1 ` · ` gone `: fail → (none)" in text
    assert text.count("` T1 ` · ` tool-a `") == 1  # a failure is listed once


def test_a_hostile_run_renders_no_markup_of_its_own() -> None:
    hostile = build.result(
        [build.case(f"case-{text[:3]}", {"T1": ("fail", text)}) for text in HOSTILE_TEXT],
        name="<b>adapter</b> **x**",
    )
    rendered = GFM.render(render_summary(hostile))
    for tag in ("<b>", "<em>", "<a ", "<img", "<script", "<blockquote", "<del>", "<h1>"):
        assert tag not in rendered, tag
    # Only the summary's own markup: a list item and a bold verdict per case, and code spans
    # (the adapter's name and the spec revision; per case the invariant, the id, the reason,
    # the replay command).
    assert rendered.count("<li>") == rendered.count("<strong>") == len(HOSTILE_TEXT)
    assert rendered.count("<code>") == 2 + 4 * len(HOSTILE_TEXT)


def test_a_long_list_is_cut_with_a_count() -> None:
    many = build.result([build.case(f"c{n}", {"T1": "fail"}) for n in range(MAX_LISTED + 5)])
    text = render_summary(many)
    assert text.count("**fail**") == MAX_LISTED
    assert "- … and 5 more (see the report)" in text
