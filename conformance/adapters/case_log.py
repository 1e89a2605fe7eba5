"""One case's record on the adapter's side, kept within the per-case caps.

Both kinds of session record a case here. Past a cap the case is a protocol error and what
the adapter sends after it is dropped (``end`` excepted, so that a capped record still shows
how the case ended): memory stays bounded whatever the adapter sends, and so do the results
and reports written from the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..events import End, Event
from ..kept import MAX_CASE_BYTES, Kept, byte_count
from ..verdicts import CaseStatus

MAX_EVENTS_PER_CASE = 100_000  # events kept per case; more is a protocol error
__all__ = ["MAX_CASE_BYTES", "MAX_EVENTS_PER_CASE", "CaseLog", "byte_count"]


@dataclass
class CaseLog:
    """What one case has produced so far; the first failure decides the status."""

    case_id: str
    max_events: int = MAX_EVENTS_PER_CASE
    max_bytes: int = MAX_CASE_BYTES
    events: list[Event] = field(default_factory=list)
    kept: Kept = field(init=False)  # the case's account; the events are charged first
    status: CaseStatus = "completed"
    overflowed: bool = False  # past a cap: nothing but `end` is kept any more
    # The first failure is a readable event's field that failed validation: which one.
    invalid_field: str | None = None
    _first_detail: str = field(default="", init=False)
    _more_protocol_errors: int = field(default=0, init=False)
    _then: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.kept = Kept(self.max_bytes)

    @property
    def kept_bytes(self) -> int:
        return self.kept.bytes

    def fail(self, status: CaseStatus, detail: str, *, invalid_field: str | None = None) -> None:
        if self.status == "completed":
            self.status, self._first_detail = status, detail
            self.invalid_field = invalid_field
        elif status == "protocol-error":
            self._more_protocol_errors += 1
        else:  # a timeout or crash after a protocol error: keep both in the detail
            self._then = detail

    def add(self, event: Event, size: int) -> bool:
        """Keep ``event``, ``size`` bytes as a JSON line; False once a cap is passed (the
        event is dropped, the case is a protocol error). ``end`` is always kept."""
        if not isinstance(event, End):
            if self.overflowed:
                self.kept.refuse("events", size)
                return False
            if len(self.events) >= self.max_events:
                self.kept.refuse("events", size)
                return self._overflow(f"more than {self.max_events} events in one case")
            if size > self.kept.room:
                self.kept.refuse("events", size)
                cap = byte_count(self.max_bytes)
                return self._overflow(f"more than {cap} of events in one case (MAX_CASE_BYTES)")
        self.events.append(event)
        self.kept.bytes += size  # `end` past the cap too: it is small and says how it ended
        return True

    def detail(self) -> str:
        text = self._first_detail
        if self._more_protocol_errors:
            text += f" (and {self._more_protocol_errors} more protocol errors)"
        if self._then:
            text += f"; then {self._then}"
        return text

    def _overflow(self, detail: str) -> bool:
        self.overflowed = True
        self.fail("protocol-error", detail)
        return False
