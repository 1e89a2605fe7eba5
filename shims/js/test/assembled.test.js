import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Assembled, failureEvent, finishEvent, usageEvent } from '../lib/assembled.js';

test('a wire finish reason maps as in the Python shims; none is a stop', () => {
  assert.deepEqual(finishEvent(null), { type: 'finish', reason: 'stop' });
  assert.deepEqual(finishEvent('tool_calls'), { type: 'finish', reason: 'tool-calls' });
  assert.deepEqual(finishEvent('length'), { type: 'finish', reason: 'max-tokens' });
  assert.deepEqual(finishEvent('content_filter'), { type: 'finish', reason: 'error', code: 'CONTENT_FILTER' });
});

test('usage input excludes cached tokens, and needs both counts', () => {
  assert.deepEqual(usageEvent(10, 3, 4, undefined), {
    type: 'usage',
    input_tokens: 6,
    output_tokens: 3,
    cache_read_tokens: 4,
  });
  assert.equal(usageEvent(undefined, 3, null, null), null);
});

test('blocks come as reasoning, text, calls; then usage and the finish', () => {
  const assembled = new Assembled({
    text: 'Hi',
    reasoning: 'hm',
    toolCalls: [{ id: '', name: 'f', arguments: '{}' }],
    usage: usageEvent(1, 2),
    finishReason: 'stop',
  });
  const types = [...assembled.events()].map((e) => e.block?.type ?? e.type);
  assert.deepEqual(types, ['block-start', 'reasoning', 'block-start', 'text', 'block-start', 'tool-call', 'usage', 'finish']);
  const call = [...assembled.events()].find((e) => e.block?.type === 'tool-call').block;
  assert.equal(call.id, ''); // an empty id stays empty: nothing is repaired
});

test('a call field the library handed over as no string is reported as its JSON text', () => {
  const assembled = new Assembled({ toolCalls: [{ id: 0, name: 'f', arguments: { city: 'Paris' } }] });
  const call = [...assembled.events()].find((e) => e.block?.type === 'tool-call').block;
  assert.deepEqual(call, { type: 'tool-call', id: '0', name: 'f', arguments: '{"city":"Paris"}' });
});

test('a failure reported as data ends with a coded finish, else a thrown', () => {
  class TypeValidationError extends Error {}
  const coded = failureEvent(new TypeValidationError('choices: expected array'));
  assert.equal(coded.type, 'finish');
  assert.equal(coded.code, 'MALFORMED_RESPONSE');
  assert.equal(failureEvent(new TypeError('x is undefined')).type, 'thrown');
  const after = new Assembled({ text: 'Hi', failure: new TypeValidationError('bad') });
  assert.deepEqual([...after.events()].map((e) => e.type), ['block-start', 'block-end', 'finish']);
});
