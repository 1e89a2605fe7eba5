// What every OpenAI Responses shim shares: the run line's Responses body in, the library's
// final response (or the items it handed over) out as protocol events. The same rules as
// conformance/adapters/thirdparty/responses.py: the hello declares `dialects:
// ["openai-responses"]`; a call is reported under the `call_id` the library kept, its item
// `id` beside it; a reasoning item's `encrypted_content` only when kept; a library that
// returned without a status finishes as a complete answer would (tool calls, else `stop`).

import { blockEvents, callText, failureEvent } from './assembled.js';
import { RESPONSES_ERROR_CODES } from './errors.js';

export const DIALECTS = Object.freeze(['openai-responses']);

// response.error.code → canonical code (errors.js RESPONSES_ERROR_CODES); else upper-cased.
const INCOMPLETE = { max_output_tokens: ['max-tokens', null], content_filter: ['error', 'CONTENT_FILTER'] };

const failureCode = (code) => (typeof code === 'string' && code ? (RESPONSES_ERROR_CODES[code] ?? code.toUpperCase()) : null);
const optionalText = (value) => (typeof value === 'string' && value ? value : null);

/** A library's assembled Responses turn: blocks, usage and how it ended; or, for a library
 * that reports its failure as data (the AI SDK's error part), what it assembled, then that. */
export class ResponseTurn {
  constructor({ blocks = [], usage = null, status = null, incompleteReason = null, errorCode = null, refused = false, failure = null } = {}) {
    Object.assign(this, { blocks, usage, status, incompleteReason, errorCode, refused, failure });
  }

  *events() {
    yield* blockEvents(this.blocks);
    if (this.usage) yield this.usage;
    yield this.failure ? failureEvent(this.failure) : this.finish();
  }

  finish() {
    if (this.status === 'failed') return { type: 'finish', reason: 'error', code: failureCode(this.errorCode) ?? 'SERVER' };
    if (this.status === 'incomplete') {
      const reason = optionalText(this.incompleteReason) ?? 'max_output_tokens';
      const [finish, code] = INCOMPLETE[reason] ?? ['error', reason.toUpperCase()];
      return code ? { type: 'finish', reason: finish, code } : { type: 'finish', reason: finish };
    }
    if (this.refused) return { type: 'finish', reason: 'error', code: 'REFUSAL' };
    if (this.blocks.some((b) => b.type === 'tool-call')) return { type: 'finish', reason: 'tool-calls' };
    return { type: 'finish', reason: 'stop' };
  }
}

/** The turn of a final Response: its output items, usage, status, incomplete reason, error code. */
export function responseTurn(response) {
  const output = response?.output ?? [];
  return new ResponseTurn({
    blocks: outputBlocks(output),
    usage: responseUsage(response?.usage),
    status: response?.status ?? null,
    incompleteReason: response?.incomplete_details?.reason ?? null,
    errorCode: response?.error?.code ?? null,
    refused: refused(output),
  });
}

/** Protocol blocks from a Responses `output` list (responses.py output_blocks). */
export function outputBlocks(output) {
  const blocks = [];
  for (const item of output ?? []) {
    if (item?.type === 'message') {
      const text = (item.content ?? []).filter((p) => p?.type === 'output_text').map((p) => String(p.text ?? '')).join('');
      if (text) blocks.push({ type: 'text', text });
    } else if (item?.type === 'reasoning') {
      blocks.push(reasoningBlock(item.summary?.length ? item.summary : item.content, item.encrypted_content, item.id));
    } else if (item?.type === 'function_call') {
      blocks.push(callBlock(item.call_id, item.name, item.arguments, item.id));
    }
  }
  return blocks;
}

export function reasoningBlock(parts, encryptedContent, itemId) {
  const block = { type: 'reasoning', text: (parts ?? []).map((p) => String(p?.text ?? '')).join('') };
  if (optionalText(encryptedContent)) block.encrypted_content = encryptedContent;
  if (optionalText(itemId)) block.item_id = itemId;
  return block;
}

export function callBlock(callId, name, args, itemId) {
  const block = { type: 'tool-call', id: callText(callId), name: callText(name), arguments: callText(args) };
  return optionalText(itemId) ? { ...block, item_id: itemId } : block;
}

export const refused = (output) =>
  (output ?? []).some((item) => item?.type === 'message' && (item.content ?? []).some((p) => p?.type === 'refusal'));

/** Protocol usage from a Responses usage object: input without the cached tokens (C4). */
export function responseUsage(usage) {
  if (!usage || !Number.isInteger(usage.input_tokens) || !Number.isInteger(usage.output_tokens)) return null;
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  const event = { type: 'usage', input_tokens: usage.input_tokens - (Number.isInteger(cached) ? cached : 0), output_tokens: usage.output_tokens };
  if (Number.isInteger(cached)) event.cache_read_tokens = cached;
  if (Number.isInteger(reasoning)) event.reasoning_tokens = reasoning;
  return event;
}

/** The run line's Responses body as `responses.stream` params: everything but `stream`. */
export function responseParams(run) {
  const { stream, ...params } = run.request;
  return params;
}
