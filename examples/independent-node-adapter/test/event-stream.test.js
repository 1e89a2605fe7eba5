import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { EventStreamDecoder } from '../lib/event-stream.js';

const utf8 = (text) => new TextEncoder().encode(text);

/** Feed `body` split at every offset in `cuts`, then end it. */
function decode(body, cuts = []) {
  const bytes = typeof body === 'string' ? utf8(body) : body;
  const decoder = new EventStreamDecoder();
  const out = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...decoder.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(...decoder.end());
  return out;
}

const everySplit = (body) => {
  const bytes = utf8(body);
  const results = [];
  for (let cut = 0; cut <= bytes.length; cut += 1) results.push(decode(bytes, [cut]));
  return results;
};

test('LF, CR and CRLF give the same payloads', () => {
  const lf = 'data: {"a":1}\n\ndata: [DONE]\n\n';
  for (const body of [lf, lf.replaceAll('\n', '\r'), lf.replaceAll('\n', '\r\n')]) {
    assert.deepEqual(decode(body), ['{"a":1}', '[DONE]']);
  }
});

test('the library alone never dispatches a last event ended by bare CRs', () => {
  // The gap EventStreamDecoder.end() closes; if a later version fixes it, this test says so.
  const seen = [];
  const parser = createParser({ onEvent: (event) => seen.push(event.data) });
  parser.feed('data: [DONE]\r\r');
  assert.deepEqual(seen, []);
  assert.deepEqual(decode('data: [DONE]\r\r'), ['[DONE]']);
});

test('a trailing CR completes only its line, not an event', () => {
  assert.deepEqual(decode('data: [DONE]\r'), []);
  assert.deepEqual(decode('data: [DONE]\n'), []);
  assert.deepEqual(decode('data: [DONE]'), []);
});

test('any split point, including inside CRLF and inside a UTF-8 character', () => {
  for (const body of ['data: {"t":"héllo 🌍"}\r\n\r\ndata: [DONE]\r\n\r\n', 'data: x\r\rdata: y\r\r']) {
    const whole = decode(body);
    for (const result of everySplit(body)) assert.deepEqual(result, whole);
  }
});

test('one byte per read', () => {
  const body = utf8(': ping\r\nevent: message\r\nid: 7\r\ndata:{"t":"é"}\r\n\r\ndata: [DONE]\r\r');
  const cuts = Array.from({ length: body.length - 1 }, (_, i) => i + 1);
  assert.deepEqual(decode(body, cuts), ['{"t":"é"}', '[DONE]']);
});

test('exactly one leading BOM is dropped, wherever the reads split it', () => {
  // The library alone strips "\xEF\xBB\xBF" read as Latin-1 characters, not U+FEFF.
  const seen = [];
  const parser = createParser({ onEvent: (event) => seen.push(event.data) });
  parser.feed('\u00EF\u00BB\u00BFdata: 1\n\n');
  assert.deepEqual(seen, ['1']);

  const body = '\uFEFFdata: 1\n\n';
  for (const result of everySplit(body)) assert.deepEqual(result, ['1']);
  // A second BOM is part of the first line, whose field name is then unknown.
  assert.deepEqual(decode('\uFEFF\uFEFFdata: 1\n\ndata: 2\n\n'), ['2']);
  // Text that merely looks like a BOM read as Latin-1 is content, not a BOM.
  assert.deepEqual(decode('\u00EF\u00BB\u00BFdata: 1\n\ndata: 2\n\n'), ['2']);
});

test('comments, other fields, multi-line data and events without data', () => {
  const body = ': keep-alive\n\nretry: 10\n\nid: 3\nevent: x\ndata: {"a":\ndata: 1}\n\ndata\n\n:\n\n';
  assert.deepEqual(decode(body), ['{"a":\n1}', '']);
});
