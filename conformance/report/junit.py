"""JUnit XML for CI systems: one testcase per (case, invariant).

``classname`` is ``family.invariant`` (``G.G1``) so viewers group by family, ``name`` is
the case id. fail → ``<failure>``, n/a → ``<skipped>``; non-strict and info pass, with the
verdict and reason as properties and in ``<system-out>``. A case of another dialect than
chat-completions has a ``dialect`` property. ElementTree escapes markup; text
is also shown as the terminal shows it (controls, bidi overrides and lone surrogates as
escapes, fakeprovider.shown), and the few other characters XML 1.0 cannot carry escaped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from fakeprovider.shown import controls_shown

from ..results import CaseResult, InvariantVerdict, RunResult

_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with its own lines kept, every other control character and every character
    XML 1.0 forbids written as a visible escape."""
    shown = controls_shown(text, keep="\t\n\r")
    return _XML_INVALID.sub(lambda match: f"\\u{ord(match.group()):04x}", shown)


def render_junit(result: RunResult) -> str:
    """The run as a JUnit XML document (a ``testsuites`` root with one ``testsuite``)."""
    counts = result.counts()
    tests = sum(counts.values())
    adapter = f"{result.adapter.get('name', 'adapter')} {result.adapter.get('version', '')}"
    attributes = {
        "name": f"streamconform: {adapter.strip()}",
        "tests": str(tests),
        "failures": str(counts["fail"]),
        "errors": "0",
        "skipped": str(counts["n/a"]),
        "time": f"{sum(case.duration_s for case in result.cases):.3f}",
    }
    root = ET.Element("testsuites", _clean(attributes))
    suite = ET.SubElement(root, "testsuite", _clean(attributes | {"timestamp": result.started_at}))
    _properties(suite, _suite_properties(result))
    catalogue = {entry["id"]: entry for entry in result.catalogue}
    for case in result.cases:
        for invariant_id, verdict in case.verdicts.items():
            entry = catalogue.get(invariant_id)
            family = (entry["family"] if entry else "") or invariant_id.rstrip("0123456789")
            test = _Test(case, f"{family}.{invariant_id}", entry["statement"] if entry else "")
            _testcase(suite, test, verdict)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _suite_properties(result: RunResult) -> dict[str, str]:
    capabilities = result.adapter.get("capabilities")
    declared = capabilities if isinstance(capabilities, dict) else {}
    return {
        "adapter": str(result.adapter.get("name", "")),
        "adapter_version": str(result.adapter.get("version", "")),
        "capabilities": ",".join(name for name, on in declared.items() if on),
        "suite_version": result.suite_version,
        "contract": result.contract,
        "spec": result.spec,
        "strict": str(bool(result.options.get("strict", False))).lower(),
    }


@dataclass(frozen=True)
class _Test:
    case: CaseResult
    classname: str
    statement: str


def _testcase(suite: ET.Element, test: _Test, verdict: InvariantVerdict) -> None:
    attributes = {"classname": test.classname, "name": test.case.case}
    element = ET.SubElement(suite, "testcase", _clean(attributes))
    reason = verdict.reason or verdict.verdict
    # A case of another wire than chat-completions says which; a chat case's reads as before.
    properties = {"dialect": test.case.dialect} if test.case.dialect else {}
    if verdict.verdict in ("non-strict", "info"):
        properties |= {"verdict": verdict.verdict, "reason": verdict.reason}
    if properties:
        _properties(element, properties)
    if verdict.verdict == "fail":
        failure = ET.SubElement(element, "failure", _clean({"message": reason, "type": "fail"}))
        failure.text = xml_text(_failure_text(test, reason))
        if test.case.stderr:
            ET.SubElement(element, "system-err").text = xml_text(test.case.stderr)
    elif verdict.verdict == "n/a":
        ET.SubElement(element, "skipped", _clean({"message": reason}))
    elif verdict.verdict in ("non-strict", "info"):
        ET.SubElement(element, "system-out").text = xml_text(f"{verdict.verdict}: {reason}")


def _failure_text(test: _Test, reason: str) -> str:
    lines = [f"{test.classname} failed on case {test.case.case}: {reason}"]
    if test.statement:
        lines.append(f"Invariant: {test.statement}")
    if test.case.status != "completed":
        lines.append(f"Adapter {test.case.status}: {test.case.detail}")
    return "\n".join(lines)


def _properties(parent: ET.Element, values: dict[str, str]) -> None:
    properties = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(properties, "property", _clean({"name": name, "value": value}))


def _clean(attributes: dict[str, str]) -> dict[str, str]:
    return {name: xml_text(value) for name, value in attributes.items()}
