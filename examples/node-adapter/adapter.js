#!/usr/bin/env node
// Example streamconform subprocess adapter: Node.js 20, no npm packages.
//
// It speaks the JSON Lines protocol of docs/adapter-protocol.md (version 1.1) on stdin/stdout: a
// `hello` line first, then, for each `run` line, it POSTs the case's request with the global
// `fetch` to the endpoint of the case's dialect (`{base_url}/chat/completions`, or
// `{base_url}/v1/messages` for Anthropic Messages), translates the event stream into protocol
// events, retries as the case's policy says, and closes the case with `end`. Copy it as the
// starting point of an adapter for your own client.
//
//     conformance run --adapter-cmd "node examples/node-adapter/adapter.js"
//
// Sections: protocol I/O, SSE decoder, translators (chat-completions, Anthropic Messages), HTTP
// classification, one attempt, retry loop.
"use strict";

const readline = require("node:readline");

const DONE = "[DONE]";
const EXCERPT = 120; // characters of a bad payload quoted in a failure message

// --- protocol I/O ------------------------------------------------------------------------------

const HELLO = {
  type: "hello",
  protocol: 1.1,
  name: "example-node-adapter",
  version: "1.1.0",
  capabilities: { deltas: true, reasoning: true, usage: true, retry: true, error_codes: true },
  dialects: ["chat-completions", "anthropic-messages"],
};

// One JSON object per line. stdout is synchronous for pipes on Linux and macOS, so each line
// reaches the suite as soon as it is written.
function writeLine(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// Diagnostics go to stderr, which the suite captures into its report.
function log(text) {
  process.stderr.write(text + "\n");
}

async function main() {
  writeLine(HELLO);
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) { // cases arrive one at a time; EOF ends the run
    if (!line.trim()) continue;
    let message;
    let caseId;
    try {
      message = JSON.parse(line);
      caseId = message.case;
      if (message.type !== "run") {
        throw new Error(`unsupported message type ${JSON.stringify(message.type)}`);
      }
    } catch (error) { // not a run line: report it against its case, if it has one
      log(`bad input line ${JSON.stringify(line.trim().slice(0, 200))}: ${error}`);
      if (typeof caseId === "string") {
        writeLine({ case: caseId, type: "thrown", message: String(error.message) });
        writeLine({ case: caseId, type: "end" });
      }
      continue;
    }
    const emit = (event) => writeLine({ case: caseId, ...event }); // "case" leads every line
    try {
      await runCase(message, emit);
    } catch (error) { // a bug in the adapter must not end the process
      log(`[${caseId}] adapter error: ${error && error.stack}`);
      emit({ type: "thrown", message: String(error) });
    }
    emit({ type: "end" });
  }
}

// --- SSE decoder (WHATWG "text/event-stream": bytes in, data payloads out) ---------------------

// Independent of how the body is split into reads, including inside a UTF-8 character.
class SSEDecoder {
  constructor() {
    // Strips one leading BOM (even split across reads); invalid bytes become U+FFFD.
    this.decoder = new TextDecoder("utf-8");
    this.partial = ""; // an unterminated line carried over to the next read
    this.afterCR = false; // the last read ended with CR: an LF opening the next one is its pair
    this.data = []; // data lines of the event being built
    this.event = ""; // its `event:` name (Anthropic names every event; chat none)
  }

  // The { event, data } of each event the bytes complete.
  feed(bytes) {
    let text = this.decoder.decode(bytes, { stream: true });
    if (!text) return [];
    if (this.afterCR && text.startsWith("\n")) text = text.slice(1);
    const buffer = this.partial + text;
    const payloads = [];
    let start = 0;
    for (const match of buffer.matchAll(/\r\n|\r|\n/g)) {
      const payload = this.line(buffer.slice(start, match.index));
      if (payload !== null) payloads.push(payload);
      start = match.index + match[0].length;
    }
    this.afterCR = buffer.endsWith("\r");
    this.partial = buffer.slice(start);
    return payloads;
  }

  line(line) {
    if (line === "") { // blank line: dispatch, unless the event had no data line at all
      const payload = this.data.length
        ? { event: this.event || "message", data: this.data.join("\n") }
        : null;
      this.data = [];
      this.event = "";
      return payload;
    }
    if (line.startsWith(":")) return null; // comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value; // id:, retry:, unknown: change nothing
    return null;
  }
}

// --- translator (chat-completions chunks of one attempt -> protocol events) --------------------

class Malformed extends Error {} // valid JSON that is not a chat-completions chunk

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const isEmpty = (v) => // Python-style falsiness, used for "no choices"
  v == null || v === false || v === 0 || v === "" ||
  (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0);
// Only a non-empty string identifies a tool call; "", null and non-strings are inert.
const identity = (v) => (typeof v === "string" && v !== "" ? v : null);

function asList(value, name) {
  if (value == null) return [];
  if (!Array.isArray(value)) throw new Malformed(`${name} is not a list`);
  return value;
}

function asObject(value, name) {
  if (value == null) return {};
  if (!isObject(value)) throw new Malformed(`${name} is not an object`);
  return value;
}

// Once a call has its id and name, an entry at its key that brings another id and a name is the
// next call: Gemini sends each parallel call without index (each at place 0), Ollama every one at
// index 0. Merged, they would run one tool on invalid JSON.
function anotherCall(block, call) {
  return Boolean(block.id && block.name && call.id && call.id !== block.id && call.name);
}

// Shape-check a whole chunk before applying any of it: { choices: [parts], usage: event|null }.
function readChunk(document) {
  if (!isObject(document)) throw new Malformed("the payload is not a JSON object");
  const choices = asList(document.choices, "choices").map((choice) => {
    if (!isObject(choice)) throw new Malformed("a choice is not an object");
    const delta = asObject(choice.delta, "delta");
    const calls = asList(delta.tool_calls, "tool_calls").map((entry, position) => {
      if (!isObject(entry)) throw new Malformed("a tool_calls entry is not an object");
      // A call is keyed by its wire index as JSON text (0 and "0" differ); an entry without one
      // (Ollama, Gemini) takes its position in the array.
      const key = JSON.stringify(entry.index == null ? position : entry.index);
      const fn = asObject(entry.function, "function");
      const args = typeof fn.arguments === "string" ? fn.arguments : ""; // raw, never parsed
      return { key, id: identity(entry.id), name: identity(fn.name), args };
    });
    const str = (v) => (typeof v === "string" ? v : "");
    const reason = choice.finish_reason;
    return {
      reasoning: str(delta.reasoning_content),
      content: str(delta.content),
      calls,
      reason: typeof reason === "string" && reason !== "" ? reason : null, // "" = absent
    };
  });
  return { choices, usage: readUsage(document.usage) };
}

// Disjoint usage: input_tokens excludes the cached prompt tokens.
function readUsage(value) {
  if (value == null) return null;
  const usage = asObject(value, "usage");
  const promptDetails = asObject(usage.prompt_tokens_details, "prompt_tokens_details");
  const outputDetails = asObject(usage.completion_tokens_details, "completion_tokens_details");
  const cached = promptDetails.cached_tokens ?? usage.prompt_cache_hit_tokens ?? null;
  const reasoning = outputDetails.reasoning_tokens ?? null;
  const prompt = usage.prompt_tokens ?? null;
  const completion = usage.completion_tokens ?? null;
  if (![prompt, completion, cached, reasoning].every((n) => n === null || Number.isInteger(n))) {
    throw new Malformed("a usage count is not an integer");
  }
  if (prompt === null || completion === null) {
    throw new Malformed("usage lacks prompt_tokens or completion_tokens");
  }
  const event = { type: "usage", input_tokens: prompt - (cached ?? 0), output_tokens: completion };
  event.cache_read_tokens = cached ?? 0; // always reported, 0 when the wire says nothing about it
  if (reasoning !== null) event.reasoning_tokens = reasoning;
  return event;
}

// A provider error sent inside a 200 stream: an `error` and no choices to translate.
const isErrorPayload = (doc) => isObject(doc) && doc.error != null && isEmpty(doc.choices);
const errorFinish = (code, message) => ({ type: "finish", reason: "error", code, message });

// What the translators of both dialects share: one finish per attempt, and a failure reported
// after the usage the wire already sent.
class AttemptTranslator {
  constructor() {
    this.usage = null;
    this.finish = null;
  }

  // A failure finish, after any usage the wire already sent (billed tokens stay visible).
  // Open blocks stay open: closing them would pass partial output off as complete.
  fail(code, message) {
    if (this.finish) return [];
    this.finish = errorFinish(code, message);
    return [...(this.usage ? [this.usage] : []), this.finish];
  }
}

// Feed payloads in order. Deltas come out at once; block ends, usage and the finish wait for
// [DONE]. Exactly one finish is produced (`this.finish`); nothing is read after it.
class Translator extends AttemptTranslator {
  static END = DONE;

  constructor() {
    super();
    this.blocks = []; // { type, parts, id, name }; position = index
    this.text = null; // index of the text block, once opened
    this.reasoning = null;
    this.tools = new Map(); // wire tool_calls[].index -> block index
    this.reason = null; // last string finish_reason
  }

  feed(payload) { // chat-completions events are unnamed: the name changes nothing
    if (this.finish) return [];
    if (payload === DONE) return this.done();
    if (payload.startsWith(":")) return []; // a keep-alive comment a gateway re-wrapped as data
    let document;
    try {
      document = JSON.parse(payload);
    } catch {
      return this.fail("MALFORMED_RESPONSE", `malformed SSE payload: ${payload.slice(0, EXCERPT)}`);
    }
    if (isErrorPayload(document)) return this.fail(...classifyStreamError(document.error));
    let chunk;
    try {
      chunk = readChunk(document);
    } catch (problem) {
      if (!(problem instanceof Malformed)) throw problem;
      const why = `unexpected chunk shape (${problem.message})`;
      return this.fail("MALFORMED_RESPONSE", `${why}: ${payload.slice(0, EXCERPT)}`);
    }
    const events = [];
    for (const { reasoning, content, calls, reason } of chunk.choices) { // choices merge
      if (reasoning) {
        this.reasoning = this.open("reasoning", this.reasoning, events);
        this.blocks[this.reasoning].parts.push(reasoning);
        events.push({ type: "reasoning-delta", index: this.reasoning, text: reasoning });
      }
      if (content) {
        this.text = this.open("text", this.text, events);
        this.blocks[this.text].parts.push(content);
        events.push({ type: "text-delta", index: this.text, text: content });
      }
      for (const call of calls) {
        let known = this.tools.get(call.key) ?? null;
        if (known !== null && anotherCall(this.blocks[known], call)) known = null;
        const index = this.open("tool-call", known, events);
        this.tools.set(call.key, index);
        const block = this.blocks[index];
        block.id = block.id ?? call.id; // set once, never concatenated
        block.name = block.name ?? call.name;
        block.parts.push(call.args);
        const delta = { type: "tool-call-delta", index };
        if (block.id) delta.id = block.id; // identity as known so far; unknown is omitted
        if (block.name) delta.name = block.name;
        delta.arguments_delta = call.args;
        events.push(delta);
      }
      this.reason = reason ?? this.reason;
    }
    this.usage = chunk.usage ?? this.usage;
    return events;
  }

  open(kind, index, events) {
    if (index !== null) return index;
    this.blocks.push({ type: kind, parts: [], id: null, name: null });
    events.push({ type: "block-start", index: this.blocks.length - 1, block_type: kind });
    return this.blocks.length - 1;
  }

  done() {
    const usage = this.usage ? [this.usage] : [];
    for (const [index, block] of this.blocks.entries()) {
      const missing = ["id", "name"].filter((k) => block.type === "tool-call" && !block[k]);
      if (missing.length) { // never close an unidentified call; report usage, then fail (no ends)
        const text = `tool call at index ${index} has no ${missing.join(" or ")} at [DONE]`;
        return this.fail("MALFORMED_TOOL_CALL", text);
      }
    }
    const ends = this.blocks.map((b, index) => ({ type: "block-end", index, block: assemble(b) }));
    const reason = this.reason ?? "stop";
    const mapped = { stop: "stop", tool_calls: "tool-calls", length: "max-tokens" };
    if (reason === "stop" && !this.blocks.length) {
      const why = "model returned a completed response with no content";
      this.finish = errorFinish("EMPTY_RESPONSE", why);
    } else if (Object.hasOwn(mapped, reason)) {
      this.finish = { type: "finish", reason: mapped[reason] };
    } else {
      this.finish = errorFinish(reason.toUpperCase(), `model stopped: ${reason}`);
    }
    return [...ends, ...usage, this.finish];
  }
}

function assemble(block) {
  const joined = block.parts.join("");
  if (block.type === "tool-call" || block.type === "server-tool") {
    return { type: block.type, id: block.id, name: block.name, arguments: joined };
  }
  const assembled = { type: block.type, text: joined };
  // Continuity tokens, verbatim: the provider needs them back in the next request.
  for (const key of ["signature", "redacted"]) if (block[key] != null) assembled[key] = block[key];
  return assembled;
}

// --- translator (Anthropic Messages events of one attempt -> protocol events) ------------------

// content_block.type -> the protocol's block type; another type is skipped, its index kept.
const MESSAGES_BLOCKS = {
  text: "text",
  thinking: "reasoning",
  redacted_thinking: "reasoning",
  tool_use: "tool-call",
  server_tool_use: "server-tool",
};
// delta.type -> [the block types it belongs to, the field holding its fragment]
const MESSAGES_DELTAS = {
  text_delta: [["text"], "text"],
  thinking_delta: [["reasoning"], "thinking"],
  signature_delta: [["reasoning"], "signature"],
  input_json_delta: [["tool-call", "server-tool"], "partial_json"],
};
const STOP_REASONS = { // stop_reason -> finish reason; refusal and pause_turn are failures
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool-calls",
  max_tokens: "max-tokens",
  model_context_window_exceeded: "max-tokens",
};
const STOP_CODES = { refusal: "REFUSAL", pause_turn: "PAUSE_TURN" };
// the wire's counter -> the protocol's (Anthropic's input_tokens already excludes the cache)
const MESSAGES_USAGE = {
  input_tokens: "input_tokens",
  output_tokens: "output_tokens",
  cache_read_input_tokens: "cache_read_tokens",
  cache_creation_input_tokens: "cache_write_tokens",
};
// The table's entry for a wire value, or null (never an inherited property such as "toString").
const own = (table, key) =>
  typeof key === "string" && Object.hasOwn(table, key) ? table[key] : null;

// Feed the data payloads of one Messages attempt in order (each names its event in its `type`).
// Blocks are keyed by the wire's index, never by position; the block ends, usage and finish wait
// for `message_stop`. Usage counters are assigned, never summed: the wire sends cumulative
// counts on `message_start` and again on `message_delta`.
class MessagesTranslator extends AttemptTranslator {
  static END = "message_stop";

  constructor() {
    super();
    this.blocks = []; // the blocks reported; position = protocol index
    this.wire = new Map(); // wire index (JSON text) -> block; null: a skipped block
    this.started = false; // message_start was read
    this.counts = {};
    this.reason = null;
  }

  feed(payload, event) {
    if (this.finish || event === "ping") return []; // a ping may come anywhere, whatever its data
    let document;
    try {
      document = JSON.parse(payload);
    } catch {
      return this.fail("MALFORMED_RESPONSE", `malformed SSE payload: ${payload.slice(0, EXCERPT)}`);
    }
    if (!isObject(document)) {
      return this.fail("MALFORMED_RESPONSE", `not an event object: ${payload.slice(0, EXCERPT)}`);
    }
    try {
      return this.apply(document, event);
    } catch (problem) {
      if (!(problem instanceof Malformed)) throw problem;
      const why = `unexpected event (${problem.message})`;
      return this.fail("MALFORMED_RESPONSE", `${why}: ${payload.slice(0, EXCERPT)}`);
    }
  }

  apply(document, event) {
    const kind = document.type || event; // the data names its event; else the event line
    if (kind === "error") return this.fail(...classifyMessagesError(document.error ?? document));
    if (!this.started && kind !== "message_start") {
      throw new Malformed(`${JSON.stringify(kind)} before message_start`);
    }
    switch (kind) {
      case "message_start":
        this.started = true;
        this.count(asObject(document.message, "message").usage);
        return [];
      case "content_block_stop": {
        const block = this.wire.get(JSON.stringify(document.index ?? null));
        if (block) block.stopped = true;
        return [];
      }
      case "content_block_start":
        return this.start(document);
      case "content_block_delta":
        return this.delta(document);
      case "message_delta": {
        const reason = asObject(document.delta, "delta").stop_reason;
        if (typeof reason === "string" && reason) this.reason = reason;
        this.count(document.usage);
        return [];
      }
      case "message_stop":
        return this.done();
      default:
        return []; // events this adapter does not know
    }
  }

  start(document) {
    const key = JSON.stringify(document.index ?? null);
    if (this.wire.has(key)) throw new Malformed(`a second content_block_start for index ${key}`);
    const wire = asObject(document.content_block, "content_block");
    const kind = own(MESSAGES_BLOCKS, wire.type);
    if (kind === null) {
      this.wire.set(key, null);
      return [];
    }
    const block = { type: kind, parts: [], id: identity(wire.id), name: identity(wire.name) };
    block.index = null; // its protocol index, once it opens
    this.wire.set(key, block);
    if (wire.type === "redacted_thinking") {
      block.redacted = typeof wire.data === "string" ? wire.data : "";
    }
    if (wire.type === "thinking") {
      block.parts.push(typeof wire.thinking === "string" ? wire.thinking : "");
      const signature = typeof wire.signature === "string" ? wire.signature : "";
      block.signature = signature || null; // "" until its signature_delta
    }
    if (kind === "tool-call" || kind === "server-tool") {
      block.input = wire.input ?? null; // the arguments, unless input_json_deltas follow
    }
    // A text or thinking block is content once something arrives in it (an empty one is none,
    // and no block): it opens then.
    const empty = block.parts.join("") === "" && block.redacted === undefined;
    if ((kind === "text" || kind === "reasoning") && empty) return [];
    return this.open(block);
  }

  open(block) {
    if (block.index !== null) return [];
    block.index = this.blocks.length;
    this.blocks.push(block);
    return [{ type: "block-start", index: block.index, block_type: block.type }];
  }

  delta(document) {
    const key = JSON.stringify(document.index ?? null);
    if (!this.wire.has(key)) { // never attach a fragment to another block
      throw new Malformed(`a delta for index ${key}, which never started`);
    }
    const block = this.wire.get(key);
    const delta = asObject(document.delta, "delta");
    const known = own(MESSAGES_DELTAS, delta.type);
    if (block === null || known === null) return []; // a skipped block's, or an unknown delta
    if (block.stopped) throw new Malformed(`a delta for index ${key} after its content_block_stop`);
    const [belongs, field] = known;
    if (!belongs.includes(block.type)) {
      throw new Malformed(`a ${delta.type} inside a ${block.type} block`);
    }
    const fragment = typeof delta[field] === "string" ? delta[field] : "";
    if (field === "signature") {
      block.signature = (block.signature ?? "") + fragment;
      return [];
    }
    block.parts.push(fragment); // "" appends nothing: it never resets the input
    if (field === "partial_json") return [callDelta(block.index, block, fragment)];
    if (fragment === "") return [];
    const opened = this.open(block);
    return [...opened, { type: `${block.type}-delta`, index: block.index, text: fragment }];
  }

  count(usage) {
    for (const [wire, value] of Object.entries(asObject(usage, "usage"))) {
      const name = own(MESSAGES_USAGE, wire);
      if (name === null || value == null) continue;
      if (!Number.isInteger(value)) throw new Malformed("a usage count is not an integer");
      this.counts[name] = value; // assigned, never summed
    }
    if ("input_tokens" in this.counts || "output_tokens" in this.counts) {
      this.usage = {
        type: "usage",
        input_tokens: this.counts.input_tokens ?? 0,
        output_tokens: this.counts.output_tokens ?? 0,
        cache_read_tokens: this.counts.cache_read_tokens ?? 0,
      };
      if ("cache_write_tokens" in this.counts) {
        this.usage.cache_write_tokens = this.counts.cache_write_tokens;
      }
    }
  }

  done() {
    // A thinking block with nothing but a signature is content too: it opens at the end.
    const signed = [...this.wire.values()]
      .filter((block) => block && block.signature)
      .flatMap((block) => this.open(block));
    for (const [index, block] of this.blocks.entries()) {
      const missing = ["id", "name"].filter((k) => block.type === "tool-call" && !block[k]);
      if (missing.length) { // never close an unidentified call
        const text = `tool call at index ${index} has no ${missing.join(" or ")}`;
        return this.fail("MALFORMED_TOOL_CALL", text);
      }
    }
    const calls = this.blocks.some((block) => block.type === "tool-call");
    const reason = this.reason ?? (calls ? "tool_use" : "end_turn");
    if (own(STOP_CODES, reason)) return this.fail(STOP_CODES[reason], `model stopped: ${reason}`);
    const mapped = own(STOP_REASONS, reason);
    if (mapped === null) return this.fail(reason.toUpperCase(), `model stopped: ${reason}`);
    if (mapped === "stop" && !this.blocks.length) {
      return this.fail("EMPTY_RESPONSE", "model returned a completed response with no content");
    }
    // A call whose input came whole in its start (no input_json_delta) has it as its
    // arguments, sent as its one fragment so that its deltas still join to them.
    const inputs = [];
    for (const [index, block] of this.blocks.entries()) {
      if (block.input == null || block.parts.join("") !== "") continue;
      block.parts.push(JSON.stringify(block.input));
      inputs.push(callDelta(index, block, block.parts.at(-1)));
    }
    // A block never stopped (max_tokens) is closed as it stands: the finish tells.
    const ends = this.blocks.map((b, index) => ({ type: "block-end", index, block: assemble(b) }));
    this.finish = { type: "finish", reason: mapped };
    return [...signed, ...inputs, ...ends, ...(this.usage ? [this.usage] : []), this.finish];
  }
}

// A tool-call-delta: the call's identity as known so far, and an arguments fragment.
function callDelta(index, block, fragment) {
  const event = { type: "tool-call-delta", index };
  if (block.id) event.id = block.id;
  if (block.name) event.name = block.name;
  event.arguments_delta = fragment;
  return event;
}

// Each dialect's endpoint (after the run line's base_url), credentials header and translator.
const DIALECTS = {
  "chat-completions": {
    endpoint: "/chat/completions",
    credentials: (key) => ({ Authorization: `Bearer ${key}` }),
    Translator,
  },
  "anthropic-messages": {
    endpoint: "/v1/messages",
    credentials: (key) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" }),
    Translator: MessagesTranslator,
  },
};

// --- HTTP classification (status + wording -> code; Retry-After) -------------------------------

const QUOTA = new RegExp(
  "insufficient[ _-](?:quota|balance|credits?)|(?:quota|usage limit)[ _-](?:exceeded|exhausted" +
    "|reached)|exceed(?:ed|s)?\\s+(?:(?:your|the)\\s+)?(?:current\\s+)?quota" +
    "|(?:balance|credits?)\\s+(?:exhausted|depleted)|out of (?:credits?|budget)" +
    "|spend[ _-]limit", "i");
const CONTEXT = new RegExp(
  "context[ _-]length[ _-]exceeded|maximum context length|context window" +
    "|too large for (?:the )?(?:model(?:'s)? )?context", "i");

// The first matching rule wins.
function codeForStatus(status, detail) {
  if (status === 401 || status === 403) return "AUTH";
  if (status === 413) return "INVALID_REQUEST";
  if (QUOTA.test(detail)) return "QUOTA"; // a 429 that waiting will not clear
  if (status === 429) return "RATE_LIMIT";
  if (status === 400) return CONTEXT.test(detail) ? "CONTEXT_WINDOW_EXCEEDED" : "INVALID_REQUEST";
  return status >= 500 ? "SERVER" : `HTTP_${status}`;
}

// [message or null, wording to classify] of an OpenAI-style error object or string.
function describeError(error) {
  if (typeof error === "string") return [error || null, error];
  if (!isObject(error)) return [null, ""];
  const details = isObject(error.details) ? error.details : {};
  const parts = [error.code, error.type, error.message, details.error_code];
  const wording = parts
    .filter((p) => (typeof p === "string" || Number.isInteger(p)) && p)
    .map(String)
    .join(" ");
  return [typeof error.message === "string" && error.message ? error.message : null, wording];
}

// SERVER, unless the error object carries an HTTP status (`status` or a numeric `code`).
function classifyStreamError(error) {
  const [message, wording] = describeError(error);
  const fields = isObject(error) ? error : {};
  const isStatus = (s) => Number.isInteger(s) && s >= 100 && s <= 599;
  const status = [fields.status, fields.code].find(isStatus);
  const code = status === undefined ? "SERVER" : codeForStatus(status, wording);
  return [code, message || "provider reported an error inside the stream"];
}

// An Anthropic error object's type -> the HTTP status it stands for.
const ERROR_TYPE_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

// An Anthropic `error` event: classified as the HTTP error its type stands for.
function classifyMessagesError(error) {
  const [code, message] = classifyStreamError(error);
  const status = own(ERROR_TYPE_STATUS, isObject(error) ? error.type : null);
  return [status === null ? code : codeForStatus(status, describeError(error)[1]), message];
}

function classifyHttpError(status, body) {
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(body);
  let message = null;
  let wording = text;
  try {
    const document = JSON.parse(text);
    if (isObject(document) && document.error != null) {
      [message, wording] = describeError(document.error);
    }
  } catch {} // not JSON: classify the raw text
  return [codeForStatus(status, wording), message || `provider API error (HTTP ${status})`];
}

// Delay-seconds or an HTTP date, in ms from now; null when zero, past or unparsable.
function parseRetryAfter(value) {
  const text = (value ?? "").trim();
  const delayMs = /^[0-9]+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - Date.now();
  return Number.isFinite(delayMs) && delayMs > 0 ? delayMs : null;
}

// --- one attempt: exactly one HTTP request -----------------------------------------------------

class IOFailure extends Error {} // wraps errors of fetch and of the body stream, not of our code
const io = (promise) =>
  promise.catch((error) => {
    throw new IOFailure(String(error), { cause: error });
  });

// POST once and emit the attempt's events. Returns { finish, retryAfter } (provider's ms or null).
async function runAttempt(kase, body, deadline, emit) {
  const dialect = DIALECTS[kase.dialect ?? "chat-completions"];
  if (!dialect) throw new Error(`unsupported dialect ${JSON.stringify(kase.dialect)}`);
  const url = kase.base_url.replace(/\/$/, "") + dialect.endpoint;
  if (!/^https?:$/.test(new URL(url).protocol)) throw new Error(`not an http(s) URL: ${url}`);
  const idleMs = kase.idle_timeout_s * 1000;
  const translator = new dialect.Translator();
  const out = (events) => { for (const event of events) emit(event); };
  let retryAfter = null;
  let stage = "request to";
  let reader = null;

  // The idle timer: restarted by every byte received, never running past the case's deadline.
  // When it fires it aborts the request, which closes the connection.
  const controller = new AbortController();
  let timer = null;
  let expired = null;
  const arm = () => {
    clearTimeout(timer);
    const ms = Math.max(1, Math.min(idleMs, deadline - performance.now()));
    timer = setTimeout(() => {
      const caseOver = performance.now() >= deadline - 1;
      expired = caseOver ? "case timeout_s reached" : `after ${Math.round(idleMs)}ms`;
      controller.abort();
    }, ms);
  };

  try {
    arm();
    const response = await io(fetch(url, {
      method: "POST",
      headers: {
        ...dialect.credentials(kase.api_key),
        "Content-Type": "application/json",
        Accept: "text/event-stream",
        Connection: "close", // a fresh connection per attempt, closed with it
      },
      body,
      redirect: "manual", // a redirect is an answer, not a second request
      signal: controller.signal,
    }));
    arm();
    stage = "stream from";
    if (!response.ok) {
      const errorBody = new Uint8Array(await io(response.arrayBuffer()));
      retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      out(translator.fail(...classifyHttpError(response.status, errorBody)));
    } else {
      reader = response.body ? response.body.getReader() : null; // a 204 has no body at all
    }
    const decoder = new SSEDecoder();
    while (!translator.finish) {
      const { done, value } = reader ? await io(reader.read()) : { done: true };
      arm();
      if (done) {
        const end = translator.constructor.END;
        out(translator.fail("STREAM_CLOSED", `SSE stream ended without ${end}`));
        break;
      }
      for (const { event, data } of decoder.feed(value)) {
        out(translator.feed(data, event)); // after its end the translator ignores the rest
      }
    }
  } catch (error) {
    if (!(error instanceof IOFailure)) throw error; // our own bug: reported as `thrown`
    if (expired) { // no byte for idle_timeout_s (or the case ran out of time)
      out(translator.fail("TIMEOUT", `stream idle timeout ${expired}`));
    } else { // refused, reset, cut chunked body
      const detail = (error.cause && error.cause.cause) || ""; // e.g. ECONNREFUSED
      log(`[${kase.case}] ${stage} ${url}: ${error.message} ${detail}`);
      out(translator.fail("TRANSPORT", `${stage} ${url} failed`));
    }
  } finally {
    clearTimeout(timer);
    if (reader) reader.cancel().catch(() => {}); // stop reading after [DONE] or a failure
    controller.abort(); // and make sure the connection is gone
  }
  return { finish: translator.finish, retryAfter };
}

// --- retry loop and case driver ----------------------------------------------------------------

// The wait before retrying after attempt `attempt` (1-based) failed, or null: the failure is final.
function retryDelayMs(policy, finish, retryAfter, attempt) {
  const failed = finish.reason === "error" || finish.reason === "aborted";
  if (!failed || !policy.retryable_codes.includes(finish.code)) return null;
  if (attempt > policy.max_retries) return null; // budget spent: the last failure is the outcome
  if (retryAfter !== null) { // the provider's own wait, exactly; beyond our cap: give up
    return retryAfter <= policy.max_delay_ms ? retryAfter : null;
  }
  const exponential = policy.initial_delay_ms * 2 ** Math.min(attempt - 1, 1023);
  const nominal = Math.min(exponential, policy.max_delay_ms);
  return nominal * (1 + policy.jitter_ratio * (Math.random() * 2 - 1));
}

const RUN_FIELDS = ["base_url", "api_key", "request", "retry", "idle_timeout_s", "timeout_s"];

async function runCase(kase, emit) {
  const lacking = RUN_FIELDS.filter((key) => kase[key] == null);
  if (lacking.length) throw new Error(`run line lacks ${lacking.join(", ")}`);
  const deadline = performance.now() + kase.timeout_s * 1000;
  const body = new TextEncoder().encode(JSON.stringify(kase.request)); // identical on every retry
  for (let attempt = 1; ; attempt++) {
    const { finish, retryAfter } = await runAttempt(kase, body, deadline, emit);
    const delay = retryDelayMs(kase.retry, finish, retryAfter, attempt);
    if (delay === null || performance.now() + delay >= deadline) return;
    emit({ type: "retry", attempt, code: finish.code, delay_ms: delay });
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

main().then(
  () => process.stdout.write("", () => process.exit(0)), // EOF on stdin: all cases done
  (error) => { log(`fatal: ${error && error.stack}`); process.exit(1); },
);
