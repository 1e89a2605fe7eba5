"""Who owns a difference (INVARIANTS.md v1.2): what differs decides, in a run and in a
generated case alike.

- a framed case that fails is run once more with plain framing: S1-S3 own the difference
  when the twin passes, and are not blamed when it fails the same way;
- ties are broken in the documented order G, C, T, E, S, H, R, Q;
- a field that fails validation in a readable event is its invariant's, the field named;
  G1 keeps crashes and unreadable lines.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.events import EventDecodeError, EventFieldError, parse_event_line
from conformance.options import bundled_fixtures
from conformance.results import CaseResult
from conformance.run.case_runner import CaseRunner
from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

MUTANTS = "conformance.adapters.mutants"


@cache
def fixture(name: str) -> Scenario:
    return next(s for s in load_fixtures([bundled_fixtures()]) if s.id == name)


def empty_stop(line_ending: str) -> Scenario:
    """A stop with no content, framed with ``line_ending``: E1's refusal on the wire."""
    return (
        ScenarioBuilder(f"empty-stop-{line_ending}")
        .attempt(stream().framing(line_ending=line_ending).finish("stop").done())
        .build()
    )


def failing(result: CaseResult) -> dict[str, str]:
    return {id: v.reason for id, v in result.verdicts.items() if v.verdict == "fail"}


def run(target: str, scenario: Scenario) -> CaseResult:
    with CaseRunner(target) as runner:
        return runner.run(scenario)


# --- the plain-framed twin -------------------------------------------------------------------


def test_a_difference_plain_framing_does_not_show_is_s1_s() -> None:
    """An LF-only reader dispatches nothing on a CR stream: the E1 case it fails is S1's,
    not E1's ("STREAM_CLOSED, expected EMPTY_RESPONSE" sent the maintainer to E1's code)."""
    result = run(f"{MUTANTS}:lf_only_lines", empty_stop("cr"))
    assert list(failing(result)) == ["S1"]
    assert "plain framing shows no such difference" in result.verdicts["E1"].reason


def test_a_difference_plain_framing_shows_too_is_not_the_framing_s() -> None:
    """Reasoning lost to a reader that ignored the keep-alive comments correctly: C2's, not
    S3's (the corpus case deepseek-keepalive-reasoning)."""
    result = run(f"{MUTANTS}:reasoning_as_text", fixture("deepseek-keepalive-reasoning"))
    assert "C2" in failing(result)
    assert "S3" not in failing(result)
    assert result.verdicts["S3"].reason.startswith("the same case with plain framing differs")


def test_the_twin_runs_only_for_a_framed_case_in_question() -> None:
    with CaseRunner() as reference:  # passes: no twin
        assert reference.observe(fixture("crlf-bom")).control is None
    with CaseRunner(f"{MUTANTS}:empty_stop_succeeds") as unframed:  # no framing: no twin
        assert unframed.observe(empty_stop("lf")).control is None
    with CaseRunner(f"{MUTANTS}:lf_only_lines") as framed:
        observed = framed.observe(empty_stop("cr"))
    assert observed.control is not None
    assert observed.control.scenario.attempts[0].stream.framing.line_ending == "lf"  # type: ignore[union-attr]
    assert observed.control.status == "completed"


def test_a_run_of_the_corpus_asks_the_twin_too(tmp_path: Path) -> None:
    """`conformance run` judges a case as `conformance fuzz` does: one place runs the twin."""
    case = tmp_path / "empty-stop-cr.json"
    case.write_text(empty_stop("cr").model_dump_json(), encoding="utf-8")
    results = tmp_path / "results.json"
    args = ["run", f"--adapter={MUTANTS}:lf_only_lines", "--fixtures", str(case)]
    CliRunner().invoke(main, [*args, "--json", str(results)])
    (verdicts,) = (c["verdicts"] for c in json.loads(results.read_text())["cases"])
    assert [id for id, v in verdicts.items() if v["verdict"] == "fail"] == ["S1"]


# --- ties: the documented order ------------------------------------------------------------


def test_identity_loss_in_a_stop_with_a_call_is_t1s_not_e5s() -> None:
    """E5 judges whether a stop with a call counts as empty, not what the call holds: the
    blanked identity is T1's failure alone, and E5, the call kept as content, holds."""
    scenario = (
        ScenarioBuilder("stop-with-identity-blanked")
        .attempt(
            stream()
            .tool_call(0, id="call_1", type="function", name="get_weather", arguments="")
            .tool_call(0, id="", name="", arguments="{}")
            .finish("stop")
            .done()
        )
        .build()
    )
    result = run(f"{MUTANTS}:identity_any_defined", scenario)
    assert list(failing(result)) == ["T1"]
    assert result.verdicts["E5"].verdict == "pass"
    assert list(result.verdicts) == sorted(result.verdicts, key=_documented)


def _documented(id: str) -> tuple[int, int]:
    return ("GCTESHRQ".index(id[0]), int(id[1:]))


# --- a field that fails validation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"type":"tool-call-delta","index":0,"id":7,"arguments_delta":""}', "tool-call-delta.id"),
        (
            '{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"f",'
            '"arguments":{}}}',
            "block-end.block.arguments",
        ),
        ('{"type":"finish","reason":"error","code":""}', "finish.code"),
        ('{"type":"finish","reason":"error"}', "finish.code"),
    ],
)
def test_a_field_that_fails_validation_is_named(line: str, field: str) -> None:
    with pytest.raises(EventFieldError) as raised:
        parse_event_line(line)
    assert raised.value.field == field


@pytest.mark.parametrize("line", ["not json", '{"type":"delta"}', "[1]", '{"index":0}'])
def test_an_unreadable_line_names_no_field(line: str) -> None:
    with pytest.raises(EventDecodeError) as raised:
        parse_event_line(line)
    assert not isinstance(raised.value, EventFieldError)


@pytest.mark.parametrize(
    ("defect", "fixture_name", "owner", "field"),
    [
        ("numeric_id", "tool-cont-empty-id-name", "T1", "tool-call-delta.id"),
        ("object_arguments", "tool-cont-empty-id-name", "C3", "block-end.block.arguments"),
        ("empty_error_code", "invalid-json-payload", "C5", "finish.code"),
    ],
)
def test_a_field_invalid_in_a_readable_event_is_its_invariants(
    defect: str, fixture_name: str, owner: str, field: str
) -> None:
    """Not G1 "crash": the adapter did not crash, it handed over a field it must not."""
    result = run(f"single_defect:{defect}", fixture(fixture_name))
    assert result.status == "protocol-error"
    assert list(failing(result)) == [owner]
    assert field in failing(result)[owner]


def test_a_subprocess_adapters_invalid_field_is_its_invariants(tmp_path: Path) -> None:
    """The same over the JSON Lines protocol: a numeric id on the line is T1's."""
    adapter = tmp_path / "adapter.py"
    adapter.write_text(SUBPROCESS_NUMERIC_ID, encoding="utf-8")
    with CaseRunner(command=f"python3 {adapter}") as runner:
        result = runner.run(fixture("tool-cont-empty-id-name"))
    assert list(failing(result)) == ["T1"]
    assert "tool-call-delta.id" in failing(result)["T1"]


SUBPROCESS_NUMERIC_ID = """\
import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "name": "n", "version": "0",
                  "capabilities": {}}), flush=True)
for line in sys.stdin:
    case = json.loads(line)["case"]
    for event in ({"type": "block-start", "index": 0, "block_type": "tool-call"},
                  {"type": "tool-call-delta", "index": 0, "id": 7, "arguments_delta": ""},
                  {"type": "end"}):
        print(json.dumps({"case": case, **event}), flush=True)
"""
