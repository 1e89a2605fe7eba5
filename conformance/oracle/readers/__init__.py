"""One reader per dialect: a whole body of its wire → the canonical expected attempt.

Each reader is a reading of a stream's events, created fresh per attempt; the driver
(:func:`read_body`) feeds it the body's SSE events and says what an end before the
dialect's terminal event means, the same for every dialect.
"""

from __future__ import annotations

from collections.abc import Callable

from fakeprovider.dialects import DialectId
from fakeprovider.scenario import StreamResponse

from ...verdicts import AltReading
from .anthropic import anthropic_reading
from .chat import chat_reading, map_usage
from .ending import StreamReading, read_body
from .responses import responses_reading
from .sse import SseEvent, sse_events, sse_payloads

Reader = Callable[[StreamResponse, AltReading | None], StreamReading]

READERS: dict[DialectId, Reader] = {
    "chat-completions": chat_reading,
    "anthropic-messages": anthropic_reading,
    "openai-responses": responses_reading,
}
"""The reader of each dialect's stream bodies."""

__all__ = [
    "READERS",
    "Reader",
    "SseEvent",
    "StreamReading",
    "map_usage",
    "read_body",
    "sse_events",
    "sse_payloads",
]
