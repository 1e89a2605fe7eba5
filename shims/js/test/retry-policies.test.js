import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { ChatOpenAI } from '@langchain/openai';
import { APICallError } from 'ai';
import OpenAI from 'openai';

import { LANGCHAIN_JS, OPENAI_NODE, VERCEL_AI } from '../lib/retry-policies.js';

const shimsDir = new URL('..', import.meta.url);

/** The first line a shim writes: its hello (stdin closed, so it exits after). */
function helloOf(script, ...flags) {
  const out = execFileSync(process.execPath, [script, ...flags], { cwd: shimsDir, input: '', encoding: 'utf8' });
  return JSON.parse(out.split('\n')[0]);
}

for (const [script, policy] of [
  ['openai-node.js', OPENAI_NODE],
  ['vercel-ai.js', VERCEL_AI],
  ['langchain-js.js', LANGCHAIN_JS],
]) {
  test(`${script} declares its library's retry layer under --native-retry only`, () => {
    const native = helloOf(script, '--native-retry');
    assert.equal(native.capabilities.retry, true);
    assert.deepEqual(native.retry_policy, policy);
    const content = helloOf(script);
    assert.equal(content.capabilities.retry, false);
    assert.equal('retry_policy' in content, false);
  });
}

// The installed libraries still run what their shims declare.

const declares = (policy, status) => policy.statuses.includes(status) || policy.statuses.includes(`${Math.floor(status / 100)}xx`);
const SAMPLE_STATUSES = [400, 401, 403, 404, 407, 408, 409, 410, 413, 422, 429, 500, 503, 529];

test('openai-node: its default budget, retried statuses and backoff bounds', async () => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9' });
  assert.equal(client.maxRetries, OPENAI_NODE.max_retries);
  for (const status of SAMPLE_STATUSES) {
    assert.equal(await client.shouldRetry(new Response(null, { status })), declares(OPENAI_NODE, status), `status ${status}`);
  }
  const said = (value) => client.shouldRetry(new Response(null, { status: 400, headers: { 'x-should-retry': value } }));
  assert.equal(await said('true'), OPENAI_NODE.should_retry_header);
  for (let retriesLeft = client.maxRetries; retriesLeft > 0; retriesLeft -= 1) {
    const waitS = client.calculateDefaultRetryTimeoutMillis(retriesLeft, client.maxRetries) / 1000;
    assert.ok(waitS >= OPENAI_NODE.backoff_min_s && waitS <= OPENAI_NODE.backoff_max_s, `${waitS} s`);
  }
});

test('the AI SDK: an HTTP failure is retryable on the declared statuses only', () => {
  for (const status of SAMPLE_STATUSES) {
    const error = new APICallError({ message: 'm', url: 'u', requestBodyValues: {}, statusCode: status });
    assert.equal(error.isRetryable, declares(VERCEL_AI, status), `status ${status}`);
  }
});

test("LangChain.js: the openai client's retries off, the AsyncCaller's on, statuses as declared", async () => {
  const model = new ChatOpenAI({ model: 'fake-model', apiKey: 'sk-test', configuration: { baseURL: 'http://127.0.0.1:9' } });
  model._getClientOptions({});
  assert.equal(model.client.maxRetries, 0);
  assert.equal(model.caller.maxRetries, LANGCHAIN_JS.max_retries);
  for (const status of SAMPLE_STATUSES) {
    // A 429 is retried when it says when to come back (within 60 s): it says so here.
    const headers = new Headers(status === 429 ? { 'retry-after': '1' } : {});
    const error = Object.assign(new Error('m'), { status, headers });
    let retried = true;
    try {
      await model.caller.onFailedAttempt(error);
    } catch {
      retried = false;
    }
    assert.equal(retried, declares(LANGCHAIN_JS, status), `status ${status}`);
  }
});
