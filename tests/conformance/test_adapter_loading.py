"""``run``, ``fuzz`` and ``replay`` load ``--adapter module:factory`` from the current
directory, as ``python -m`` would (the plugin's twin is in test_pytest_plugin.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from text_case import write_text_case

from conformance.cli import main

LOCAL_ADAPTER = """\
from conformance.adapters.reference import ReferenceAdapter


def factory(options):
    return ReferenceAdapter()
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current directory holding one fixture; sys.path is restored afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path])
    write_text_case(tmp_path)
    return tmp_path


def local_adapter(directory: Path, module: str) -> str:
    """Write a tiny adapter module into ``directory``; its ``--adapter`` target."""
    (directory / f"{module}.py").write_text(LOCAL_ADAPTER, encoding="utf-8")
    return f"{module}:factory"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_loads_an_adapter_from_the_current_directory(here: Path) -> None:
    target = local_adapter(here, "local_run_adapter")
    result = invoke("run", "--adapter", target, "--fixtures", "text-hello.yaml")
    assert result.exit_code == 0, result.output


def test_replay_loads_an_adapter_from_the_current_directory(here: Path) -> None:
    target = local_adapter(here, "local_replay_adapter")
    result = invoke("replay", "text-hello.yaml", "--adapter", target)
    assert result.exit_code == 0, result.output
    assert "text-hello" in result.output


def test_fuzz_loads_an_adapter_from_the_current_directory(here: Path) -> None:
    target = local_adapter(here, "local_fuzz_adapter")
    result = invoke("fuzz", "--adapter", target, "--family", "G", "--max-examples", "1")
    assert result.exit_code == 0, result.output
