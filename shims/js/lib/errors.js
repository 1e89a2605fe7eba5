// One error → canonical code table for every JS shim, the same rules as
// conformance/adapters/thirdparty/errors.py: matched by class name along the prototype
// chain (and the AI SDK's `AI_…` name), through what a wrapper carries (`lastError`,
// `cause`); an HTTP status the error carries is classified as the oracle classifies it
// (conformance/oracle/http_errors.py), and so is the status an Anthropic error body's type
// stands for. Anything unknown gets no code: a crash.

// An OpenAI Responses error code (an `error` event's, `response.failed`'s, kept by openai-node
// as the APIError's `code`) → canonical code: conformance/codes.py RESPONSES_ERROR_CODES.
export const RESPONSES_ERROR_CODES = Object.freeze({
  rate_limit_exceeded: 'RATE_LIMIT',
  server_error: 'SERVER',
  insufficient_quota: 'QUOTA',
  context_length_exceeded: 'CONTEXT_WINDOW_EXCEEDED',
});

// Most specific first: a name found earlier along the prototype chain wins.
const BY_NAME = {
  APIConnectionTimeoutError: 'TIMEOUT', // openai-node
  TimeoutError: 'TIMEOUT', // AbortSignal.timeout, LangChain's wrapper of the above
  APIConnectionError: 'TRANSPORT', // openai-node
  SocketError: 'TRANSPORT', // undici, under fetch's "terminated"
  SyntaxError: 'MALFORMED_RESPONSE', // JSON.parse
  JSONParseError: 'MALFORMED_RESPONSE', // AI SDK
  TypeValidationError: 'MALFORMED_RESPONSE', // AI SDK: a chunk that fails its schema
  RateLimitError: 'RATE_LIMIT', // openai-node
  InternalServerError: 'SERVER', // openai-node
};
// Raised from a provider's {"error": …} frame: the provider's own failure.
const PROVIDER_ERRORS = new Set(['APIError', 'StreamProviderError']);
const TRANSPORT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET']);
// A library's own refusal of a stream, known by its words (as errors.py knows litellm's):
// one that closed before a finish reason, and one that sent no chunk at all (E1's).
const END_WITHOUT_FINISH = [
  'ended without a finish reason', // AI SDK InvalidResponseDataError
  'missing finish_reason for choice', // openai-node finalChatCompletion
];
const NOTHING_SENT = 'request ended without sending any chunks'; // openai-node
const MAX_DEPTH = 5;
// Anthropic's error.type → the HTTP status it is sent with (fakeprovider/dialects/anthropic.py
// ERROR_TYPES): an `event: error` carries no status of its own (@anthropic-ai/sdk throws an
// APIError with the body and no status, core/streaming.mjs:49-52).
const ANTHROPIC_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const QUOTA_WORDING =
  /insufficient[ _-](quota|balance|credits?)|(quota|usage limit)[ _-](exceeded|exhausted|reached)|exceed(ed|s)? (your |the )?(current )?quota|(balance|credits?) (exhausted|depleted)|out of (credits?|budget)/i;
const CONTEXT_WORDING =
  /context[ _-]length[ _-]exceeded|maximum context length|exceed(ed|s)? (the )?(model('s)? )?context window|too large for (the )?(model('s)? )?context/i;

/** The canonical code of a non-2xx response: the first matching rule wins (H1). */
export function classifyStatus(status, detail) {
  const wording = String(detail).split(/\s+/).filter(Boolean).join(' ');
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 413) return 'INVALID_REQUEST';
  if (QUOTA_WORDING.test(wording)) return 'QUOTA';
  if (status === 429) return 'RATE_LIMIT';
  if (status === 400) return CONTEXT_WORDING.test(wording) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST';
  if (status >= 500) return 'SERVER';
  return `HTTP_${status}`;
}

/** The canonical code of a library error, or null when it says nothing usable. */
export function errorCode(error) {
  for (const current of chain(error)) {
    const code = ownCode(current);
    if (code) return code;
  }
  return null;
}

/** The error, then what it wraps: the AI SDK's RetryError keeps its last error, others a cause. */
function chain(error) {
  const seen = [];
  let current = error;
  while (current != null && typeof current === 'object' && !seen.includes(current) && seen.length <= MAX_DEPTH) {
    seen.push(current);
    current = current.lastError ?? current.cause;
  }
  return seen;
}

function names(error) {
  const found = [];
  for (let proto = Object.getPrototypeOf(error); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor?.name) found.push(proto.constructor.name);
  }
  if (typeof error.name === 'string') found.push(error.name.replace(/^AI_/, ''));
  return found;
}

function ownCode(error) {
  const message = String(error.message ?? '');
  if (END_WITHOUT_FINISH.some((words) => message.includes(words))) return 'STREAM_CLOSED';
  if (message.includes(NOTHING_SENT)) return 'EMPTY_RESPONSE';
  const all = names(error);
  const byName = all.map((name) => BY_NAME[name]).find(Boolean);
  if (byName && byName !== 'SERVER') return byName;
  if (TRANSPORT_CODES.has(error.code)) return 'TRANSPORT';
  if (Object.hasOwn(RESPONSES_ERROR_CODES, error.code ?? '')) return RESPONSES_ERROR_CODES[error.code];
  const status = httpStatus(error) ?? anthropicStatus(error);
  if (status !== null) return classifyStatus(status, `${message} ${error.responseBody ?? ''}`);
  if (byName) return byName;
  return all.some((name) => PROVIDER_ERRORS.has(name)) ? 'SERVER' : null;
}

/** A non-2xx HTTP status the error carries (the AI SDK's APICallError keeps the 200 of a
 * body that later failed: that one says nothing about the failure). */
function httpStatus(error) {
  for (const key of ['status', 'statusCode', 'code']) {
    const value = error[key];
    if (Number.isInteger(value) && value >= 300 && value <= 599) return value;
  }
  return null;
}

/** The status an Anthropic error body's `error.type` stands for (`overloaded_error`: 529),
 * when the error keeps the body (@anthropic-ai/sdk's APIError: `error`). */
function anthropicStatus(error) {
  const kind = error.error?.error?.type;
  return typeof kind === 'string' && Object.hasOwn(ANTHROPIC_STATUS, kind) ? ANTHROPIC_STATUS[kind] : null;
}
