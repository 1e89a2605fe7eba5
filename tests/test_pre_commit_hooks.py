"""The pre-commit hooks (.pre-commit-hooks.yaml), run by ``pre-commit try-repo`` on a scratch
repository as a project that uses them would.

pre-commit builds the hooks' environment from this repository with pip (the package index,
through pip's cache), in a PRE_COMMIT_HOME of the test's own. The scratch repository holds
one good and one bad fixture, and one good and one bad recorded body.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # pip installs the suite

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ("conformance-validate", "conformance-lint")
FIXTURE = ROOT / "fixtures" / "starter" / "length-no-content.yaml"
CHUNK = (
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[%s],"usage":%s}'
)
GOOD_BODY = "".join(
    f"data: {payload}\n\n"
    for payload in (
        CHUNK
        % ('{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}', "null"),
        CHUNK % ('{"index":0,"delta":{},"finish_reason":"stop"}', "null"),
        CHUNK % ("", '{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}'),
        "[DONE]",
    )
)
BAD_BODY = GOOD_BODY.removesuffix("data: [DONE]\n\n")  # W6: no [DONE]


def fixture(case_id: str, finish: str) -> str:
    document = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    document["id"] = case_id
    document["expect"]["finish"] = finish
    return yaml.safe_dump(document, sort_keys=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("project")
    files = {
        "fixtures/good-length.yaml": fixture("good-length", "max-tokens"),
        # The oracle reads finish_reason length as max-tokens: this expect disagrees.
        "fixtures/bad-length.yaml": fixture("bad-length", "stop"),
        "captures/good.sse": GOOD_BODY,
        "captures/bad.sse": BAD_BODY,
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return repo


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env=clean_env(repo))


def clean_env(repo: Path) -> dict[str, str]:
    """No GIT_* of an enclosing repository or hook; pre-commit's store in the test's tree."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    return env | {"PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "NO_COLOR": "1"}


def try_repo(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), *args, "--color", "never"],
        cwd=repo,
        env=clean_env(repo),
        capture_output=True,
        text=True,
        timeout=540,
    )


def test_the_hooks_fail_on_the_bad_files_and_name_them(project: Path) -> None:
    ran = try_repo(project, "--all-files")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    output = ran.stdout
    for hook in HOOKS:  # both ran, both failed
        assert f"- hook id: {hook}" in output
    assert "fixtures/bad-length.yaml:" in output, output
    assert 'expect.finish: "stop", but the oracle reads "max-tokens"' in output
    assert re.search(r"^captures/bad\.sse:\d+: byte \d+: W6 .*\[DONE\]", output, re.M), output
    assert "good-length.yaml:" not in output and "good.sse:" not in output


def test_the_hooks_pass_the_good_files(project: Path) -> None:
    good = ("fixtures/good-length.yaml", "captures/good.sse")
    ran = try_repo(project, "--files", *good)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("Passed") == len(HOOKS)
