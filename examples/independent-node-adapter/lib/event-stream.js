// Bytes in, `data` payloads out: a WHATWG event-stream decoder built on eventsource-parser.
//
// The library does the line and field work (LF / CR / CRLF, `data:` with or without one
// space, multi-line data joined with "\n", comments and `event:` / `id:` / `retry:` /
// unknown fields ignored, dispatch only at a blank line, nothing for an event without
// data). Two gaps of eventsource-parser 3.1.x are closed here rather than in a fork:
//
// 1. A line ending in a bare CR at the very end of what was fed is held back (the CR could
//    be the first half of a CRLF). At end of body nothing more will come, so that CR is a
//    line terminator; 3.1.x never processes it, so a final event ended by "\r\r" would
//    never be dispatched. `end()` feeds "\n" after such a CR: CR LF is one terminator,
//    so this completes exactly that line and nothing else.
// 2. The library strips a leading BOM only in its byte-as-Latin-1 form ("\xEF\xBB\xBF"),
//    and only if it is in the first string fed. Bytes are decoded here with TextDecoder,
//    whose UTF-8 decode removes exactly one leading U+FEFF however the reads split it
//    (what the WHATWG parser asks for). The parser is then primed with one "\n" — an empty
//    line with no data, which dispatches nothing — so its own first-chunk BOM check can
//    never eat real characters of the body.
//
// Invalid UTF-8 becomes U+FFFD (the decoder is not fatal), as the WHATWG decode says.

import { createParser } from 'eventsource-parser';

export class EventStreamDecoder {
  #text = new TextDecoder('utf-8'); // ignoreBOM: false, i.e. one leading BOM is removed
  #payloads = [];
  #lastChar = '';
  #parser;

  constructor() {
    this.#parser = createParser({
      onEvent: (event) => this.#payloads.push(event.data),
      // Comments are keep-alives: they carry nothing. (The idle timer is re-armed by every
      // byte read, in attempt.js, so they need no special treatment here.)
      onComment: () => {},
      onError: () => {},
    });
    this.#parser.feed('\n');
  }

  /** Feed one network read (a Uint8Array). Returns the payloads dispatched by it. */
  push(bytes) {
    this.#feed(this.#text.decode(bytes, { stream: true }));
    return this.#drain();
  }

  /** The body ended cleanly. Returns the payloads the end of input completes. */
  end() {
    this.#feed(this.#text.decode());
    if (this.#lastChar === '\r') this.#parser.feed('\n');
    return this.#drain();
  }

  #feed(text) {
    if (text === '') return;
    this.#lastChar = text[text.length - 1];
    this.#parser.feed(text);
  }

  #drain() {
    const out = this.#payloads;
    this.#payloads = [];
    return out;
  }
}
