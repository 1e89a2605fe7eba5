#!/usr/bin/env node
// openai-node's own accumulator: `chat.completions.stream(...)`, read with
// `finalChatCompletion()`. Reasoning is whatever the SDK kept of `reasoning_content` (or
// `reasoning`) on the final message: openai-node copies unknown delta fields, last one wins.

import OpenAI from 'openai';

import { Assembled, assembledRun, usageEvent } from './lib/assembled.js';
import { hello, serve } from './lib/protocol.js';
import { idleMs, nativePolicy, nativeRetry, packageVersion } from './lib/run.js';
import { OPENAI_NODE } from './lib/retry-policies.js';

async function assemble(run) {
  const client = new OpenAI({
    baseURL: run.base_url,
    apiKey: run.api_key,
    timeout: idleMs(run),
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  });
  const completion = await client.chat.completions.stream(run.request).finalChatCompletion();
  const usage = usageOf(completion.usage);
  const choice = completion.choices?.[0];
  if (!choice) return new Assembled({ usage });
  const message = choice.message;
  const reasoning = [message.reasoning_content, message.reasoning].find((v) => typeof v === 'string' && v);
  return new Assembled({
    text: message.content,
    reasoning: reasoning ?? null,
    toolCalls: (message.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function?.name,
      arguments: call.function?.arguments,
    })),
    usage,
    finishReason: choice.finish_reason,
  });
}

function usageOf(usage) {
  if (!usage) return null;
  return usageEvent(
    usage.prompt_tokens,
    usage.completion_tokens,
    usage.prompt_tokens_details?.cached_tokens,
    usage.completion_tokens_details?.reasoning_tokens,
  );
}

await serve({
  hello: hello('openai-node chat.completions.stream', packageVersion('openai'), {
    reasoning: true,
    retryPolicy: nativePolicy(OPENAI_NODE),
  }),
  run: (run) => assembledRun(assemble, run),
});
