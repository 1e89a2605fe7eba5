"""HTTP status reason phrases, for status lines and default error messages."""

from __future__ import annotations

from http import HTTPStatus


def reason_phrase(status: int) -> str:
    """The phrase of a registered status; "Unknown" for one such as 529."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
