#!/usr/bin/env node
// LangChain.js: `new ChatOpenAI(...).bindTools(...).stream(...)`, chunks added up with
// `concat`. Tool calls are read from `tool_call_chunks` (raw argument strings), not
// `tool_calls`, which LangChain parses; reasoning from `additional_kwargs.reasoning_content`,
// where ChatOpenAI keeps the wire's field.

import { concat } from '@langchain/core/utils/stream';
import { ChatOpenAI } from '@langchain/openai';

import { Assembled, assembledRun, usageEvent } from './lib/assembled.js';
import { hello, serve } from './lib/protocol.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, toolSchemas, userMessages } from './lib/run.js';
import { LANGCHAIN_JS } from './lib/retry-policies.js';

async function assemble(run) {
  const model = new ChatOpenAI({
    model: modelName(run),
    apiKey: run.api_key,
    configuration: { baseURL: run.base_url },
    timeout: idleMs(run),
    streamUsage: true,
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  }).bindTools(toolSchemas(run));
  let total;
  for await (const chunk of await model.stream(userMessages(run))) {
    total = total === undefined ? chunk : concat(total, chunk);
  }
  return total === undefined ? new Assembled() : assembled(total);
}

function assembled(message) {
  const content = Array.isArray(message.content)
    ? message.content.map((part) => (typeof part === 'string' ? part : part?.type === 'text' ? part.text : '')).join('')
    : message.content;
  const reasoning = message.additional_kwargs?.reasoning_content;
  return new Assembled({
    text: content || null,
    reasoning: typeof reasoning === 'string' ? reasoning : null,
    toolCalls: (message.tool_call_chunks ?? []).map((chunk) => ({ id: chunk.id, name: chunk.name, arguments: chunk.args })),
    usage: usageOf(message.usage_metadata),
    finishReason: message.response_metadata?.finish_reason ?? null,
  });
}

function usageOf(usage) {
  if (!usage) return null;
  return usageEvent(
    usage.input_tokens,
    usage.output_tokens,
    usage.input_token_details?.cache_read,
    usage.output_token_details?.reasoning,
  );
}

await serve({
  hello: hello('@langchain/openai ChatOpenAI.stream, chunks concatenated', packageVersion('@langchain/openai'), {
    reasoning: true,
    retryPolicy: nativePolicy(LANGCHAIN_JS),
  }),
  run: (run) => assembledRun(assemble, run),
});
