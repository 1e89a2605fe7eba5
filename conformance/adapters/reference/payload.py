"""Reading one named-event wire's JSON payloads (sans-IO): what the Anthropic Messages and
OpenAI Responses translators share.

Each helper raises `InvalidEventError` for a payload its translator cannot honestly read; the
translator turns it into a MALFORMED_RESPONSE failure.
"""

from typing import Any

from conformance.codes import ConformanceError

EXCERPT_CHARS = 120  # how much of a bad payload a failure message quotes


class InvalidEventError(ConformanceError):
    """Valid SSE that is no event of the wire this translator can honestly read."""


def reject_constant(constant: str) -> Any:
    """`json.loads`'s `parse_constant`: NaN and Infinity are no JSON."""
    raise ValueError(f"{constant} is not JSON")


def json_object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidEventError(f"{what} is not an object")
    return value


def count(counts: dict[str, Any], key: str) -> int | None:
    """A usage counter: None when absent or null, refused when not an integer."""
    value = counts.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidEventError(f"usage {key} is not an integer")
    return value


def identity(value: object) -> str | None:
    """An id or name as sent; None for "", null or a non-string (no identity)."""
    return value if isinstance(value, str) and value else None
