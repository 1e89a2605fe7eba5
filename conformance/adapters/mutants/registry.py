"""The mutants, by name: at least one for every MUST invariant of families G, C, T, E, S, H, R.

A mutant's targets are the invariants whose checkers must catch its bug; the kill table
(`conformance.run.kill_table`) runs them and the tests hold every checker to it.
"""

from __future__ import annotations

from conformance.events import BlockEnd, Finish

from . import (
    anthropic as an,
    decoders,
    next_requests as nr,
    responses as rs,
    retries,
    rewrites,
    translators as tr,
    transport,
)
from .core import Mutant

_ALL = (
    # T — tool-call identity
    Mutant(
        "identity_any_defined",
        "A continuation's \"\" or null overwrites the call's id and name (harness pre-fix).",
        # The empty id it closes the call with (T6) is T1's root cause on every stream.
        ("T1",),
        translator=tr.IdentityOnAnyDefinedValue,
    ),
    Mutant(
        "identity_concatenated",
        "Repeated ids and names are concatenated like arguments.",
        ("T2",),
        translator=tr.IdentityConcatenated,
    ),
    Mutant(
        "args_to_last_call",
        "A delta without an id continues the last opened call, whatever its index.",
        ("T3",),
        translator=tr.ArgumentsToLastCall,
    ),
    Mutant(
        "late_identity_refused",
        "Only the opening delta's id and name are accepted.",
        ("T4",),
        translator=tr.LateIdentityRefused,
    ),
    Mutant(
        "unidentified_closed_empty",
        'A call without id or name at [DONE] is closed with "" and a success finish.',
        # The empty identity it closes (T6) is T5's root cause on every stream.
        ("T5",),
        translator=tr.UnidentifiedClosedEmpty,
    ),
    Mutant(
        "identity_from_last_delta",
        "Each delta's id and name replace the call's, absent ones as \"\": a canonical stream "
        'closes its calls with "" ids and names.',
        ("T6",),
        translator=tr.IdentityFromLastDelta,
    ),
    # E — empty completions
    Mutant(
        "empty_stop_succeeds",
        "A stop with no content block is a successful, blank reply.",
        ("E1",),
        translator=tr.EmptyStopSucceeds,
    ),
    Mutant(
        "reasoning_not_content",
        "A reasoning-only answer is EMPTY_RESPONSE.",
        ("E2",),
        translator=tr.ReasoningIsNotContent,
    ),
    Mutant(
        "whitespace_is_empty",
        "Whitespace-only text is EMPTY_RESPONSE.",
        ("E3",),
        translator=tr.WhitespaceIsEmpty,
    ),
    Mutant(
        "empty_length_is_empty_response",
        "length with no content block is EMPTY_RESPONSE instead of max-tokens.",
        ("E4",),
        translator=tr.EmptyLengthIsEmptyResponse,
    ),
    Mutant(
        "tool_call_not_content",
        "A stop whose only block is a tool call is EMPTY_RESPONSE.",
        ("E5",),
        translator=tr.ToolCallIsNotContent,
    ),
    # C — content, usage, finish
    Mutant(
        "null_content_as_none",
        'A null content is stringified: the text "None".',
        ("C1",),
        translator=tr.NullContentAsNone,
    ),
    Mutant(
        "reasoning_as_text",
        "reasoning_content is streamed into the answer text.",
        ("C2",),
        translator=tr.ReasoningAsText,
    ),
    Mutant(
        "arguments_reserialised",
        "Tool-call arguments are parsed and re-serialised (compact JSON).",
        ("C3",),
        translator=tr.ArgumentsReserialised,
    ),
    Mutant(
        "first_usage_wins",
        "The first usage object wins over later, final counts.",
        ("C4",),
        translator=tr.FirstUsageWins,
    ),
    Mutant(
        "cached_in_input",
        "input_tokens = prompt_tokens: cached tokens are counted twice.",
        ("C4",),
        translator=tr.CachedTokensInInput,
    ),
    Mutant(
        "length_as_stop",
        "finish_reason length is reported as stop.",
        ("C5",),
        translator=tr.LengthAsStop,
    ),
    # S — SSE framing
    Mutant(
        "lf_only_lines",
        "Lines are split on LF only; CR and CRLF streams never dispatch.",
        ("S1",),
        decoder=decoders.LineFeedOnly,
    ),
    Mutant(
        "utf8_decoded_per_read",
        "Each network read is UTF-8-decoded on its own; split characters become U+FFFD.",
        ("S2",),
        decoder=decoders.Utf8DecodedPerRead,
    ),
    Mutant(
        "partial_line_dropped",
        "Each network read is parsed as whole lines; an event split across reads is lost.",
        ("S2",),
        decoder=decoders.PartialLineDropped,
    ),
    Mutant(
        "data_needs_space",
        'Only "data: " with a space is data; "data:{...}" is dropped.',
        ("S3",),
        decoder=decoders.DataNeedsSpace,
    ),
    Mutant(
        "reads_past_done",
        "[DONE] is skipped and the body read to its end.",
        ("S4",),
        translator=tr.ReadsPastDone,
    ),
    Mutant(
        "eof_is_done",
        "The end of the body counts as [DONE]: a truncated stream succeeds.",
        ("S5",),
        translator=tr.EofIsDone,
    ),
    Mutant(
        "malformed_payload_skipped",
        "A payload that is not JSON is skipped silently.",
        ("S6",),
        translator=tr.MalformedPayloadSkipped,
    ),
    Mutant(
        "provider_error_ignored",
        'A mid-stream {"error": ...} payload is ignored (harness HEAD).',
        ("S7",),
        translator=tr.ProviderErrorIgnored,
    ),
    # H — HTTP and transport
    Mutant(
        "rate_limit_as_server",
        "HTTP 429 is mapped to SERVER.",
        ("H1",),
        attempt=transport.RateLimitAsServer,
    ),
    Mutant(
        "retry_after_ignored",
        "Retry-After is not read; the backoff alone decides the wait.",
        ("H2", "R6"),
        attempt=transport.RetryAfterIgnored,
    ),
    Mutant(
        "reset_as_stream_closed",
        "A reset or cut body is STREAM_CLOSED instead of TRANSPORT.",
        ("H3",),
        attempt=transport.ResetAsStreamClosed,
    ),
    Mutant(
        "no_idle_timeout",
        "No read timeout: a stalled body waits for the whole case's deadline.",
        ("H4",),
        attempt=transport.NoIdleTimeout,
    ),
    Mutant(
        "resend_on_http_error",
        "The HTTP client silently re-sends after an error status: two requests, one attempt.",
        ("H5",),
        attempt=transport.resend_on_http_error,
    ),
    # G — event grammar
    Mutant(
        "finish_twice",
        "A finish when the wire's finish_reason arrives and another at [DONE].",
        ("G1",),
        rewrite=rewrites.repeated(Finish),
    ),
    Mutant(
        "usage_twice",
        "Usage is yielded on arrival and again before the finish.",
        ("G2",),
        translator=tr.UsageTwice,
    ),
    Mutant(
        "delta_before_block_start",
        "A block's first delta is yielded before its block-start.",
        ("G3",),
        translator=tr.DeltaBeforeBlockStart,
    ),
    Mutant(
        "one_based_indexes",
        "Block indexes start at 1.",
        ("G4",),
        rewrite=rewrites.one_based_indexes,
    ),
    Mutant(
        "block_end_twice",
        "Every block is closed twice.",
        ("G5",),
        rewrite=rewrites.repeated(BlockEnd),
    ),
    Mutant(
        "finish_before_block_ends",
        "The finish is yielded before the block-ends, which the caller then never reads.",
        ("G6",),
        translator=tr.FinishBeforeBlockEnds,
    ),
    Mutant(
        "block_end_last_fragment",
        "A block-end carries only its last fragment.",
        ("G7",),
        translator=tr.BlockEndLastFragment,
    ),
    Mutant(
        "null_optional_fields",
        "Unset optional fields are sent as null.",
        ("G8",),
        rewrite=rewrites.nulls_written,
    ),
    # R — retry (ignoring Retry-After is retry_after_ignored, above)
    Mutant(
        "retries_any_code",
        "Every failure is retried, AUTH and INVALID_REQUEST included.",
        ("R1",),
        retry_layer=retries.retries_any_code,
    ),
    Mutant(
        "builtin_budget",
        "The case's max_retries is ignored for the adapter's own default of 5.",
        ("R2",),
        retry_layer=retries.builtin_budget,
    ),
    Mutant(
        "codes_merged",
        "The case's retryable_codes are added to the defaults: a removed code is still retried.",
        ("R3",),
        retry_layer=retries.codes_merged,
    ),
    Mutant(
        "malformed_tool_call_final",
        "MALFORMED_TOOL_CALL is never retried (the harness before the identity note).",
        ("R3",),
        retry_layer=retries.malformed_tool_call_final,
    ),
    Mutant(
        "no_backoff",
        "Retries at once: no backoff between attempts.",
        ("R5",),
        retry_layer=retries.no_backoff,
    ),
    Mutant(
        "retry_after_clamped",
        "A Retry-After above max_delay is clamped to it and retried instead of given up.",
        ("R6",),
        retry_layer=retries.retry_after_clamped,
    ),
    Mutant(
        "fresh_request_id",
        "Each attempt stamps a fresh request id into the body: a retry is another request.",
        ("R4",),
        attempt=retries.FreshRequestIdPerAttempt,
    ),
    Mutant(
        "replays_discarded_prefix",
        "The discarded attempt's text is shown again before the retry's (anchors K1).",
        ("R7",),
        retry_layer=retries.replays_discarded_prefix,
    ),
    Mutant(
        "keeps_phantom_call",
        "A tool call of the discarded attempt is kept and closed with the answer (anchors K2).",
        ("R7",),
        retry_layer=retries.keeps_phantom_call,
    ),
    Mutant(
        "exhausted_empty_succeeds",
        "When the budget runs out on EMPTY_RESPONSE, the empty reply is returned as a success.",
        ("R2",),
        retry_layer=retries.exhausted_empty_succeeds,
    ),
    Mutant(
        "drops_discarded_usage",
        "A retried attempt's usage is dropped with it: billing undercounts retries.",
        ("R9",),
        retry_layer=retries.drops_discarded_usage,
    ),
    # R — a retry policy of its own, declared in the hello, judged under interop
    Mutant(
        "hidden_retry_replays_prefix",
        "Retries out of the caller's sight, as a library does, but the discarded attempt's "
        "text stays in front of the answer.",
        ("R7",),
        retry_layer=retries.hidden_retry_replays_prefix,
        own_policy=True,
    ),
    Mutant(
        "declares_fewer_retries",
        "Declares one retry fewer than it makes (a library's default changed under its shim).",
        ("R2",),
        own_policy=True,
        misdeclared=retries.fewer_retries,
    ),
    Mutant(
        "declares_server_final",
        "Declares SERVER final, yet retries it (a shim that forgot the 5xx statuses).",
        ("R1",),
        own_policy=True,
        misdeclared=retries.server_final,
    ),
    Mutant(
        "declares_slower_backoff",
        "Declares a backoff of at least 0.5 s; it retries after 1 ms.",
        ("R5",),
        own_policy=True,
        misdeclared=retries.slower_backoff,
    ),
    Mutant(
        "declares_lower_retry_after_cap",
        "Declares it waits for Retry-After up to 0.5 s only, yet waits a longer one and retries.",
        ("R6",),
        own_policy=True,
        misdeclared=retries.lower_retry_after_cap,
    ),
    # Anthropic Messages: one mutant per MUST rule of the dialect, each a one-behaviour change
    # of the reference's Anthropic translator.
    Mutant(
        "an_delta_to_last_block",
        "A delta or stop for an index never started lands in the last opened block.",
        ("AN-G1",),
        anthropic_translator=an.DeltaToLastBlock,
    ),
    Mutant(
        "an_restart_reroutes",
        "A repeated content_block_start opens another block at its index: the two are kept.",
        ("AN-G2",),
        anthropic_translator=an.RestartReroutes,
    ),
    Mutant(
        "an_text_into_tool_block",
        "A text_delta is appended to whatever block its index names, a tool call included.",
        ("AN-G3",),
        anthropic_translator=an.TextIntoToolBlock,
    ),
    Mutant(
        "an_usage_summed",
        "message_delta's cumulative usage is added to message_start's.",
        ("C4",),
        anthropic_translator=an.UsageSummed,
    ),
    Mutant(
        "an_signature_dropped",
        "A thinking block's signature_delta is not kept: the next turn is refused.",
        ("AN-C2",),
        anthropic_translator=an.SignatureDropped,
    ),
    Mutant(
        "an_redacted_dropped",
        "A redacted_thinking block is skipped as an unknown type.",
        ("AN-C3",),
        anthropic_translator=an.RedactedDropped,
    ),
    Mutant(
        "an_error_event_as_success",
        "event: error ends the stream as if complete: the partial answer is a success.",
        ("AN-H2",),
        anthropic_translator=an.ErrorEventAsTruncatedSuccess,
    ),
    Mutant(
        "an_truncated_as_complete",
        "A body cut before message_stop is handed over as the complete message.",
        ("AN-G4",),
        anthropic_translator=an.TruncatedAsComplete,
    ),
    Mutant(
        "an_pause_turn_as_stop",
        "pause_turn is a plain stop: the caller never continues the turn.",
        ("C5",),
        anthropic_translator=an.PauseTurnAsStop,
    ),
    Mutant(
        "an_refusal_as_stop",
        "refusal is a plain stop.",
        ("C5",),
        anthropic_translator=an.RefusalAsStop,
    ),
    Mutant(
        "an_truncated_call_callable",
        "max_tokens inside a tool block is read as a tool call to run (finish tool-calls).",
        ("C5",),
        anthropic_translator=an.TruncatedCallCallable,
    ),
    Mutant(
        "an_server_tool_as_client_call",
        "server_tool_use is reported as a client tool call.",
        ("AN-T5",),
        anthropic_translator=an.ServerToolAsClientCall,
    ),
    Mutant(
        "an_reads_past_message_stop",
        "Events after message_stop are applied; the body is read to its end.",
        ("AN-G5",),
        anthropic_translator=an.ReadsPastMessageStop,
    ),
    Mutant(
        "an_empty_partial_json_resets",
        'A call whose partial_json deltas are all "" gets {}, not its start\'s input (TS SDK).',
        ("C3",),
        anthropic_translator=an.EmptyPartialJsonResets,
    ),
    Mutant(
        "an_unknown_block_shifts",
        "A block of an unknown type becomes an empty text block: later indexes shift.",
        ("AN-G7",),
        anthropic_translator=an.UnknownBlockShifts,
    ),
    Mutant(
        "an_data_only_dropped",
        "Events are dispatched by their event: name; data-only events are dropped (both SDKs).",
        ("AN-S2",),
        anthropic_translator=an.DataOnlyEventsDropped,
    ),
    # OpenAI Responses: one mutant per behaviour the real clients get wrong (reference
    # dialects.md §3.7, §4.G), each a one-rule change of the reference's Responses translator.
    Mutant(
        "rs_trusts_terminal_snapshot",
        "response.completed with output: [] after good deltas is an empty answer (both SDKs).",
        ("RS-C6",),
        responses_translator=rs.TrustsTerminalSnapshot,
    ),
    Mutant(
        "rs_routes_by_item_id",
        "An event whose item_id is not its item's id is refused (openai-node, Copilot ids).",
        ("RS-G3",),
        responses_translator=rs.RoutesByItemId,
    ),
    Mutant(
        "rs_flat_error_swallowed",
        "An error event in the documented flat shape is not raised (openai-python).",
        ("RS-H1",),
        responses_translator=rs.FlatErrorSwallowed,
    ),
    Mutant(
        "rs_incomplete_usage_lost",
        "response.incomplete is read for its reason only: its usage is lost.",
        ("C4",),
        responses_translator=rs.IncompleteUsageLost,
    ),
    Mutant(
        "rs_item_id_as_call_id",
        "The item id (fc_...) is reported as the tool-call id, not call_id.",
        ("RS-T2",),
        responses_translator=rs.ItemIdAsCallId,
    ),
    Mutant(
        "rs_reads_past_terminal",
        "Events after the terminal event are applied; the last terminal counts.",
        ("RS-G1",),
        responses_translator=rs.ReadsPastTerminal,
    ),
    Mutant(
        "rs_eof_as_complete",
        "A body cut before a terminal event is the complete response (openai-node).",
        ("RS-G5",),
        responses_translator=rs.EofAsComplete,
    ),
    Mutant(
        "rs_encrypted_content_dropped",
        "A reasoning item's encrypted_content is not kept: the next turn is refused.",
        ("RS-C2",),
        responses_translator=rs.EncryptedContentDropped,
    ),
    Mutant(
        "rs_name_from_deltas_only",
        'A call\'s name is assembled from its deltas, which carry none: tool "" not found.',
        # T1 judges a later event's "" or null; a name never given is closed "" (T6).
        ("T6",),
        responses_translator=rs.NameFromDeltasOnly,
    ),
    Mutant(
        "rs_incomplete_as_stop",
        "response.incomplete ends the turn as a plain stop.",
        ("C5",),
        responses_translator=rs.IncompleteAsStop,
    ),
    # N, AN-R, RS-R — the next request of a two-turn case
    Mutant(
        "signature_dropped_on_replay",
        "Thinking blocks are sent back without their signature: the next turn is refused.",
        ("AN-R2",),
        next_request=nr.signature_dropped_on_replay,
    ),
    Mutant(
        "item_id_as_call_id",
        "A Responses call is sent back under its item id for its call_id: its output "
        "answers nothing.",
        ("N1",),
        next_request=nr.item_id_as_call_id,
    ),
    Mutant(
        "calls_replayed_twice",
        "The replayed turn carries each tool call twice: the provider refuses duplicate ids.",
        ("N2",),
        next_request=nr.calls_replayed_twice,
    ),
    Mutant(
        "encrypted_content_dropped_on_replay",
        "Reasoning items are sent back by id alone: under store false they are not found.",
        ("RS-R2",),
        next_request=nr.encrypted_content_dropped_on_replay,
    ),
)

MUTANTS: dict[str, Mutant] = {mutant.name: mutant for mutant in _ALL}
