// What the AI SDK shims share (`streamText` over a provider, the caller's view being the
// `fullStream` parts): the request's tools as SDK tools, and the parts read into the blocks
// the caller was handed, in the order they started. Text and reasoning are their deltas
// joined per part id (a reasoning part keeps the provider metadata its parts carried: the
// Anthropic provider's `signature` and `redactedData`); a call is a `tool-call` part (the
// SDK's decision that a call happened) with the raw arguments its streamed input carried
// (`tool-input-delta`s; the parsed `input` only for a call that was not streamed), beside the
// part's own `input` (all a provider put in the call: the Anthropic one's start input too) and
// whether the provider ran it (`providerExecuted`: a server tool, not the caller's); the turn
// ends as the `finish` part says. The SDK reports a failure as an `error` part (the HTTP
// call's, a bad chunk's), not an exception: without a `finish` part, or with `finish:
// error`, the first error part is the outcome, after what was assembled. An `abort` part is
// the SDK's own timeout (`timeout.chunkMs`).

import { jsonSchema, tool } from 'ai';

/** An `abort` part's reason, as the error a caller would see. */
class StreamAbortedError extends Error {
  constructor(reason) {
    super(reason ?? 'aborted');
    // The SDK's reason names its own timeout's error ("TimeoutError: Chunk timeout …").
    this.name = String(reason ?? '').startsWith('TimeoutError') ? 'TimeoutError' : 'AbortError';
  }
}

/** SDK tools from `[{ name, description, parameters }]` (a JSON schema each). */
export function sdkTools(specs) {
  return Object.fromEntries(
    specs.map(({ name, description, parameters }) => [
      name,
      tool({ description, inputSchema: jsonSchema(parameters ?? { type: 'object' }) }),
    ]),
  );
}

/** The `fullStream` read to its end: `{ blocks, finish, failure }`, `blocks` in order of
 * their first part (`{ type: 'text' | 'reasoning', text, metadata }` or `{ type:
 * 'tool-call', id, name, arguments }`), `failure` the turn's (null when `finish` says it
 * ended normally). */
export async function readFullStream(fullStream) {
  const blocks = [];
  const open = new Map(); // text/reasoning part id → its block
  const inputs = new Map(); // tool call id → its tool-input-delta text
  let finish = null;
  let failure = null;
  const joined = (type, part) => {
    const key = `${type}:${part.id}`;
    if (!open.has(key)) {
      const block = { type, text: '', metadata: {} };
      open.set(key, block);
      blocks.push(block);
    }
    const block = open.get(key);
    Object.assign(block.metadata, providerFields(part));
    return block;
  };
  for await (const part of fullStream) {
    switch (part.type) {
      case 'text-start':
      case 'text-end':
        joined('text', part);
        break;
      case 'text-delta':
        joined('text', part).text += part.text;
        break;
      case 'reasoning-start':
      case 'reasoning-end':
        joined('reasoning', part);
        break;
      case 'reasoning-delta':
        joined('reasoning', part).text += part.text;
        break;
      case 'tool-input-start':
        inputs.set(part.id, '');
        break;
      case 'tool-input-delta':
        inputs.set(part.id, (inputs.get(part.id) ?? '') + part.delta);
        break;
      case 'tool-call':
        blocks.push({
          type: 'tool-call',
          id: part.toolCallId,
          name: part.toolName,
          arguments: argumentsOf(part, inputs),
          input: part.input,
          providerExecuted: part.providerExecuted === true,
          metadata: providerFields(part),
        });
        break;
      case 'error':
        failure ??= part.error;
        break;
      case 'abort':
        failure ??= new StreamAbortedError(part.reason);
        break;
      case 'finish':
        finish = part;
        break;
      default:
        break;
    }
  }
  const failed = !finish || finish.finishReason === 'error';
  return { blocks, finish, failure: failed ? (failure ?? new Error('the stream ended without a finish part')) : null };
}

/** A part's provider metadata, whichever provider wrote it (Anthropic's `signature`, the
 * OpenAI Responses provider's `itemId` and `reasoningEncryptedContent`). */
const providerFields = (part) => Object.assign({}, ...Object.values(part.providerMetadata ?? {}));

function argumentsOf(part, inputs) {
  if (inputs.has(part.toolCallId)) return inputs.get(part.toolCallId);
  return typeof part.input === 'string' ? part.input : JSON.stringify(part.input);
}
