"""The npm install steps (scripts/npm-bounded, used by scripts/install-node, install-js-shims
and scripts/test) against a registry that cannot be reached: each fails on its own, saying
what it tried, instead of waiting npm's five minutes per request with --silent hiding why.

The registries are loopback sockets of the test's own: one that accepts a connection and
never answers (a proxy that swallows requests), one that refuses at once (nothing listening).
npm gets empty global and user configs and a cache of its own, so that neither a machine's
npmrc nor its cache answers for the registry.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


@pytest.fixture
def silent_registry() -> Iterator[str]:
    """A registry that accepts connections and never says a word."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"


@pytest.fixture
def refusing_registry() -> str:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    return f"http://127.0.0.1:{port}/"  # closed again: connections are refused


def npm_env(tmp_path: Path, registry: str) -> dict[str, str]:
    for name in ("global", "user"):
        (tmp_path / f"{name}.npmrc").write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
    return env | {
        "npm_config_registry": registry,
        "npm_config_globalconfig": str(tmp_path / "global.npmrc"),
        "npm_config_userconfig": str(tmp_path / "user.npmrc"),
        "npm_config_cache": str(tmp_path / "cache"),
    }


def bounded_install(tmp_path: Path, registry: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ROOT / "scripts" / "npm-bounded", "an install step", "install", "is-number@7.0.0"],
        cwd=tmp_path,
        env=npm_env(tmp_path, registry),
        capture_output=True,
        text=True,
        # A bound on a hang, not a speed check: 20 s per request, one retry.
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_registry_that_never_answers_fails_the_step_saying_what_it_tried(
    tmp_path: Path, silent_registry: str
) -> None:
    done = bounded_install(tmp_path, silent_registry)

    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == "an install step: npm install is-number@7.0.0 failed"
    assert f"  registry: {silent_registry}" in lines
    assert any(line.startswith("  CA: NODE_EXTRA_CA_CERTS=") for line in lines)
    assert any(line.startswith("  npm error") for line in lines), done.stderr


def test_a_refused_registry_fails_the_step_with_npm_s_reason(
    tmp_path: Path, refusing_registry: str
) -> None:
    done = bounded_install(tmp_path, refusing_registry)

    assert done.returncode == 1
    assert f"  registry: {refusing_registry}" in done.stderr.splitlines()
    assert "ECONNREFUSED" in done.stderr


def test_the_install_scripts_go_through_the_bounded_npm() -> None:
    # No npm call that reaches a registry goes around scripts/npm-bounded.
    for script in ("install-node", "install-js-shims", "test"):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert "scripts/npm-bounded" in text, script
        assert not re.search(r"(^|[\s;|&(])npm (install|ci|i)\b", text, re.MULTILINE), script
