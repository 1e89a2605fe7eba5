"""Named SSE events, the stream step of the Anthropic Messages and OpenAI Responses wires.

Each event is an ``event:`` line (the name equal to the ``type`` inside the data by default)
then its ``data:``. An event step sends its data object verbatim, so a field can be absent,
``null`` or ``""`` exactly as written, and its ``event:`` line can be the type, another name
(a mismatch), or left out (a data-only event, which the official SDKs drop).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, model_validator


class EventStep(BaseModel):
    """One named event: an ``event:`` line (unless left out), then the data object verbatim."""

    # A typo in a fixture must be an error, not a silently ignored key.
    model_config = ConfigDict(extra="forbid", frozen=True)

    event: dict[str, JsonValue] = Field(
        description='The data object, sent as written (key order, null and "" kept).'
    )
    name: str | None = Field(
        default=None,
        pattern=r"^[^\r\n]*$",
        description="The event: line's value; left out, the data's type. Another value "
        "sends an event whose name and type disagree.",
    )
    event_line: StrictBool = Field(
        default=True, description="False sends a data-only event: no event: line at all."
    )
    event_end: StrictBool = Field(default=True, description="End the event with a blank line.")
    numbered: StrictBool = Field(
        default=True,
        description="openai-responses: false sends the data without the sequence_number "
        "the fake provider otherwise adds to an event whose data has none.",
    )

    @model_validator(mode="after")
    def _named(self) -> EventStep:
        if not self.event_line and self.name is not None:
            raise ValueError("'name' names the event: line that 'event_line: false' leaves out")
        if self.event_line and self.name is None and not isinstance(self.event.get("type"), str):
            raise ValueError(
                "the event has no string 'type' to name its event: line; give 'name', or "
                "'event_line: false' for a data-only event"
            )
        return self

    def event_name(self) -> str | None:
        """The ``event:`` line's value, or None for a data-only event."""
        if not self.event_line:
            return None
        if self.name is not None:
            return self.name
        name = self.event.get("type")
        assert isinstance(name, str)  # guaranteed by _named
        return name
