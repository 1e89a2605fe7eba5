import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Assembler } from '../lib/assembler.js';
import { AttemptFailure } from '../lib/failure.js';

const chunk = (delta, extra = {}) => ({ choices: [{ index: 0, delta, finish_reason: null }], ...extra });
const finish = (reason) => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });
const call = (fields) => chunk({ tool_calls: [{ index: 0, ...fields }] });

function play(...chunks) {
  const assembler = new Assembler();
  const events = chunks.flatMap((c) => assembler.accept(c));
  return [...events, ...assembler.done()];
}

test('identity survives "", null and repeats; deltas omit what is unknown', () => {
  const events = play(
    call({ function: { arguments: '{' } }),
    call({ id: 'call_1', function: { name: 'get', arguments: '' } }),
    call({ id: '', function: { name: null, arguments: '"a":1' } }),
    call({ id: 'call_1', function: { name: 'get', arguments: '}' } }),
    finish('tool_calls'),
  );
  const deltas = events.filter((e) => e.type === 'tool-call-delta');
  assert.deepEqual(deltas[0], { type: 'tool-call-delta', index: 0, arguments_delta: '{' });
  assert.deepEqual(
    events.find((e) => e.type === 'block-end').block,
    { type: 'tool-call', id: 'call_1', name: 'get', arguments: '{"a":1}' },
  );
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'tool-calls' });
});

test('a call never identified: usage, then MALFORMED_TOOL_CALL, and no block-end', () => {
  const events = play(
    chunk({ content: 'hi' }),
    call({ function: { name: 'f', arguments: '{}' } }),
    { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } },
  );
  assert.equal(events.filter((e) => e.type === 'block-end').length, 0);
  assert.deepEqual(events.at(-2), { type: 'usage', input_tokens: 5, output_tokens: 1 });
  assert.equal(events.at(-1).code, 'MALFORMED_TOOL_CALL');
});

test('empty, reasoning-only, whitespace-only and length-only completions', () => {
  assert.equal(play(chunk({ role: 'assistant', content: null, reasoning_content: '' }), finish('stop')).at(-1).code, 'EMPTY_RESPONSE');
  assert.equal(play({}).at(-1).code, 'EMPTY_RESPONSE');
  assert.equal(play(chunk({ reasoning_content: 'hm' })).at(-1).reason, 'stop');
  assert.equal(play(chunk({ content: ' ' }), finish('stop')).at(-1).reason, 'stop');
  assert.equal(play(finish('length')).at(-1).reason, 'max-tokens');
  assert.deepEqual(play(chunk({ content: 'x' }), finish('content_filter')).at(-1), {
    type: 'finish',
    reason: 'error',
    code: 'CONTENT_FILTER',
    message: 'model stopped: content_filter',
  });
});

test('usage is disjoint, the last one wins, and optional fields follow the wire', () => {
  const events = play(
    chunk({ content: 'x' }, { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    {
      choices: [],
      usage: {
        prompt_tokens: 283,
        completion_tokens: 69,
        prompt_cache_hit_tokens: 200,
        prompt_tokens_details: { cached_tokens: 256 },
        completion_tokens_details: { reasoning_tokens: 24 },
      },
    },
    { choices: null, usage: null },
  );
  assert.deepEqual(events.at(-2), {
    type: 'usage',
    input_tokens: 27,
    output_tokens: 69,
    cache_read_tokens: 256,
    reasoning_tokens: 24,
  });
});

test('shapes that are not a chunk fail MALFORMED_RESPONSE; an error object fails S7', () => {
  const failure = (payload) => {
    try {
      new Assembler().accept(payload);
    } catch (error) {
      assert.ok(error instanceof AttemptFailure);
      return error.code;
    }
    return null;
  };
  assert.equal(failure(null), 'MALFORMED_RESPONSE');
  assert.equal(failure({ choices: {} }), 'MALFORMED_RESPONSE');
  assert.equal(failure({ choices: [null] }), 'MALFORMED_RESPONSE');
  assert.equal(failure({ choices: [], usage: { prompt_tokens: 1.5, completion_tokens: 1 } }), 'MALFORMED_RESPONSE');
  assert.equal(failure({ choices: [], usage: { completion_tokens: 1 } }), 'MALFORMED_RESPONSE');
  assert.equal(failure({ choices: [], usage: { prompt_tokens: 3, completion_tokens: null } }), 'MALFORMED_RESPONSE');
  assert.equal(failure({ error: { message: 'boom', type: 'server_error' } }), 'SERVER');
  assert.equal(failure({ choices: [], error: { message: 'slow down', code: 429 } }), 'RATE_LIMIT');
  assert.equal(failure({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: null }] } }] }), null);
});
