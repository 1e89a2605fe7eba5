// The retry policy of ADAPTER-PROTOCOL.md (`retry`) and INVARIANTS.md R1–R6, as pure
// decisions; run-case.js does the waiting.

const DEFAULT_POLICY = {
  max_retries: 2,
  retryable_codes: ['EMPTY_RESPONSE', 'MALFORMED_TOOL_CALL', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT'],
  initial_delay_ms: 1,
  max_delay_ms: 2000,
  jitter_ratio: 0,
};

export function resolvePolicy(given) {
  return { ...DEFAULT_POLICY, ...(given ?? {}) };
}

/** min(initial·2^(n−1), max), scaled by a random factor in [1−jitter, 1+jitter]. */
export function backoffMs(policy, retryNumber, random = Math.random) {
  const nominal = Math.min(policy.initial_delay_ms * 2 ** (retryNumber - 1), policy.max_delay_ms);
  const jitter = Math.min(Math.max(policy.jitter_ratio ?? 0, 0), 1);
  return nominal * (1 - jitter + 2 * jitter * random());
}

/**
 * Whether the failure of attempt `attempt` (1-based) is retried, and after what wait.
 * Returns { delayMs } or { reason } (why not).
 */
export function decideRetry(policy, failure, attempt, { now, deadline, random } = {}) {
  if (!policy.retryable_codes.includes(failure.code)) return { reason: `${failure.code} is not retryable` };
  if (attempt > policy.max_retries) return { reason: `retry budget of ${policy.max_retries} spent` };
  let delayMs;
  if (failure.retryAfterMs !== undefined) {
    if (failure.retryAfterMs > policy.max_delay_ms) {
      return { reason: `Retry-After ${failure.retryAfterMs} ms is above max_delay_ms ${policy.max_delay_ms}` };
    }
    delayMs = failure.retryAfterMs; // exactly, no jitter (R6)
  } else {
    delayMs = backoffMs(policy, attempt, random);
  }
  if (deadline !== undefined && now + delayMs >= deadline) {
    return { reason: `a wait of ${Math.round(delayMs)} ms would pass the case deadline` };
  }
  return { delayMs };
}
