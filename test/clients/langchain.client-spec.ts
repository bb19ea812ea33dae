/**
 * LangChain JS (`@langchain/openai`, `@langchain/anthropic`, `@langchain/core`; pinned in
 * package.json) set up with only a base URL and a gateway key: invoke, stream, and a tool
 * round trip with `bindTools` and a ToolMessage, as an app writes it.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { GatewayKey, TOOL_PROMPT } from './client-harness';
import { ClientDriver, describeClient } from './client-matrix';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

const textOf = (message: AIMessage | { content: unknown }) =>
  typeof message.content === 'string' ? message.content : (message.content as any[]).map((part) => (part.type === 'text' ? part.text : '')).join('');

function langchainDriver(operation: string, modelOf: (key: GatewayKey) => BaseChatModel): ClientDriver {
  return {
    operation,
    expectedTool: 'get_weather',
    plain: async (key) => textOf(await modelOf(key).invoke('Say hello')),
    stream: async (key) => {
      let text = '';
      for await (const chunk of await modelOf(key).stream('Say hello')) text += textOf(chunk);
      return text;
    },
    tool: async (key) => {
      const model = modelOf(key).bindTools!([WEATHER_TOOL]);
      const history: (HumanMessage | AIMessage | ToolMessage)[] = [new HumanMessage(TOOL_PROMPT)];
      const first = (await model.invoke(history)) as AIMessage;
      const calls = first.tool_calls ?? [];
      expect(calls.map((call) => call.args)).toEqual([{ location: 'Paris' }]);
      history.push(first, ...calls.map((call) => new ToolMessage({ tool_call_id: call.id!, content: '{"temperature_c": 21, "sky": "clear"}' })));
      const final = await model.invoke(history);
      return { text: textOf(final), toolCalls: calls.map((call) => call.name) };
    },
  };
}

describeClient('LangChain ChatOpenAI', (world) =>
  langchainDriver(
    'chat.completions',
    (key) => new ChatOpenAI({ model: key.target.model, apiKey: key.key, maxRetries: 0, configuration: { baseURL: `${world.baseUrl}/v1` } }),
  ),
);
describeClient('LangChain ChatAnthropic', (world) =>
  langchainDriver('messages', (key) => new ChatAnthropic({ model: key.target.model, apiKey: key.key, maxRetries: 0, anthropicApiUrl: world.baseUrl })),
);
