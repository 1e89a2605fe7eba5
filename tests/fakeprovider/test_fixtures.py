"""Fixture loading: valid files load, malformed ones get one precise error each."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeprovider.fixtures import FixtureError, load_fixture, load_fixtures

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(FixtureError) as caught:
        load_fixture(path)
    return [str(problem) for problem in caught.value.problems]


def test_bundled_fixtures_all_load() -> None:
    scenarios = load_fixtures([REPO / "fixtures"])
    assert len(scenarios) >= 15


def test_id_defaults_to_file_stem(tmp_path: Path) -> None:
    path = write(tmp_path, "my-case.yaml", "attempts:\n  - fault: reset\n")
    assert load_fixture(path).id == "my-case"


def test_misspelled_field_names_file_line_path_and_reason(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        "attempts:\n"
        "  - stream:\n"
        "      steps:\n"
        "        - raw: x\n"
        "        - pause_ms: 5\n"
        "          evnt_end: true\n",
    )
    assert problems_of(path) == [
        f"{path}:6: attempts[0].stream.steps[1].evnt_end: unknown field (check its spelling)"
    ]


def test_wrong_type_and_bad_step(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        "attempts:\n"
        "  - stream:\n"
        "      framing: {line_ending: lf, split: {mode: fixed}}\n"
        "      steps: [done, {chunck: {}}]\n"
        "  - error: {status: abc}\n",
    )
    problems = problems_of(path)
    assert problems[0] == (
        f"{path}:3: attempts[0].stream.framing.split: split mode 'fixed' needs 'size'"
    )
    assert problems[1].startswith(f"{path}:4: attempts[0].stream.steps[1]: a step has exactly")
    assert problems[2].startswith(f"{path}:5: attempts[1].error.status: Input should be")
    assert len(problems) == 3


def test_steps_after_a_reset_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "attempts:\n  - stream:\n      steps: [reset, done]\n")
    (problem,) = problems_of(path)
    assert "would never be sent" in problem


def test_invalid_yaml_reports_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "id: x\nattempts: [\n  - x\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: invalid YAML")


def test_not_a_mapping_and_not_utf8(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "list.yaml", "- 1\n")) == [
        f"{tmp_path / 'list.yaml'}:1: a fixture is a mapping (a scenario)"
    ]
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe")
    assert "not UTF-8" in problems_of(binary)[0]


def test_json_fixture(tmp_path: Path) -> None:
    path = write(tmp_path, "a.json", '{"attempts": [{"error": {"status": 500}}]}')
    assert load_fixture(path).attempts[0].error.status == 500  # type: ignore[union-attr]


def test_directory_reports_every_problem_and_duplicate_ids(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "id: same\nattempts: [{fault: reset}]\n")
    write(tmp_path, "b.yaml", "id: same\nattempts: [{fault: close}]\n")
    write(tmp_path, "c.yaml", "attempts: []\n")
    with pytest.raises(FixtureError) as caught:
        load_fixtures([tmp_path])
    text = str(caught.value)
    assert "b.yaml: id: 'same' is already used by" in text
    assert "c.yaml:1: attempts: a scenario needs at least one attempt" in text


def test_header_value_that_http_cannot_carry(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", 'attempts: [{error: {status: 500, headers: {x: "€"}}}]\n')
    (problem,) = problems_of(path)
    assert "header 'x' has a character HTTP/1.1 cannot carry" in problem
