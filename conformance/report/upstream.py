"""Why each library fails the interop contract, in its maintainers' terms: the to-do list.

Knowledge, not measurement: every :class:`KnownCause` is written by hand after reading the
failing cases' events and the library's code. It names the matrix columns it holds for,
the fixtures that show it, one line saying what the library does wrong, and the upstream
issue or pull request that tracks it when one was found in the project's public tracker
(left empty otherwise: a link is never guessed). ``reports/compatibility.md`` groups each
column's interop failures by these causes; a failure no entry names is still listed, as
"cause not yet written", so nothing hides. A cause whose cases no longer fail is listed as
not reproduced, so a fixed bug shows and its entry can go.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownCause:
    libraries: tuple[str, ...]  # matrix columns (conformance.adapters.thirdparty.SHIMS)
    cases: tuple[str, ...]  # fixture ids of the bundled corpus that show it
    cause: str  # one line: what the library does wrong
    upstream: str = ""  # the issue or pull request that tracks it, if one was found

    @property
    def upstream_label(self) -> str:
        """``owner/repo#123`` for a GitHub issue or pull request link."""
        owner, repo, _, number = self.upstream.removeprefix("https://github.com/").split("/")
        return f"{owner}/{repo}#{number}"


@dataclass(frozen=True)
class ToDo:
    """One line of a library's to-do: a cause and the failing cases that show it."""

    cases: tuple[str, ...]
    cause: KnownCause | None  # None: not written yet
    lost: str  # what the caller lost in the first case, as the page measures it

    @property
    def upstream(self) -> str:
        return "" if self.cause is None else self.cause.upstream


def to_do(library: str, failures: Sequence[tuple[str, str]]) -> list[ToDo]:
    """``failures`` — (case, what the caller lost), in run order — grouped by written cause,
    the causes behind most cases first; then one line per failure without a cause."""
    grouped: dict[KnownCause, list[tuple[str, str]]] = {}
    unwritten: list[ToDo] = []
    for case, lost in failures:
        known = cause_of(library, case)
        if known is None:
            unwritten.append(ToDo((case,), None, lost))
        else:
            grouped.setdefault(known, []).append((case, lost))
    written = [
        ToDo(tuple(case for case, _ in shown), known, shown[0][1])
        for known, shown in grouped.items()
    ]
    return sorted(written, key=lambda item: -len(item.cases)) + unwritten


def not_reproduced(
    library: str, failing: Collection[str], ran: Collection[str]
) -> list[KnownCause]:
    """The causes written for ``library`` some of whose cases ran and none failed: fixed,
    or written for behaviour the library no longer has."""
    return [
        known
        for known in KNOWN_CAUSES
        if library in known.libraries
        and any(case in ran for case in known.cases)
        and not any(case in failing for case in known.cases)
    ]


def cause_of(library: str, case: str) -> KnownCause | None:
    return _BY_FAILURE.get((library, case))


_SDK_COLUMNS = (
    *("openai", "langchain", "litellm-openai", "pydantic-ai", "llama-index"),
    *("openai-agents", "autogen-ext", "haystack", "smolagents", "mirascope"),
)
_LITELLM = ("litellm-openai", "litellm-hosted-vllm")
_TRUNCATION = ("truncated-no-finish-no-done", "nim-no-finish-then-close", "no-retry-partial-eof")
_NO_CHOICES = (
    *("chunk-without-choices-mid-stream", "usage-choices-null"),
    *("ping-event-json", "no-choices-then-done"),
)
_NO_INDEX = ("ollama-index-omitted", "gemini-parallel-no-index", "mock-identity-repeated-no-index")
_EMPTY_ARGUMENTS = ("no-arg-call-empty-arguments", "llamacpp-parallel-first-args-empty")
# Finishes that a library exposing no finish_reason turns into a plain stop.
_HIDDEN_FINISHES = (
    *("tool-calls-finish-without-calls", "finish-length-partial-text", "content-filter-finish"),
)

KNOWN_CAUSES: tuple[KnownCause, ...] = (
    # --- shared by several columns -------------------------------------------------------
    KnownCause(
        _SDK_COLUMNS,
        ("retry-field-only-event", "sse-id-then-ping"),
        "openai-python's SSE decoder dispatches an event with no data (a `retry:`-only event, "
        'a comment after an `id:` line) and `json.loads("")` kills the stream',
        "https://github.com/openai/openai-python/issues/2722",
    ),
    KnownCause(
        ("openai", "langchain", "llama-index", "haystack", "langchain-js"),
        _TRUNCATION,
        "a body that ends with no finish_reason and no `[DONE]` returns normally: the partial "
        "answer, no finish reason, nothing raised",
    ),
    KnownCause(
        ("llama-index", "autogen-ext", "haystack"),
        _NO_CHOICES,
        "calls `len(chunk.choices)` without a None check: a chunk with no `choices` (or "
        "`choices: null`, as on a usage chunk) raises TypeError",
    ),
    KnownCause(
        ("openai-agents", "autogen-ext", "haystack", "smolagents", "mirascope"),
        ("minimax-arguments-object",),
        "joins argument fragments with `+=`: `arguments` sent as a JSON object raises TypeError",
    ),
    KnownCause(
        ("openai-node", "langchain-js"),
        ("retry-stall-then-text", "stall-mid-reasoning"),
        "openai-node's `timeout` covers the request only until the response headers: a body "
        "that stalls mid-stream hangs with no error",
        "https://github.com/openai/openai-node/issues/1825",
    ),
    KnownCause(
        _LITELLM,
        _EMPTY_ARGUMENTS,
        'stream_chunk_builder writes `{}` for a call whose streamed arguments are `""`: an '
        "empty-arguments call becomes a valid no-argument call",
    ),
    KnownCause(
        _LITELLM,
        ("retry-reset-before-headers-then-text",),
        "reports a connection reset before any response byte as InternalServerError, a 500 "
        "the server never sent",
    ),
    KnownCause(
        ("openai-agents", "smolagents"),
        (*_TRUNCATION, *_HIDDEN_FINISHES),
        "exposes no finish_reason: a `length` or `content_filter` cut, an empty `tool_calls` "
        "turn and a stream that closed early all look like a normal end",
    ),
    # --- openai-python ChatCompletionStreamState -------------------------------------------
    KnownCause(
        ("openai",),
        (
            *("continuation-type-null", "kimi-nulls-everywhere"),
            *("tool-cont-null-id-name", "glm-arguments-final-flush"),
        ),
        "accumulate_delta assigns `type` from every tool-call delta, so one with `type: null` "
        'fails `assert tool.type == "function"`',
    ),
    KnownCause(
        ("openai",),
        ("tool-function-null",),
        "asserts that every tool-call delta carries `function`: an entry with `function: null` "
        "fails the assertion",
    ),
    KnownCause(
        ("openai",),
        ("chunk-without-choices-mid-stream", "usage-choices-null"),
        "_accumulate_chunk iterates `chunk.choices` without a None check: a chunk with no "
        "`choices` (or `choices: null`) raises TypeError after the answer arrived",
    ),
    KnownCause(
        ("openai",),
        ("ping-event-json", "no-choices-then-done"),
        "builds its snapshot from the first chunk's `choices` key: a first chunk without one "
        "(a ping, a bare envelope) raises KeyError",
    ),
    KnownCause(
        ("openai",),
        _NO_INDEX,
        "addresses tool calls by `index` alone: a tool-call delta without `index` raises "
        "TypeError (list indices must be integers)",
        "https://github.com/openai/openai-python/issues/2806",
    ),
    KnownCause(
        ("openai",),
        ("bedrock-index-offset",),
        "stores tool calls by list position: a first call at `index: 1` lands at position 0 "
        "and the later `tool_calls[1]` raises IndexError",
    ),
    KnownCause(
        ("openai",),
        ("continuation-id-repeated", "llamacpp-identity-repeated", "tool-name-repeated"),
        "accumulate_delta concatenates every string field: an `id` or `name` repeated on each "
        "delta is doubled (`call_1call_1…`)",
    ),
    # --- langchain-openai / langchain-core -----------------------------------------------
    KnownCause(
        ("langchain",),
        ("minimax-arguments-object", "minimax-continuation-id-number"),
        "copies the raw delta into `tool_call_chunks`: an object `arguments` or a numeric `id` "
        "fails pydantic validation and kills the stream",
    ),
    KnownCause(
        ("langchain",),
        ("tool-function-null",),
        "calls `.get` on a tool-call delta's `function` without a None check: "
        "`function: null` raises AttributeError",
    ),
    KnownCause(
        ("langchain",),
        ("double-finish-tool-calls-then-stop",),
        "adding chunks concatenates `response_metadata.finish_reason`: `tool_calls` then "
        "`stop` becomes `tool_callsstop`",
        "https://github.com/langchain-ai/langchain/issues/38366",
    ),
    KnownCause(
        ("langchain",),
        ("llamacpp-identity-repeated", "tool-name-repeated"),
        "merge_dicts concatenates a tool-call `name` repeated on every delta (only an equal "
        "`id` is kept once)",
        "https://github.com/langchain-ai/langchain/issues/40041",
    ),
    KnownCause(
        ("langchain",),
        ("usage-every-chunk",),
        "adding chunks sums `usage_metadata`: usage a provider sends cumulatively on every "
        "chunk is inflated",
        "https://github.com/langchain-ai/langchain/issues/30429",
    ),
    # --- litellm -------------------------------------------------------------------------
    KnownCause(
        ("litellm-openai",),
        (
            *("comment-rewrapped-as-data", "no-retry-malformed-json"),
            *("invalid-json-payload", "non-json-text-then-stall"),
        ),
        "wraps the JSONDecodeError of a payload that is not JSON in MidStreamFallbackError: a "
        "malformed response is reported as a transient connection failure",
    ),
    KnownCause(
        ("litellm-openai",),
        ("minimax-continuation-id-number",),
        'drops the argument deltas of a continuation whose `id` is a number (`"id": 0`): the '
        "call comes back with `{}`",
    ),
    KnownCause(
        ("litellm-hosted-vllm",),
        ("minimax-continuation-id-number", "tool-function-null"),
        "its chunk parser validates each tool-call delta: a numeric `id` or `function: null` "
        "fails the whole stream (MidStreamFallbackError)",
    ),
    KnownCause(
        ("litellm-hosted-vllm",),
        ("event-over-two-data-lines",),
        "its SSE line parser decodes each `data:` line alone: an event split over two lines "
        "is silently dropped",
    ),
    KnownCause(
        ("litellm-hosted-vllm",),
        ("no-retry-malformed-json", "invalid-json-payload", "non-json-text-then-stall"),
        "its SSE line parser silently skips a payload that is not JSON: a corrupt stream "
        "comes back as a success, or hangs to a timeout if the server then stalls",
    ),
    KnownCause(
        ("litellm-hosted-vllm",),
        ("data-after-done",),
        "keeps reading after `data: [DONE]` and appends what follows to the answer",
    ),
    # --- pydantic-ai ---------------------------------------------------------------------
    KnownCause(
        ("pydantic-ai",),
        _TRUNCATION,
        "synthesises finish_reason `stop` when the stream closes without one: a truncated "
        "answer looks complete",
        "https://github.com/pydantic/pydantic-ai/issues/6610",
    ),
    KnownCause(
        ("pydantic-ai",),
        ("llamacpp-identity-repeated", "tool-name-repeated"),
        "appends every `name` delta to the tool name: a name repeated on each delta is doubled",
        "https://github.com/ggml-org/llama.cpp/issues/13774",
    ),
    KnownCause(
        ("pydantic-ai",),
        ("usage-every-chunk",),
        "adds the usage of every chunk unless `openai_continuous_usage_stats` is set: "
        "cumulative usage is inflated",
        "https://github.com/pydantic/pydantic-ai/pull/4056",
    ),
    # --- llama-index ---------------------------------------------------------------------
    KnownCause(
        ("llama-index",),
        ("continuation-id-repeated", "llamacpp-identity-repeated", "tool-name-repeated"),
        "update_tool_calls concatenates `id` and `name` like the arguments: a repeated "
        "identity is doubled",
    ),
    KnownCause(
        ("llama-index",),
        (
            *("tool-parallel-oneshot", "tool-parallel-interleaved"),
            *("parallel-openings-then-fragments", "parallel-second-id-after-fragment"),
        ),
        "update_tool_calls reads only `tool_calls[0]` of a delta and appends to the last call: "
        "a second call in the same delta is lost, interleaved fragments are misrouted",
    ),
    KnownCause(
        ("llama-index",),
        ("tool-function-null",),
        "update_tool_calls asserts every tool-call delta has `function`: `function: null` "
        "fails the assertion",
    ),
    KnownCause(
        ("llama-index",),
        ("reasoning-only-stop", "usage-trailing-cached-reasoning"),
        "its token counts keep prompt, completion and total only: cached tokens "
        "(`prompt_tokens_details.cached_tokens`) are dropped",
    ),
    # --- openai-agents -------------------------------------------------------------------
    KnownCause(
        ("openai-agents",),
        ("length-no-content",),
        "raises ModelBehaviorError, an uncoded exception, for a `length` finish with no "
        "output: the empty max-tokens turn is lost",
        "https://github.com/openai/openai-agents-python/pull/4513",
    ),
    # --- autogen-ext ---------------------------------------------------------------------
    KnownCause(
        ("autogen-ext",),
        (
            *("continuation-id-repeated", "llamacpp-identity-repeated"),
            *("tool-name-repeated", "minimax-continuation-id-number"),
        ),
        "create_stream concatenates `id` and `name` on every delta: a repeated identity is "
        "doubled and a numeric `id` raises TypeError",
    ),
    KnownCause(
        ("autogen-ext",),
        (
            *("usage-on-finish-chunk", "usage-every-chunk"),
            *("cr-done-final-bare-cr", "reasoning-only-stop"),
        ),
        "ignores a finish_reason that arrives on a chunk carrying usage and reports `unknown`",
        "https://github.com/microsoft/autogen/issues/4875",
    ),
    KnownCause(
        ("autogen-ext",),
        ("ollama-finish-empty-string",),
        'keeps the first finish_reason that is not null: an early `""` hides the real one, '
        "reported as `unknown`",
    ),
    KnownCause(
        ("autogen-ext",),
        (*_TRUNCATION, "last-event-unterminated"),
        "reports finish_reason `unknown` for a stream that closed without one, where the "
        "truncation should raise",
    ),
    KnownCause(
        ("autogen-ext",),
        ("content-and-tool-same-chunk",),
        "skips the tool calls of a delta that also carries content: the call is lost",
    ),
    KnownCause(
        ("autogen-ext",),
        ("deepseek-reasoning-then-tool",),
        "discards the reasoning of a turn that ends in tool calls",
    ),
    KnownCause(
        ("autogen-ext",),
        ("reasoning-exact-text",),
        "removes the think tags with lstrip/rstrip, which strip characters, not a prefix: "
        "`think: the kitten` becomes `: the kitte`",
        "https://github.com/microsoft/autogen/pull/7364",
    ),
    KnownCause(
        ("autogen-ext",),
        ("usage-trailing-cached-reasoning",),
        "its RequestUsage holds prompt and completion tokens only: cached tokens are dropped",
    ),
    # --- haystack ------------------------------------------------------------------------
    KnownCause(
        ("haystack",),
        ("glm-arguments-final-flush", "tool-arguments-invalid-json"),
        "drops a call whose joined arguments are not valid JSON, with a log warning only",
    ),
    KnownCause(
        ("haystack",),
        _EMPTY_ARGUMENTS,
        'keeps arguments parsed as a dict: `""` comes back as `{}` and the raw string is gone',
    ),
    KnownCause(
        ("haystack",),
        (
            "dashscope-cont-id-empty-only",
            "minimax-continuation-id-number",
            "tool-cont-empty-id-name",
        ),
        'overwrites a call\'s id with any id that is not None on a later delta (`""`, `0`)',
    ),
    KnownCause(
        ("haystack",),
        ("llamacpp-identity-repeated", "tool-name-repeated"),
        "appends every `name` delta to the tool name: a name repeated on each delta is doubled",
    ),
    KnownCause(
        ("haystack",),
        _NO_INDEX,
        "StreamingChunk requires an `index` on a tool-call delta: one without raises ValueError",
    ),
    KnownCause(
        ("haystack",),
        ("content-and-tool-same-chunk",),
        "StreamingChunk refuses content and a tool call in one delta: ValueError",
        "https://github.com/deepset-ai/haystack/issues/12610",
    ),
    # --- smolagents ----------------------------------------------------------------------
    KnownCause(
        ("smolagents",),
        _NO_INDEX,
        "agglomerate_stream_deltas raises ValueError on a tool-call delta without `index`",
    ),
    KnownCause(
        ("smolagents",),
        ("length-no-content",),
        "exposes no finish_reason: a `length` turn with no output becomes an empty stop",
    ),
    KnownCause(
        ("smolagents",),
        ("reasoning-only-stop", "usage-trailing-cached-reasoning"),
        "its stream deltas carry no reasoning and its token usage no cached tokens: both are "
        "dropped",
    ),
    KnownCause(
        ("smolagents",),
        ("usage-every-chunk",),
        "agglomerate_stream_deltas sums the usage of every delta: cumulative usage is inflated",
        "https://github.com/huggingface/smolagents/issues/1488",
    ),
    # --- mirascope -----------------------------------------------------------------------
    KnownCause(
        ("mirascope",),
        _EMPTY_ARGUMENTS,
        'returns `{}` as the arguments of a call that streamed `""`',
    ),
    KnownCause(
        ("mirascope",),
        ("truncated-no-finish-no-done", "no-retry-partial-eof", "tool-calls-finish-without-calls"),
        "reads `stop`, `tool_calls` and a missing finish_reason alike as a normal end: a "
        "truncated stream looks complete",
    ),
    KnownCause(
        ("mirascope",),
        ("nim-no-finish-then-close",),
        "at a close with no finish_reason, drops the still-open tool call and reports a normal end",
    ),
    KnownCause(
        ("mirascope",),
        (
            *("nim-first-name-null", "vllm-first-name-empty", "tool-late-id"),
            *("lmstudio-id-changes-each-delta", "parallel-second-id-after-fragment"),
        ),
        "requires a non-empty id and name on the delta that opens a call: a late name or id "
        'raises RuntimeError "Missing name/id for tool call"',
    ),
    KnownCause(
        ("mirascope",),
        ("gemini-duplicate-ids", "localai-same-call-two-indexes"),
        "raises RuntimeError (conflicting id) when two tool-call indexes carry the same id",
    ),
    KnownCause(
        ("mirascope",),
        ("usage-every-chunk",),
        "adds the usage of every chunk: cumulative usage is inflated",
    ),
    KnownCause(
        ("mirascope",),
        ("text-after-tool-call",),
        "expects text only before a turn's tool calls: text after a call raises RuntimeError "
        '"Received text_chunk while not processing text" and the answer is lost',
    ),
    # --- openai-node ChatCompletionStream ------------------------------------------------
    KnownCause(
        ("openai-node",),
        _NO_CHOICES,
        "iterates `chunk.choices` with no null check: a chunk without `choices` (a ping, a bare "
        "envelope) or with `choices: null` (a usage chunk) throws `chunk.choices is not "
        "iterable`",
    ),
    KnownCause(
        ("openai-node",),
        (
            *("deepseek-reasoning-content", "deepseek-reasoning-then-tool"),
            *("reasoning-exact-text", "deepseek-keepalive-reasoning", "reasoning-only-stop"),
        ),
        "copies delta fields it does not know, `reasoning_content` among them, onto the message "
        "with Object.assign: each delta overwrites the last, and the answer's "
        "`reasoning_content: null` erases the reasoning",
    ),
    KnownCause(
        ("openai-node",),
        (*_NO_INDEX, "bedrock-index-negative"),
        "addresses tool calls by `index` alone and throws on a tool-call delta whose `index` is "
        "missing or negative (`invalid tool call index: undefined`, `-1`)",
    ),
    KnownCause(
        ("openai-node",),
        ("gateway-no-role", "openrouter-empty-stop-bare"),
        "finalChatCompletion requires a `role` on some delta: a stream that never sends one "
        "throws `missing role for choice 0`, even after a complete answer",
    ),
    KnownCause(
        ("openai-node",),
        ("bedrock-index-offset",),
        "stores each call at `tool_calls[index]`: a first call at `index: 1` leaves a hole at "
        "0, and normalizeToolCallIds reads `.id` of it (TypeError)",
    ),
    KnownCause(
        ("openai-node",),
        ("cerebras-index-drift",),
        'throws a bare Error ("tool call snapshot missing `type`") at the finish for a '
        "tool-call index whose deltas never carried `type`: argument fragments at drifting "
        "indexes crash the stream",
    ),
    # --- AI SDK (ai + @ai-sdk/openai-compatible) -----------------------------------------
    KnownCause(
        ("vercel-ai",),
        ("invalid-json-payload", "minimax-arguments-object", "minimax-continuation-id-number"),
        "drops a chunk that fails to parse or to validate (not JSON, an object `arguments`, a "
        "numeric `id`) with an error part only, and a later chunk's finish_reason overwrites "
        "the `error` finish: the turn ends as a success without that chunk",
    ),
    KnownCause(
        ("vercel-ai",),
        ("tool-late-id", "vllm-first-name-empty", "parallel-second-id-after-fragment"),
        "opens a call at the first delta with a name and, when that delta has no id, generates "
        'one: an id sent on a later delta, or beside a `""` name, is never reported',
    ),
    KnownCause(
        ("vercel-ai",),
        ("usage-choices-null",),
        "its chunk schema requires `choices` to be an array: the usage chunk's `choices: null` "
        "fails validation, the turn ends `error` (TypeValidationError) and the usage is lost",
        "https://github.com/vercel/ai/issues/7417",
    ),
    KnownCause(
        ("vercel-ai",),
        ("tool-name-fragmented",),
        "takes a second `name` at the same index for a new call: a name streamed in fragments "
        "(`get_`, `weather`) opens two calls, and the next argument fragment, ambiguous "
        "between them, is dropped",
    ),
    KnownCause(
        ("vercel-ai",),
        ("data-after-done",),
        "skips `data: [DONE]` and keeps reading: the text of chunks after it is appended and "
        "their usage replaces the real one",
    ),
    KnownCause(
        ("vercel-ai",),
        ("non-json-text-then-stall",),
        "an `error` part clears the first-chunk and chunk timeouts and nothing re-arms them: "
        "after a payload that is not JSON, a stalled connection hangs forever",
    ),
    # --- LangChain.js (@langchain/openai, @langchain/core) -------------------------------
    KnownCause(
        ("langchain-js",),
        ("gateway-no-role",),
        "turns a delta with no `role` (none ever came) into a ChatMessageChunk, not an "
        "AIMessageChunk: adding the chunks up drops the usage chunk's `usage_metadata`",
    ),
    KnownCause(
        ("langchain-js",),
        ("double-finish-tool-calls-then-stop",),
        "concat joins `response_metadata.finish_reason` strings: `tool_calls` then `stop` "
        "becomes `tool_callsstop`",
        "https://github.com/langchain-ai/langchainjs/issues/11054",
    ),
    KnownCause(
        ("langchain-js",),
        ("minimax-continuation-id-number",),
        "concat merges tool-call chunks at one index only when their ids are equal: a "
        "continuation whose `id` is the number 0 becomes a second call, with the arguments "
        "and no name",
    ),
)

_BY_FAILURE: dict[tuple[str, str], KnownCause] = {
    (library, case): known
    for known in KNOWN_CAUSES
    for library in known.libraries
    for case in known.cases
}
