// One attempt: exactly one POST (H5), its answer read under the idle timer (H4) and the
// case deadline, every event emitted as soon as it is known, ending with the attempt's
// `finish`. Returns null on success or the AttemptFailure that ended it (an error finish
// found at `[DONE]`, such as EMPTY_RESPONSE, included).

import { Assembler } from './assembler.js';
import { AttemptFailure, fail } from './failure.js';
import { codeForStatus, errorDetail, parseRetryAfter } from './classify.js';
import { EventStreamDecoder } from './event-stream.js';
import { log } from './protocol.js';
import { stopWatching, watchNextRequest } from './socket-watch.js';

/** Aborts the request when no byte arrives for `idleMs`, or when the case deadline passes. */
class Watchdog {
  constructor(controller, idleMs, deadline) {
    this.controller = controller;
    this.idleMs = idleMs;
    this.deadline = deadline;
    this.fired = null; // why it fired
    this.timer = null;
    this.kick();
  }

  kick() {
    clearTimeout(this.timer);
    const left = this.deadline - Date.now();
    const idle = left < this.idleMs ? null : this.idleMs;
    this.timer = setTimeout(
      () => {
        this.fired =
          idle === null
            ? 'the case deadline passed while waiting for the provider'
            : `no byte from the provider for ${this.idleMs / 1000} s`;
        this.controller.abort();
      },
      Math.max(0, idle ?? left),
    );
  }

  stop() {
    clearTimeout(this.timer);
  }
}

export async function runAttempt({ url, apiKey, body, idleMs, deadline, emit }) {
  const controller = new AbortController();
  const watchdog = new Watchdog(controller, idleMs, deadline);
  const assembler = new Assembler();
  const socket = watchNextRequest();
  let failure = null;
  try {
    const finish = await exchange({ url, apiKey, body, controller, watchdog, assembler, socket, emit });
    if (finish.reason === 'error') failure = new AttemptFailure(finish.code, finish.message);
  } catch (error) {
    failure = toFailure(error, watchdog);
    for (const event of assembler.failed(failure.code, failure.message)) emit(event);
  } finally {
    stopWatching(socket);
    watchdog.stop();
    controller.abort(); // nothing after [DONE] or a failure is read; the connection is closed
  }
  return failure;
}

async function exchange({ url, apiKey, body, controller, watchdog, assembler, socket, emit }) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    },
    body,
    redirect: 'manual', // a 3xx is an answer, not a second request
    signal: controller.signal,
  });
  watchdog.kick();

  if (response.status < 200 || response.status > 299) {
    const text = await readAll(response, watchdog);
    const { detail, message } = errorDetail(text);
    const code = codeForStatus(response.status, `${detail} ${text}`);
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after') ?? undefined);
    throw fail(code, message || `HTTP ${response.status}`, { retryAfterMs });
  }

  const decoder = new EventStreamDecoder();
  const reader = response.body?.getReader();
  for (;;) {
    const { value, done } = reader ? await reader.read() : { done: true };
    watchdog.kick();
    if (done && socket.error) {
      // A body delimited by the connection's close was cut by a reset: fetch calls that a
      // clean end, the socket says otherwise (socket-watch.js).
      throw fail('TRANSPORT', `connection reset mid-body: ${describe(socket.error)}`);
    }
    const payloads = done ? decoder.end() : decoder.push(value);
    for (const payload of payloads) {
      if (payload === '[DONE]') {
        const events = assembler.done();
        for (const event of events) emit(event);
        return events[events.length - 1]; // the finish
      }
      // A `data:` payload beginning with ":" is a keep-alive comment a gateway re-wrapped
      // (anchors I2): it carries nothing.
      if (payload.startsWith(':')) continue;
      let chunk;
      try {
        chunk = JSON.parse(payload);
      } catch {
        throw fail('MALFORMED_RESPONSE', `payload is not JSON: ${payload.slice(0, 120)}`);
      }
      for (const event of assembler.accept(chunk)) emit(event);
    }
    if (done) throw fail('STREAM_CLOSED', 'the stream ended before a complete [DONE] event');
  }
}

async function readAll(response, watchdog) {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      watchdog.kick();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (watchdog.fired) throw error;
    log('error body cut short:', describe(error));
    return text; // the status is the answer; a truncated body only loses wording
  }
}

function toFailure(error, watchdog) {
  if (error instanceof AttemptFailure) return error;
  if (watchdog.fired) return fail('TIMEOUT', watchdog.fired);
  // fetch rejects with a TypeError for a refused, reset or closed connection, before or
  // during the body ("fetch failed", "terminated"), the socket error being its cause.
  log('transport failure:', describe(error));
  return fail('TRANSPORT', `connection failed: ${describe(error)}`);
}

function describe(error) {
  const parts = [];
  for (let e = error; e && parts.length < 4; e = e.cause) parts.push(e.code ?? e.message ?? String(e));
  return parts.join(' <- ');
}
