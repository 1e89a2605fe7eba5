"""The documentation site: docs/ built by MkDocs (mkdocs.yml) in strict mode, where a broken
link or anchor, or a page left out of the nav, is a warning and fails the build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(120)


def build(project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=90,
    )


def copy_of_the_site_sources(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    (project / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "mkdocs_hooks.py", project / "scripts")
    shutil.copy(ROOT / "mkdocs.yml", project)
    return project


def test_the_site_builds_without_a_warning(tmp_path: Path) -> None:
    done = build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    # A link out of docs/ points at the file in the repository, which the site does not hold.
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://github.com/OWNER/streamconform/blob/main/fixtures/README.md"' in index


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = {page for entry in config["nav"] for page in entry.values()}
    assert in_nav == {page.name for page in (ROOT / "docs").glob("*.md")}


@pytest.mark.parametrize(
    ("broken", "warning"),
    [
        ("[x](running.md#no-such-heading)", "does not contain an anchor '#no-such-heading'"),
        ("[x](no-such-page.md)", "'no-such-page.md', but the target is not found"),
    ],
)
def test_a_broken_link_fails_the_build(tmp_path: Path, broken: str, warning: str) -> None:
    project = copy_of_the_site_sources(tmp_path)
    with (project / "docs" / "gateways.md").open("a", encoding="utf-8") as page:
        page.write(f"\n{broken}\n")

    done = build(project, tmp_path / "site")

    assert done.returncode != 0
    assert warning in done.stderr, done.stderr
