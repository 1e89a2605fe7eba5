// The translator of one attempt, with no I/O: parsed `chat.completion.chunk` payloads in,
// protocol events out (without their `case`, which protocol.js adds).
//
// Deltas are emitted as soon as their chunk arrives; block ends, usage and the finish wait
// for `[DONE]` (harness-contract.md §a.3). A chunk of the wrong shape throws an
// AttemptFailure, and so does an `{"error": …}` payload (S7).

import { classifyStreamError } from './classify.js';
import { fail } from './failure.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const nonEmptyString = (v) => typeof v === 'string' && v !== '';
const absent = (v) => v === undefined || v === null;

const FINISH = { stop: 'stop', tool_calls: 'tool-calls', length: 'max-tokens' };

export class Assembler {
  #nextIndex = 0;
  #prose = { text: null, reasoning: null }; // at most one block of each
  #calls = new Map(); // wire index (as JSON) -> { index, id, name, args }
  #opened = []; // blocks in opening order
  #finishReason = null; // last non-empty string finish_reason
  #usage = null; // last usage, already mapped to the protocol's fields

  /** One parsed payload. Returns the events it produces; throws AttemptFailure. */
  accept(chunk) {
    const choices = this.#validate(chunk);
    const events = [];
    for (const choice of choices) {
      const delta = absent(choice.delta) ? {} : choice.delta;
      this.#textual(events, 'reasoning', delta.reasoning_content);
      this.#textual(events, 'text', delta.content);
      if (!absent(delta.tool_calls)) {
        delta.tool_calls.forEach((entry, position) => this.#toolCall(events, entry, position));
      }
      if (nonEmptyString(choice.finish_reason)) this.#finishReason = choice.finish_reason;
    }
    if (!absent(chunk.usage)) this.#usage = mapUsage(chunk.usage);
    return events;
  }

  /** `[DONE]` arrived: close the attempt. */
  done() {
    const events = [];
    const unidentified = [...this.#calls.values()].find((call) => !call.id || !call.name);
    if (unidentified) {
      const missing = [!unidentified.id && 'id', !unidentified.name && 'name'].filter(Boolean).join(' and ');
      this.#pushUsage(events);
      events.push({
        type: 'finish',
        reason: 'error',
        code: 'MALFORMED_TOOL_CALL',
        message: `tool call at block ${unidentified.index} has no ${missing} at [DONE]`,
      });
      return events;
    }
    for (const block of this.#opened) events.push({ type: 'block-end', index: block.index, block: block.assembled() });
    this.#pushUsage(events);
    events.push(this.#finish());
    return events;
  }

  /** The attempt failed: its usage (billed tokens) goes before the failure; blocks stay open. */
  failed(code, message) {
    const events = [];
    this.#pushUsage(events);
    events.push({ type: 'finish', reason: 'error', code, message });
    return events;
  }

  #finish() {
    const wire = this.#finishReason ?? 'stop';
    const reason = FINISH[wire];
    if (reason === undefined) {
      return { type: 'finish', reason: 'error', code: wire.toUpperCase(), message: `model stopped: ${wire}` };
    }
    if (reason === 'stop' && this.#opened.length === 0) {
      return {
        type: 'finish',
        reason: 'error',
        code: 'EMPTY_RESPONSE',
        message: 'model returned a completed response with no content',
      };
    }
    return { type: 'finish', reason };
  }

  #pushUsage(events) {
    if (this.#usage) events.push({ type: 'usage', ...this.#usage });
  }

  #open(events, blockType, assembled) {
    const block = { index: this.#nextIndex++, assembled };
    this.#opened.push(block);
    events.push({ type: 'block-start', index: block.index, block_type: blockType });
    return block;
  }

  #textual(events, kind, value) {
    if (!nonEmptyString(value)) return; // null, "", absent and non-strings open nothing (C1, C2)
    let block = this.#prose[kind];
    if (!block) {
      const state = { text: '' };
      block = this.#open(events, kind, () => ({ type: kind, text: state.text }));
      block.state = state;
      this.#prose[kind] = block;
    }
    block.state.text += value;
    events.push({ type: `${kind}-delta`, index: block.index, text: value });
  }

  #toolCall(events, entry, position) {
    // An entry without `index` takes its position in the array; indexes are compared as
    // JSON values, so 0 and "0" are two calls.
    const key = JSON.stringify(absent(entry.index) ? position : entry.index);
    const fn = isObject(entry.function) ? entry.function : {};
    let call = this.#calls.get(key);
    // Once a call has its id and name, an entry at its key bringing another id and a name is
    // the next call (Gemini sends each parallel call without index, Ollama all at index 0):
    // merged, one tool would run on invalid JSON.
    const another =
      call?.id !== undefined &&
      call?.name !== undefined &&
      nonEmptyString(entry.id) &&
      entry.id !== call.id &&
      nonEmptyString(fn.name);
    if (!call || another) {
      call = { id: undefined, name: undefined, args: '' };
      call.index = this.#open(events, 'tool-call', () => ({
        type: 'tool-call',
        id: call.id,
        name: call.name,
        arguments: call.args,
      })).index;
      this.#calls.set(key, call);
    }
    // T1/T2/T4: the first non-empty string wins; "", null, non-strings and repeats are inert.
    if (call.id === undefined && nonEmptyString(entry.id)) call.id = entry.id;
    if (call.name === undefined && nonEmptyString(fn.name)) call.name = fn.name;
    const fragment = typeof fn.arguments === 'string' ? fn.arguments : '';
    call.args += fragment;
    const event = { type: 'tool-call-delta', index: call.index };
    if (call.id !== undefined) event.id = call.id;
    if (call.name !== undefined) event.name = call.name;
    event.arguments_delta = fragment;
    events.push(event);
  }

  // The whole chunk is checked before anything of it is applied, so a chunk of the wrong
  // shape changes nothing. Returns its choices (possibly empty).
  #validate(chunk) {
    if (!isObject(chunk)) throw fail('MALFORMED_RESPONSE', `chunk is not a JSON object: ${preview(chunk)}`);
    const choices = absent(chunk.choices) ? [] : chunk.choices;
    if (!Array.isArray(choices)) throw fail('MALFORMED_RESPONSE', '`choices` is not a list');
    if (!absent(chunk.error) && choices.length === 0) {
      const { code, message } = classifyStreamError(chunk.error);
      throw fail(code, message);
    }
    for (const choice of choices) {
      if (!isObject(choice)) throw fail('MALFORMED_RESPONSE', 'a choice is not an object');
      if (absent(choice.delta)) continue;
      if (!isObject(choice.delta)) throw fail('MALFORMED_RESPONSE', '`delta` is not an object');
      const calls = choice.delta.tool_calls;
      if (absent(calls)) continue;
      if (!Array.isArray(calls)) throw fail('MALFORMED_RESPONSE', '`tool_calls` is not a list');
      if (!calls.every(isObject)) throw fail('MALFORMED_RESPONSE', 'a `tool_calls` entry is not an object');
    }
    if (!absent(chunk.usage)) mapUsage(chunk.usage); // throws on a wrong shape
    return choices;
  }
}

function count(value, what, { required = false } = {}) {
  if (absent(value) && !required) return undefined;
  if (!Number.isInteger(value)) throw fail('MALFORMED_RESPONSE', `usage ${what} is not an integer: ${preview(value)}`);
  return value;
}

/**
 * C4: disjoint usage. `prompt_tokens` and `completion_tokens` must be integers (a usage
 * without them has the wrong shape); the cached and reasoning counts are optional and
 * appear in the event exactly when the wire sent them.
 */
export function mapUsage(usage) {
  if (!isObject(usage)) throw fail('MALFORMED_RESPONSE', '`usage` is not an object');
  const prompt = count(usage.prompt_tokens, 'prompt_tokens', { required: true });
  const completion = count(usage.completion_tokens, 'completion_tokens', { required: true });
  const promptDetails = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completionDetails = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const cached =
    count(promptDetails.cached_tokens, 'cached_tokens') ??
    count(usage.prompt_cache_hit_tokens, 'prompt_cache_hit_tokens');
  const reasoning = count(completionDetails.reasoning_tokens, 'reasoning_tokens');
  const mapped = { input_tokens: prompt - (cached ?? 0), output_tokens: completion };
  if (cached !== undefined) mapped.cache_read_tokens = cached;
  if (reasoning !== undefined) mapped.reasoning_tokens = reasoning;
  return mapped;
}

function preview(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
