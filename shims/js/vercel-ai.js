#!/usr/bin/env node
// The Vercel AI SDK: `streamText` over `@ai-sdk/openai-compatible`, the caller's view being
// the `fullStream` parts. Text and reasoning are their deltas joined; a call is a
// `tool-call` part (the SDK's decision that a call happened) with the raw arguments its
// streamed input carried (`tool-input-delta`s; the parsed `input` only for a call that was
// not streamed); the turn ends as the `finish` part says. The SDK reports a
// failure as an `error` part (the HTTP call's, a bad chunk's), not an exception: without a
// `finish` part, or with `finish: error`, the first error part is the outcome, after what
// was assembled. An `abort` part is the SDK's own timeout (`timeout.chunkMs`).

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, streamText, tool } from 'ai';

import { Assembled, assembledRun, usageEvent } from './lib/assembled.js';
import { hello, log, serve } from './lib/protocol.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, toolSchemas, userMessages } from './lib/run.js';
import { VERCEL_AI } from './lib/retry-policies.js';

/** An `abort` part's reason, as the error a caller would see. */
class StreamAbortedError extends Error {
  constructor(reason) {
    super(reason ?? 'aborted');
    // The SDK's reason names its own timeout's error ("TimeoutError: Chunk timeout …").
    this.name = String(reason ?? '').startsWith('TimeoutError') ? 'TimeoutError' : 'AbortError';
  }
}

function tools(run) {
  const entries = toolSchemas(run)
    .filter((schema) => schema?.type === 'function' && typeof schema.function?.name === 'string')
    .map(({ function: fn }) => [
      fn.name,
      tool({ description: fn.description, inputSchema: jsonSchema(fn.parameters ?? { type: 'object' }) }),
    ]);
  return Object.fromEntries(entries);
}

async function assemble(run) {
  const provider = createOpenAICompatible({
    name: 'fake',
    baseURL: run.base_url,
    apiKey: run.api_key,
    includeUsage: true,
  });
  const result = streamText({
    model: provider.chatModel(modelName(run)),
    messages: userMessages(run),
    tools: tools(run),
    timeout: { firstChunkMs: idleMs(run), chunkMs: idleMs(run) },
    ...(nativeRetry ? {} : { maxRetries: 0 }),
    onError: ({ error }) => log('error part:', error?.message ?? String(error)),
  });
  let text = '';
  let reasoning = '';
  const inputs = new Map(); // tool call id → its tool-input-delta text
  const calls = [];
  let finish = null;
  let failure = null;
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        text += part.text;
        break;
      case 'reasoning-delta':
        reasoning += part.text;
        break;
      case 'tool-input-start':
        inputs.set(part.id, '');
        break;
      case 'tool-input-delta':
        inputs.set(part.id, (inputs.get(part.id) ?? '') + part.delta);
        break;
      case 'tool-call':
        calls.push({ id: part.toolCallId, name: part.toolName, arguments: argumentsOf(part, inputs) });
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
  const usage = finish ? usageOf(finish.totalUsage) : null;
  const failed = !finish || finish.finishReason === 'error';
  return new Assembled({
    text,
    reasoning,
    toolCalls: calls,
    usage,
    finishReason: finish?.rawFinishReason ?? null,
    failure: failed ? (failure ?? new Error('the stream ended without a finish part')) : null,
  });
}

function argumentsOf(part, inputs) {
  if (inputs.has(part.toolCallId)) return inputs.get(part.toolCallId);
  return typeof part.input === 'string' ? part.input : JSON.stringify(part.input);
}

function usageOf(usage) {
  if (!usage) return null;
  return usageEvent(
    usage.inputTokens,
    usage.outputTokens,
    usage.inputTokenDetails?.cacheReadTokens,
    usage.outputTokenDetails?.reasoningTokens,
  );
}

await serve({
  hello: hello('ai streamText over @ai-sdk/openai-compatible', packageVersion('ai'), {
    reasoning: true,
    retryPolicy: nativePolicy(VERCEL_AI),
  }),
  run: (run) => assembledRun(assemble, run),
});
