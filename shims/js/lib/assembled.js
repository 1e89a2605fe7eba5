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
    for (const call of toolCalls) for (const field of ['id', 'name', 'arguments']) checkText(field, call[field]);
    Object.assign(this, { text, reasoning, toolCalls, usage, finishReason, failure });
  }

  /** Reasoning, text, then tool calls; empty text opens nothing. */
  blocks() {
    const blocks = [];
    if (this.reasoning) blocks.push({ type: 'reasoning', text: this.reasoning });
    if (this.text) blocks.push({ type: 'text', text: this.text });
    for (const call of this.toolCalls) {
      blocks.push({ type: 'tool-call', id: call.id ?? '', name: call.name ?? '', arguments: call.arguments ?? '' });
    }
    return blocks;
  }

  *events() {
    for (const [index, block] of this.blocks().entries()) {
      yield { type: 'block-start', index, block_type: block.type };
      yield { type: 'block-end', index, block };
    }
    if (this.usage) yield this.usage;
    yield this.failure ? failureEvent(this.failure) : finishEvent(this.finishReason);
  }
}

/** A call's identity and arguments are text; a library that assembled something else
 * (an object for arguments, a number for an id) handed its caller no usable call. Raised
 * while assembling, it is the library's outcome: a crash, as the Python shims report it. */
function checkText(field, value) {
  if (value != null && typeof value !== 'string') {
    throw new TypeError(`the library assembled a tool call ${field} that is no string: ${JSON.stringify(value)}`.slice(0, 200));
  }
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
