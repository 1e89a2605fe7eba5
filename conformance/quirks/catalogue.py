"""The real-world stream quirks of anchors.md §3 as data, and the unambiguous ones as transforms.

Each quirk has the id of its anchors.md entry (``A5``), a short name, and a level
(INVARIANTS.md §Q): **MUST** — the meaning is unambiguous, so an adapter must produce the
outcome the oracle reads from the wire (for an encoding quirk: the canonical stream's);
**INFO** — the wire can be read more than one way, so the suite records what the adapter
did with the *aspect* of the outcome the quirk contests (:data:`Aspect`: which tool calls
there are, their arguments, the text…) and judges the rest as on any stream. Quirks §Q
does not grade (K, most of B/D/J/L) have no level: the invariants of their family judge
them.

A fixture names its quirks with ``quirk-<ID>`` tags; an ambiguous one also carries
:data:`INFO_TAG`. An ambiguity the catalogue has no entry for (a vendor field, a
conflicting id) names what it contests with ``contests:<aspect>`` tags instead (see
:func:`contested_aspects`). The transforms are pure functions ``Scenario → Scenario`` that
re-encode every stream attempt the way a quirky provider would *without* changing what it
means, so the generators can apply them to any intended response::

    from conformance.quirks import TRANSFORMS, with_quirks
    quirky = with_quirks(scenario, "A5", "I7")   # DashScope's "" ids, framed with CRLF
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast, get_args

from fakeprovider.scenario import Scenario

from ..verdicts import AltReading
from .transforms import (
    Chunk,
    Transform,
    _all_null_continuation,
    _arguments_in_one_lump,
    _arguments_null_first,
    _between_events,
    _chunk_ids_vary,
    _content_null_with_tools,
    _delta_chunk,
    _empty_fragment_after,
    _every_delta,
    _every_entry,
    _finish_empty_string,
    _finish_split,
    _framing,
    _function_null_after,
    _ids_and_pings,
    _insert_chunk,
    _interleaved,
    _keepalive,
    _late,
    _nulls_for_absent,
    _repeat_name,
    _role_null,
    _set,
    _steps,
    _texts_coalesced,
    _usage_on_every_chunk,
    _usage_trailing,
    _usage_without_choices,
)

QuirkLevel = Literal["MUST", "INFO"]

Aspect = Literal["text", "reasoning", "tool-calls", "ids", "arguments", "finish", "usage"]
"""An aspect of the outcome an ambiguous quirk may leave open: the text, the reasoning,
which tool calls there are (how many, their names), their ids, their arguments, how the
attempt ends (finish reason or failure code, and so whether it is retried), the usage."""
ASPECTS: tuple[Aspect, ...] = get_args(Aspect)
ASPECT_TITLES: Mapping[Aspect, str] = {
    "text": "the text",
    "reasoning": "the reasoning",
    "tool-calls": "the tool calls",
    "ids": "the tool-call ids",
    "arguments": "the tool-call arguments",
    "finish": "the finish",
    "usage": "the usage",
}

INFO_TAG = "level:info"
"""Scenario tag: the wire is ambiguous, so the contested aspects are recorded as ``info``."""
QUIRK_TAG_PREFIX = "quirk-"
CONTESTS_TAG_PREFIX = "contests:"
"""Scenario tag prefix naming an aspect an uncatalogued ambiguity contests: ``contests:text``."""
READING_TAG_PREFIX = "reading:"
"""Scenario tag prefix naming a reading an uncatalogued ambiguity admits: ``reading:by-id``."""


@dataclass(frozen=True)
class Quirk:
    id: str  # anchors.md §3 id, e.g. "A5"
    name: str  # the proposed scenario name there, e.g. "cont-id-empty-string"
    level: QuirkLevel | None  # None: not graded by Q; its family's invariants decide
    summary: str
    transform: Transform | None = field(default=None, compare=False)
    # An INFO quirk: the aspects of the outcome its readings differ in, and the readings
    # it admits besides the oracle's. Every other aspect has one reading, judged as on any
    # stream; an outcome equal to no reading is judged in the contested ones too. An INFO
    # quirk whose every reading agrees contests nothing: ambiguous on the wire, not in what
    # the caller gets.
    contests: frozenset[Aspect] = frozenset()
    readings: tuple[AltReading, ...] = ()  # see conformance.verdicts.ALT_READINGS
    # Another reading the oracle cannot make (a vendor's markup grammar): any outcome on
    # the contested aspects is recorded.
    unbounded: bool = False


def recorded_only(scenario: Scenario) -> bool:
    """True when the scenario is an ambiguous quirk: its contested aspects are recorded."""
    return INFO_TAG in scenario.tags


def contested_aspects(scenario: Scenario) -> dict[Aspect, str]:
    """The aspects an ambiguous scenario leaves open, each with what contests it.

    Those its catalogued INFO quirks contest, and those its ``contests:<aspect>`` tags
    name. A scenario tagged :data:`INFO_TAG` that names neither a quirk nor an aspect
    leaves every aspect open (to any outcome: see :func:`unbounded_reading`). Empty for a
    scenario that is not tagged ambiguous.
    """
    if not recorded_only(scenario):
        return {}
    sources: list[tuple[Collection[str], str]] = [
        (quirk.contests, f"quirk {quirk.id} ({quirk.summary})")
        for quirk in graded_quirks(scenario, "INFO")
    ]
    named = [
        tag.removeprefix(CONTESTS_TAG_PREFIX)
        for tag in scenario.tags
        if tag.startswith(CONTESTS_TAG_PREFIX)
    ]
    sources.append((named, f"this stream ({scenario.title or scenario.id})"))
    contested = {
        aspect: next(why for aspects, why in sources if aspect in aspects)
        for aspect in ASPECTS
        if any(aspect in aspects for aspects, _ in sources)
    }
    if contested or _names_its_ambiguity(scenario):
        return contested
    return dict.fromkeys(ASPECTS, f"this stream (tagged {INFO_TAG} without naming an aspect)")


def admitted_readings(scenario: Scenario) -> tuple[AltReading, ...]:
    """The readings of an ambiguous scenario's wire besides the oracle's: those of its
    catalogued INFO quirks and its ``reading:<name>`` tags, in that order."""
    if not recorded_only(scenario):
        return ()
    found = [reading for quirk in graded_quirks(scenario, "INFO") for reading in quirk.readings]
    found += [
        cast(AltReading, tag.removeprefix(READING_TAG_PREFIX))
        for tag in scenario.tags
        if tag.startswith(READING_TAG_PREFIX)
    ]
    return tuple(dict.fromkeys(found))


def unbounded_reading(scenario: Scenario) -> bool:
    """Whether an ambiguous scenario admits a reading the oracle cannot make, so that any
    outcome on its contested aspects is recorded: a quirk's (:attr:`Quirk.unbounded`), or
    that of a stream that names neither a quirk nor an aspect."""
    if not recorded_only(scenario):
        return False
    quirks = graded_quirks(scenario, "INFO")
    return any(quirk.unbounded for quirk in quirks) or not _names_its_ambiguity(scenario)


def _names_its_ambiguity(scenario: Scenario) -> bool:
    return bool(graded_quirks(scenario, "INFO")) or any(
        tag.startswith(CONTESTS_TAG_PREFIX) for tag in scenario.tags
    )


def quirk_ids(scenario: Scenario) -> tuple[str, ...]:
    """The quirk ids a scenario is tagged with (``quirk-A5`` → ``A5``), in tag order."""
    return tuple(
        tag.removeprefix(QUIRK_TAG_PREFIX) for tag in scenario.tags if tag.startswith("quirk-")
    )


def graded_quirks(scenario: Scenario, level: QuirkLevel) -> tuple[Quirk, ...]:
    """The catalogued quirks of ``scenario`` at ``level``."""
    found = (QUIRKS.get(quirk_id) for quirk_id in quirk_ids(scenario))
    return tuple(quirk for quirk in found if quirk is not None and quirk.level == level)


def with_quirks(scenario: Scenario, *quirk_ids: str) -> Scenario:
    """``scenario`` re-encoded by each quirk's transform in turn, tagged ``quirk-<ID>``.

    Raises KeyError for an id without a transform (see :data:`TRANSFORMS`).
    """
    for quirk_id in quirk_ids:
        scenario = TRANSFORMS[quirk_id](scenario)
        tag = QUIRK_TAG_PREFIX + quirk_id
        if tag not in scenario.tags:
            scenario = scenario.model_copy(update={"tags": (*scenario.tags, tag)})
    return scenario


_AZURE_FILTER_PREAMBLE: Chunk = {
    "choices": [],
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
        }
    ],
}


# Which wire entries make one call: the calls, their ids, and the arguments each gathers.
_GROUPING: frozenset[Aspect] = frozenset({"tool-calls", "ids", "arguments"})


def _catalogue(entries: Iterable[Quirk]) -> dict[str, Quirk]:
    return {quirk.id: quirk for quirk in entries}


QUIRKS: Mapping[str, Quirk] = _catalogue(
    [
        # A — identity fields on continuation deltas
        Quirk(
            "A1",
            "cont-id-null",
            "MUST",
            'continuations send "id": null (and name null)',
            _every_entry(later=_set(id=None, type="function", name=None)),
        ),
        Quirk(
            "A2",
            "cont-all-null",
            "MUST",
            "continuations send id, type and name as null",
            _every_entry(later=_all_null_continuation),
        ),
        Quirk(
            "A3",
            "cont-id-null-role-null",
            "MUST",
            "role: null on deltas, id: null on continuations",
            lambda s: _every_delta(_role_null)(_every_entry(later=_set(id=None))(s)),
        ),
        Quirk(
            "A4",
            "cont-nulls-everywhere",
            "MUST",
            "every absent optional delta field sent as null",
            _every_delta(_nulls_for_absent),
        ),
        Quirk(
            "A5",
            "cont-id-empty-string",
            "MUST",
            'continuations send "id": "" (DashScope)',
            _every_entry(later=_set(id="", type="function")),
        ),
        Quirk(
            "A6",
            "cont-name-empty-string",
            "MUST",
            'continuations send "name": ""',
            _every_entry(later=_set(name="")),
        ),
        Quirk(
            "A7",
            "cont-name-repeated",
            "MUST",
            "the full name is repeated on every delta",
            _every_entry(later=_repeat_name),
        ),
        Quirk(
            "A8",
            "cont-id-repeated-no-index",
            "INFO",
            "id/type/name repeated on every delta and no index",
            # No index, but one id on every entry: by position or by id, one call. Four
            # calls (an entry each) is no reading: an identical repeat is inert (T2).
        ),
        Quirk(
            "A9",
            "first-name-empty-then-real",
            "MUST",
            'the opening delta has name "", the name follows',
            _every_entry(first=_late("name", "")),
        ),
        Quirk(
            "A10",
            "first-name-null",
            "MUST",
            "the opening delta has name null, the name follows",
            _every_entry(first=_late("name", None)),
        ),
        Quirk(
            "A11",
            "function-null",
            "MUST",
            "a tool-call delta with function: null",
            _every_entry(first=_function_null_after),
        ),
        Quirk(
            "A12",
            "content-null-with-tools",
            "MUST",
            "content: null beside tool_calls",
            _every_delta(_content_null_with_tools),
        ),
        Quirk(
            "A13",
            "type-repeated",
            "MUST",
            '"type": "function" re-sent on every continuation',
            _every_entry(later=_set(type="function")),
        ),
        # B — missing or empty ids
        Quirk(
            "B1",
            "first-no-id",
            "MUST",
            "the opening delta has no id; it arrives later",
            _every_entry(first=_late("id", None, omit=True)),
        ),
        Quirk("B2", "id-missing-index-gt0", None, "parallel calls after the first never get an id"),
        Quirk("B3", "id-empty", None, 'a call whose only id is ""'),
        Quirk("B4", "cont-id-omitted", None, "the id only on the opening delta (canonical)"),
        Quirk("B5", "dup-ids", None, "two parallel calls share an id"),
        # C — index anomalies (all ambiguous: which entries make one call)
        # Each index the wire sends is a key only: the calls are the same whatever its
        # value (C3, C4; G4 judges the adapter's own block indexes), and a missing one is
        # the entry's place (C1), unless the readings below say otherwise.
        Quirk("C1", "index-omitted", "INFO", "tool-call entries without index"),
        Quirk(
            "C2",
            "index-reused-0",
            "INFO",
            "every parallel call uses index 0",
            # Another id and name at index 0 open another call, or index 0 is one call
            # (arguments joined, C3) keeping the first id and name (T1/T2) or the last (an
            # index-keyed client that assigns them); never concatenated (T2).
            contests=_GROUPING,
            readings=("index-only", "index-only-last-wins"),
        ),
        Quirk(
            "C3", "index-offset-block", "INFO", "the first call at index 1, a content-block index"
        ),
        Quirk("C4", "index-negative", "INFO", "the first call at index -1"),
        Quirk(
            "C5",
            "index-drift",
            "INFO",
            "continuations carry a drifting index without identity",
            # Read by index the fragments are unidentified calls (refused, T5); read as
            # continuations they complete the call: whether the attempt fails is open too.
            contests=_GROUPING | {"finish"},
            readings=("by-id",),
        ),
        Quirk(
            "C6",
            "same-call-multi-index",
            "INFO",
            "the same call (same id) at several indexes",
            # Two calls by index (sharing the id), or one by id.
            contests=_GROUPING,
            readings=("by-id",),
        ),
        Quirk(
            "C7",
            "dup-index-in-chunk",
            "INFO",
            "two entries with the same index in one chunk",
            # By index or by id, one call: the entries keep their order within the chunk.
        ),
        Quirk("C8", "index-zero-falsy", None, "canonical index 0 (breaks `not index` clients)"),
        # D — argument payload shapes
        Quirk(
            "D1", "args-empty-string", "MUST", 'a no-argument call: arguments "" and nothing more'
        ),
        Quirk(
            "D2",
            "args-null-first",
            "MUST",
            "the opening delta has arguments: null",
            _every_entry(first=_arguments_null_first),
        ),
        Quirk(
            "D3",
            "args-object",
            "INFO",
            "arguments streamed as a JSON object",
            # Not a string, so no fragment ("" by the letter, C3), or the object as JSON:
            # never "[object Object]".
            contests=frozenset({"arguments"}),
            readings=("arguments-object-as-json",),
        ),
        Quirk(
            "D4",
            "args-single-lump",
            "MUST",
            "the whole argument string in one delta",
            _steps(_arguments_in_one_lump),
        ),
        Quirk(
            "D5",
            "args-dup-final-flush",
            "INFO",
            "a final flush re-sends the full arguments",
            # Appended (C3's letter: {…}{…}) or a flush that replaces: {…}.
            contests=frozenset({"arguments"}),
            readings=("flush-replaces",),
        ),
        Quirk("D6", "args-char-dup", None, "characters duplicated at fragment boundaries"),
        Quirk("D7", "args-lost-multitoken", None, "arguments lost when a delta spans tokens"),
        Quirk(
            "D8",
            "markup-leak",
            "INFO",
            "a tool call leaks as text markup",
            # Text by the letter, a call if the markup is parsed; the wire's finish and
            # usage stand either way. The markup's grammar is the vendor's, not one the
            # oracle reads: a parse is unbounded.
            contests=_GROUPING | {"text"},
            unbounded=True,
        ),
        Quirk(
            "D9",
            "args-empty-delta",
            None,
            'an argument delta of "" opens the arguments',
            _every_entry(first=_empty_fragment_after),
        ),
        # E — parallel / interleaved calls
        Quirk(
            "E1",
            "interleaved-fragments",
            "MUST",
            "parallel calls' fragments interleave",
            _steps(_interleaved),
        ),
        Quirk(
            "E2",
            "parallel-each-own-chunk-no-index",
            "INFO",
            "Gemini 3: each parallel call in its own chunk, unique id, no index",
            # By place or by id, two calls: no index joins them, so merging them is no
            # reading.
        ),
        Quirk(
            "E3",
            "parallel-first-args-empty",
            None,
            "all but the last parallel call get empty arguments",
        ),
        Quirk(
            "E4",
            "parser-chunk-variance",
            None,
            "the whole message in one delta",
            _steps(_texts_coalesced),
        ),
        # F — finish_reason anomalies
        Quirk("F1", "stop-with-tools", "MUST", "tool calls, then finish_reason stop"),
        Quirk("F2", "double-finish", "MUST", "tool_calls finish, then an extra stop finish"),
        Quirk(
            "F3",
            "finish-separate-chunk",
            "MUST",
            "the finish in a content-less chunk of its own",
            _steps(_finish_split),
        ),
        Quirk(
            "F4",
            "finish-empty-string",
            "MUST",
            'finish_reason "" on every non-final chunk',
            _steps(_finish_empty_string),
        ),
        Quirk("F5", "no-finish-then-close", "MUST", "tool-call chunks, then the stream closes"),
        Quirk("F6", "tool-calls-finish-empty-list", "MUST", "finish tool_calls with no call"),
        Quirk("F7", "filter-as-stop", "MUST", "content filtered mid-stream, finish stop"),
        # G — empty completions
        Quirk("G1", "empty-stop", "MUST", "role delta, empty delta with stop, [DONE]"),
        Quirk("G2", "empty-stop-after-tool", "MUST", "finish stop with nothing at all, no usage"),
        Quirk("G3", "billed-empty-stop", "MUST", "empty stop whose usage bills output tokens"),
        Quirk("G4", "unreported-empty-stop", "MUST", "empty stop and no usage"),
        Quirk("G5", "empty-content-anthropic", "MUST", "stop with an empty content array"),
        # H — choices / usage chunk shapes
        Quirk(
            "H1",
            "usage-only-empty-choices",
            "MUST",
            "usage in a trailing choices: [] chunk",
            _steps(_usage_trailing),
        ),
        Quirk(
            "H2",
            "usage-choices-missing",
            "MUST",
            "the usage chunk has no choices key",
            _steps(_usage_without_choices),
        ),
        Quirk(
            "H3",
            "empty-choices-preamble",
            "MUST",
            "a first chunk with choices: [] (Azure filter)",
            _insert_chunk(_AZURE_FILTER_PREAMBLE, first=True),
        ),
        Quirk(
            "H4",
            "empty-choices-ping",
            "MUST",
            "a choices: [] chunk mid-stream",
            _insert_chunk({"choices": []}, first=False),
        ),
        Quirk(
            "H5",
            "usage-every-chunk",
            "MUST",
            "cumulative usage on every chunk",
            _steps(_usage_on_every_chunk),
        ),
        Quirk(
            "H6",
            "chunk-id-varies",
            "MUST",
            "a different response id on every chunk",
            _steps(_chunk_ids_vary),
        ),
        # I — SSE framing and encoding
        Quirk(
            "I1",
            "comment-keepalive",
            "MUST",
            "comment lines before and between events",
            _steps(_between_events(_keepalive)),
        ),
        Quirk(
            "I2",
            "comment-rewrapped-as-data",
            "MUST",
            # Skipped or refused as MALFORMED_RESPONSE, both readings pass (S6): no transform,
            # since the generators may only apply encodings that keep the meaning.
            "data: : OPENROUTER PROCESSING",
        ),
        Quirk(
            "I3",
            "comment-blank-after-id",
            "MUST",
            "id: lines, then : ping comments",
            _steps(_between_events(_ids_and_pings)),
        ),
        Quirk(
            "I4", "data-no-space", "MUST", "data:{…} without a space", _framing(data_space=False)
        ),
        Quirk(
            "I5",
            "event-split-tcp",
            "MUST",
            "events split across network writes",
            _framing(split={"mode": "fixed", "size": 7}),
        ),
        Quirk(
            "I6",
            "utf8-split",
            "MUST",
            "one byte per write, inside multi-byte characters",
            _framing(split={"mode": "byte"}),
        ),
        Quirk("I7", "crlf-bare-cr", "MUST", "CRLF line endings", _framing(line_ending="crlf")),
        Quirk("I8", "no-done", None, "the stream closes after content without [DONE]"),
        Quirk("I9", "non-json-data", None, "a plain-text data line, stream left open"),
        # J — mid-stream errors, disconnects and stalls (judged by S7, H3, H4)
        Quirk("J1", "error-object-in-stream", None, 'HTTP 200, then data: {"error": …}'),
        Quirk("J2", "error-in-chunk-envelope", None, "a chunk with choices: [] and an error"),
        Quirk("J3", "typed-error-event", None, "event: error with an error payload"),
        Quirk("J4", "done-after-failure", None, "only data: [DONE] after an upstream failure"),
        Quirk("J5", "disconnect-incomplete-chunked", None, "TCP close mid-body"),
        Quirk("J6", "silent-stall", None, "chunks stop, the connection stays open"),
        # K — retry-after-partial-stream hazards (judged by R7, R8)
        Quirk("K1", "retry-replays-prefix", None, "a retry after a partial stream replays it"),
        Quirk("K2", "retry-phantom-tool", None, "a retry keeps the failed attempt's tool call"),
        Quirk("K3", "retry-dup-tokens", None, "a stream retry re-publishes emitted tokens"),
        Quirk("K5", "length-retry-dup", None, "a retry after length duplicates the answer"),
        # L — reasoning and other vendor fields
        Quirk("L1", "reasoning-echo", None, "reasoning_content beside tool calls"),
        Quirk("L2", "stray-think-tag", None, "a stray </think> at the start of content"),
        Quirk("L3", "vendor-field", None, "a non-standard field beside empty deltas"),
        Quirk(
            "L4",
            "empty-first-chunk",
            "MUST",
            'an empty first chunk (content "", tool_calls [])',
            _insert_chunk(
                _delta_chunk({"role": "assistant", "content": "", "tool_calls": []}), first=True
            ),
        ),
    ]
)

TRANSFORMS: Mapping[str, Transform] = {
    quirk.id: quirk.transform for quirk in QUIRKS.values() if quirk.transform is not None
}
"""Quirk id → meaning-preserving transform: the oracle's outcome is unchanged by it."""
