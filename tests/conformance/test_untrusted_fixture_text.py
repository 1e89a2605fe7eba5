"""A contributed fixture's strings are shown through the suite's one escaping, as an
adapter's are: a key or file name with terminal escapes, a provenance URL with markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.report import reference

CORPUS = Path(__file__).resolve().parents[2] / "fixtures"
GOOD = (CORPUS / "retry" / "http-500-retries-off.yaml").read_text(encoding="utf-8")
HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202e\x9b"
CONTROLS = set("\x1b\x07\u202e\x9b")


def _fixture(text: str = GOOD) -> str:
    return text.replace("id: http-500-retries-off\n", "")


def test_validate_and_run_show_a_hostile_key_and_file_name_escaped(tmp_path: Path) -> None:
    key = _fixture().replace("tags:", f'"{HOSTILE.encode("unicode_escape").decode()}": 1\ntags:')
    (tmp_path / "key.yaml").write_text(key, encoding="utf-8")
    (tmp_path / f"name{HOSTILE}.yaml").write_text(_fixture(), encoding="utf-8")
    for args in (["validate", str(tmp_path)], ["run", "--fixtures", str(tmp_path)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        assert "\\x1b]0;owned\\x07\\x1b[2J\\u202e\\x9b: unknown field" in result.output
        assert "name\\x1b]0;owned" in result.output
        assert not CONTROLS & set(result.output), args


def test_a_provenance_url_is_text_in_the_reference_unless_it_is_plain_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = [
        "https://example.test/ok",
        "https://example.test/x><img src=x onerror=alert(1)>",
        "javascript:alert(1)",
        "https://example.test/a\n\n# Injected heading",
    ]
    listed = "".join(f"\n    - {url!r}" for url in urls).replace("\n\n", "\\n\\n")
    text = _fixture().replace(
        "  urls:\n    - https://github.com/openai/openai-python#retries",
        "  urls:" + listed.replace("'", '"'),
    )
    (tmp_path / "hostile-provenance.yaml").write_text(
        text.replace("tags: [", "tags: [quirk-L2, "), encoding="utf-8"
    )
    monkeypatch.setattr(reference, "bundled_fixtures", lambda: tmp_path)
    markdown = reference.render_invariant_reference()
    row = next(line for line in markdown.splitlines() if line.startswith("| L2 |"))
    assert "<https://example.test/ok>" in row
    assert "<img" not in markdown and "&lt;img src=x onerror=alert(1)&gt;" in row
    assert "<javascript:" not in row and "javascript:alert(1)" in row
    assert "\n# Injected" not in markdown and "# Injected heading" in row
