"""The JS shims' side in Python: which Node runs them, when they count as installed, and a
matrix column driven through a subprocess. No Node.js is needed: a fake `node` answers
`--version`, and the column runs the Python example adapter in the shim's place."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.adapters.thirdparty import SHIMS, NodeShim, node
from conformance.adapters.thirdparty.common import NATIVE_RETRY
from conformance.cli import main
from conformance.options import RunOptions

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = [sys.executable, str(REPO / "examples/python-adapter/adapter.py")]
FIXTURE = REPO / "fixtures/starter/tool-late-id.yaml"


def _fake_node(tmp_path: Path, version: str) -> Path:
    path = tmp_path / f"node-{version}"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def _fresh_lookup() -> Iterator[None]:
    node.node_binary.cache_clear()
    yield
    node.node_binary.cache_clear()


def test_the_node_named_by_the_environment_must_be_22_or_newer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(node.NODE_ENV, str(_fake_node(tmp_path, "v20.20.2")))
    assert node.node_binary() is None
    node.node_binary.cache_clear()
    newer = _fake_node(tmp_path, "v22.23.3")
    monkeypatch.setenv(node.NODE_ENV, str(newer))
    assert node.node_binary() == newer
    assert node.node_major(str(tmp_path / "absent")) == 0


def test_a_node_shim_is_installed_with_a_node_and_its_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(node.NODE_ENV, str(_fake_node(tmp_path, "v22.23.3")))
    monkeypatch.setattr(node, "JS_SHIMS", tmp_path)
    shim = NodeShim("lib", "t", "lib.js", ("lib", "@scope/dep"))
    assert not shim.installed
    for package, version in (("lib", "1.2.3"), ("@scope/dep", "4.5.6")):
        (tmp_path / "node_modules" / package).mkdir(parents=True)
        (tmp_path / "node_modules" / package / "package.json").write_text(
            json.dumps({"name": package, "version": version})
        )
    assert shim.installed
    assert shim.versions() == {"lib": "1.2.3", "@scope/dep": "4.5.6"}


def test_the_retry_profile_runs_the_shim_with_the_library_retries_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(node.NODE_ENV, str(_fake_node(tmp_path, "v22.23.3")))
    shim = SHIMS["openai-node"]
    content = shlex.split(shim.command(RunOptions()))
    retry = shlex.split(shim.command(RunOptions(extra={NATIVE_RETRY: True})))
    assert content[1:] == [str(node.JS_SHIMS / "openai-node.js")]
    assert retry == [*content, node.NATIVE_RETRY_FLAG]


def test_without_a_node_a_column_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(node.NODE_ENV, str(_fake_node(tmp_path, "v20.20.2")))
    done = CliRunner().invoke(main, ["matrix", "column", "vercel-ai", "--out", str(tmp_path)])
    assert done.exit_code != 0
    assert "vercel-ai" in done.output and "scripts/install-js-shims" in done.output


def test_a_matrix_column_runs_a_subprocess_shim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(NodeShim, "installed", property(lambda self: True))
    monkeypatch.setattr(NodeShim, "command", lambda self, options: shlex.join(EXAMPLE))
    monkeypatch.setattr(NodeShim, "versions", lambda self: {"openai": "7.59.0"})
    out = tmp_path / "matrix"
    args = ["matrix", "column", "openai-node", "--out", str(out), "--fixtures", str(FIXTURE)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    saved = json.loads((out / "openai-node.interop.json").read_text())
    assert saved["options"]["matrix"] == {
        "column": "openai-node",
        "title": SHIMS["openai-node"].title,
        "versions": {"openai": "7.59.0"},
    }
    assert saved["options"]["adapter"] == f"--adapter-cmd {shlex.quote(shlex.join(EXAMPLE))}"
    assert [case["case"] for case in saved["cases"]] == ["tool-late-id"]
    assert (out / "openai-node.harness.json").exists()
