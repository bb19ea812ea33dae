/**
 * Google's Gen AI SDK for JavaScript (`@google/genai`, in package.json) set up as its docs say
 * for a gateway: `httpOptions.baseUrl` = the gateway, the gateway key as `apiKey` (sent as
 * `x-goog-api-key`), nothing else. It calls the gateway's Gemini API under /v1beta (CONTRACT
 * section 16): `:generateContent`, and `:streamGenerateContent?alt=sse` for a stream; the
 * gateway passes it to a Google target and translates it for OpenAI and Anthropic targets.
 * One try per request (`retryOptions.attempts: 1`), so a failure shows at once.
 *
 * The tool round trip is the SDK's manual one: the mock calls the declared function
 * (`get_weather`) with {"location":"Paris"}, the test sends the model's content and a
 * `functionResponse` back, the mock answers.
 */
import { GoogleGenAI, type Content, type FunctionDeclaration } from '@google/genai';
import { GatewayKey, TOOL_PROMPT } from './client-harness';
import { describeClient } from './client-matrix';

const WEATHER: FunctionDeclaration = {
  name: 'get_weather',
  description: 'Weather by city',
  parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describeClient('Google Gen AI SDK (@google/genai)', (world) => {
  const client = (key: GatewayKey) => new GoogleGenAI({ apiKey: key.key, httpOptions: { baseUrl: world.baseUrl, retryOptions: { attempts: 1 } } });
  return {
    operation: 'gemini.generate_content',
    expectedTool: WEATHER.name!,
    plain: async (key) => (await client(key).models.generateContent({ model: key.target.model, contents: 'Say hello' })).text ?? '',
    stream: async (key) => {
      const chunks: string[] = [];
      for await (const chunk of await client(key).models.generateContentStream({ model: key.target.model, contents: 'Say hello' }))
        chunks.push(chunk.text ?? '');
      // The mocks stream one word a chunk: one chunk only would be an answer not streamed.
      expect(chunks.length).toBeGreaterThan(1);
      return chunks.join('');
    },
    tool: async (key) => {
      const models = client(key).models;
      const config = { tools: [{ functionDeclarations: [WEATHER] }] };
      const contents: Content[] = [{ role: 'user', parts: [{ text: TOOL_PROMPT }] }];
      const first = await models.generateContent({ model: key.target.model, contents, config });
      const calls = first.functionCalls ?? [];
      expect(calls.map((call) => call.args)).toEqual([{ location: 'Paris' }]);
      contents.push(first.candidates![0].content!, {
        role: 'user',
        parts: calls.map((call) => ({ functionResponse: { id: call.id, name: call.name, response: { location: 'Paris', temperature_c: 21, sky: 'clear' } } })),
      });
      const second = await models.generateContent({ model: key.target.model, contents, config });
      expect(second.functionCalls).toBeUndefined();
      return { text: second.text ?? '', toolCalls: calls.map((call) => call.name!) };
    },
  };
});
