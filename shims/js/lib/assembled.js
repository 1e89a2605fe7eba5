// What every shim shares: the library's assembled message → protocol events.
//
// A shim drives its library to the end of the stream and hands back an Assembled: the text,
// reasoning, tool calls, usage and raw finish reason as the library reported them. Nothing
// is repaired: an empty id stays empty, a library that returned without a finish reason
// finishes `stop` (it claimed a complete answer), only usage the library reported is
// reported. A library that raised gives one `thrown` with the code of lib/errors.js; one
// that reported its failure as data (the AI SDK's error part) gives what it assembled, then
// that failure. The same rules as conformance/adapters/thirdparty/common.py.

import { errorCode } from './errors.js';

const FINISH = { stop: 'stop', tool_calls: 'tool-calls', function_call: 'tool-calls', length: 'max-tokens' };
const MESSAGE_CHARS = 500;

export class Assembled {
  constructor({ text = null, reasoning = null, toolCalls = [], usage = null, finishReason = null, failure = null } = {}) {
    Object.assign(this, { text, reasoning, toolCalls, usage, finishReason, failure });
  }

  /** Reasoning, text, then tool calls; empty text opens nothing. */
  blocks() {
    const blocks = [];
    if (this.reasoning) blocks.push({ type: 'reasoning', text: this.reasoning });
    if (this.text) blocks.push({ type: 'text', text: this.text });
    for (const call of this.toolCalls) {
      blocks.push({ type: 'tool-call', id: callText(call.id), name: callText(call.name), arguments: callText(call.arguments) });
    }
    return blocks;
  }

  *events() {
    yield* blockEvents(this.blocks());
    if (this.usage) yield this.usage;
    yield this.failure ? failureEvent(this.failure) : finishEvent(this.finishReason);
  }
}

/** Each assembled block as a start and its end, in the library's order. */
export function* blockEvents(blocks) {
  for (const [index, block] of blocks.entries()) {
    yield { type: 'block-start', index, block_type: block.type };
    yield { type: 'block-end', index, block };
  }
}

/** A call's id, name or arguments as the protocol carries them: text, '' for none. A value
 * the library handed over as something else (an object for arguments, a number for an id)
 * is reported as its JSON text, not refused: the library did not crash on it, and whether
 * its caller lost anything is the invariants' to judge, as in the Python shims. */
export function callText(value) {
  if (value == null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The protocol finish for a wire finish reason (none: `stop`, as C5 reads such a stream). */
export function finishEvent(reason) {
  if (!reason) return { type: 'finish', reason: 'stop' };
  const mapped = FINISH[reason];
  return mapped ? { type: 'finish', reason: mapped } : { type: 'finish', reason: 'error', code: reason.toUpperCase() };
}

/** Protocol usage (C4: input excludes cached) from the provider's counts; null without both. */
export function usageEvent(prompt, completion, cached, reasoning) {
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) return null;
  const event = { type: 'usage', input_tokens: prompt - (Number.isInteger(cached) ? cached : 0), output_tokens: completion };
  if (Number.isInteger(cached)) event.cache_read_tokens = cached;
  if (Number.isInteger(reasoning)) event.reasoning_tokens = reasoning;
  return event;
}

function describe(error) {
  const name = error?.constructor?.name ?? 'Error';
  return `${name}: ${error?.message ?? String(error)}`.slice(0, MESSAGE_CHARS);
}

export function thrown(error) {
  const code = errorCode(error);
  return code ? { type: 'thrown', message: describe(error), code } : { type: 'thrown', message: describe(error) };
}

/** A failure the library reported as data: a coded `finish`, or `thrown` when it says nothing usable. */
export function failureEvent(error) {
  const code = errorCode(error);
  return code ? { type: 'finish', reason: 'error', code, message: describe(error) } : thrown(error);
}

/** Drive `assemble(run)`; its exception is the outcome under test. */
export async function* assembledRun(assemble, run) {
  let assembled;
  try {
    assembled = await assemble(run);
  } catch (error) {
    yield thrown(error);
    return;
  }
  yield* assembled.events();
}
