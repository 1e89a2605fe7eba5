import assert from 'node:assert/strict';
import { test } from 'node:test';

import { errorCode } from '../lib/errors.js';
import { MessageTurn, contentBlocks, messageParams, messageUsage, stopFinish } from '../lib/messages.js';

test('a stop reason maps as in the Python shims; none is a stop', () => {
  assert.deepEqual(stopFinish(null), { type: 'finish', reason: 'stop' });
  assert.deepEqual(stopFinish('end_turn'), { type: 'finish', reason: 'stop' });
  assert.deepEqual(stopFinish('tool_use'), { type: 'finish', reason: 'tool-calls' });
  assert.deepEqual(stopFinish('model_context_window_exceeded'), { type: 'finish', reason: 'max-tokens' });
  assert.deepEqual(stopFinish('pause_turn'), { type: 'finish', reason: 'error', code: 'PAUSE_TURN' });
  assert.deepEqual(stopFinish('refusal'), { type: 'finish', reason: 'error', code: 'REFUSAL' });
});

test('content blocks keep their order, signatures and redacted data; empty text opens nothing', () => {
  const blocks = contentBlocks([
    { type: 'thinking', thinking: 'hm', signature: 'EqQB' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: '' },
    { type: 'text', text: 'Hi' },
    { type: 'tool_use', id: 'toolu_A', name: 'f', input: { a: 1 } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
  ]);
  assert.deepEqual(blocks, [
    { type: 'reasoning', text: 'hm', signature: 'EqQB' },
    { type: 'reasoning', text: '', redacted: 'opaque' },
    { type: 'text', text: 'Hi' },
    { type: 'tool-call', id: 'toolu_A', name: 'f', arguments: '{"a":1}' },
  ]);
});

test('usage keeps cache reads and writes apart and needs both counts', () => {
  assert.deepEqual(messageUsage(10, 7, 5, 3), {
    type: 'usage',
    input_tokens: 10,
    output_tokens: 7,
    cache_read_tokens: 5,
    cache_write_tokens: 3,
  });
  assert.equal(messageUsage(undefined, 7), null);
});

test('a turn with a failure ends with it, after what was assembled', () => {
  const events = [...new MessageTurn({ blocks: [{ type: 'text', text: 'Hel' }], failure: Object.assign(new Error('x'), { statusCode: 529 }) }).events()];
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'error', code: 'SERVER', message: 'Error: x' });
});

test('the request loses `stream` and keeps a max_tokens', () => {
  assert.deepEqual(messageParams({ request: { model: 'm', stream: true, messages: [] } }), {
    max_tokens: 1024,
    model: 'm',
    messages: [],
  });
});

test("an Anthropic error body's type stands for its status", () => {
  const overloaded = Object.assign(new Error('{"type":"error"}'), { error: { type: 'error', error: { type: 'overloaded_error' } } });
  assert.equal(errorCode(overloaded), 'SERVER');
  const limited = Object.assign(new Error('{}'), { error: { error: { type: 'rate_limit_error' } } });
  assert.equal(errorCode(limited), 'RATE_LIMIT');
  assert.equal(errorCode(Object.assign(new Error('{}'), { error: { error: { type: 'some_new_error' } } })), null);
});
