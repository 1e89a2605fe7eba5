"""A shrunk failure of `conformance fuzz` is headlined by the invariant that owns it.

Each adapter below has one defect (the mutants', or single_defect.py's for defects that
no case completes with); every family that fails on it must name the defect's owner, not a
feature invariant that saw the consequence (a CR stream read as nothing is S1's, not E1's),
not the first in registry order (identity loss is T1's, not E5's), not G1 for an event the
adapter sent with a bad field (a numeric id is T1's).
"""

from __future__ import annotations

import hypothesis
import pytest

from conformance.run.case_runner import CaseRunner
from conformance.run.properties import check_family
from conformance.strategies.profiles import PROFILES

pytestmark = pytest.mark.slow

MUTANTS = "conformance.adapters.mutants"
# (adapter, the invariant that owns its defect, families whose cases meet it quickly)
DEFECTS = [
    (f"{MUTANTS}:lf_only_lines", "S1", "S"),
    ("single_defect:lone_cr_no_line_end", "S1", "S"),
    (f"{MUTANTS}:identity_any_defined", "T1", "Q"),
    ("single_defect:numeric_id", "T1", "T"),
    ("single_defect:object_arguments", "C3", "T"),
    ("single_defect:empty_error_code", "C5", "E"),
]


@pytest.mark.parametrize(("adapter", "owner", "chosen"), DEFECTS, ids=[d[0] for d in DEFECTS])
def test_every_failing_familys_headline_names_the_owner(
    adapter: str, owner: str, chosen: str
) -> None:
    with CaseRunner(adapter) as runner:
        runs = [
            check_family(runner, family, settings=hypothesis.settings(PROFILES["ci"]))
            for family in chosen
        ]
    headlines = {run.family: run.failure for run in runs if run.failure is not None}
    assert headlines, f"{adapter} passed {chosen}"
    for family, failure in headlines.items():
        assert failure.breaches[0].invariant == owner, f"{family}: {failure}"
        assert str(failure).startswith(f"{family}: {owner} fail")
