#!/usr/bin/env node
// LangChain.js over Anthropic: `new ChatAnthropic(...).bindTools(...).stream(...)`, chunks
// added up with `concat`. @langchain/anthropic reads the raw events itself
// (dist/utils/message_outputs.js `_makeMessageChunkFromAnthropicEvent`), not the SDK's
// accumulator. The merged content gives the order, the text, thinking and signature; a
// tool_use block's call is read from `tool_call_chunks` (raw argument text), not the parsed
// `tool_calls`. Usage is `usage_metadata` as concat summed it (message_start's counts, then
// message_delta's: buildUsageMetadata adds the cache counters into input_tokens, which the
// shim takes out again); the stop reason is the message_delta's, kept in `additional_kwargs`.
// Its retries are @langchain/core's AsyncCaller (the SDK client gets `maxRetries: 0`,
// dist/chat_models.js:988-1017): lib/retry-policies.js LANGCHAIN_JS.

import { ChatAnthropic } from '@langchain/anthropic';
import { concat } from '@langchain/core/utils/stream';

import { assembledRun, callText } from './lib/assembled.js';
import { DIALECTS, MessageTurn, anthropicTools, contentBlocks, maxTokens, messageUsage } from './lib/messages.js';
import { hello, serve } from './lib/protocol.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, userMessages } from './lib/run.js';
import { LANGCHAIN_JS } from './lib/retry-policies.js';

async function assemble(run) {
  const chat = new ChatAnthropic({
    model: modelName(run),
    apiKey: run.api_key,
    anthropicApiUrl: run.base_url,
    maxTokens: maxTokens(run),
    clientOptions: { timeout: idleMs(run) },
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  });
  const tools = anthropicTools(run);
  const model = tools.length ? chat.bindTools(tools) : chat;
  let total;
  for await (const chunk of await model.stream(userMessages(run))) {
    total = total === undefined ? chunk : concat(total, chunk);
  }
  return total === undefined ? new MessageTurn() : turn(total);
}

function turn(message) {
  return new MessageTurn({
    blocks: blocks(message.content, message.tool_call_chunks ?? []),
    usage: usageOf(message.usage_metadata),
    stopReason: message.additional_kwargs?.stop_reason ?? message.response_metadata?.stop_reason ?? null,
  });
}

function blocks(content, callChunks) {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const calls = new Map(callChunks.map((chunk) => [chunk.index, chunk]));
  return content.flatMap((item) => {
    if (typeof item === 'string') return item ? [{ type: 'text', text: item }] : [];
    if (item?.type === 'tool_use' && calls.has(item.index)) {
      const chunk = calls.get(item.index);
      return [{ type: 'tool-call', id: callText(chunk.id), name: callText(chunk.name), arguments: callText(chunk.args) }];
    }
    return contentBlocks([item]);
  });
}

function usageOf(usage) {
  if (!usage) return null;
  const read = usage.input_token_details?.cache_read;
  const written = usage.input_token_details?.cache_creation;
  const input = Number.isInteger(usage.input_tokens) ? usage.input_tokens - (read || 0) - (written || 0) : null;
  return messageUsage(input, usage.output_tokens, read, written);
}

await serve({
  hello: hello('@langchain/anthropic ChatAnthropic.stream, chunks concatenated', packageVersion('@langchain/anthropic'), {
    reasoning: true,
    retryPolicy: nativePolicy(LANGCHAIN_JS),
    dialects: DIALECTS,
  }),
  run: (run) => assembledRun(assemble, run),
});
