"""One attempt's body read into protocol events (sans-IO): bytes in, events out.

The httpx shell (shell.py) feeds it reads from the socket and the gateway judge
(conformance/gateway/outcome.py) reads it back from a capture, so both take the same
decisions on the same bytes, however the body was split.
"""

from collections.abc import Callable
from typing import Protocol

from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.sse import SSEDecoder, SSEEvent
from conformance.adapters.reference.translate import StreamTranslator
from conformance.events import Event


class Translator(Protocol):
    """One dialect's translator: the SSE events of one attempt in, protocol events out."""

    @property
    def finished(self) -> bool: ...

    @property
    def finish_arrived(self) -> bool: ...

    def receive(self, event: SSEEvent) -> list[Event]: ...

    def eof(self) -> list[Event]: ...

    def failure(self, code: str, message: str) -> list[Event]: ...


class AttemptReader:
    """Feed each read of a 2xx body to `receive_data`; stop reading once `finished`; then call
    `end` once, with the transport's failure if the body did not end cleanly::

        reader = AttemptReader()
        for data in reads:
            events += reader.receive_data(data)
            if reader.finished:
                break  # [DONE] or an in-stream error: nothing after it is read (S4)
        events += reader.end(failure)

    `decoder` and `translator` build the two halves, so that a mutant can swap either; the
    translator is the dialect's (chat-completions by default).
    """

    def __init__(
        self,
        *,
        decoder: Callable[[], SSEDecoder] = SSEDecoder,
        translator: Callable[[], Translator] = StreamTranslator,
    ) -> None:
        self._decoder = decoder()
        self._translator = translator()

    @property
    def finished(self) -> bool:
        """The attempt's finish was emitted: nothing more is read from the body."""
        return self._translator.finished

    @property
    def finish_arrived(self) -> bool:
        """The wire sent a finish reason (the attempt's own finish may still be due)."""
        return self._translator.finish_arrived

    def receive_data(self, data: bytes) -> list[Event]:
        """One read of the body; the events of the SSE events it completed."""
        return self._translate(self._decoder.feed(data))

    def end(self, failure: Failure | None = None) -> list[Event]:
        """The body ended (``failure`` None) or the attempt failed: its finish, unless one
        was already emitted. A failure leaves open blocks open (G6)."""
        if failure is not None:
            return self._translator.failure(failure.code, failure.message)
        # The decoder's end is a final feed: a variant may dispatch its unterminated tail.
        events = self._translate(self._decoder.close())
        return events + self._translator.eof()  # without [DONE], truncated (S5)

    def _translate(self, events: list[SSEEvent]) -> list[Event]:
        if not events:
            return []  # most reads of a finely split body complete no event
        return [out for event in events for out in self._translator.receive(event)]
