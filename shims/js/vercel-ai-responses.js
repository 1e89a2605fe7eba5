#!/usr/bin/env node
// The Vercel AI SDK over its OpenAI provider's default model, the Responses one:
// `streamText` with `createOpenAI({ baseURL })(model)`, the caller's view being the
// `fullStream` parts, read as lib/ai-sdk.js says. A reasoning part keeps the `itemId` and
// `reasoningEncryptedContent` its provider metadata carried, a call its `toolCallId` (the
// item's `call_id`) and `itemId`. The finish part says how the turn ended: `length` and
// `content-filter` are the provider's reading of an incomplete response's reason; usage is
// its `inputTokenDetails` (cache reads apart) and `outputTokenDetails`.

import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';

import { readFullStream, sdkTools } from './lib/ai-sdk.js';
import { assembledRun } from './lib/assembled.js';
import { hello, log, serve } from './lib/protocol.js';
import { DIALECTS, ResponseTurn, callBlock, reasoningBlock } from './lib/responses.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, toolSchemas } from './lib/run.js';
import { VERCEL_AI } from './lib/retry-policies.js';

// finishReason → the incomplete reason it stands for (the rest: a completed response).
const INCOMPLETE = { length: 'max_output_tokens', 'content-filter': 'content_filter' };

async function assemble(run) {
  const provider = createOpenAI({ baseURL: run.base_url, apiKey: run.api_key });
  const result = streamText({
    model: provider(modelName(run)),
    messages: Array.isArray(run.request.input) ? run.request.input : [],
    tools: sdkTools(toolSchemas(run)),
    timeout: { firstChunkMs: idleMs(run), chunkMs: idleMs(run) },
    ...(nativeRetry ? {} : { maxRetries: 0 }),
    onError: ({ error }) => log('error part:', error?.message ?? String(error)),
  });
  const { blocks, finish, failure } = await readFullStream(result.fullStream);
  const incomplete = INCOMPLETE[finish?.finishReason];
  return new ResponseTurn({
    blocks: blocks.map(protocolBlock).filter(Boolean),
    usage: finish ? usageOf(finish.totalUsage) : null,
    status: incomplete ? 'incomplete' : null,
    incompleteReason: incomplete ?? null,
    failure,
  });
}

function protocolBlock(block) {
  if (block.type === 'tool-call') return callBlock(block.id, block.name, block.arguments, block.metadata.itemId);
  if (block.type === 'reasoning') return reasoningBlock([{ text: block.text }], block.metadata.reasoningEncryptedContent, block.metadata.itemId);
  return block.text ? { type: 'text', text: block.text } : null;
}

function usageOf(usage) {
  if (!usage || !Number.isInteger(usage.inputTokens) || !Number.isInteger(usage.outputTokens)) return null;
  const cached = usage.inputTokenDetails?.cacheReadTokens;
  const reasoning = usage.outputTokenDetails?.reasoningTokens;
  const event = { type: 'usage', input_tokens: usage.inputTokens - (Number.isInteger(cached) ? cached : 0), output_tokens: usage.outputTokens };
  if (Number.isInteger(cached)) event.cache_read_tokens = cached;
  if (Number.isInteger(reasoning)) event.reasoning_tokens = reasoning;
  return event;
}

await serve({
  hello: hello('ai streamText over @ai-sdk/openai (Responses)', packageVersion('@ai-sdk/openai'), {
    reasoning: true,
    retryPolicy: nativePolicy(VERCEL_AI),
    dialects: DIALECTS,
  }),
  run: (run) => assembledRun(assemble, run),
});
