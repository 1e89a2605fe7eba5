"""Text and links in the Markdown the suite writes (docs/invariants.md, compatibility.md):
one escaper for every string that is not the suite's own markup, a fixture's included.
"""

from __future__ import annotations

from fakeprovider.shown import controls_shown

from .html import safe_href

_ESCAPES = str.maketrans({"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "\r": " ", "\n": " "})


def markdown_text(text: str) -> str:
    """``text`` as inline Markdown that shows it literally, safe in a table cell: no pipes,
    no line breaks (so no heading of its own), no raw HTML, controls as escapes."""
    return controls_shown(text.translate(_ESCAPES))


def markdown_url(url: str) -> str:
    """A link to ``url`` if it is a plain http(s) URL, else the URL as text: a fixture's
    provenance may hold any string."""
    if safe_href(url) is not None:
        return f"<{url}>"
    return markdown_text(url)
