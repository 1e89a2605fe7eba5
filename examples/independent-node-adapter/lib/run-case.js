// One `run` line: attempts under the retry policy, each retry announced, then `end`.

import { setTimeout as sleep } from 'node:timers/promises';
import { runAttempt } from './attempt.js';
import { decideRetry, resolvePolicy } from './retry.js';
import { log } from './protocol.js';

export async function runCase(run, emit) {
  const started = Date.now();
  if (typeof run.base_url !== 'string') throw new Error('run line has no base_url');
  const url = `${run.base_url.replace(/\/+$/, '')}/chat/completions`;
  const body = JSON.stringify(run.request ?? {}); // serialised once: every retry sends these bytes (R4)
  const policy = resolvePolicy(run.retry);
  const idleMs = (run.idle_timeout_s ?? 30) * 1000;
  const deadline = started + (run.timeout_s ?? 60) * 1000;

  for (let attempt = 1; ; attempt += 1) {
    const failure = await runAttempt({ url, apiKey: run.api_key ?? '', body, idleMs, deadline, emit });
    if (failure === null) return;
    const decision = decideRetry(policy, failure, attempt, { now: Date.now(), deadline });
    if (decision.delayMs === undefined) {
      log(`case ${run.case}: attempt ${attempt} failed ${failure.code}, final: ${decision.reason}`);
      return;
    }
    emit({ type: 'retry', attempt, code: failure.code, delay_ms: decision.delayMs });
    await sleep(decision.delayMs);
  }
}
