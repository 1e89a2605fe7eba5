"""The chat-completions golden test: every corpus fixture shows the bytes it showed before
scenarios declared a dialect.

``chat_show_digests.json`` holds, per fixture file of the corpus, the SHA-256 of
``fakeprovider show`` for it, computed before the dialect seam existed. A fixture whose bytes
change on purpose gets its digest rewritten (``python tests/provider/test_chat_golden.py``);
a change of the encoder that alters any of them is a regression for every chat user.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.options import bundled_fixtures
from fakeprovider.cli import main
from fakeprovider.fixtures import load_fixture

DIGESTS = Path(__file__).with_name("chat_show_digests.json")


def show_digest(path: Path) -> str:
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == 0, result.output
    return hashlib.sha256(result.output.encode()).hexdigest()


def corpus_digests() -> dict[str, str]:
    root = bundled_fixtures()
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    return {path.relative_to(root).as_posix(): show_digest(path) for path in files}


RECORDED: dict[str, str] = json.loads(DIGESTS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_chat_fixture_shows_the_bytes_it_showed_before_dialects(name: str) -> None:
    path = bundled_fixtures() / name
    assert load_fixture(path).dialect == "chat-completions"
    assert show_digest(path) == RECORDED[name]


def test_the_digests_cover_the_chat_corpus() -> None:
    # A fixture the list does not know is not held to anything: it must be added.
    root = bundled_fixtures()
    chat = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.suffix in (".yaml", ".yml", ".json")
        and load_fixture(path).dialect == "chat-completions"
    }
    assert chat <= set(RECORDED)


if __name__ == "__main__":
    DIGESTS.write_text(json.dumps(corpus_digests(), indent=1, sort_keys=True) + "\n")
