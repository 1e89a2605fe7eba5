#!/usr/bin/env node
// Entry point: `hello`, then one case per `run` line, each closed by `end`, until EOF.

import { caseSink, inputLines, log, sendHello } from './lib/protocol.js';
import { runCase } from './lib/run-case.js';

sendHello();

for await (const line of inputLines()) {
  if (line.trim() === '') continue;
  let run;
  let emit = caseSink(undefined);
  try {
    run = JSON.parse(line);
    emit = caseSink(typeof run?.case === 'string' ? run.case : undefined);
    if (run?.type !== 'run') throw new Error(`expected a run line, got ${JSON.stringify(run?.type)}`);
    await runCase(run, emit);
  } catch (error) {
    // The adapter itself failed: say so and stay alive for the next case.
    log('thrown:', error?.stack ?? String(error));
    emit({ type: 'thrown', message: String(error?.message ?? error) || 'adapter failed' });
  }
  emit({ type: 'end' });
}

process.exit(0);
