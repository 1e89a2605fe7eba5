import assert from 'node:assert/strict';
import { test } from 'node:test';

import { classifyStatus, errorCode } from '../lib/errors.js';

const named = (name, fields = {}, message = 'm') => {
  const Class = { [name]: class extends Error {} }[name];
  return Object.assign(new Class(message), fields);
};

test('HTTP statuses classify as the oracle does', () => {
  assert.equal(classifyStatus(401, ''), 'AUTH');
  assert.equal(classifyStatus(429, 'slow down'), 'RATE_LIMIT');
  assert.equal(classifyStatus(429, 'You exceeded your current quota'), 'QUOTA');
  assert.equal(classifyStatus(400, "This model's maximum context length is 8192"), 'CONTEXT_WINDOW_EXCEEDED');
  assert.equal(classifyStatus(400, 'bad'), 'INVALID_REQUEST');
  assert.equal(classifyStatus(503, ''), 'SERVER');
  assert.equal(classifyStatus(302, ''), 'HTTP_302');
});

test('class names along the prototype chain, and the AI SDK names', () => {
  assert.equal(errorCode(named('APIConnectionTimeoutError')), 'TIMEOUT');
  assert.equal(errorCode(named('RateLimitError', { status: 429 })), 'RATE_LIMIT');
  assert.equal(errorCode(Object.assign(new Error('x'), { name: 'AI_JSONParseError' })), 'MALFORMED_RESPONSE');
  assert.equal(errorCode(named('InternalServerError', { status: 529 })), 'SERVER');
  assert.equal(errorCode(named('BadRequestError', { status: 400 })), 'INVALID_REQUEST');
});

test('a provider error frame without status is SERVER; an unknown error has no code', () => {
  assert.equal(errorCode(named('APIError')), 'SERVER');
  assert.equal(errorCode(named('StreamProviderError')), 'SERVER');
  assert.equal(errorCode(new TypeError('chunk.choices is not iterable')), null);
});

test('a 2xx status says nothing: the cause is read instead', () => {
  const socket = named('SocketError', {}, 'other side closed');
  const terminated = new TypeError('terminated', { cause: socket });
  const call = named('APICallError', { statusCode: 200 }, 'Failed to process successful response');
  call.cause = terminated;
  assert.equal(errorCode(call), 'TRANSPORT');
  assert.equal(errorCode(Object.assign(new Error('read'), { code: 'ECONNRESET' })), 'TRANSPORT');
});

test('a retry wrapper is read through its last error', () => {
  const last = named('APICallError', { statusCode: 429 }, 'Too Many Requests');
  assert.equal(errorCode(named('RetryError', { lastError: last })), 'RATE_LIMIT');
});

test('a stream that ended without a finish reason closed early', () => {
  assert.equal(errorCode(named('InvalidResponseDataError', {}, 'Response stream ended without a finish reason.')), 'STREAM_CLOSED');
});

test("openai-node's refusals of a stream that closed early or sent nothing are coded", () => {
  assert.equal(errorCode(named('OpenAIError', {}, 'missing finish_reason for choice 0')), 'STREAM_CLOSED');
  assert.equal(errorCode(named('OpenAIError', {}, 'request ended without sending any chunks')), 'EMPTY_RESPONSE');
  assert.equal(errorCode(named('OpenAIError', {}, 'missing role for choice 0')), null); // no such refusal
});

test("an OpenAI Responses error's own code is mapped, as codes.py RESPONSES_ERROR_CODES", () => {
  // openai-node keeps an `error` event's code on the APIError it throws (no HTTP status)
  assert.equal(errorCode(named('APIError', { code: 'context_length_exceeded' })), 'CONTEXT_WINDOW_EXCEEDED');
  assert.equal(errorCode(named('APIError', { code: 'insufficient_quota' })), 'QUOTA');
  assert.equal(errorCode(named('APIError', { code: 'something_new' })), 'SERVER');
});
