"""JUnit XML: well-formed whatever the content, one testcase per (case, invariant)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import report_builders as build

from conformance.report import render_junit
from conformance.report.junit import xml_text


def test_hostile_result_parses_back() -> None:
    run = build.hostile_result()
    root = ET.fromstring(render_junit(run))
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == sum(len(case.verdicts) for case in run.cases)
    assert suite.get("tests") == str(len(cases))
    assert suite.get("failures") == str(run.counts()["fail"])
    assert suite.get("skipped") == str(run.counts()["n/a"])
    names = {case.get("name") for case in cases}
    assert f"id-{build.SCRIPT}" in names  # markup round-trips as text


def test_verdicts_map_to_junit_elements() -> None:
    run = build.result(
        [
            build.case(
                "a-case",
                {
                    "C1": ("fail", "text ['x'], expected []"),
                    "G8": ("non-strict", "finish has null case"),
                    "T7": ("info", "assembled get_weather"),
                    "H2": ("n/a", "the adapter does not declare retry"),
                    "G1": "pass",
                },
                stderr="boom\n",
            )
        ]
    )
    root = ET.fromstring(render_junit(run))
    by_class = {case.get("classname"): case for case in root.iter("testcase")}
    assert set(by_class) == {"C.C1", "G.G8", "T.T7", "H.H2", "G.G1"}
    failure = by_class["C.C1"].find("failure")
    assert failure is not None
    assert failure.get("message") == "text ['x'], expected []"
    assert "Invariant: Text is the concatenation" in (failure.text or "")
    assert by_class["C.C1"].findtext("system-err") == "boom\n"
    skipped = by_class["H.H2"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "the adapter does not declare retry"
    assert by_class["G.G8"].findtext("system-out") == "non-strict: finish has null case"
    properties = {prop.get("name"): prop.get("value") for prop in by_class["T.T7"].iter("property")}
    assert properties == {"verdict": "info", "reason": "assembled get_weather"}
    assert list(by_class["G.G1"]) == []


def test_characters_xml_cannot_carry_are_escaped() -> None:
    assert xml_text("a\x00b\x1bc\ufffed\ud800") == "a\\x00b\\x1bc\\ufffed\\ud800"
    # What a terminal or viewer acts on, which XML carries: C1 controls, bidi overrides.
    assert xml_text("x\x85y\u202ez\x9b") == "x\\x85y\\u202ez\\x9b"
    assert xml_text("tab\tnl\ncr\r") == "tab\tnl\ncr\r"
    run = build.result([build.case("c", {"C1": ("fail", "nul \x00 here")}, stderr="\x07")])
    root = ET.fromstring(render_junit(run))
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "nul \\x00 here"
