"""The hand-written causes behind the libraries' interop failures (`fixtures/causes/`,
read by `report/upstream.py`).

The data is checked against what exists: matrix columns, fixtures of the corpus and
well-formed links to a tracker; a malformed file is refused with the file, the field and
the reason. The grouping is checked on the real table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.adapters.thirdparty import SHIMS
from conformance.gateway.crossing import CROSSING_RULES
from conformance.gateway.runner import WIRE_RULES
from conformance.invariants import CATALOGUE
from conformance.options import bundled_fixtures
from conformance.report.gateway_findings import KNOWN_GATEWAYS, direction_key
from conformance.report.upstream import (
    CausesError,
    KnownCause,
    ToDo,
    cause_of,
    known_causes,
    load_causes,
    not_reproduced,
    to_do,
)
from fakeprovider.dialects import DIALECT_IDS
from fakeprovider.fixtures import load_fixtures

KNOWN_CAUSES = known_causes()
GATEWAY_DIRECTIONS = [
    direction_key(gateway, up, down)
    for gateway in KNOWN_GATEWAYS
    for up in DIALECT_IDS
    for down in DIALECT_IDS
]
LINT_RULES = {rule for rules in WIRE_RULES.values() for rule in rules}

TRACKER_LINK = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/[1-9]\d*")
DOUBLED = "accumulate_delta concatenates every string field"


def _known(text: str) -> KnownCause:
    return next(known for known in KNOWN_CAUSES if known.cause.startswith(text))


def test_every_cause_names_matrix_columns_or_gateways_and_fixtures_of_the_corpus() -> None:
    corpus = {scenario.id for scenario in load_fixtures([bundled_fixtures()])}
    for known in KNOWN_CAUSES:
        assert known.libraries, known.cause
        assert set(known.libraries) <= {*SHIMS, *GATEWAY_DIRECTIONS}, known.cause
        # Rules belong to a gateway's causes, which name real rules of the catalogue.
        assert not known.rules or set(known.libraries) <= set(GATEWAY_DIRECTIONS), known.cause
        assert set(known.rules) <= set(CATALOGUE) | set(CROSSING_RULES) | LINT_RULES, known.cause
        assert known.cases and set(known.cases) <= corpus, known.cause


def test_every_upstream_link_is_an_issue_or_pull_request_on_a_tracker() -> None:
    links = [known.upstream for known in KNOWN_CAUSES if known.upstream]
    assert links
    for link in links:
        assert TRACKER_LINK.fullmatch(link), link


def test_a_cause_is_one_line_and_names_each_failure_once() -> None:
    pairs = [
        (lib, case) for known in KNOWN_CAUSES for lib in known.libraries for case in known.cases
    ]
    assert len(pairs) == len(set(pairs))  # one failure, one cause
    for known in KNOWN_CAUSES:
        assert known.cause.strip() and "\n" not in known.cause


def test_the_causes_are_data_files_beside_the_corpus_one_per_library_and_a_shared_one() -> None:
    files = {path.stem for path in (bundled_fixtures() / "causes").glob("*.toml")}
    assert {"shared", "openai", "haystack", "litellm"} <= files
    assert load_causes(bundled_fixtures() / "causes") == KNOWN_CAUSES


def test_the_shared_causes_come_first_then_each_library_s_file_by_name(tmp_path: Path) -> None:
    for name in ("b", "shared", "a"):
        entry = f'libraries = ["{name}"]\ncases = ["x"]\ncause = "{name}"'
        (tmp_path / f"{name}.toml").write_text(f"[[causes]]\n{entry}\n")
    assert [known.cause for known in load_causes(tmp_path)] == ["shared", "a", "b"]


VALID = {
    "libraries": '["haystack"]',
    "cases": '["content-and-tool-same-chunk"]',
    "cause": '"refuses content and a tool call in one delta"',
}


@pytest.mark.parametrize(
    ("changed", "field", "reason"),
    [
        pytest.param(
            {"upstream": '"https://gitlab.com/o/r/-/issues/3"'},
            "causes[1].upstream",
            "not a GitHub issue or pull request link",
            id="another host",
        ),
        pytest.param(
            {"upstream": '"http://github.com/o/r/issues/3"'},
            "causes[1].upstream",
            "not a GitHub issue or pull request link",
            id="not https",
        ),
        pytest.param(
            {"upstream": '"https://github.com/o/r/commit/abc"'},
            "causes[1].upstream",
            "not a GitHub issue or pull request link",
            id="a commit",
        ),
        pytest.param(
            {"upstream": '"https://github.com/o/r/issues/0"'},
            "causes[1].upstream",
            "not a GitHub issue or pull request link",
            id="issue zero",
        ),
        pytest.param({"cases": "[]"}, "causes[1].cases", "at least 1 item", id="no case"),
        pytest.param({"libraries": '["a", 1]'}, "causes[1].libraries[1]", "valid string", id="int"),
        pytest.param({"cause": '"two\\nlines"'}, "causes[1].cause", "one line", id="two lines"),
        pytest.param({"cause": None}, "causes[1].cause", "Field required", id="no cause"),
        pytest.param({"upsteam": '"x"'}, "causes[1].upsteam", "unknown field", id="typo"),
    ],
)
def test_a_malformed_entry_names_the_file_the_field_and_the_reason(
    tmp_path: Path, changed: dict[str, str | None], field: str, reason: str
) -> None:
    entry = {key: value for key, value in {**VALID, **changed}.items() if value is not None}
    good = "".join(f"{key} = {value}\n" for key, value in VALID.items())
    bad = "".join(f"{key} = {value}\n" for key, value in entry.items())
    (tmp_path / "haystack.toml").write_text(f"[[causes]]\n{good}\n[[causes]]\n{bad}")
    with pytest.raises(CausesError) as refused:
        load_causes(tmp_path)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"{tmp_path / 'haystack.toml'}: {field}: "), line
    assert reason in line


def test_a_file_that_is_not_toml_is_named_with_the_parser_s_reason(tmp_path: Path) -> None:
    (tmp_path / "shared.toml").write_text('[[causes]]\ncause = "unterminated\n')
    (tmp_path / "mirascope.toml").write_text("[[causes]]\nlibraries = []\n")
    with pytest.raises(CausesError) as refused:
        load_causes(tmp_path)
    lines = str(refused.value).splitlines()
    assert lines[0].startswith(f"{tmp_path / 'shared.toml'}: not a TOML file (")
    assert "line 2" in lines[0]
    assert all(line.startswith(f"{tmp_path / 'mirascope.toml'}: causes[0].") for line in lines[1:])
    assert len(lines) == 4  # libraries too short, cases and cause missing: every problem


def test_a_missing_folder_of_causes_is_an_error_not_an_empty_to_do(tmp_path: Path) -> None:
    with pytest.raises(CausesError, match="no folder of known causes"):
        load_causes(tmp_path / "causes")


def test_a_link_is_labelled_with_its_repository_and_number() -> None:
    assert _known("openai-python's SSE decoder").upstream_label == "openai/openai-python#2722"


def test_failures_are_grouped_by_cause_and_the_unwritten_are_listed_one_by_one() -> None:
    failures = [
        ("tool-name-repeated", "corrupted: name"),
        ("a-case-nobody-explained", "crash: raised X"),
        ("continuation-id-repeated", "corrupted: id"),
        ("tool-function-null", "crash: raised AssertionError"),
    ]
    doubled, asserted, unwritten = to_do("openai", failures)
    assert doubled == ToDo(
        ("tool-name-repeated", "continuation-id-repeated"), _known(DOUBLED), "corrupted: name"
    )  # the cause behind most cases first
    assert asserted.cases == ("tool-function-null",) and asserted.cause is not None
    assert unwritten == ToDo(("a-case-nobody-explained",), None, "crash: raised X")


def test_a_cause_holds_only_for_the_columns_it_names() -> None:
    assert cause_of("openai", "tool-name-repeated") == _known(DOUBLED)
    assert cause_of("litellm-openai", "tool-name-repeated") is None
    assert cause_of("a-column-added-later", "retry-field-only-event") is None


@pytest.mark.parametrize(
    ("failing", "ran", "stale"),
    [
        pytest.param(set(), {"tool-name-repeated"}, True, id="ran and passed: not reproduced"),
        pytest.param({"tool-name-repeated"}, {"tool-name-repeated"}, False, id="still failing"),
        pytest.param(set(), set(), False, id="not run: nothing to say"),
    ],
)
def test_a_written_cause_that_no_longer_fails_is_named(
    failing: set[str], ran: set[str], stale: bool
) -> None:
    assert (_known(DOUBLED) in not_reproduced("openai", failing, ran)) is stale
