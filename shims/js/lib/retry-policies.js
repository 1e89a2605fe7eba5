// The retry layer each library runs by default, as its shim declares it in the hello
// (protocol `retry_policy`) when the run keeps the library's retries (`--native-retry`):
// the shape of conformance/adapters/thirdparty/retry_policies.py (seconds, statuses as
// numbers or a class like "5xx", canonical codes), read from the versions package-lock.json
// pins. Paths are under node_modules/.

/** openai-node 7.59's loop (openai/client.mjs):
 * - 1503-1505 `_OpenAI_normalizeRetries`: maxRetries defaults to 2;
 * - 1118-1138 `shouldRetry`: `x-should-retry: true|false` decides, else 408, 409, 429, >= 500;
 * - 876-897: a connection error or a timeout before the response (its timeout stops at the
 *   headers) is retried; the loop ends with the headers, so nothing in a streamed body is;
 * - 1140-1170 `retryRequest`: `retry-after-ms`, then `retry-after` (seconds or an HTTP date),
 *   waited exactly up to 60 s; above that (or unreadable) its own backoff, not a refusal.
 *   Not declarable: a `retry-after: 0` is waited too (no wait at all), where a policy reads
 *   only a positive delay and expects the backoff;
 * - 1195-1202: min(0.5 * 2**n, 8) * (1 - 0.25 * random()) s, n the retries made: 0.375-8 s. */
export const OPENAI_NODE = Object.freeze({
  max_retries: 2,
  statuses: [408, 409, 429, '5xx'],
  codes: ['TRANSPORT', 'TIMEOUT'],
  mid_stream: false,
  backoff_min_s: 0.375,
  backoff_max_s: 8.0,
  retry_after: ['retry-after-ms', 'retry-after'],
  retry_after_max_s: 60.0,
  over_cap: 'backoff',
  should_retry_header: true,
});

/** The AI SDK 7.0.173's `streamText` retries (ai/dist/index.js unless named):
 * - 2450-2470 `prepareRetries`: maxRetries defaults to 2; 2429: initial delay 2 s, factor 2,
 *   no jitter (@ai-sdk/provider-utils/dist/index.js:3792-3827): it waits 2 s, then 4 s;
 * - @ai-sdk/provider/dist/index.js:70: an APICallError is retryable on 408, 409, 429, >= 500
 *   (@ai-sdk/openai-compatible passes no rule of its own); no `x-should-retry` anywhere;
 * - provider-utils 591-624 `handleFetchError`: a failed connection is a retryable
 *   APICallError; 3796: an abort is never retried, and the shim's timeout (`timeout.firstChunkMs`)
 *   is an abort, so TIMEOUT is not;
 * - 2406-2422 `getRetryDelayInMs`: `retry-after-ms`, then `retry-after` (seconds or a date),
 *   waited when under 60 s, else the backoff. Declared as 60 s, inclusive: only a wait of
 *   exactly 60 s differs (the SDK backs off). Not declarable, as openai-node: a zero wait
 *   is honoured (a retry at once);
 * - 10066-10075: `streamRetries` defaults to 0: nothing after the stream began is retried. */
export const VERCEL_AI = Object.freeze({
  max_retries: 2,
  statuses: [408, 409, 429, '5xx'],
  codes: ['TRANSPORT'],
  mid_stream: false,
  backoff_min_s: 2.0,
  backoff_max_s: 4.0,
  retry_after: ['retry-after-ms', 'retry-after'],
  retry_after_max_s: 60.0,
  over_cap: 'backoff',
  should_retry_header: false,
});

// @langchain/core/dist/utils/async_caller.js:12-23 STATUS_NO_RETRY.
const LANGCHAIN_NO_RETRY = new Set([400, 401, 402, 403, 404, 405, 406, 407, 409, 413]);

/** LangChain.js: ChatOpenAI (@langchain/openai 1.6) builds its openai client with
 * `maxRetries: 0` (dist/chat_models/base.js:318-324) and retries in @langchain/core 1.4's
 * AsyncCaller around `chat.completions.create` (dist/chat_models/completions.js:262-272, the streamed call's too: 167), so
 * that layer is the one declared. In @langchain/core/dist/utils/:
 * - async_caller.js:182: 6 retries by default; p-retry/index.js:29-35 with minTimeout 1 s,
 *   factor 2, randomize: round((1 + random()) * 2**n) s, n the retries made: 1 s to 64 s;
 * - async_caller.js:133-165 `defaultFailedAttemptHandler`: every status but 400-407, 409 and
 *   413 is retried, and every error without one (a connection error; openai-node's timeout,
 *   renamed TimeoutError by @langchain/openai dist/utils/client.js:13-16); `x-should-retry`
 *   is not read; the create call returns at the headers, so a streamed body is not retried.
 * What no policy can say: a 429 is retried only when its `retry-after` (or its message's
 * "try again in N s") asks for at most 60 s (async_caller.js:99-131), and then after
 * max(backoff, that wait) (p-retry/index.js:67-69), never the wait exactly; a headerless 429,
 * or one that asks for more, is not retried. 429 is declared retried, as it is whenever the
 * provider says when to come back (a 429 that asked for a short wait and got no retry then
 * shows as R1: the caller lost an answer it could have had), the Retry-After headers not
 * read, and the waits within the backoff's bounds. */
export const LANGCHAIN_JS = Object.freeze({
  max_retries: 6,
  statuses: [
    ...Array.from({ length: 100 }, (_, i) => 400 + i).filter(
      (status) => !LANGCHAIN_NO_RETRY.has(status),
    ),
    '5xx',
  ],
  codes: ['TRANSPORT', 'TIMEOUT'],
  mid_stream: false,
  backoff_min_s: 1.0,
  backoff_max_s: 64.0,
  retry_after: [],
  should_retry_header: false,
});

/** @anthropic-ai/sdk 1.15's loop (@anthropic-ai/sdk/client.mjs), the openai-node rules but
 * the cap:
 * - 170: maxRetries defaults to 2;
 * - 848-882 `shouldRetry`: `x-should-retry: true|false` decides, else 408, 409, 429, >= 500
 *   (529 `overloaded_error` included); the 401 refresh before it is for OAuth tokens only;
 * - 657-694: a connection error or a timeout before the response is retried; the loop ends
 *   with the headers, so an `event: error` in the body is not;
 * - 884-913 `retryRequest`: `retry-after-ms`, then `retry-after` (seconds or an HTTP date),
 *   waited exactly when over 0 and under 2**31 ms (a timer's limit): no cap a policy can name;
 * - 915-923: min(0.5 * 2**n, 8) * (1 - 0.25 * random()) s, n the retries made: 0.375-8 s. */
export const ANTHROPIC_NODE = Object.freeze({
  max_retries: 2,
  statuses: [408, 409, 429, '5xx'],
  codes: ['TRANSPORT', 'TIMEOUT'],
  mid_stream: false,
  backoff_min_s: 0.375,
  backoff_max_s: 8.0,
  retry_after: ['retry-after-ms', 'retry-after'],
  should_retry_header: true,
});
