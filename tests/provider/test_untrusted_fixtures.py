"""A contributed fixtures folder or upload is read as untrusted: a symlink out of the folder
is refused, and a lone surrogate is a problem naming its field, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from conformance.options import bundled_fixtures
from fakeprovider.fixtures import FixtureError, load_fixtures, validate_fixtures
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import ServerThread

GOOD = (bundled_fixtures() / "retry" / "http-500-retries-off.yaml").read_text(encoding="utf-8")


def _copy(folder: Path, stem: str) -> Path:
    path = folder / f"{stem}.yaml"
    path.write_text(GOOD.replace("id: http-500-retries-off", f"id: {stem}"), encoding="utf-8")
    return path


def test_symlinks_out_of_the_folder_or_in_a_loop_are_refused_and_not_read(
    tmp_path: Path,
) -> None:
    folder, outside = tmp_path / "contributed", tmp_path / "elsewhere"
    (folder / "sub").mkdir(parents=True)
    outside.mkdir()
    _copy(folder, "own")
    (folder / "secret.yaml").symlink_to(_copy(outside, "secret"))
    (folder / "elsewhere").symlink_to(outside)
    (folder / "loop.yaml").symlink_to(folder / "loop.yaml")
    (folder / "sub" / "again.yaml").symlink_to(folder / "own.yaml")  # inside: read

    with pytest.raises(FixtureError) as caught:
        load_fixtures([folder])

    problems = {problem.path.name: str(problem) for problem in caught.value.problems}
    assert set(problems) == {"secret.yaml", "elsewhere", "loop.yaml", "again.yaml"}
    assert problems["secret.yaml"].endswith(
        f"a symlink to {outside / 'secret.yaml'}, outside the fixtures folder {folder}: not read"
    )
    assert problems["elsewhere"].endswith(
        f"a symlink to {outside}, outside the fixtures folder {folder}: not read"
    )
    assert problems["loop.yaml"].endswith(": a symlink loop")
    assert "is not the file name" in problems["again.yaml"]  # read, as its own file
    assert all("\n" not in problem for problem in problems.values())


SURROGATE_STEP = (
    """        - raw: '{"choices": [{"index": 0, "delta": {"content": "A"}}]}'\n"""
    """        - chunk: {choices: [{index: 0, delta: {"\\ud800": "\\udc00 x"}}]}\n"""
)


def test_a_lone_surrogate_in_a_fixture_is_a_problem_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # libyaml refuses the escape itself; PyYAML's own parser, where it has no libyaml, reads it.
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    text = GOOD.replace("id: http-500-retries-off\n", "").replace(
        "        - done\n", SURROGATE_STEP
    )
    (tmp_path / "surrogate.yaml").write_text(text, encoding="utf-8")

    valid, problems = validate_fixtures([tmp_path])

    assert valid == []
    (problem,) = map(str, problems)
    where = "attempts[1].stream.steps[5].chunk.choices[0].delta.\\ud800"  # the key, escaped
    assert problem.startswith(f"{tmp_path / 'surrogate.yaml'}:30: {where}: a lone surrogate")


def test_a_put_with_a_lone_surrogate_gets_a_json_422_naming_the_field() -> None:
    steps = [{"chunk": {"choices": [{"index": 0, "delta": {"content": "\ud800"}}]}}, "done"]
    body = json.dumps({"attempts": [{"stream": {"steps": steps}}]}).encode()
    assert b"\\ud800" in body
    with ServerThread(ScenarioRegistry(), request_timeout_s=1.0) as server:
        response = httpx.put(f"{server.root_url}/_scenarios/lone", content=body, timeout=5)
        assert "lone" not in server.registry.ids()

    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert message.startswith("attempts.0.stream.steps.0.chunk.choices.0.delta.content: ")
    assert "a lone surrogate" in message
