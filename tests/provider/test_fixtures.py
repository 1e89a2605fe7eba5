"""Fixture loading: valid files load, malformed ones get one precise error each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.options import bundled_fixtures
from fakeprovider.fixtures import (
    MAX_FIXTURE_BYTES,
    MAX_REMEMBERED_CHARS,
    FixtureError,
    load_fixture,
    load_fixtures,
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(FixtureError) as caught:
        load_fixture(path)
    return [str(problem) for problem in caught.value.problems]


def test_the_bundled_corpus_of_a_checkout_is_its_top_level_fixtures_folder() -> None:
    assert bundled_fixtures() == Path(__file__).resolve().parents[2] / "fixtures"


def test_bundled_fixtures_all_load() -> None:
    scenarios = load_fixtures([bundled_fixtures()])
    assert len(scenarios) >= 15


def test_id_defaults_to_file_stem(tmp_path: Path) -> None:
    path = write(tmp_path, "my-case.yaml", "attempts:\n  - fault: reset\n")
    assert load_fixture(path).id == "my-case"


def test_a_file_is_parsed_once_per_text(tmp_path: Path) -> None:
    # The corpus is read by every run and collection; an edit is read, the same text is not.
    path = write(tmp_path, "case.yaml", "attempts:\n  - fault: reset\n")
    first = load_fixture(path)
    assert load_fixture(path) is first
    write(tmp_path, "case.yaml", "attempts:\n  - fault: close\n")
    edited = load_fixture(path)
    assert edited is not first
    assert edited.attempts != first.attempts
    broken = write(tmp_path, "broken.yaml", "attempts: [\n")
    for _ in range(2):  # a problem is found again, not remembered as a fixture
        with pytest.raises(FixtureError):
            load_fixture(broken)


def test_a_large_file_is_parsed_each_time(tmp_path: Path) -> None:
    note = "a" * MAX_REMEMBERED_CHARS  # only small files are kept in memory
    path = write(tmp_path, "large.yaml", f"description: {note}\nattempts:\n  - fault: reset\n")
    first = load_fixture(path)
    assert first.description == note
    again = load_fixture(path)
    assert again == first and again is not first


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
    write(tmp_path, "same.yaml", "attempts: [{fault: reset}]\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path, "sub/same.yaml", "id: same\nattempts: [{fault: close}]\n")
    write(tmp_path, "c.yaml", "attempts: []\n")
    with pytest.raises(FixtureError) as caught:
        load_fixtures([tmp_path])
    text = str(caught.value)
    assert f"{tmp_path / 'sub' / 'same.yaml'}:1: id: 'same' is already used by" in text
    assert "c.yaml:1: attempts: a scenario needs at least one attempt" in text


def test_an_id_other_than_the_file_stem_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, "tool-late-id.yaml", "title: x\nid: tool-late\nattempts: [{fault: reset}]\n"
    )
    assert problems_of(path) == [
        f"{path}:2: id: 'tool-late' is not the file name: a fixture's id is its file stem, "
        "'tool-late-id'"
    ]


@pytest.mark.parametrize(
    ("expect", "problem"),
    [
        (
            "{finish: stop, txt: Hello}",
            "expect.txt: unknown field (check its spelling)",
        ),
        (
            "{finish: tool_calls}",
            "expect.finish: Input should be 'stop', 'tool-calls', 'max-tokens' or 'error'",
        ),
        ("{finish: error}", "expect.code: finish: error needs a code"),
        ("{finish: stop, code: SERVER}", "expect.code: a code goes with finish: error, not "),
        (
            "{finish: error, code: EMPTY_RESPONS}",
            "expect.code: unknown code 'EMPTY_RESPONS'; did you mean 'EMPTY_RESPONSE'?",
        ),
        ("{finish: error, code: empty}", "expect.code: 'empty' is not a code"),
        (
            "{finish: error, code: SERVER, text: partial}",
            "expect.text: a failed attempt's blocks are not part of the outcome",
        ),
        (
            "{finish: tool-calls, tool_calls: [{id: c, nam: f}]}",
            "expect.tool_calls[0].nam: unknown field",
        ),
        (
            "{finish: stop, usage: {input_tokens: '9', output_tokens: 1}}",
            "expect.usage.input_tokens: Input should be a valid integer",
        ),
        ("{finish: stop, attempts: 0}", "expect.attempts: Input should be greater than or equal"),
    ],
)
def test_expect_is_typed(tmp_path: Path, expect: str, problem: str) -> None:
    path = write(tmp_path, "case.yaml", f"attempts: [{{fault: reset}}]\nexpect: {expect}\n")
    (found,) = problems_of(path)
    assert found.startswith(f"{path}:2: {problem}")


def test_expect_accepts_every_kind_of_code(tmp_path: Path) -> None:
    for code in (
        "MALFORMED_TOOL_CALL",
        "HTTP_418",
        "CONTENT_FILTER",
        "INSUFFICIENT_SYSTEM_RESOURCE",
    ):
        path = write(
            tmp_path,
            "case.yaml",
            f"attempts: [{{fault: reset}}]\nexpect: {{finish: error, code: {code}}}\n",
        )
        expect = load_fixture(path).expect
        assert expect is not None and expect.code == code


def test_header_value_that_http_cannot_carry(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", 'attempts: [{error: {status: 500, headers: {x: "€"}}}]\n')
    (problem,) = problems_of(path)
    assert "header 'x' has a character HTTP/1.1 cannot carry" in problem


# --- hostile files: one clear error each, quickly ------------------------------------------


def billion_laughs(levels: int = 9) -> str:
    """Nine levels of nine aliases: 9**9 strings once expanded, under 1 KiB on disk."""
    text = 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for level in range(1, levels):
        text += f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]\n"
    return text + f"attempts: [*l{levels - 1}]\n"


@pytest.mark.timeout(10)  # without the bound, validating the expansion never finishes
@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("bomb.yaml", billion_laughs(), "more than 100000 (an alias bomb?)"),
        (
            "cycle.yaml",
            "attempts: &loop [*loop]\n",
            ":1: an alias refers to a node that contains it",
        ),
        ("deep.yaml", "attempts: " + "[" * 150 + "]" * 150, ":1: nested more than 100 levels deep"),
        (  # far past the depth at which the YAML composer's recursion exhausts the stack
            "deep.json",
            '{"attempts": ' + "[" * 5000 + "]" * 5000 + "}",
            ":1: nested more than 100 levels deep",
        ),
        (  # each anchor is shallow; the aliases stack them past the limit
            "stacked.yaml",
            "a0: &a0 [[[[[[[[[[0]]]]]]]]]]\n"
            + "".join(f"a{n}: &a{n} [[[[[[[[[[*a{n - 1}]]]]]]]]]]\n" for n in range(1, 12)),
            "nested more than 100 levels deep",
        ),
    ],
    ids=["alias-bomb", "alias-cycle", "deep", "deeper-than-the-stack", "deep-through-aliases"],
)
def test_alias_bombs_and_deep_nesting_get_one_clear_error(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    path = write(tmp_path, name, text)
    (problem,) = problems_of(path)
    assert problem.startswith(str(path))
    assert reason in problem


def test_without_libyaml_the_python_parser_reads_and_bounds_the_same(tmp_path: Path) -> None:
    """A PyYAML built without libyaml falls back to the pure-Python parser: same data, same
    depth bound (checked in a fresh interpreter, where ``yaml._yaml`` cannot be imported)."""
    deep = write(tmp_path, "deep.json", '{"attempts": ' + "[" * 5000 + "]" * 5000 + "}")
    script = f"""
import sys
sys.modules["yaml._yaml"] = None
import yaml
from fakeprovider.fixtures import FixtureError, _parse, load_fixture
assert not yaml.__with_libyaml__
text = open({str(next(bundled_fixtures().glob("quirks/**/*.yaml")))!r}).read()
assert _parse(text)[1] == yaml.safe_load(text)
try:
    load_fixture({str(deep)!r})
except FixtureError as error:
    print(error)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert ":1: nested more than 100 levels deep" in result.stdout


def test_aliases_within_bounds_still_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "aliased.yaml",
        "attempts:\n"
        "  - stream:\n"
        "      steps: [{raw: &hello hello}, {raw: *hello}, done]\n"
        "  - &limited {error: {status: 429}}\n"
        "  - *limited\n",
    )
    scenario = load_fixture(path)
    assert len(scenario.attempts) == 3
    assert scenario.attempts[1] == scenario.attempts[2]


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as huge:
        huge.truncate(MAX_FIXTURE_BYTES + 1)  # sparse: the loader must not read it to refuse it
    assert problems_of(path) == [
        f"{path}: {MAX_FIXTURE_BYTES + 1} bytes; fixtures are at most {MAX_FIXTURE_BYTES}"
    ]


def test_a_directory_of_hostile_files_reports_one_problem_per_file(tmp_path: Path) -> None:
    write(tmp_path, "bomb.yaml", billion_laughs())
    write(tmp_path, "bad-yaml.yaml", "attempts: [\n")
    write(tmp_path, "wrong-type.yaml", "attempts: {fault: reset}\n")
    write(tmp_path, "unknown-field.json", '{"attempts": [{"fault": "reset"}], "colour": 1}')
    write(tmp_path, "good.yaml", "attempts: [{fault: reset}]\n")
    with pytest.raises(FixtureError) as caught:
        load_fixtures([tmp_path])
    assert sorted(problem.path.name for problem in caught.value.problems) == [
        "bad-yaml.yaml",
        "bomb.yaml",
        "unknown-field.json",
        "wrong-type.yaml",
    ]


# --- scalars whose tag's constructor refuses them: file:line: field: reason -----------------

CHUNK_AT = "attempts[0].stream.steps[0].chunk"


def with_created(value: str) -> str:
    return f"attempts:\n  - stream:\n      steps:\n        - chunk: {{created: {value}}}\n"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2024-02-30", "'2024-02-30' is not a valid !!timestamp: day is out of range for month"),
        (
            "!!int 'abc'",
            "'abc' is not a valid !!int: invalid literal for int() with base 10: 'abc'",
        ),
        ("!!float abc", "'abc' is not a valid !!float: could not convert string to float: 'abc'"),
        ("!!timestamp yesterday", "'yesterday' is not a valid !!timestamp"),
        ("!!bool maybe", "'maybe' is not a valid !!bool"),
        ("!!int ''", "'' is not a valid !!int"),
        (
            "9" * 5000,
            f"'{'9' * 40}...' is not a valid !!int: Exceeds the limit (4300 digits) for "
            "integer string conversion: value has 5000 digits",
        ),
        ("0x" + "f" * 5000, "an integer of more than 4300 digits"),
    ],
    ids=["impossible-date", "int", "float", "timestamp", "bool", "empty-int", "huge", "huge-hex"],
)
def test_a_scalar_that_does_not_convert_is_one_located_problem(
    tmp_path: Path, value: str, reason: str
) -> None:
    path = write(tmp_path, "bad.yaml", with_created(value))
    assert problems_of(path) == [f"{path}:4: {CHUNK_AT}.created: {reason}"]


def test_a_huge_integer_in_a_json_fixture_is_one_located_problem(tmp_path: Path) -> None:
    path = write(
        tmp_path, "bad.json", '{\n"attempts": [\n{"error": {"status": ' + "7" * 5000 + "}}]}"
    )
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: attempts[0].error.status: '777")


def test_an_unconvertible_key_is_located_at_its_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "attempts:\n  - {!!int x: 1}\n")
    assert problems_of(path) == [
        f"{path}:2: attempts[0]: 'x' is not a valid !!int: "
        + ("invalid literal for int() with base 10: 'x'")
    ]


def test_aliases_that_repeat_long_text_are_measured_in_bytes(tmp_path: Path) -> None:
    """Few nodes, under the node bound, but 200 times the file's bytes once expanded."""
    long_text = "x" * 50_000
    steps = ", ".join(["{raw: *t}"] * 21_000)
    text = f"t: &t {long_text}\nattempts:\n  - stream:\n      steps: [{steps}]\n"
    assert len(text) < 500_000
    path = write(tmp_path, "wide.yaml", text)
    (problem,) = problems_of(path)
    assert "YAML aliases expand the fixture to 1050" in problem
    assert f"bytes of text, more than {MAX_FIXTURE_BYTES} (an alias bomb?)" in problem
