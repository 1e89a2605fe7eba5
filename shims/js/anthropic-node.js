#!/usr/bin/env node
// @anthropic-ai/sdk's own accumulator: `client.messages.stream(params)`, read with
// `finalMessage()`. What the caller gets is the final message: its content blocks (a tool's
// `input` as the SDK parsed it, reported as JSON text), usage and stop reason; or what
// `finalMessage()` threw. Its odd-input rules (reference dialects.md §2.10), in
// @anthropic-ai/sdk/lib/MessageStream.mjs: a delta for an index never started finds no block
// (`content.at(index)`, 523) and is dropped; every `input_json_delta` rebuilds the input from
// the deltas' text alone (546, internal/message-stream-utils.mjs:8-27), so an empty one resets
// a start's input to `{}`; a stream that ends before `message_stop` throws (381-386).

import Anthropic from '@anthropic-ai/sdk';

import { assembledRun } from './lib/assembled.js';
import { DIALECTS, MessageTurn, contentBlocks, messageParams, messageUsage } from './lib/messages.js';
import { hello, serve } from './lib/protocol.js';
import { idleMs, nativePolicy, nativeRetry, packageVersion } from './lib/run.js';
import { ANTHROPIC_NODE } from './lib/retry-policies.js';

async function assemble(run) {
  const client = new Anthropic({
    baseURL: run.base_url,
    apiKey: run.api_key,
    timeout: idleMs(run),
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  });
  const message = await client.messages.stream(messageParams(run)).finalMessage();
  const usage = message.usage ?? {};
  return new MessageTurn({
    blocks: contentBlocks(message.content),
    usage: messageUsage(usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens),
    stopReason: message.stop_reason,
  });
}

await serve({
  hello: hello('@anthropic-ai/sdk messages.stream', packageVersion('@anthropic-ai/sdk'), {
    reasoning: true,
    retryPolicy: nativePolicy(ANTHROPIC_NODE),
    dialects: DIALECTS,
  }),
  run: (run) => assembledRun(assemble, run),
});
