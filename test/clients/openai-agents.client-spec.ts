/**
 * The OpenAI Agents SDK for JavaScript (`@openai/agents`, pinned in package.json: 0.14.3, the
 * newest whose `openai` dependency still runs on Node 20; from 0.15 it needs `openai` 7, Node
 * 22+) set up as its docs say for another endpoint: an `OpenAIProvider` whose OpenAI client has
 * the gateway's `/v1` as `baseURL` and the gateway key as its key, and `setTracingDisabled(true)`
 * (its traces would otherwise go to api.openai.com). A Runner per key: the module's `run()` is a
 * default Runner whose provider keeps the first client it sees (`setDefaultOpenAIClient()` is
 * one setting for the whole process), and each test has a key of its own. It speaks the
 * Responses API (its default, kept); the gateway passes it to OpenAI and bridges it through
 * chat completions for Anthropic and Gemini targets. One try per request (`maxRetries: 0`).
 *
 * The tool round trip is the SDK's own loop: `run()` of an Agent with a function tool
 * (`get_weather`); the mock calls it with {"location":"Paris"}, the SDK runs it, sends a
 * function_call_output back and the mock answers.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { GatewayKey, TOOL_PROMPT } from './client-harness';
import { describeClient } from './client-matrix';

setTracingDisabled(true);

const getWeather = tool({
  name: 'get_weather',
  description: 'Weather by city',
  parameters: z.object({ location: z.string() }),
  execute: async ({ location }) => JSON.stringify({ location, temperature_c: 21, sky: 'clear' }),
});

/** A Runner whose models are the gateway's, reached with this key. */
const runnerFor = (baseUrl: string, key: GatewayKey) =>
  new Runner({ modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key.key, maxRetries: 0 }) }) });
const agentFor = (key: GatewayKey, tools: (typeof getWeather)[] = []) =>
  new Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: key.target.model, tools });

describeClient('OpenAI Agents SDK (@openai/agents)', (world) => ({
  operation: 'responses',
  expectedTool: 'get_weather',
  plain: async (key) => String((await runnerFor(world.baseUrl, key).run(agentFor(key), 'Say hello')).finalOutput ?? ''),
  stream: async (key) => {
    const result = await runnerFor(world.baseUrl, key).run(agentFor(key), 'Say hello', { stream: true });
    const deltas: string[] = [];
    for await (const event of result) if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') deltas.push(event.data.delta);
    await result.completed;
    if (result.error) throw result.error as Error;
    // The mocks stream one word a chunk: one delta only would be an answer not streamed.
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(result.finalOutput);
    return deltas.join('');
  },
  tool: async (key) => {
    const result = await runnerFor(world.baseUrl, key).run(agentFor(key, [getWeather]), TOOL_PROMPT);
    const calls = result.newItems.filter((item) => item.type === 'tool_call_item').map((item) => item.rawItem);
    const outputs = result.newItems.filter((item) => item.type === 'tool_call_output_item').map((item) => item.rawItem);
    expect(calls.map((call) => (call.type === 'function_call' ? JSON.parse(call.arguments) : call))).toEqual([{ location: 'Paris' }]);
    expect(outputs.map((output) => output.type === 'function_call_result' && output.callId)).toEqual(
      calls.map((call) => call.type === 'function_call' && call.callId),
    );
    return { text: String(result.finalOutput ?? ''), toolCalls: calls.map((call) => (call.type === 'function_call' ? call.name : call.type)) };
  },
}));
