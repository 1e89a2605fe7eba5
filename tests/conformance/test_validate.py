"""``conformance validate`` and ``fakeprovider validate``: fixtures checked like code.

Each kind of mistake a contributor makes in a fixture gets one line naming the file, the
line and the field; ``conformance validate`` also catches the ``expect`` that the oracle
reads otherwise, in any directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main as conformance
from conformance.options import bundled_fixtures
from fakeprovider.cli import main as fakeprovider

GOOD = """\
id: ID
expect:
  finish: tool-calls
  tool_calls: [{id: call_1, name: get_weather, arguments: '{}'}]
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {tool_calls: [{index: 0, id: call_1, type: function, function: {name: get_weather, arguments: '{}'}}]}}]}
        - chunk: {choices: [{index: 0, delta: {}, finish_reason: tool_calls}]}
        - done
"""  # noqa: E501

# Each mistake: the text it replaces in GOOD, what replaces it, and the line it is on.
MISTAKES = {
    "expect-key-typo": ("  finish: tool-calls", "  finish: tool-calls\n  text_: hi", 4),
    "finish-spelled-as-on-the-wire": ("finish: tool-calls", "finish: tool_calls", 3),
    "wrong-call-id": ("tool_calls: [{id: call_1", "tool_calls: [{id: call_2", 4),
    "id-not-the-file-stem": ("id: ID", "id: ID-2", 1),
}


def write(directory: Path, name: str, mistake: str | None = None) -> Path:
    text = GOOD
    if mistake is not None:
        before, after, _ = MISTAKES[mistake]
        text = text.replace(before, after, 1)
    path = directory / f"{name}.yaml"
    path.write_text(text.replace("ID", name), encoding="utf-8")
    return path


def validate(main: object, *paths: Path) -> Result:
    return CliRunner().invoke(main, ["validate", *map(str, paths)])  # type: ignore[arg-type]


def test_a_good_fixture_is_clean(tmp_path: Path) -> None:
    write(tmp_path, "good")
    result = validate(conformance, tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output == "1 fixture(s) valid, expect agrees with the oracle\n"


@pytest.mark.parametrize(
    ("mistake", "problem"),
    [
        ("expect-key-typo", "expect.text_: unknown field (check its spelling)"),
        (
            "finish-spelled-as-on-the-wire",
            "expect.finish: Input should be 'stop', 'tool-calls', 'max-tokens' or 'error'",
        ),
        ("wrong-call-id", 'expect.tool_calls[0].id: "call_2", but the oracle reads "call_1"'),
        (
            "id-not-the-file-stem",
            "id: 'bad-2' is not the file name: a fixture's id is its file stem, 'bad'",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_file_line_and_field(
    tmp_path: Path, mistake: str, problem: str
) -> None:
    write(tmp_path, "good")
    path = write(tmp_path, "bad", mistake)
    line = MISTAKES[mistake][2]
    result = validate(conformance, tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{path}:{line}: {problem}",
        "1 problem(s) in 1 fixture(s)",
    ]


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_fakeprovider_validate_finds_all_but_the_oracles_disagreement(
    tmp_path: Path, mistake: str
) -> None:
    path = write(tmp_path, "bad", mistake)
    result = validate(fakeprovider, path)
    if mistake == "wrong-call-id":  # the provider knows nothing of the oracle
        assert result.exit_code == 0
        assert "`conformance validate` also checks each expect block" in result.output
    else:
        assert result.exit_code == 1
        assert result.stderr.startswith(f"{path}:{MISTAKES[mistake][2]}: ")


def test_every_fixture_is_reported_not_only_the_first(tmp_path: Path) -> None:
    paths = [write(tmp_path, name, name) for name in sorted(MISTAKES)]
    result = validate(conformance, *paths)
    assert result.exit_code == 2
    assert {line.split(":")[0] for line in result.stderr.splitlines()[:-1]} == set(map(str, paths))
    assert result.stderr.splitlines()[-1] == f"{len(MISTAKES)} problem(s) in 4 fixture(s)"


def test_a_retry_policy_that_does_not_fit_the_default_policy(tmp_path: Path) -> None:
    path = write(tmp_path, "slow")
    path.write_text(
        path.read_text().replace("expect:", "retry_policy: {initial_delay_ms: 5000}\nexpect:")
    )
    result = validate(conformance, path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{path}:2: retry_policy: ")


def test_the_bundled_corpus_is_clean() -> None:
    result = validate(conformance, bundled_fixtures())
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


@pytest.mark.parametrize("main", [conformance, fakeprovider], ids=["conformance", "fakeprovider"])
def test_a_value_cut_short_by_a_comment_is_a_warning(tmp_path: Path, main: object) -> None:
    path = write(tmp_path, "cut")
    path.write_text(
        path.read_text(encoding="utf-8").replace("expect:", "title: see #12\nexpect:"),
        encoding="utf-8",
    )
    result = validate(main, path)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"{path}:2: title: warning: this plain scalar ends at ' #'")
