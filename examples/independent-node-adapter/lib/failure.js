// A classified failure of one attempt: a canonical code (INVARIANTS.md "Canonical codes"),
// a human message, and for an HTTP answer the provider's Retry-After in milliseconds.

export class AttemptFailure extends Error {
  constructor(code, message, { retryAfterMs } = {}) {
    super(message);
    this.name = 'AttemptFailure';
    this.code = code;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

export const fail = (code, message, extra) => new AttemptFailure(code, message, extra);
