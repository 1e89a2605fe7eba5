"""The hand-written causes behind the libraries' interop failures (`report/upstream.py`).

The data is checked against what exists: matrix columns, fixtures of the corpus and
well-formed links to a tracker. The grouping is checked on the real table.
"""

from __future__ import annotations

import re

import pytest

from conformance.adapters.thirdparty import SHIMS
from conformance.options import bundled_fixtures
from conformance.report.upstream import (
    KNOWN_CAUSES,
    KnownCause,
    ToDo,
    cause_of,
    not_reproduced,
    to_do,
)
from fakeprovider.fixtures import load_fixtures

TRACKER_LINK = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/[1-9]\d*")
DOUBLED = "accumulate_delta concatenates every string field"


def _known(text: str) -> KnownCause:
    return next(known for known in KNOWN_CAUSES if known.cause.startswith(text))


def test_every_cause_names_matrix_columns_and_fixtures_of_the_corpus() -> None:
    corpus = {scenario.id for scenario in load_fixtures([bundled_fixtures()])}
    for known in KNOWN_CAUSES:
        assert known.libraries and set(known.libraries) <= set(SHIMS), known.cause
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
