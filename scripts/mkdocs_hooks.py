"""MkDocs hooks for the documentation site (mkdocs.yml): a link from a page to a file of the
repository outside docs/ (``../fixtures/README.md``, ``../examples/...``) becomes a link to
that file in the repository, which the site does not hold; every other link is left for
MkDocs to check."""

from __future__ import annotations

import posixpath
import re
from typing import Any

_LINK = re.compile(r"\]\((\.\./[^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    base = posixpath.dirname(page.file.src_uri)
    repository = config["repo_url"].rstrip("/")

    def outside(match: re.Match[str]) -> str:
        path = posixpath.normpath(posixpath.join("docs", base, match[1]))
        return f"]({repository}/blob/main/{path}{match[2] or ''})"

    return _LINK.sub(outside, markdown)
