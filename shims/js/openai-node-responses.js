#!/usr/bin/env node
// openai-node's Responses accumulator: `client.responses.stream(params)`, read with
// `finalResponse()`. What the caller gets is the final response, or what it threw
// (reference dialects.md §3.7: it throws on an unknown event type, an `item_id` that is not
// the item's and an index gap; lib/responses/ResponseStream.mjs).

import OpenAI from 'openai';

import { assembledRun } from './lib/assembled.js';
import { hello, serve } from './lib/protocol.js';
import { DIALECTS, responseParams, responseTurn } from './lib/responses.js';
import { idleMs, nativePolicy, nativeRetry, packageVersion } from './lib/run.js';
import { OPENAI_NODE } from './lib/retry-policies.js';

async function assemble(run) {
  const client = new OpenAI({
    baseURL: run.base_url,
    apiKey: run.api_key,
    timeout: idleMs(run),
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  });
  return responseTurn(await client.responses.stream(responseParams(run)).finalResponse());
}

await serve({
  hello: hello('openai-node responses.stream', packageVersion('openai'), {
    reasoning: true,
    retryPolicy: nativePolicy(OPENAI_NODE),
    dialects: DIALECTS,
  }),
  run: (run) => assembledRun(assemble, run),
});
