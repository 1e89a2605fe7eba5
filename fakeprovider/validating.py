"""A scenario validated from untrusted data, its steps a slice at a time, its problems bounded.

``Scenario.model_validate`` is one call into pydantic-core, which keeps the GIL for the
whole of it and gathers every problem before reporting one: 200 000 invalid steps held the
server's event loop 0.6 s and took 130 times their size in memory. Here the steps are
validated in slices of STEP_SLICE (the GIL changes hands between them), only the first
``keep`` problems are kept, the others counted, and the validated steps are handed to the
scenario as models, which pydantic takes as they are (nothing is validated twice).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from .errors import FakeProviderError
from .scenario import Scenario, Step, bare_step

STEP_SLICE = 1000
"""Steps validated in one call (a few milliseconds of the GIL)."""
MAX_KEPT_PROBLEMS = 100
"""Problems an invalid scenario keeps in full; the rest are only counted."""

_STEPS: TypeAdapter[tuple[Any, ...]] = TypeAdapter(tuple[Step, ...])
# Where pydantic puts an attempt's steps: attempts is a tagged union, hence stream twice.
_STEPS_AT = ("stream", "stream", "steps")


class InvalidScenarioError(FakeProviderError, ValueError):
    """The data is not a scenario: the first problems in pydantic's form (no inputs),
    and how many there are in all."""

    def __init__(self, problems: list[ErrorDetails], count: int) -> None:
        super().__init__(f"invalid scenario ({count} problem(s))")
        self.problems = problems
        self.count = count


class _Problems:
    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.kept: list[ErrorDetails] = []
        self.count = 0

    def add(
        self, error: ValidationError, prefix: tuple[str | int, ...] = (), offset: int = 0
    ) -> None:
        self.count += error.error_count()
        room = self.keep - len(self.kept)
        if room <= 0:
            return
        for detail in error.errors(include_url=False, include_input=False)[:room]:
            loc = detail["loc"]
            if prefix:  # the slice's positions are the list's, from ``offset``
                loc = (*prefix, int(loc[0]) + offset, *loc[1:])
            self.kept.append({**detail, "loc": loc})


def validate_scenario(data: Any, *, keep: int = MAX_KEPT_PROBLEMS) -> Scenario:
    """The scenario ``data`` describes; raises InvalidScenarioError."""
    steps, rest = _Problems(keep), _Problems(keep)
    if isinstance(data, dict) and isinstance(data.get("attempts"), list):
        attempts = [
            _with_steps_validated(attempt, ("attempts", number), steps)
            for number, attempt in enumerate(data["attempts"])
        ]
        data = {**data, "attempts": attempts}
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        rest.add(error)
    if steps.count or rest.count:
        kept = sorted([*rest.kept, *steps.kept], key=_pydantic_order)[:keep]
        raise InvalidScenarioError(kept, steps.count + rest.count)
    return scenario


def _pydantic_order(problem: ErrorDetails) -> tuple[bool, int, bool]:
    """Where pydantic would have listed a problem: attempts is the scenario's last field,
    steps a stream's, so the other fields' problems come first."""
    loc = problem["loc"]
    if loc[:1] != ("attempts",) or len(loc) < 2:
        return False, 0, False
    return True, int(loc[1]), loc[2:5] == _STEPS_AT


def _with_steps_validated(attempt: Any, where: tuple[str | int, ...], problems: _Problems) -> Any:
    """A stream attempt with its steps as models (none if some are invalid: their problems
    are recorded); any other value as it is, for the scenario's validation to judge."""
    if not (isinstance(attempt, dict) and list(attempt) == ["stream"]):
        return attempt
    stream = attempt["stream"]
    steps = stream.get("steps") if isinstance(stream, dict) else None
    if not isinstance(steps, list):
        return attempt
    validated: list[Any] = []
    failed = problems.count
    for start in range(0, len(steps), STEP_SLICE):
        batch = [bare_step(step) for step in steps[start : start + STEP_SLICE]]
        try:
            validated += _STEPS.validate_python(batch)
        except ValidationError as error:
            problems.add(error, (*where, *_STEPS_AT), start)
    if problems.count > failed:
        validated = []  # the scenario is invalid anyway; its other problems are still found
    return {"stream": {**stream, "steps": validated}}
