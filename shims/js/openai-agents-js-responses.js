#!/usr/bin/env node
// @openai/agents over its default model, OpenAIResponsesModel: one model turn of
// `run(agent, input, { stream: true })`, read from the turn's ModelResponse
// (`result.rawResponses[0]`), what an Agent's caller builds on.
//
// The model streams with `client.responses.create({ stream: true })`, openai-node's plain
// event stream, not its ResponseStream accumulator (@openai/agents-openai
// dist/openaiResponsesModel.mjs:1022), and hands the runner `response.completed`'s own
// `output`, converted item by item (1306-1320, convertToOutputItem in
// openaiResponsesConverter.mjs:1174): an empty terminal `output` is the turn's output, and
// the streamed items are not put back. `response.incomplete`, `response.failed`, an `error`
// event (either shape) and a `response.completed` without a response throw a
// ModelBehaviorError (839-876, 1286-1350); a stream that ends without one throws "Model did
// not produce a final response!" (agents-core dist/run.mjs). A turn's usage is a Usage the
// model builds with zeros for what the provider did not send (`_getStreamedResponseUsage`,
// 998-1008): the caller cannot tell none from zero, and neither does this shim.
//
// The Runner is used, not `getStreamedResponse` directly: `toolUseBehavior:
// 'stop_on_first_tool'` ends the run after the model's first turn that calls a tool, and a
// turn without one is the final output, so the run is that one turn. Its tools are declared
// as the request sent them (non-strict JSON schemas) and return a fixed text if run. The
// runner's own retries (`modelSettings.retry`) are opt-in, off by default; the OpenAI
// client's are the library's (openai-node's loop). Tracing is off: it would export to OpenAI.

import { Agent, OpenAIResponsesModel, run as runAgent, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';

import { thrown } from './lib/assembled.js';
import { hello, serve } from './lib/protocol.js';
import { DIALECTS, ResponseTurn, callBlock, reasoningBlock, refused, responseUsage } from './lib/responses.js';
import { idleMs, modelName, nativePolicy, nativeRetry, packageVersion, toolSchemas } from './lib/run.js';
import { OPENAI_NODE } from './lib/retry-policies.js';

const NOT_RUN = 'the shim never runs tools';

setTracingDisabled(true);

async function assemble(run) {
  const client = new OpenAI({
    baseURL: run.base_url,
    apiKey: run.api_key,
    timeout: idleMs(run),
    ...(nativeRetry ? {} : { maxRetries: 0 }),
  });
  const agent = new Agent({
    name: 'streamconform',
    model: new OpenAIResponsesModel(client, modelName(run)),
    tools: toolSchemas(run).filter((t) => t && typeof t === 'object').map(agentTool),
    toolUseBehavior: 'stop_on_first_tool',
  });
  const input = Array.isArray(run.request.input) ? run.request.input : [];
  const result = await runAgent(agent, input, { stream: true, maxTurns: 1 });
  try {
    for await (const _ of result) {
      // The caller's events; the turn is read from its ModelResponse.
    }
    await result.completed;
    if (result.error) throw result.error;
  } catch (error) {
    throw new RunFailure(error, result.state?.usage);
  }
  const [turn] = result.rawResponses;
  return new ResponseTurn({
    blocks: (turn?.output ?? []).flatMap(outputBlock),
    usage: responseUsage(providerUsage(turn?.usage)),
    refused: refused(turn?.output),
  });
}

/** What the run threw, with the run's usage: the runner adds a failed turn's usage to it
 * (`onModelFailureUsage`, agents-core dist/run.mjs:77-80), as for `response.incomplete`. */
class RunFailure {
  constructor(error, usage) {
    this.error = error;
    this.usage = usage?.requests ? responseUsage(providerUsage(usage)) : null;
  }
}

async function* agentRun(run) {
  let turn;
  try {
    turn = await assemble(run);
  } catch (failure) {
    if (!(failure instanceof RunFailure)) {
      yield thrown(failure);
      return;
    }
    if (failure.usage) yield failure.usage;
    yield thrown(failure.error);
    return;
  }
  yield* turn.events();
}

/** The request's tool as sent (non-strict: the SDK would rewrite a strict schema). */
function agentTool(schema) {
  return tool({
    name: String(schema.name),
    description: String(schema.description ?? ''),
    parameters: schema.parameters ?? { type: 'object', properties: {} },
    strict: false,
    execute: async () => NOT_RUN,
  });
}

/** One of the SDK's output items (protocol.ts: a call keeps `callId` and the item `id`, a
 * reasoning item its summary as `content`, `encrypted_content` among its providerData). */
function outputBlock(item) {
  if (item?.type === 'message') {
    const text = (item.content ?? []).filter((p) => p?.type === 'output_text').map((p) => String(p.text ?? '')).join('');
    return text ? [{ type: 'text', text }] : [];
  }
  if (item?.type === 'reasoning') return [reasoningBlock(item.content, item.providerData?.encrypted_content, item.id)];
  if (item?.type === 'function_call') return [callBlock(item.callId, item.name, item.arguments, item.id)];
  return [];
}

/** The turn's Usage read as a Responses usage: one request, its details the first entry. */
function providerUsage(usage) {
  if (!usage) return null;
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    input_tokens_details: usage.inputTokensDetails?.[0],
    output_tokens_details: usage.outputTokensDetails?.[0],
  };
}

await serve({
  hello: hello('@openai/agents OpenAIResponsesModel', packageVersion('@openai/agents'), {
    reasoning: true,
    retryPolicy: nativePolicy(OPENAI_NODE),
    dialects: DIALECTS,
  }),
  run: agentRun,
});
