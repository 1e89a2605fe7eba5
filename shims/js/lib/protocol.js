// Adapter protocol v1 (1.1 with `dialects`) over stdio, shared by every shim: `hello`, then for each `run` line
// the shim's events and `end`, until EOF on stdin.

import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { thrown } from './assembled.js';

export const PROTOCOL_VERSION = 1;

/** The handshake of a shim: assembled blocks only, failures classified by lib/errors.js. No
 * retry layer, unless `retryPolicy` declares the one the library runs (pass `nativePolicy`'s
 * answer, lib/run.js): a layer of its own, never the case's policy. `dialects` (protocol
 * 1.1) names the wire the library reads; absent, chat-completions. */
export function hello(name, version, { reasoning, retryPolicy = null, dialects = null }) {
  const message = {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    name,
    version,
    capabilities: { deltas: false, reasoning, usage: true, retry: retryPolicy !== null, error_codes: true },
    ...(dialects === null ? {} : { dialects }),
  };
  return retryPolicy === null ? message : { ...message, retry_policy: retryPolicy };
}

function writeLine(message) {
  // Synchronous writes: each line leaves the process whole and at once.
  let buffer = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(writeSync(1, buffer));
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

export function log(...parts) {
  process.stderr.write(`${parts.join(' ')}\n`);
}

/**
 * Serve one shim: `shim.hello`, then `shim.run(run)` (an async iterable of events without
 * `case`) for each `run` line. A library failure is the shim's to report; anything that
 * escapes it (a bad `run` line, a bug here) becomes one `thrown`, and `end` always follows.
 */
export async function serve(shim) {
  writeLine(shim.hello);
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    let caseId;
    try {
      const run = JSON.parse(line);
      caseId = typeof run?.case === 'string' ? run.case : undefined;
      if (run?.type !== 'run') throw new Error(`expected a run line, got ${JSON.stringify(run?.type)}`);
      for await (const event of shim.run(run)) writeLine({ case: caseId, ...event });
    } catch (error) {
      log('shim failed:', error?.stack ?? String(error));
      writeLine({ case: caseId, ...thrown(error) });
    }
    writeLine({ case: caseId, type: 'end' });
  }
  process.exit(0);
}
