"""Untrusted text (case ids, reasons, adapter names, commands) made literal in Markdown.

CommonMark lets a backslash escape any ASCII punctuation character and promises it renders
as itself, so escaping all of them leaves no emphasis, link, HTML tag, table pipe, entity or
mention to interpret, whatever the renderer's extensions. A line break would end a list item
or a table row and a bidi control reorders the text around it: every character that is not
printable (str.isprintable: controls, format characters, separators, surrogates) is shown
as its Python escape.
"""

from __future__ import annotations

import re
import string

_PUNCTUATION = frozenset(string.punctuation)
_BACKTICKS = re.compile("`+")


def escape_markdown(text: str) -> str:
    """``text`` as one line of Markdown inline content that renders as ``text`` reads."""
    return "".join("\\" + char if char in _PUNCTUATION else char for char in printable(text))


def code_span(text: str) -> str:
    """``text`` as an inline code span on one line: fenced by one backtick more than its
    longest run of backticks, and padded, so no backtick inside can close it."""
    shown = printable(text)
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {shown} {fence}"


def printable(text: str) -> str:
    """``text`` with each unprintable character written as its escape (``\\n``, ``\\u202e``)."""
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode() for char in text
    )
