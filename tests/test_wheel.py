"""The wheel, installed as a user installs it: no checkout, no test-run packages; and an
editable install of a fresh copy of the sources, which reads the top-level corpus in place.

The wheel is built from a copy of the sources (so no stale ``build/`` of the checkout leaks
in) and installed into a venv of the base interpreter without its site packages; its
dependencies come from the package index, which pip's cache makes quick on a rerun. Every
command then runs from a temporary directory outside the checkout, on the corpus the wheel
carries. Deselect with ``-m "not wheel"``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.report.upstream import known_causes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.wheel,
    pytest.mark.timeout(300),
]  # the first test builds the venv

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "fakeprovider", "conformance", "fixtures")
BASE_PYTHON: str = getattr(sys, "_base_executable", sys.executable)
REFERENCE = "conformance.adapters.reference:factory"
CASE = "tool-late-id"


def run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command as a user's shell would: without this test run's import path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    return subprocess.run(
        [str(arg) for arg in args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def copy_sources(where: Path) -> Path:
    """The files a build reads, copied to ``where/src`` without caches or build output."""
    sources = where / "src"
    sources.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / name, sources / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, sources / name)
    return sources


def fresh_venv(where: Path) -> tuple[Path, tuple[str | Path, ...]]:
    """A venv of the base interpreter in ``where/venv``: its python and the pip to drive it.

    This run's pip drives the new venv (--python): seeding the venv with its own pip would
    cost more than the rest of the install.
    """
    ok(run(BASE_PYTHON, "-m", "venv", "--without-pip", where / "venv", cwd=where))
    python = where / "venv" / "bin" / "python"
    return python, (sys.executable, "-m", "pip", "--python", python)


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh venv with the wheel (and pytest, for the plugin)."""
    where = tmp_path_factory.mktemp("wheel")
    sources = copy_sources(where)
    python, pip = fresh_venv(where)
    wheels = where / "wheels"
    ok(run(*pip, "wheel", "-q", "--no-deps", "-w", wheels, sources, cwd=where))
    (wheel,) = wheels.glob("streamconform-*.whl")
    ok(run(*pip, "install", "-q", "--no-compile", wheel, "pytest", cwd=where))
    return python.parent


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sources and the ``bin`` folder of a fresh venv with them installed editable."""
    where = tmp_path_factory.mktemp("editable")
    sources = copy_sources(where)
    python, pip = fresh_venv(where)
    ok(run(*pip, "install", "-q", "--no-compile", "-e", sources, cwd=where))
    return sources, python.parent


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    assert not tmp_path.is_relative_to(ROOT)
    return tmp_path


BUNDLED = "from conformance.options import bundled_fixtures; print(bundled_fixtures())"


def test_the_corpus_is_inside_the_installed_package(venv_bin: Path, elsewhere: Path) -> None:
    corpus = Path(ok(run(venv_bin / "python", "-c", BUNDLED, cwd=elsewhere)).strip())
    assert corpus.is_relative_to(venv_bin.parent)
    assert corpus.parts[-2:] == ("conformance", "fixtures")
    assert (corpus / "README.md").is_file()
    assert (corpus / "starter" / f"{CASE}.yaml").is_file()


def test_the_known_causes_ship_with_the_corpus(venv_bin: Path, elsewhere: Path) -> None:
    probe = "from conformance.report.upstream import known_causes; print(len(known_causes()))"
    shipped = int(ok(run(venv_bin / "python", "-c", probe, cwd=elsewhere)))
    assert shipped == len(known_causes()) > 0


def test_an_editable_install_reads_the_top_level_corpus_in_place(
    editable: tuple[Path, Path], elsewhere: Path
) -> None:
    sources, bin_ = editable
    corpus = Path(ok(run(bin_ / "python", "-c", BUNDLED, cwd=elsewhere)).strip())
    assert corpus == sources / "fixtures"
    out = ok(run(bin_ / "conformance", "run", "-k", CASE, cwd=elsewhere))
    assert "0 fail" in out


def test_run_writes_a_report(venv_bin: Path, elsewhere: Path) -> None:
    report = elsewhere / "report"
    out = ok(run(venv_bin / "conformance", "run", "-k", CASE, "--report", report, cwd=elsewhere))
    assert "0 fail" in out
    assert (report / "index.html").is_file()


def test_list_prints_the_catalogue(venv_bin: Path, elsewhere: Path) -> None:
    assert "C1" in ok(run(venv_bin / "conformance", "list", cwd=elsewhere))


@pytest.fixture
def served(venv_bin: Path, elsewhere: Path) -> Iterator[str]:
    """``fakeprovider serve`` on a free loopback port, serving the installed corpus."""
    corpus = ok(run(venv_bin / "python", "-c", BUNDLED, cwd=elsewhere)).strip()
    command = [str(venv_bin / "fakeprovider"), "serve", "--port", "0", "--fixtures", corpus]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    server = subprocess.Popen(
        command,
        cwd=elsewhere,
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        listening = re.search(r"listening on (http://127\.0\.0\.1:\d+)", server.stdout.readline())
        assert listening, "fakeprovider serve printed no address"
        yield listening[1]
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_serve_answers_a_bundled_scenario(served: str) -> None:
    request = urllib.request.Request(
        f"{served}/{CASE}/v1/chat/completions",
        data=json.dumps({"stream": True}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        body = response.read().decode()
    assert "chat.completion.chunk" in body
    assert "data: [DONE]" in body


def test_the_pytest_plugin_gives_the_cli_s_verdicts_on_a_users_corpus(
    venv_bin: Path, elsewhere: Path
) -> None:
    metadata = "import importlib.metadata as m; print(m.distribution('streamconform')._path)"
    dist_info = Path(ok(run(venv_bin / "python", "-c", metadata, cwd=elsewhere)).strip())
    assert dist_info.is_relative_to(venv_bin.parent)  # the venv's own install, not the checkout
    corpus = elsewhere / "corpus"
    corpus.mkdir()
    shutil.copy2(ROOT / "fixtures" / "starter" / f"{CASE}.yaml", corpus)
    results = elsewhere / "results.json"
    cli = ["run", "--fixtures", corpus, "--json", results]
    ok(run(venv_bin / "conformance", *cli, cwd=elsewhere))
    verdicts = [v for case in json.loads(results.read_text())["cases"] for v in case["verdicts"]]

    args = ["-p", "no:cacheprovider", f"--conformance-adapter={REFERENCE}"]
    out = ok(run(venv_bin / "pytest", *args, f"--conformance-fixtures={corpus}", cwd=elsewhere))
    assert f" {len(verdicts)} passed" in out, out
    assert "conformance " in out  # the items' location, as the progress line shows it
