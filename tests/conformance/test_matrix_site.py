"""The matrix across processes and the results site: `matrix column --adapter`, `matrix
merge`, `matrix site` (conformance/report/site.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.report.compatibility import Column
from conformance.report.site import badge_svg, site_files
from conformance.results import RunResult

pytestmark = pytest.mark.timeout(180)
COLUMNS = {
    "reference": "conformance.adapters.reference:factory",
    "identity-any": "conformance.adapters.mutants:identity_any_defined",
}
SELECT = ("-k", "tool-cont")
HOSTILE = '<script>alert(1)</script> "><img src=x onerror=alert(2)> \x1b[31m'


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def column_process(name: str, out: Path) -> subprocess.Popen[bytes]:
    command = ["matrix", "column", "--adapter", COLUMNS[name], "--name", name, *SELECT]
    return subprocess.Popen(
        [sys.executable, "-m", "conformance", *command, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def saved(separate: Path, name: str) -> RunResult:
    return RunResult.from_json((separate / name / f"{name}.harness.json").read_bytes())


def merge(*folders: Path, out: Path) -> Result:
    return invoke("matrix", "merge", *map(str, folders), "--out", str(out))


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def separate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each column written by a process of its own, into a folder of its own, at once."""
    root = tmp_path_factory.mktemp("separate")
    running = [column_process(name, root / name) for name in COLUMNS]
    for process in running:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr.decode()
    return root


def test_columns_of_separate_processes_merge_into_the_site_one_folder_gives(
    separate: Path, tmp_path: Path
) -> None:
    merged = tmp_path / "merged"
    done = invoke(
        "matrix", "merge", *(str(separate / name) for name in COLUMNS), "--out", str(merged)
    )
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in merged.iterdir()) == [
        "identity-any.harness.json",
        "identity-any.interop.json",
        "reference.harness.json",
        "reference.interop.json",
    ]
    one = tmp_path / "one"  # the same columns, as one process writing both leaves them
    one.mkdir()
    for path in separate.rglob("*.json"):
        shutil.copy2(path, one / path.name)
    for folder, out in ((merged, tmp_path / "site-merged"), (one, tmp_path / "site-one")):
        done = invoke("matrix", "site", str(folder), str(out))
        assert done.exit_code == 0, done.output
    site = files_of(tmp_path / "site-merged")
    assert site == files_of(tmp_path / "site-one")
    assert {
        "index.html",
        "matrix.html",
        "libraries/reference.html",
        "libraries/identity-any.html",
        "badges/identity-any.harness.svg",
        "reports/identity-any/interop/index.html",
    } <= set(site)
    index = site["index.html"].decode()
    assert 'href="libraries/identity-any.html"' in index and "chat-completions" in index
    page = site["libraries/identity-any.html"].decode()
    assert "tool-cont-null-id-name" in page and "T1" in page  # the mutant's failure, listed
    assert "To look at under the harness contract (0)" not in page
    assert "<script" not in index + page  # no script on the site's own pages
    assert "http://" not in index and 'src="http' not in page  # nothing loaded from elsewhere


def test_a_single_process_writing_both_columns_gives_the_same_pages(
    separate: Path, tmp_path: Path
) -> None:
    """The pages that hold no clock field (the index, each library's, the badges) are those
    of the columns run one after the other by one process."""
    both = tmp_path / "both"
    for name, adapter in COLUMNS.items():
        command = ["matrix", "column", "--adapter", adapter, "--name", name, *SELECT]
        assert invoke(*command, "--out", str(both)).exit_code == 0
    merged = tmp_path / "merged"
    invoke("matrix", "merge", *(str(separate / name) for name in COLUMNS), "--out", str(merged))
    for folder in (both, merged):
        assert (
            invoke("matrix", "site", str(folder), str(tmp_path / f"site-{folder.name}")).exit_code
            == 0
        )
    single, gathered = files_of(tmp_path / "site-both"), files_of(tmp_path / "site-merged")
    timeless = [name for name in single if not name.startswith(("reports/", "matrix.html"))]
    assert {name: single[name] for name in timeless} == {name: gathered[name] for name in timeless}


def test_merge_refuses_two_different_files_of_one_name_and_a_malformed_one(
    separate: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    original = separate / "reference" / "reference.harness.json"
    (other / "reference.harness.json").write_text(
        original.read_text().replace("tool-cont", "tool-kont", 1)
    )
    done = invoke(
        "matrix", "merge", str(separate / "reference"), str(other), "--out", str(tmp_path / "m")
    )
    assert done.exit_code == 2
    assert "two different columns of one name" in done.output and len(done.output.splitlines()) == 1
    (other / "reference.harness.json").write_text("{not json")
    done = merge(other, out=tmp_path / "m")
    assert done.exit_code == 2 and "reference.harness.json" in done.output


def _column(name: str, title: str, versions: dict[str, str], result: RunResult) -> Column:
    return Column(name=name, title=title, versions=versions, result=result, interop=result)


def test_hostile_strings_are_escaped_in_the_pages_and_the_badges(separate: Path) -> None:
    result = RunResult.from_json(
        (separate / "identity-any" / "identity-any.harness.json").read_bytes()
    )
    case = result.cases[0]
    case.verdicts["T1"] = case.verdicts["T1"].model_copy(
        update={"verdict": "fail", "reason": HOSTILE}
    )
    files = site_files([_column("hostile", HOSTILE, {HOSTILE: HOSTILE}, result)])
    for name, text in files.items():
        if name.startswith("reports/"):
            continue  # the report's own escaping is tested by the report's tests
        assert "<script>alert" not in text and "<img src=x" not in text, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in files["libraries/hostile.html"]
    svg = badge_svg(HOSTILE.replace("\x1b", ""), result.counts())
    root = ET.fromstring(svg)  # well-formed, whatever the label
    assert root.tag.endswith("svg") and HOSTILE.replace("\x1b", "")[:20] in "".join(root.itertext())
    with pytest.raises(ValueError, match="no plain slug"):
        site_files([_column("../escape", "t", {}, result)])


def test_badges_are_well_formed_and_say_the_headline(separate: Path) -> None:
    result = RunResult.from_json(
        (separate / "identity-any" / "identity-any.harness.json").read_bytes()
    )
    root = ET.fromstring(badge_svg("identity-any harness", result.counts()))
    assert "identity-any harness: fail (" in root.findtext("{http://www.w3.org/2000/svg}title", "")
    clean = saved(separate, "reference")
    assert "pass (" in badge_svg("reference harness", clean.counts())


def test_history_lists_each_earlier_version_of_a_library(separate: Path) -> None:
    result = saved(separate, "reference")
    old = _column("reference", "t", {"lib": "1.0"}, result)
    new = _column("reference", "t", {"lib": "2.0"}, result)
    page = site_files([new], history=[[old]])["libraries/reference.html"]
    history = page[page.index('id="history"') :]
    assert history.index("lib 1.0") < history.index("lib 2.0")
    assert 'id="history"' not in site_files([new])["libraries/reference.html"]


def test_a_column_of_an_adapter_needs_a_name_that_is_a_slug() -> None:
    no_name = invoke("matrix", "column", "--adapter", COLUMNS["reference"])
    assert no_name.exit_code == 2 and "need --name" in no_name.output
    bad = invoke("matrix", "column", "--adapter", COLUMNS["reference"], "--name", "../x")
    assert bad.exit_code == 2 and "no plain slug" in bad.output
