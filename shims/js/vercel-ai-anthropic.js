#!/usr/bin/env node
// The Vercel AI SDK over its Anthropic provider: `streamText` with `createAnthropic({
// baseURL })`, the caller's view being the `fullStream` parts, read as lib/ai-sdk.js says;
// each text and reasoning part is a block of its own, in order, a reasoning part with the
// `signature` or `redactedData` its provider metadata carried. The provider's default base
// URL ends in `/v1` (it appends `/messages`), so the run line's base gets it. The finish is
// the part's raw stop reason; usage its `inputTokenDetails`, which keep cache reads and
// writes apart. Its retries are `streamText`'s (lib/retry-policies.js VERCEL_AI: the same `ai`
// layer); what that policy cannot say: an `error` event that comes first, before any content,
// is rethrown as a retryable APICallError (529 for `overloaded_error`,
// @ai-sdk/anthropic/dist/index.js:6156-6177), so the SDK retries it.

import { createAnthropic } from '@ai-sdk/anthropic';
import { streamText } from 'ai';

import { readFullStream, sdkTools } from './lib/ai-sdk.js';
import { assembledRun } from './lib/assembled.js';
import { DIALECTS, MessageTurn, anthropicTools, callBlock, maxTokens, messageUsage, reasoning } from './lib/messages.js';
import { hello, log, serve } from './lib/protocol.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, userMessages } from './lib/run.js';
import { VERCEL_AI } from './lib/retry-policies.js';

async function assemble(run) {
  const provider = createAnthropic({ baseURL: `${run.base_url}/v1`, apiKey: run.api_key });
  const result = streamText({
    model: provider(modelName(run)),
    messages: userMessages(run),
    maxOutputTokens: maxTokens(run),
    tools: sdkTools(anthropicTools(run).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }))),
    timeout: { firstChunkMs: idleMs(run), chunkMs: idleMs(run) },
    ...(nativeRetry ? {} : { maxRetries: 0 }),
    onError: ({ error }) => log('error part:', error?.message ?? String(error)),
  });
  const { blocks, finish, failure } = await readFullStream(result.fullStream);
  return new MessageTurn({
    blocks: blocks.map(protocolBlock).filter(Boolean),
    usage: finish ? usageOf(finish.totalUsage) : null,
    stopReason: finish?.rawFinishReason ?? null,
    failure,
  });
}

function protocolBlock(block) {
  // The call part's input: the provider joins a start's input and the deltas into it
  // (@ai-sdk/anthropic/dist/index.js:5486-5492, 5890-5915), where the deltas alone miss the first.
  // A provider-executed call (web_search …) is a server tool: never the caller's to run.
  if (block.type === 'tool-call') return callBlock(block.providerExecuted ? 'server-tool' : 'tool-call', block.id, block.name, block.input);
  if (block.type === 'reasoning') {
    const { signature, redactedData } = block.metadata;
    return typeof redactedData === 'string' ? { type: 'reasoning', text: '', redacted: redactedData } : reasoning(block.text, signature);
  }
  return block.text ? { type: 'text', text: block.text } : null;
}

function usageOf(usage) {
  if (!usage) return null;
  const details = usage.inputTokenDetails ?? {};
  return messageUsage(details.noCacheTokens, usage.outputTokens, details.cacheReadTokens, details.cacheWriteTokens);
}

await serve({
  hello: hello('ai streamText over @ai-sdk/anthropic', packageVersion('@ai-sdk/anthropic'), {
    reasoning: true,
    retryPolicy: nativePolicy(VERCEL_AI),
    dialects: DIALECTS,
  }),
  run: (run) => assembledRun(assemble, run),
});
