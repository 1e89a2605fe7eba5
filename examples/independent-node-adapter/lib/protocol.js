// Adapter protocol v1 over stdio: JSON Lines in, JSON Lines out.

import { createInterface } from 'node:readline';
import { writeSync } from 'node:fs';

export const HELLO = {
  type: 'hello',
  protocol: 1,
  name: 'independent-node-adapter',
  version: '1.0.0',
  capabilities: { deltas: true, reasoning: true, usage: true, retry: true, error_codes: true },
};

function writeLine(object) {
  // fd 1 written synchronously: every event leaves the process as soon as it is known.
  const line = `${JSON.stringify(object)}\n`;
  let buffer = Buffer.from(line, 'utf8');
  while (buffer.length > 0) {
    try {
      const written = writeSync(1, buffer);
      buffer = buffer.subarray(written);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

export const sendHello = () => writeLine(HELLO);

/**
 * A sink for one case's events: `case` first, optional fields left out rather than null
 * (G8).
 */
export function caseSink(caseId) {
  return (event) => {
    const line = caseId === undefined ? {} : { case: caseId };
    for (const [key, value] of Object.entries(event)) {
      if (value !== undefined && value !== null) line[key] = value;
    }
    writeLine(line);
  };
}

/** The lines of stdin, one at a time, until EOF. */
export function inputLines() {
  return createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
}

export function log(...parts) {
  process.stderr.write(`[independent-node-adapter] ${parts.join(' ')}\n`);
}
