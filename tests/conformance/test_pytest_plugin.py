"""The pytest plugin end to end: pytest sessions run with pytester, in process.

The adapters under test are the reference adapter and small variants of it that the tests
write next to the fixtures, each with one deliberate deviation.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from text_case import write_text_case

from conformance.cli import main as conformance_cli
from conformance.options import bundled_fixtures

pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "conformance.adapters.reference:factory"
# Inner sessions skip the cache, hypothesis' plugin (pytester restores sys.modules after each
# in-process session, so hypothesis would be imported afresh, ~1 s, every time) and
# pytest-asyncio (it warns about an unset option in every session without an ini file).
# The fresh-virtualenv test runs with every installed plugin.
NO_CACHE = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:asyncio")
SILENT = shlex.join([sys.executable, "-c", "pass"])  # exits before its hello

TOOL_CASE = """\
id: tool-call-one
title: One identified tool call, its arguments in two fragments
expect:
  finish: tool-calls
  tool_calls: [{id: call_1, name: get_weather, arguments: '{"city": "Paris"}'}]
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {role: assistant, tool_calls: [{index: 0, id: call_1, type: function, function: {name: get_weather, arguments: ""}}]}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {tool_calls: [{index: 0, function: {arguments: '{"city": '}}]}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {tool_calls: [{index: 0, function: {arguments: '"Paris"}'}}]}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {}, finish_reason: tool_calls}]}
        - done
"""  # noqa: E501

AUTH_CASE = """\
id: auth-error
title: 401 on the first request (AUTH, not retried)
expect: {finish: error, code: AUTH}
attempts:
  - error: {status: 401}
"""

NAME_SPLIT_CASE = """\
id: tool-name-split
title: The function name in two fragments (T7, INFO)
expect: {finish: tool-calls}
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {role: assistant, tool_calls: [{index: 0, id: call_1, type: function, function: {name: get_, arguments: ""}}]}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {tool_calls: [{index: 0, function: {name: weather, arguments: "{}"}}]}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {}, finish_reason: tool_calls}]}
        - done
"""  # noqa: E501

# Variants of the reference adapter, each with one deviation, loaded as `variants:<name>`.
VARIANTS = '''\
from conformance.adapters.reference import ReferenceAdapter
from conformance.events import (
    BlockEnd, BlockStart, Capabilities, Finish, Thrown, ToolCallBlock, ToolCallDelta,
)


class Nameless(ReferenceAdapter):
    """Drops every tool-call name."""

    async def run(self, case, http_client=None):
        async for event in super().run(case, http_client):
            if isinstance(event, ToolCallDelta):
                event = event.model_copy(update={"name": None})
            elif isinstance(event, BlockEnd) and isinstance(event.block, ToolCallBlock):
                block = event.block.model_copy(update={"name": ""})
                event = event.model_copy(update={"block": block})
            yield event


class Inventing(ReferenceAdapter):
    """Closes an unnamed, unidentified tool call before the finish of the text-hello case."""

    async def run(self, case, http_client=None):
        async for event in super().run(case, http_client):
            if isinstance(event, Finish) and case.case == "text-hello":
                yield BlockStart(case=case.case, index=1, block_type="tool-call")
                yield ToolCallDelta(case=case.case, index=1, arguments_delta="{}")
                call = ToolCallBlock(id="", name="", arguments="{}")
                yield BlockEnd(case=case.case, index=1, block=call)
            yield event


class Throwing(ReferenceAdapter):
    """Throws with the right code where a finish error is due: accepted, but weaker."""

    async def run(self, case, http_client=None):
        async for event in super().run(case, http_client):
            if isinstance(event, Finish) and event.reason == "error":
                event = Thrown(case=case.case, message=event.message or "", code=event.code)
            yield event


class Raising(ReferenceAdapter):
    """Raises after its first event of the text-hello case."""

    async def run(self, case, http_client=None):
        async for event in super().run(case, http_client):
            yield event
            if case.case == "text-hello":
                raise RuntimeError("the parser fell over")


class NoDeltas(ReferenceAdapter):
    """Declares no `deltas` capability."""

    hello = ReferenceAdapter.hello.model_copy(
        update={"capabilities": Capabilities(reasoning=True, usage=True, retry=True,
                                             error_codes=True)}
    )


class CountingNameless(Nameless):
    """Nameless, and appends each case it is asked to run to runs.log."""

    async def run(self, case, http_client=None):
        with open("runs.log", "a") as log:
            log.write(case.case + "\\n")
        async for event in super().run(case, http_client):
            yield event


def nameless(options):
    return Nameless()


def counting_nameless(options):
    return CountingNameless()


def inventing(options):
    return Inventing()


def throwing(options):
    return Throwing()


def raising(options):
    return Raising()


def no_deltas(options):
    return NoDeltas()
'''


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> Path:
    """Two small fixtures: a text answer and a tool call."""
    directory = pytester.mkdir("corpus")
    write_text_case(directory)
    (directory / "tool-call-one.yaml").write_text(TOOL_CASE)
    return directory


@pytest.fixture
def variants(pytester: pytest.Pytester) -> str:
    pytester.makepyfile(variants=VARIANTS)
    pytester.syspathinsert()
    return "variants"


def single_fixture(pytester: pytest.Pytester, name: str, text: str) -> Path:
    directory = pytester.mkdir(name)
    (directory / f"{name}.yaml").write_text(text)
    return directory


def cli_verdicts(fixtures: Path) -> Counter[str]:
    """The reference adapter's verdicts per kind from `conformance run --json`."""
    out = fixtures.parent / f"{fixtures.name}-results.json"
    args = ["run", "--adapter", REFERENCE, "--fixtures", str(fixtures), "--json", str(out)]
    CliRunner().invoke(conformance_cli, args)
    data = json.loads(out.read_text())
    return Counter(v["verdict"] for case in data["cases"] for v in case["verdicts"].values())


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    """An in-process session and its test reports by node id (call phase, or where it failed)."""
    result = pytester.runpytest(*NO_CACHE, *args)
    reports: dict[str, Any] = {}
    recorder = getattr(result, "reprec", None)
    if recorder is not None and hasattr(recorder, "getreports"):
        for report in recorder.getreports("pytest_runtest_logreport"):
            if report.when == "call" or report.outcome != "passed":
                reports.setdefault(report.nodeid, report)
    return result, reports


def outcome(report: Any) -> str:
    return "xfailed" if hasattr(report, "wasxfail") else str(report.outcome)


# --- inert without an adapter --------------------------------------------------------------


def test_without_an_adapter_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    config = pytester.parseconfigure(*NO_CACHE)
    assert config.pluginmanager.hasplugin("streamconform")  # loaded, through the entry point

    items, _ = pytester.inline_genitems(*NO_CACHE)
    assert [item.nodeid for item in items] == ["test_plain.py::test_one"]
    result, _ = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    assert "streamconform:" not in result.stdout.str()  # neither header nor run


def test_without_an_adapter_no_suite_module_is_imported(pytester: pytest.Pytester) -> None:
    """The plugin loads in every session of every environment that has streamconform."""
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    script = textwrap.dedent(
        """\
        import sys, pytest
        pytest.main(["-q", "-p", "no:cacheprovider"])
        assert "conformance.pytest_plugin" in sys.modules
        print("IMPORTED", sorted(m for m in sys.modules if m.startswith("conformance.")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=pytester.path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    imported = done.stdout.split("IMPORTED", 1)[1]
    # codes imports only the stdlib; the plugin's exception derives from its ConformanceError.
    assert imported.strip() == "['conformance.codes', 'conformance.pytest_plugin']"


# --- one item per case and invariant --------------------------------------------------------


def test_reference_adapter_passes_every_item(pytester: pytest.Pytester, corpus: Path) -> None:
    expected = cli_verdicts(corpus)
    assert expected["fail"] == 0

    result, reports = run(
        pytester, f"--conformance-adapter={REFERENCE}", f"--conformance-fixtures={corpus}"
    )

    result.assert_outcomes(passed=sum(expected.values()))
    assert result.ret == pytest.ExitCode.OK
    assert {nodeid.rsplit("::", 1)[0] for nodeid in reports} == {
        "conformance::text-hello",
        "conformance::tool-call-one",
    }
    assert "streamconform: running 2 case(s)" in result.stdout.str()


def test_items_carry_the_family_and_level_markers(pytester: pytest.Pytester, corpus: Path) -> None:
    args = (f"--conformance-adapter={REFERENCE}", f"--conformance-fixtures={corpus}")
    items, _ = pytester.inline_genitems(*NO_CACHE, *args)
    t6 = next(item for item in items if item.nodeid == "conformance::tool-call-one::T6")
    assert {mark.name for mark in t6.iter_markers()} == {"conformance", "T", "MUST"}

    result, _ = run(pytester, *args, "--strict-markers", "-m", "T and MUST")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 0
    assert "deselected" in outcomes


def test_broken_adapter_fails_the_right_items(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    adapter = f"{variants}:nameless"
    result, reports = run(
        pytester, f"--conformance-adapter={adapter}", f"--conformance-fixtures={corpus}"
    )

    failed = {nodeid: r for nodeid, r in reports.items() if r.outcome == "failed"}
    assert set(failed) == {"conformance::tool-call-one::T6"}
    text = failed["conformance::tool-call-one::T6"].longreprtext
    assert text.startswith("T6 (MUST) failed on case tool-call-one: attempt 1: block-end")
    assert "invariant: No block-end of a tool call carries an empty id or name." in text
    assert "why it matters: This is the durable boundary" in text
    assert '"name":"get_weather"' in text  # the expected outcome
    assert '"name":""' in text  # the observed block-end
    replay = f"conformance run --adapter {adapter} --fixtures {corpus} -k tool-call-one"
    assert f"replay: {replay}" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_python_adapter_crash_shows_its_traceback(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    args = (f"--conformance-adapter={variants}:raising", f"--conformance-fixtures={corpus}")
    _, reports = run(pytester, *args)

    text = reports["conformance::text-hello::G1"].longreprtext
    assert "RuntimeError: the parser fell over" in text.splitlines()[0]
    assert "adapter stderr or traceback (tail):" in text
    assert "in run" in text and "    RuntimeError: the parser fell over" in text


def test_a_verdict_beyond_the_prediction_gets_its_own_item(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    """T6 is not predicted for a text case; an adapter inventing a call exercises it."""
    args = (f"--conformance-adapter={variants}:inventing", f"--conformance-fixtures={corpus}")
    items, _ = pytester.inline_genitems(*NO_CACHE, *args)
    assert "conformance::text-hello::T6" not in {item.nodeid for item in items}

    result, reports = run(pytester, *args)

    assert outcome(reports["conformance::text-hello::T6"]) == "failed"
    result.stdout.fnmatch_lines(["*verdicts beyond the predicted items: *text-hello::T6*"])


def test_non_strict_is_xfail_and_strict_fails(pytester: pytest.Pytester, variants: str) -> None:
    fixtures = single_fixture(pytester, "auth-error", AUTH_CASE)
    args = (f"--conformance-adapter={variants}:throwing", f"--conformance-fixtures={fixtures}")

    result, reports = run(pytester, *args, "-rx")
    assert outcome(reports["conformance::auth-error::H1"]) == "xfailed"
    result.stdout.fnmatch_lines(["XFAIL conformance::auth-error::H1 - non-strict: *threw AUTH*"])
    assert result.ret == pytest.ExitCode.OK

    result, reports = run(pytester, *args, "--conformance-strict")
    assert outcome(reports["conformance::auth-error::H1"]) == "failed"
    assert (
        "H1 (SHOULD) failed on case auth-error"
        in reports["conformance::auth-error::H1"].longreprtext
    )
    assert "--strict -k auth-error" in reports["conformance::auth-error::H1"].longreprtext


def test_info_passes_with_the_observation(pytester: pytest.Pytester) -> None:
    fixtures = single_fixture(pytester, "tool-name-split", NAME_SPLIT_CASE)
    args = (f"--conformance-adapter={REFERENCE}", f"--conformance-fixtures={fixtures}", "-rP")

    result, reports = run(pytester, *args, "-k", "T7")

    assert result.parseoutcomes()["passed"] == 1
    assert outcome(reports["conformance::tool-name-split::T7"]) == "passed"
    result.stdout.fnmatch_lines(["*Captured conformance call*", "T7 (INFO) on tool-name-split: *"])


def test_not_applicable_is_skipped_with_the_reason(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    args = (f"--conformance-adapter={variants}:no_deltas", f"--conformance-fixtures={corpus}")

    result, reports = run(pytester, *args, "-k", "text-hello and G7", "-rs")

    assert outcome(reports["conformance::text-hello::G7"]) == "skipped"
    result.stdout.fnmatch_lines(["SKIPPED * n/a: the adapter does not declare deltas"])


# --- selection and reporting plugins ----------------------------------------------------------


def test_k_selects_items_and_runs_only_their_cases(pytester: pytest.Pytester, corpus: Path) -> None:
    args = (f"--conformance-adapter={REFERENCE}", f"--conformance-fixtures={corpus}")

    result, reports = run(pytester, *args, "-k", "text-hello and G1")

    assert list(reports) == ["conformance::text-hello::G1"]
    assert result.parseoutcomes()["passed"] == 1
    assert "streamconform: running 1 case(s)" in result.stdout.str()


def test_under_xdist_each_case_runs_once_with_the_serial_verdicts(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    pytest.importorskip("xdist")
    args = (*NO_CACHE, f"--conformance-adapter={variants}:counting_nameless")
    args += (f"--conformance-fixtures={corpus}",)
    serial = pytester.runpytest_subprocess(*args)
    (pytester.path / "runs.log").unlink()

    parallel = pytester.runpytest_subprocess(*args, "-n", "2")

    assert "2 workers" in parallel.stdout.str()
    assert parallel.parseoutcomes() == serial.parseoutcomes()
    assert serial.parseoutcomes()["failed"] > 0  # the deviation shows on both sides
    runs = (pytester.path / "runs.log").read_text().split()
    assert sorted(runs) == ["text-hello", "tool-call-one"]  # each case once, on one worker


def test_collect_only_lists_items_without_loading_the_adapter(
    pytester: pytest.Pytester, corpus: Path
) -> None:
    args = ("--conformance-adapter=no.such.module:factory", f"--conformance-fixtures={corpus}")

    result, _ = run(pytester, *args, "--collect-only", "-q")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["conformance::text-hello::G1", "conformance::tool-call-one::T6"])
    assert "streamconform: running" not in result.stdout.str()


def test_exitfirst_and_junitxml(pytester: pytest.Pytester, corpus: Path, variants: str) -> None:
    junit = pytester.path / "junit.xml"
    args = (f"--conformance-adapter={variants}:nameless", f"--conformance-fixtures={corpus}")

    result, reports = run(pytester, *args, "-x", f"--junitxml={junit}")

    assert result.parseoutcomes()["failed"] == 1
    assert list(reports)[-1] == "conformance::tool-call-one::T6"  # nothing ran after it
    cases = {
        (case.get("classname"), case.get("name")): case for case in ET.parse(junit).iter("testcase")
    }
    t6 = cases[("conformance.tool-call-one", "T6")]
    assert t6.find("failure") is not None
    properties = {p.get("name"): p.get("value", "") for p in t6.iter("property")}
    assert properties["conformance_verdict"] == "fail"
    assert properties["conformance_reason"].startswith("attempt 1: block-end")


def test_items_do_not_depend_on_their_order(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    """A reordering plugin (pytest-randomly and the like) moves items about; verdicts stay."""
    pytester.makeconftest(
        """
        def pytest_collection_modifyitems(items):
            items.reverse()
        """
    )
    args = (f"--conformance-adapter={variants}:inventing", f"--conformance-fixtures={corpus}")

    _, in_order = run(pytester, *args, "--noconftest")
    _, reversed_ = run(pytester, *args)

    assert next(iter(in_order)).startswith("conformance::text-hello::")
    assert next(iter(reversed_)).startswith("conformance::tool-call-one::")
    assert outcome(reversed_["conformance::text-hello::T6"]) == "failed"  # the added item ran
    assert {k: outcome(r) for k, r in reversed_.items()} == {
        k: outcome(r) for k, r in in_order.items()
    }


def test_an_adapter_module_in_the_current_directory_loads(
    pytester: pytest.Pytester, corpus: Path
) -> None:
    """No syspathinsert: the loader puts the current directory on the path, as python -m."""
    pytester.makepyfile(
        local_adapter="""
        from conformance.adapters.reference import ReferenceAdapter

        def factory(options):
            return ReferenceAdapter()
        """
    )
    result, reports = run(
        pytester, "--conformance-adapter=local_adapter:factory", f"--conformance-fixtures={corpus}"
    )

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert reports and all(outcome(report) == "passed" for report in reports.values())


def test_the_spec_revision_judging_an_anthropic_rule_it_lacks(pytester: pytest.Pytester) -> None:
    """Under --conformance-spec 1.1, a rule of 1.2 (AN-C2) is only observed: the item of the
    mutant that breaks it passes with the observation, its marker INFO; an unknown revision
    is a usage error."""
    mutant = "--conformance-adapter=conformance.adapters.mutants:an_signature_dropped"
    fixture = bundled_fixtures() / "anthropic" / "thinking" / "an-thinking-signature.yaml"
    args = (mutant, f"--conformance-fixtures={fixture}")
    _, reports = run(pytester, *args)
    assert reports["conformance::an-thinking-signature::AN-C2"].outcome == "failed"
    then, reports = run(pytester, *args, "--conformance-spec=1.1")
    assert then.ret == pytest.ExitCode.OK, then.stdout.str()
    assert reports["conformance::an-thinking-signature::AN-C2"].outcome == "passed"
    then.stdout.fnmatch_lines(["*harness contract, spec 1.1*"])
    items, _ = pytester.inline_genitems(*NO_CACHE, *args, "--conformance-spec=1.1")
    an_c2 = next(item for item in items if item.name == "AN-C2")
    assert "INFO" in {mark.name for mark in an_c2.iter_markers()}
    unknown, _ = run(pytester, *args, "--conformance-spec=9.9")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*conformance_spec: unknown spec version '9.9'*"])


def test_unusable_adapter_is_a_usage_error(pytester: pytest.Pytester, corpus: Path) -> None:
    result, _ = run(
        pytester, "--conformance-adapter=no.such.module:factory", f"--conformance-fixtures={corpus}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: streamconform: cannot load no.such.module:factory*"])

    result, _ = run(pytester, f"--conformance-adapter={REFERENCE}", "--conformance-adapter-cmd=x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize(
    "adapter",
    ["--conformance-adapter=no.such.module:factory", f"--conformance-adapter-cmd={SILENT}"],
    ids=["import", "handshake"],
)
def test_under_xdist_an_unusable_adapter_is_one_usage_error(
    pytester: pytest.Pytester, corpus: Path, adapter: str
) -> None:
    pytest.importorskip("xdist")
    result = pytester.runpytest_subprocess(
        *NO_CACHE, adapter, f"--conformance-fixtures={corpus}", "-n", "2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1 and errors[0].startswith("ERROR: streamconform: "), errors
    assert "error" not in result.stdout.str().lower()  # no item ran, so none errored


def test_broken_fixture_is_a_collection_error(pytester: pytest.Pytester) -> None:
    fixtures = single_fixture(pytester, "bad", "id: bad\nattempts: []\n")

    result, _ = run(
        pytester, f"--conformance-adapter={REFERENCE}", f"--conformance-fixtures={fixtures}"
    )

    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*fixtures could not be loaded*", "*bad.yaml*attempts*"])


# --- other front doors ------------------------------------------------------------------------


def test_subprocess_adapter(pytester: pytest.Pytester, corpus: Path) -> None:
    command = f"{shlex.quote(sys.executable)} -m conformance.adapters.reference"

    result, _ = run(
        pytester, f"--conformance-adapter-cmd={command}", f"--conformance-fixtures={corpus}"
    )

    result.assert_outcomes(passed=sum(cli_verdicts(corpus).values()))


def test_ini_settings_and_command_line_precedence(
    pytester: pytest.Pytester, corpus: Path, variants: str
) -> None:
    pytester.makeini(
        f"[pytest]\nconformance_adapter = {REFERENCE}\nconformance_fixtures = {corpus.name}\n"
    )
    result, _ = run(pytester)
    result.assert_outcomes(passed=sum(cli_verdicts(corpus).values()))

    result, _ = run(pytester, f"--conformance-adapter={variants}:nameless")
    assert result.parseoutcomes()["failed"] == 1


def test_conformance_result_fixture(pytester: pytest.Pytester, corpus: Path) -> None:
    pytester.makepyfile(
        test_custom="""
        def test_custom(conformance_result):
            cases = [case.case for case in conformance_result.cases]
            assert cases == ["text-hello", "tool-call-one"]
            assert not conformance_result.failed
        """
    )
    result, _ = run(
        pytester,
        f"--conformance-adapter={REFERENCE}",
        f"--conformance-fixtures={corpus}",
        "-k",
        "custom",
    )
    result.assert_outcomes(passed=1, deselected=sum(cli_verdicts(corpus).values()))

    result, _ = run(pytester, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no --conformance-adapter or --conformance-adapter-cmd*"])
