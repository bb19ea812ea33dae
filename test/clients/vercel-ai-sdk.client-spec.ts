/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic`; pinned in package.json)
 * set up with only a base URL and a gateway key. Its OpenAI provider speaks the Responses API
 * by default (`openai(model)`) and chat completions with `openai.chat(model)`: both are driven.
 * Tools run through the SDK's own loop (`stopWhen: stepCountIs(2)`), as an app uses them.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { GatewayKey, TOOL_PROMPT } from './client-harness';
import { ClientDriver, describeClient } from './client-matrix';

const weather = tool({
  description: 'Weather by city',
  inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }),
  execute: async ({ location }) => ({ location, temperature_c: 21, sky: 'clear' }),
});

function aiSdkDriver(operation: string, modelOf: (key: GatewayKey) => LanguageModel): ClientDriver {
  return {
    operation,
    expectedTool: 'get_weather',
    plain: async (key) => (await generateText({ model: modelOf(key), prompt: 'Say hello', maxRetries: 0 })).text,
    stream: async (key) => {
      const result = streamText({ model: modelOf(key), prompt: 'Say hello', maxRetries: 0, onError: () => undefined });
      let text = '';
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') text += part.text;
        if (part.type === 'error') throw part.error;
      }
      return text;
    },
    tool: async (key) => {
      const result = await generateText({ model: modelOf(key), prompt: TOOL_PROMPT, tools: { get_weather: weather }, stopWhen: stepCountIs(2), maxRetries: 0 });
      const calls = result.steps.flatMap((step) => step.toolCalls);
      expect(calls.map((call) => call.input)).toEqual([{ location: 'Paris' }]);
      return { text: result.text, toolCalls: calls.map((call) => call.toolName) };
    },
  };
}

describeClient('Vercel AI SDK, OpenAI provider (Responses API, its default)', (world) =>
  aiSdkDriver('responses', (key) => createOpenAI({ baseURL: `${world.baseUrl}/v1`, apiKey: key.key })(key.target.model)),
);
describeClient('Vercel AI SDK, OpenAI provider (chat completions)', (world) =>
  aiSdkDriver('chat.completions', (key) => createOpenAI({ baseURL: `${world.baseUrl}/v1`, apiKey: key.key }).chat(key.target.model)),
);
describeClient('Vercel AI SDK, Anthropic provider', (world) =>
  aiSdkDriver('messages', (key) => createAnthropic({ baseURL: `${world.baseUrl}/v1`, apiKey: key.key })(key.target.model)),
);
