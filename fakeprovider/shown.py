"""Untrusted text (fixture keys and file names, stream text, adapter output) made safe to
show: every character a terminal or viewer would act on rather than print is written as
its Python escape.

The one definition both packages use, so that a fixture's string and an adapter's are
shown alike wherever they appear (terminal, JUnit XML, Markdown).
"""

from __future__ import annotations

import functools
import re

# C0, DEL, C1, lone surrogates, and the bidi controls, which reorder the text around them
# (a right-to-left override makes `evil` print as `live`).
_CONTROLS = "\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"


def controls_shown(text: str, *, keep: str = "") -> str:
    """``text`` with control characters, bidi controls and lone surrogates written as
    Python escapes (``\\x1b``, ``\\u202e``); the characters in ``keep`` (``"\\n\\t"``
    where the text's own lines are wanted) stay as they are."""
    return _control(keep).sub(_escaped, text)


@functools.cache
def _control(keep: str) -> re.Pattern[str]:
    kept = f"(?![{re.escape(keep)}])" if keep else ""
    return re.compile(f"{kept}[{_CONTROLS}]")


def _escaped(found: re.Match[str]) -> str:
    return found[0].encode("unicode_escape").decode()
