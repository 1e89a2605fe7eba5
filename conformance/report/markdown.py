"""Text and links in the Markdown the suite writes (docs/invariants.md, compatibility.md,
a run's summary): one escaper for every string that is not the suite's own markup, a
fixture's included, and code spans for the strings of a run (case ids, reasons, adapter
names, commands), whose content CommonMark shows as it is.
"""

from __future__ import annotations

import re

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


_BACKTICKS = re.compile("`+")


def code_span(text: str) -> str:
    """``text`` as an inline code span, shown literally (no emphasis, link, HTML or entity
    in it is read): on one line, controls as escapes, fenced by one backtick more than its
    longest run of backticks and padded, so no backtick inside can close it."""
    shown = controls_shown(text)
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {shown} {fence}"
