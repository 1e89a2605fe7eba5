// What every Anthropic Messages shim shares: the run line's Anthropic body in, the library's
// assembled message out as protocol events. The same rules as
// conformance/adapters/thirdparty/messages.py: the hello declares `dialects:
// ["anthropic-messages"]`; `base_url` comes without `/v1` (the Anthropic SDKs append
// `/v1/messages`); blocks, usage and stop reason are reported as the library kept them, a
// library that returned without a stop reason finishes `stop`, a block the protocol has no
// event for (a server tool's result) is left out, a parsed tool input is its JSON text.

import { blockEvents, callText, failureEvent } from './assembled.js';

export const DIALECTS = Object.freeze(['anthropic-messages']);
export const DEFAULT_MAX_TOKENS = 1024;

// stop_reason → [finish, code]: DIALECTS.md "Non-success ends".
const STOPS = {
  end_turn: ['stop', null],
  stop_sequence: ['stop', null],
  tool_use: ['tool-calls', null],
  max_tokens: ['max-tokens', null],
  model_context_window_exceeded: ['max-tokens', null],
  refusal: ['error', 'REFUSAL'],
  pause_turn: ['error', 'PAUSE_TURN'],
};

/** The protocol finish for a stop reason as the library kept it (none: `stop`). */
export function stopFinish(stopReason) {
  if (typeof stopReason !== 'string' || !stopReason) return { type: 'finish', reason: 'stop' };
  const [reason, code] = STOPS[stopReason] ?? ['error', stopReason.toUpperCase()];
  return code ? { type: 'finish', reason, code } : { type: 'finish', reason };
}

/** A library's assembled Anthropic message: its blocks in order, usage, stop reason; or,
 * for a library that reports its failure as data (the AI SDK's error part), what it
 * assembled, then that failure. */
export class MessageTurn {
  constructor({ blocks = [], usage = null, stopReason = null, failure = null } = {}) {
    Object.assign(this, { blocks, usage, stopReason, failure });
  }

  *events() {
    yield* blockEvents(this.blocks);
    if (this.usage) yield this.usage;
    yield this.failure ? failureEvent(this.failure) : stopFinish(this.stopReason);
  }
}

/** Protocol blocks from an Anthropic `content` list: text, thinking (with its signature),
 * redacted thinking (its data), tool and server-tool uses (their input as the library kept
 * it). Empty text opens nothing (C1). */
export function contentBlocks(content) {
  const blocks = [];
  for (const block of content ?? []) {
    if (block?.type === 'text' && block.text) blocks.push({ type: 'text', text: String(block.text) });
    else if (block?.type === 'thinking') blocks.push(reasoning(block.thinking, block.signature));
    else if (block?.type === 'redacted_thinking') blocks.push({ type: 'reasoning', text: '', redacted: callText(block.data) });
    else if (block?.type === 'tool_use' || block?.type === 'server_tool_use') {
      blocks.push(callBlock(block.type === 'tool_use' ? 'tool-call' : 'server-tool', block.id, block.name, block.input));
    }
  }
  return blocks;
}

export function reasoning(text, signature) {
  const block = { type: 'reasoning', text: String(text ?? '') };
  return typeof signature === 'string' && signature ? { ...block, signature } : block;
}

export function callBlock(type, id, name, input) {
  return { type, id: callText(id), name: callText(name), arguments: callText(input) };
}

/** Protocol usage from Anthropic's counts: `input_tokens` already leaves out cache reads and
 * writes (C4), which get their own fields. Null without both main counts. */
export function messageUsage(input, output, cacheRead, cacheWrite) {
  if (!Number.isInteger(input) || !Number.isInteger(output)) return null;
  const event = { type: 'usage', input_tokens: input, output_tokens: output };
  if (Number.isInteger(cacheRead)) event.cache_read_tokens = cacheRead;
  if (Number.isInteger(cacheWrite)) event.cache_write_tokens = cacheWrite;
  return event;
}

/** The run line's Anthropic body as `messages.stream` params: everything but `stream` (the
 * helper sets it), `max_tokens` defaulted as the API requires one. */
export function messageParams(run) {
  const { stream, ...params } = run.request;
  return { max_tokens: DEFAULT_MAX_TOKENS, ...params };
}

export const maxTokens = (run) => (Number.isInteger(run.request.max_tokens) ? run.request.max_tokens : DEFAULT_MAX_TOKENS);
export const anthropicTools = (run) => (Array.isArray(run.request.tools) ? run.request.tools : []);

