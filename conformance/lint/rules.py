"""The wire rules each dialect's lint checks: shapes that break clients.

Chat-completions (the W rules): wire hazards most often introduced by gateways, each with
the quirk family of ``shared/reference/anchors.md`` §3 it guards against and the quirks it
covers. All are SHOULD: a stream breaking one is still meaningful to a tolerant client (the
reference adapter), but known to break real ones.

Anthropic Messages (the AN-W rules) and OpenAI Responses (the RS-W rules): the grammar of
named events that the real API always keeps and gateways and compatible servers break
(reference dialects.md §2.2, §8.2; §3.1-§3.4, §8.3), each citing the real failures of §3.7
and §4 it guards against and naming the invariant that judges what a client makes of the
breach.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fakeprovider.dialects import DialectId

from ..verdicts import CatalogueEntry, Level, RuleInfo


@dataclass(frozen=True, kw_only=True)
class LintRule(RuleInfo):
    cited: str  # what a finding line cites: the quirks or real failures the rule guards against
    dialect: DialectId = "chat-completions"
    quirk_family: str = ""  # chat: the anchors §3 quirk family: A identity, B ids, C index, ...
    quirks: tuple[str, ...] = ()
    judged_by: str = ""  # named-event wires: the invariant that judges a client's reading

    def describe(self) -> CatalogueEntry:
        """The common entry, plus the anchors §3 quirk family and quirks it guards against."""
        entry = super().describe()
        if self.quirk_family:
            entry |= {"quirk_family": self.quirk_family, "quirks": list(self.quirks)}
        return entry


def _rule(id: str, quirk_family: str, quirks: tuple[str, ...], statement: str) -> LintRule:
    return LintRule(
        id=id,
        family="W",
        family_title="Wire hazards",
        level="SHOULD",
        statement=statement,
        source=f"anchors §3 family {quirk_family} ({', '.join(quirks)})",
        cited=f"quirk family {quirk_family}: {', '.join(quirks)}",
        quirk_family=quirk_family,
        quirks=quirks,
    )


FIRST_DELTA_IDENTITY = _rule(
    "W1",
    "B",
    ("B1", "B3", "A9", "A10", "C1"),
    "The first delta of each tool call carries its index, a non-empty id and function.name.",
)
CONTINUATION_IDENTITY = _rule(
    "W2",
    "A",
    ("A1", "A2", "A5", "A6", "A7", "A8", "A13"),
    "A tool call's continuation deltas leave id, type and function.name out: never null, "
    '"", the same value again or a different one.',
)
TOOL_INDEX = _rule(
    "W3",
    "C",
    ("C3", "C4", "C5"),
    "Tool-call indexes are integers that start at 0 and grow by one per new call.",
)
NULL_STRING = _rule(
    "W4",
    "A",
    ("A3", "A4", "A11", "A12", "D2"),
    "A string field of a delta (role, content, reasoning_content, type, arguments) and the "
    "tool_calls and function containers are left out rather than sent as null.",
)
COMMENT_AS_DATA = _rule(
    "W5",
    "I",
    ("I2",),
    "A comment (keep-alive) stays a comment line; it is never re-wrapped as `data: :...`.",
)
MISSING_DONE = _rule(
    "W6",
    "I",
    ("I8",),
    "A stream that ends cleanly without a failure ends with `data: [DONE]`.",
)
DONE_AFTER_FAILURE = _rule(
    "W7",
    "J",
    ("J4",),
    "`data: [DONE]` never follows a failure (an error payload, or an upstream that failed), "
    "where it makes a truncated answer look complete.",
)
USAGE_DROPPED = _rule(
    "W8",
    "H",
    ("G4", "H2"),
    "When the request asked for stream_options.include_usage, a completed stream carries "
    "a usage object.",
)
PLAIN_TEXT_ERROR = _rule(
    "W9",
    "I",
    ("I9", "J1"),
    "An error is a JSON error object (an error response body, or a data payload), never "
    "plain text.",
)
FINISH_MISSING = _rule(
    "W10",
    "F",
    ("F5",),
    "A completed stream with choices gives a non-empty finish_reason before [DONE].",
)

RULES: dict[str, LintRule] = {
    rule.id: rule
    for rule in (
        FIRST_DELTA_IDENTITY,
        CONTINUATION_IDENTITY,
        TOOL_INDEX,
        NULL_STRING,
        COMMENT_AS_DATA,
        MISSING_DONE,
        DONE_AFTER_FAILURE,
        USAGE_DROPPED,
        PLAIN_TEXT_ERROR,
        FINISH_MISSING,
    )
}


# --- Anthropic Messages ---------------------------------------------------------------------


_NAMED_FAMILIES: dict[DialectId, tuple[str, str, str]] = {
    "anthropic-messages": ("AN-W", "Anthropic Messages wire rules", "§2.2, §8.2"),
    "openai-responses": ("RS-W", "OpenAI Responses wire rules", "§3.1-§3.4, §8.3"),
}
"""Each named-event wire's rule family, its title and the reference sections of its grammar."""


def _named_rule(
    dialect: DialectId, id: str, judged_by: str, level: Level, cases: str, statement: str
) -> LintRule:
    family, title, sections = _NAMED_FAMILIES[dialect]
    return LintRule(
        id=id,
        family=family,
        family_title=title,
        level=level,
        statement=statement,
        source=f"reference dialects.md {sections}; a client's reading judged by {judged_by}",
        cited=cases,
        dialect=dialect,
        judged_by=judged_by,
    )


_messages_rule = functools.partial(_named_rule, "anthropic-messages")


BLOCK_NOT_OPEN = _messages_rule(
    "AN-W1",
    "AN-G1",
    "MUST",
    "§4 A1, A8, A11, A13, A22",
    "Every content_block_delta and content_block_stop names an index whose block was started "
    "and is not yet stopped.",
)
INDEX_REUSED = _messages_rule(
    "AN-W2",
    "AN-G2",
    "MUST",
    "§4 A9, A10",
    "A content_block_start never names an index already used in the message, open or stopped.",
)
DELTA_MISFIT = _messages_rule(
    "AN-W3",
    "AN-G3",
    "MUST",
    "§4 A7, A12",
    "A delta fits its block: text_delta and citations_delta a text block, input_json_delta "
    "a tool_use or server_tool_use block, thinking_delta and signature_delta a thinking block.",
)
ONE_END = _messages_rule(
    "AN-W4",
    "AN-G4",
    "MUST",
    "§2.10 (EOF without message_stop: the Python SDK returns the snapshot as complete); §4 E5",
    "A stream has exactly one end, message_stop or an error event, and a body that ends "
    "cleanly has one.",
)
AFTER_STOP = _messages_rule(
    "AN-W5",
    "AN-G5",
    "MUST",
    "§4 F1",
    "Nothing follows message_stop but a tolerated `event: done` or `data: [DONE]`.",
)
FIRST_EVENT = _messages_rule(
    "AN-W6",
    "AN-G6",
    "MUST",
    '§2.10 (both SDKs raise "Unexpected event order")',
    "The first event other than ping is message_start.",
)
LEFT_OPEN = _messages_rule(
    "AN-W7",
    "C5",
    "MUST",
    "§2.10; SDK fixture incomplete_partial_json_response.txt",
    "Every started block is stopped before a message_delta with stop_reason end_turn, "
    "tool_use or stop_sequence (only max_tokens may leave one open).",
)
EVENT_NAME = _messages_rule(
    "AN-W8",
    "AN-S2",
    "SHOULD",
    "§4 F2",
    "Every event has an `event:` line, and its name is the data's type.",
)
EMPTY_DATA = _messages_rule(
    "AN-W9",
    "S6",
    "MUST",
    "§4 F3, F4",
    "Every event other than ping carries a JSON object as data: never none, empty or other text.",
)
TOOL_INPUT_JSON = _messages_rule(
    "AN-W10",
    "C3",
    "SHOULD",
    "§4 A3, A19; fine-grained tool streaming may cut JSON only at max_tokens",
    "The partial_json of a stopped tool block concatenates to JSON (or to nothing, read as {}).",
)
USAGE_DECREASES = _messages_rule(
    "AN-W11",
    "C4",
    "MUST",
    "§4 D1-D7",
    "Usage counters are cumulative: a message_delta never reports less of a counter than "
    "an earlier event did (message_start's output_tokens is preliminary, not a floor).",
)
TOOL_IDENTITY = _messages_rule(
    "AN-W12",
    "T5",
    "MUST",
    "§4 A1, A24",
    "A tool_use block starts with a non-empty string id and name.",
)
TOOL_ID_REPEATED = _messages_rule(
    "AN-W13",
    "T3",
    "SHOULD",
    "§4 A17, A18",
    "No two tool_use or server_tool_use blocks of a message share an id.",
)

MESSAGES_RULES: dict[str, LintRule] = {
    rule.id: rule
    for rule in (
        BLOCK_NOT_OPEN,
        INDEX_REUSED,
        DELTA_MISFIT,
        ONE_END,
        AFTER_STOP,
        FIRST_EVENT,
        LEFT_OPEN,
        EVENT_NAME,
        EMPTY_DATA,
        TOOL_INPUT_JSON,
        USAGE_DECREASES,
        TOOL_IDENTITY,
        TOOL_ID_REPEATED,
    )
}


# --- OpenAI Responses -----------------------------------------------------------------------


_responses_rule = functools.partial(_named_rule, "openai-responses")


RS_FIRST_EVENT = _responses_rule(
    "RS-W1",
    "RS-G1",
    "MUST",
    '§3.7 (openai-python and openai-node both raise without "response.created")',
    "The first event other than keepalive is response.created (or an error event standing "
    "for the whole response).",
)
RS_NO_TERMINAL = _responses_rule(
    "RS-W2",
    "RS-G5",
    "MUST",
    "§4 G19; §3.7 (openai-node resolves the partial snapshot as final)",
    "A body that ends cleanly has a terminal event (response.completed, response.incomplete "
    "or response.failed), or at least an error event.",
)
RS_AFTER_TERMINAL = _responses_rule(
    "RS-W3",
    "RS-G1",
    "MUST",
    "§4 G20 (several response.completed in one relayed run)",
    "Exactly one terminal event, and nothing after it but a keepalive (a `data: [DONE]` "
    "is RS-W10's).",
)
RS_EVENT_NAME = _responses_rule(
    "RS-W4",
    "C1-C5 (the oracle reads an event by its data's type)",
    "SHOULD",
    "§3.1 (event: is the data's type)",
    "Every event has an `event:` line, and its name is the data's type.",
)
RS_SEQUENCE = _responses_rule(
    "RS-W5",
    "RS-S2",
    "SHOULD",
    "§3.1 (the resume cursor: openai-python drops events numbered <= starting_after)",
    "Every event carries an integer sequence_number, each greater than the one before.",
)
RS_ITEM_NOT_OPEN = _responses_rule(
    "RS-W6",
    "RS-G2",
    "MUST",
    "§4 G10; §3.7 (openai-python asserts, openai-node throws)",
    "Every item-scoped event names an output_index that output_item.added opened and "
    "output_item.done has not yet closed.",
)
RS_INDEX_ORDER = _responses_rule(
    "RS-W7",
    "RS-G2",
    "MUST",
    "§4 G14; §3.7 (openai-node's validateArrayAppend throws, openai-python appends)",
    "output_item.added opens output_index 0, 1, 2… in order, each once.",
)
RS_ITEM_ID = _responses_rule(
    "RS-W8",
    "RS-G3",
    "SHOULD",
    '§4 G11, G15, G27; §3.7 (openai-node throws "expected item_id")',
    "An item-scoped event's item_id is the id of the item at its output_index.",
)
RS_DELTA_MISFIT = _responses_rule(
    "RS-W9",
    "RS-G2",
    "MUST",
    "§3.7 (openai-python's AssertionError, openai-node throws)",
    "An item-scoped event fits its item: text, refusal and content parts a message, "
    "arguments a function_call, summaries and reasoning text a reasoning item.",
)
RS_DONE = _responses_rule(
    "RS-W10",
    "RS-G5",
    "SHOULD",
    "§3.1; §4 G9 (a gateway's [DONE]: openai-python stops reading at it)",
    "The wire has no `data: [DONE]`: a stream ends after its terminal event.",
)
RS_EMPTY_SNAPSHOT = _responses_rule(
    "RS-W11",
    "RS-C6",
    "MUST",
    "§4 G1-G9 (gateways' terminal output [] or missing: the answer vanishes)",
    "A response.completed or response.incomplete after streamed items lists every one of "
    "them in its response.output (never [], null or missing).",
)
RS_ERROR_SHAPE = _responses_rule(
    "RS-W12",
    "RS-H1",
    "SHOULD",
    "§3.2, §3.4; §3.7 (openai-python raises only on the nested shape, issue #2487)",
    "An error event carries its error nested, `error: {code, message}`, as the live API "
    "sends it; the flat shape of the documentation (`code`, `message`) is not raised by "
    "openai-python.",
)
RS_EMPTY_DATA = _responses_rule(
    "RS-W13",
    "S6",
    "MUST",
    "§3.2 (every event's data is a typed JSON object)",
    "Every event carries a JSON object as data: never none, empty or other text.",
)

RESPONSES_RULES: dict[str, LintRule] = {
    rule.id: rule
    for rule in (
        RS_FIRST_EVENT,
        RS_NO_TERMINAL,
        RS_AFTER_TERMINAL,
        RS_EVENT_NAME,
        RS_SEQUENCE,
        RS_ITEM_NOT_OPEN,
        RS_INDEX_ORDER,
        RS_ITEM_ID,
        RS_DELTA_MISFIT,
        RS_DONE,
        RS_EMPTY_SNAPSHOT,
        RS_ERROR_SHAPE,
        RS_EMPTY_DATA,
    )
}
ALL_RULES: dict[str, LintRule] = RULES | MESSAGES_RULES | RESPONSES_RULES
"""Every dialect's lint rules by id (the ids never collide: AN- and RS- prefix the named-event
wires' ones)."""
