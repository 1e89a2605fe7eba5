#!/usr/bin/env node
// The Vercel AI SDK: `streamText` over `@ai-sdk/openai-compatible`, the caller's view being
// the `fullStream` parts, read as lib/ai-sdk.js says; all text joined, then all reasoning
// (chat-completions has one message).

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';

import { readFullStream, sdkTools } from './lib/ai-sdk.js';
import { Assembled, assembledRun, usageEvent } from './lib/assembled.js';
import { hello, log, serve } from './lib/protocol.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, toolSchemas, userMessages } from './lib/run.js';
import { VERCEL_AI } from './lib/retry-policies.js';

function tools(run) {
  return sdkTools(
    toolSchemas(run)
      .filter((schema) => schema?.type === 'function' && typeof schema.function?.name === 'string')
      .map(({ function: fn }) => ({ name: fn.name, description: fn.description, parameters: fn.parameters })),
  );
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
  const { blocks, finish, failure } = await readFullStream(result.fullStream);
  const joined = (type) => blocks.filter((block) => block.type === type).map((block) => block.text).join('');
  return new Assembled({
    text: joined('text'),
    reasoning: joined('reasoning'),
    toolCalls: blocks.filter((block) => block.type === 'tool-call'),
    usage: finish ? usageOf(finish.totalUsage) : null,
    finishReason: finish?.rawFinishReason ?? null,
    failure,
  });
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
