/**
 * Google's Gemini API served by the gateway under its own base address (CONTRACT section 16),
 * driven by the official `@google/genai` SDK as a user sets it up (`httpOptions.baseUrl` = the
 * gateway, the gateway key as `apiKey`, so as `x-goog-api-key`) and by raw fetch for what the SDK
 * cannot say (`?key=`, a stream as one JSON array, `:embedContent`, broken bodies):
 * `:generateContent`, `:streamGenerateContent`, `:countTokens`, `:embedContent`,
 * `:batchEmbedContents`, `GET /v1beta/models[/{model}]`. Natively to a Google virtual key (the
 * body unchanged), translated for OpenAI (chat completions, embeddings, the model list) and
 * Anthropic (messages); every answer a Gemini one, every error in Google's shape.
 * The mocks' rules are in test/support/mock-gemini.ts, mock-upstream.ts and mock-anthropic.ts.
 */
import { ApiError, GoogleGenAI, Type, type Content, type GenerateContentResponse } from '@google/genai';
import { call, createApiKey, createVirtualKey, logOf, LOGGED_TEXT_SQL, type RawResponse } from '../support/e2e-helpers';
import { GEMINI_MODELS, mockEmbeddingValues } from '../support/mock-gemini';
import { MOCK_MODEL_IDS } from '../support/mock-openai-chunks';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const GEMINI_SECRET = 'gemini-key-121212';
const OPENAI_SECRET = 'sk-openai-provider-343434';
const ANTHROPIC_SECRET = 'sk-ant-provider-565656';

const GOOGLE = { 'x-gateway-virtual-key': 'gemini-prod' };
const OPENAI = { 'x-gateway-virtual-key': 'openai-prod' };
const ANTHROPIC = { 'x-gateway-virtual-key': 'anthropic-prod' };

const WEATHER = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};
const SAFETY = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
const user = (text: string) => ({ role: 'user', parts: [{ text }] });

/** The gateway's request id on an SDK answer (a response, a stream chunk, a pager). */
const requestIdOf = (answer: { sdkHttpResponse?: { headers?: Record<string, string> } } | undefined) =>
  answer?.sdkHttpResponse?.headers?.['x-gateway-request-id'] ?? null;
/** The text parts of a candidate joined. */
const textOf = (response: { candidates?: { content?: { parts?: { text?: string }[] } }[] }) =>
  (response.candidates?.[0]?.content?.parts ?? []).map((part) => part.text ?? '').join('');
/** An OpenAI or Anthropic message content (a string, or text parts / blocks) as its text. */
const contentText = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : (content as { type: string; text?: string }[])
        .filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join('');

describe('the Gemini API through the gateway with @google/genai', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let geminiKeyId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    geminiKeyId = (await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: GEMINI_SECRET, custom_host: `${mock.url}/v1beta` })).id;
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: OPENAI_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** The SDK as a user sets it up: the gateway as base URL, the gateway key as the API key, routing headers. */
  const sdk = (headers: Record<string, string> = {}, apiKey = gateway.adminKey) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.url, headers } });

  /** Raw HTTP to the gateway, the gateway key as `x-goog-api-key` (null: none). */
  const gemini = (path: string, options: { method?: string; headers?: Record<string, string>; body?: unknown; key?: string | null } = {}) =>
    call(gateway, path, {
      method: options.method,
      body: options.body,
      apiKey: null,
      headers: { ...(options.key === null ? {} : { 'x-goog-api-key': options.key ?? gateway.adminKey }), ...options.headers },
    });

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  /** No gateway key (`gk-…`) anywhere in what the provider received. */
  function expectNoGatewayKey(secret = gateway.adminKey) {
    for (const sent of mock.requests) {
      expect(sent.headers['x-gateway-api-key']).toBeUndefined();
      expect(JSON.stringify([sent.headers, sent.query, sent.body])).not.toContain(secret);
      expect(JSON.stringify([sent.headers, sent.query])).not.toMatch(/gk-/);
    }
  }

  /** Asserts Google's error shape `{error: {code, message, status}}` with this code and status. */
  function expectGoogleError(response: RawResponse, code: number, status: string, message?: RegExp) {
    expect({ status: response.status, keys: Object.keys(response.body ?? {}) }).toEqual({ status: code, keys: ['error'] });
    expect(response.body.error).toMatchObject({ code, status, message: expect.any(String) });
    if (message) expect(response.body.error.message).toMatch(message);
    expect(response.text).not.toMatch(/\n\s+at /);
  }

  /** What the SDK throws for an error answer: an ApiError with the status, its message Google's error JSON. */
  async function sdkError(promise: Promise<unknown>): Promise<ApiError & { body: any }> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    const body = JSON.parse((error as ApiError).message);
    return Object.assign(error as ApiError, { body });
  }

  /**
   * A tool round trip: a function declaration and a question about the weather give a
   * functionCall part; the model turn sent back as it came with a functionResponse (by name,
   * as Gemini clients send it) gives the final text.
   */
  async function toolRoundTrip(ai: GoogleGenAI, model: string): Promise<{ first: GenerateContentResponse; second: GenerateContentResponse }> {
    const config = { tools: [{ functionDeclarations: [WEATHER] }] };
    const ask: Content = user('What is the weather in Paris?');
    const first = await ai.models.generateContent({ model, contents: [ask], config });
    expect(first.candidates?.[0].content?.role).toBe('model');
    expect(first.candidates?.[0].finishReason).toBe('STOP');
    expect(first.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { location: 'Paris' } })]);
    const modelTurn = first.candidates![0].content!;
    const answer: Content = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: '18°C and sunny' } } }] };
    const second = await ai.models.generateContent({ model, contents: [ask, modelTurn, answer], config });
    expect(second.candidates?.[0].content?.role).toBe('model');
    expect(second.text).toBe('Hello from mock');
    expect(second.functionCalls).toBeUndefined();
    expect(second.candidates?.[0].finishReason).toBe('STOP');
    expect(mock.requests).toHaveLength(2);
    return { first, second };
  }

  describe('natively to Google', () => {
    it('answers generateContent with @slug/model in the path: the provider key instead of the gateway key, the body unchanged, the log row', async () => {
      const answer = await sdk().models.generateContent({
        model: '@gemini-prod/gemini-2.5-flash',
        contents: 'echo: hello gemini',
        config: { systemInstruction: 'Be brief.', temperature: 0.3, maxOutputTokens: 50 },
      });
      expect(answer.text).toBe('hello gemini');
      // "Be brief." + "echo: hello gemini": 27 chars -> 7 prompt tokens; 2 words.
      expect(answer.candidates).toEqual([{ content: { parts: [{ text: 'hello gemini' }], role: 'model' }, finishReason: 'STOP', index: 0 }]);
      expect(answer.usageMetadata).toMatchObject({ promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 });
      expect(answer.modelVersion).toBe('gemini-2.5-flash');

      const sent = upstream();
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.headers.authorization).toBeUndefined();
      expectNoGatewayKey();
      // What the SDK sends, as it sent it: no model, no stream field added.
      expect(sent.body).toEqual({
        contents: [{ parts: [{ text: 'echo: hello gemini' }], role: 'user' }],
        systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' },
        generationConfig: { temperature: 0.3, maxOutputTokens: 50 },
      });

      const log = await logOf(gateway, requestIdOf(answer));
      expect(log).toMatchObject({
        operation: 'gemini.generate_content',
        provider: 'google',
        model: 'gemini-2.5-flash',
        virtual_key_id: geminiKeyId,
        status_code: 200,
        is_stream: false,
        prompt_tokens: 7,
        completion_tokens: 2,
        total_tokens: 9,
      });
      expect(log.request_body).toMatchObject({ contents: sent.body.contents, systemInstruction: sent.body.systemInstruction });
      expect(log.response_body).toMatchObject({ candidates: [{ content: { parts: [{ text: 'hello gemini' }], role: 'model' }, finishReason: 'STOP' }] });
      expect(JSON.stringify(log.request_headers)).not.toContain(gateway.adminKey);
      // Priced from the catalog's Gemini 2.5 Flash prices, by its usageMetadata.
      expect(log.cost_usd).toBeGreaterThan(0);
    });

    it('takes the gateway key as ?key= and the route from x-gateway-virtual-key; passes fields it does not know through; ?key= is in no log', async () => {
      const key = await createApiKey(gateway, { role: 'user' });
      const body = {
        contents: [{ role: 'user', parts: [{ text: 'echo: raw body' }] }],
        system_instruction: { parts: [{ text: 'Sys' }] },
        generationConfig: { temperature: 0.1, enableEnhancedCivicAnswers: true, mediaResolution: 'MEDIA_RESOLUTION_LOW' },
        safetySettings: SAFETY,
        cachedContent: 'cachedContents/abc123',
      };
      const response = await gemini(`/v1beta/models/gemini-2.5-flash:generateContent?key=${key.key}`, { key: null, headers: GOOGLE, body });
      expect(response.status).toBe(200);
      // "Sys" + "echo: raw body": 17 chars -> 5 prompt tokens; 2 words. The mock's answer, as it came.
      expect(response.body).toEqual({
        candidates: [{ content: { parts: [{ text: 'raw body' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 5 }] },
        modelVersion: 'gemini-2.5-flash',
        responseId: expect.any(String),
      });
      expect(response.headers.get('x-gateway-provider')).toBe('google');

      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.query.key).toBeUndefined();
      expect(sent.body).toEqual(body);
      expectNoGatewayKey(key.key);

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', provider: 'google', model: 'gemini-2.5-flash', api_key_id: key.id, status_code: 200 });
      expect(log.request_body).toEqual({ ...body, model: 'gemini-2.5-flash' });
      expect(JSON.stringify(log)).not.toContain(key.key);
      const stored = await gateway.dataSource.query(`select ${LOGGED_TEXT_SQL} as body, request_headers::text as headers from request_logs where id = $1`, [
        log.id,
      ]);
      expect(stored[0].body + stored[0].headers).not.toContain(key.key);
    });

    it('streams with the SDK: chunks relayed as the mock sent them; the log holds the assembled answer', async () => {
      const chunks: GenerateContentResponse[] = [];
      for await (const chunk of await sdk(GOOGLE).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'echo: one two three' }))
        chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.text)).toEqual(['one', ' two', ' three']);
      expect(chunks.map((chunk) => chunk.candidates?.[0].finishReason)).toEqual([undefined, undefined, 'STOP']);
      expect(chunks.map((chunk) => chunk.usageMetadata?.candidatesTokenCount)).toEqual([1, 2, 3]);

      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      expect(sent.query.alt).toBe('sse');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.body).toEqual({ contents: [{ parts: [{ text: 'echo: one two three' }], role: 'user' }] });
      expectNoGatewayKey();

      const log = await logOf(gateway, requestIdOf(chunks[0]));
      expect(log).toMatchObject({
        operation: 'gemini.generate_content',
        provider: 'google',
        model: 'gemini-2.5-flash',
        is_stream: true,
        status_code: 200,
        completion_tokens: 3,
        prompt_tokens: chunks[2].usageMetadata?.promptTokenCount,
      });
      expect(log.ttft_ms).toEqual(expect.any(Number));
      expect(log.request_body).toEqual({ contents: sent.body.contents, model: 'gemini-2.5-flash', stream: true });
      expect(textOf(log.response_body)).toBe('one two three');
      expect(log.response_body.candidates[0]).toMatchObject({ content: { role: 'model' }, finishReason: 'STOP' });
    });

    it('answers streamGenerateContent without alt=sse as one JSON array, though it asks Google over SSE', async () => {
      const response = await gemini('/v1beta/models/gemini-2.5-flash:streamGenerateContent', {
        headers: GOOGLE,
        body: { contents: [user('echo: as an array')] },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Array.isArray(response.body)).toBe(true);
      expect(response.body.map((chunk: any) => chunk.candidates[0].content.parts[0].text)).toEqual(['as', ' an', ' array']);
      expect(response.body.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { candidatesTokenCount: 3 } });
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      expect(sent.query.alt).toBe('sse');
      expect(sent.body).toEqual({ contents: [user('echo: as an array')] });
    });

    it('relays SSE frames as Google sends them (data: <json>, blank line) for ?alt=sse', async () => {
      const response = await gemini('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', {
        headers: GOOGLE,
        body: { contents: [user('echo: a b')] },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const frames = response.text.split(/\r?\n\r?\n/).filter(Boolean);
      expect(frames).toHaveLength(2);
      const chunks = frames.map((frame) => {
        expect(frame).toMatch(/^data: /);
        return JSON.parse(frame.slice('data: '.length));
      });
      expect(chunks.map((chunk) => chunk.candidates[0].content.parts[0].text)).toEqual(['a', ' b']);
      expect(response.text).not.toContain('[DONE]');
    });

    it('runs a tool round trip: a functionCall part, then the functionResponse answered in text', async () => {
      await toolRoundTrip(sdk(GOOGLE), 'gemini-2.5-flash');
      const [first, second] = mock.requests;
      expect(first.body.tools).toEqual([{ functionDeclarations: [WEATHER] }]);
      expect(second.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(second.body.contents).toEqual([
        user('What is the weather in Paris?'),
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: '18°C and sunny' } } }] },
      ]);
    });

    it("passes Google's own errors through with their status and body; the SDK throws an ApiError with the status", async () => {
      const limited = await sdkError(sdk(GOOGLE).models.generateContent({ model: 'mock-error-429', contents: 'hi' }));
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } });

      const unavailable = await gemini('/v1beta/models/mock-error-503:generateContent', { headers: GOOGLE, body: { contents: [user('hi')] } });
      expectGoogleError(unavailable, 503, 'UNAVAILABLE', /overloaded/);
      const log = await logOf(gateway, unavailable.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', provider: 'google', status_code: 503 });
    });

    it("lets Google judge a field it does not know (Google's 400, forwarded)", async () => {
      const response = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { headers: GOOGLE, body: { contents: [user('hi')], temperature: 0.5 } });
      expectGoogleError(response, 400, 'INVALID_ARGUMENT', /Unknown name "temperature"/);
      expect(upstream().body).toEqual({ contents: [user('hi')], temperature: 0.5 });
    });
  });

  describe('translated for OpenAI', () => {
    it('sends a chat completion (system, roles, sampling, stop) and answers a GenerateContentResponse; logged with tokens', async () => {
      const answer = await sdk(OPENAI).models.generateContent({
        model: 'gpt-4o-mini',
        contents: [user('Hi'), { role: 'model', parts: [{ text: 'Hello!' }] }, user('echo: translated answer')],
        config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 64, stopSequences: ['END'] },
      });
      expect(answer.candidates?.[0]).toMatchObject({ content: { role: 'model', parts: [{ text: 'translated answer' }] }, finishReason: 'STOP' });
      expect(answer.text).toBe('translated answer');
      // 9 + 2 + 6 + 23 chars -> 10 prompt tokens; 2 words.
      expect(answer.usageMetadata).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 });

      const sent = upstream();
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
      expect(sent.headers['x-goog-api-key']).toBeUndefined();
      expectNoGatewayKey();
      expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, max_completion_tokens: 64, stop: ['END'] });
      expect(sent.body.stream).toBeFalsy();
      expect(sent.body.messages.map((message: any) => [message.role, contentText(message.content)])).toEqual([
        ['system', 'Be brief.'],
        ['user', 'Hi'],
        ['assistant', 'Hello!'],
        ['user', 'echo: translated answer'],
      ]);

      const log = await logOf(gateway, requestIdOf(answer));
      expect(log).toMatchObject({
        operation: 'gemini.generate_content',
        provider: 'openai',
        model: 'gpt-4o-mini',
        status_code: 200,
        is_stream: false,
        prompt_tokens: 10,
        completion_tokens: 2,
        total_tokens: 12,
      });
      expect(log.request_body).toMatchObject({ model: 'gpt-4o-mini', contents: [user('Hi'), { role: 'model' }, user('echo: translated answer')] });
      expect(log.response_body).toMatchObject({ candidates: [{ content: { role: 'model', parts: [{ text: 'translated answer' }] }, finishReason: 'STOP' }] });
    });

    it('streams: the chunks join to the answer, the last carries finishReason and usageMetadata; the log is assembled', async () => {
      const chunks: GenerateContentResponse[] = [];
      const stream = await sdk(OPENAI).models.generateContentStream({ model: 'gpt-4o-mini', contents: 'echo: one two three' });
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThanOrEqual(2);
      expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('one two three');
      for (const chunk of chunks) expect(chunk.candidates?.[0]?.content?.role ?? 'model').toBe('model');
      const last = chunks.at(-1)!;
      expect(last.candidates?.[0].finishReason).toBe('STOP');
      expect(last.usageMetadata).toMatchObject({ candidatesTokenCount: 3, promptTokenCount: 5, totalTokenCount: 8 });

      const sent = upstream();
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', stream: true });

      const log = await logOf(gateway, requestIdOf(chunks[0]));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', provider: 'openai', is_stream: true, status_code: 200, completion_tokens: 3 });
      expect(log.request_body).toMatchObject({ model: 'gpt-4o-mini', stream: true });
      expect(textOf(log.response_body)).toBe('one two three');
      expect(log.response_body.candidates[0].finishReason).toBe('STOP');
    });

    it('maps responseMimeType application/json with a responseSchema to a JSON schema response_format (JSON types lower-cased)', async () => {
      await sdk(OPENAI).models.generateContent({
        model: 'gpt-4o-mini',
        contents: 'A city, please',
        config: {
          responseMimeType: 'application/json',
          responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
        },
      });
      const format = upstream().body.response_format;
      expect(format).toMatchObject({ type: 'json_schema', json_schema: { name: expect.any(String) } });
      expect(format.json_schema.schema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });

      mock.reset();
      await sdk(OPENAI).models.generateContent({ model: 'gpt-4o-mini', contents: 'Some JSON, please', config: { responseMimeType: 'application/json' } });
      expect(upstream().body.response_format).toEqual({ type: 'json_object' });
    });

    it('drops safetySettings and names them in x-gateway-ignored-params and the log', async () => {
      const response = await gemini('/v1beta/models/gpt-4o-mini:generateContent', {
        headers: OPENAI,
        body: { contents: [user('hi')], safetySettings: SAFETY },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-ignored-params')?.split(',')).toContain('safetySettings');
      expect(JSON.stringify(upstream().body)).not.toMatch(/safety|HARM_CATEGORY/i);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.ignored_params).toContain('safetySettings');
    });

    it('runs a tool round trip: tools and tool calls in OpenAI terms, functionCall and functionResponse in Gemini terms', async () => {
      await toolRoundTrip(sdk(OPENAI), 'gpt-4o-mini');
      const [first, second] = mock.requests;
      expect(first.path).toBe('/v1/chat/completions');
      expect(first.body.tools).toMatchObject([
        { type: 'function', function: { name: 'get_weather', description: WEATHER.description, parameters: WEATHER.parametersJsonSchema } },
      ]);

      const messages = second.body.messages;
      expect(messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool']);
      const toolCall = messages[1].tool_calls?.[0];
      expect(toolCall).toMatchObject({ type: 'function', id: expect.any(String), function: { name: 'get_weather' } });
      expect(JSON.parse(toolCall.function.arguments)).toEqual({ location: 'Paris' });
      expect(messages[2].tool_call_id).toBe(toolCall.id);
      expect(contentText(messages[2].content)).toContain('18°C and sunny');
    });

    it("answers OpenAI's errors in Google's shape with the upstream status", async () => {
      const limited = await sdkError(sdk(OPENAI).models.generateContent({ model: 'mock-error-429', contents: 'hi' }));
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.any(String) });
      const failed = await gemini('/v1beta/models/mock-error-500:generateContent', { headers: OPENAI, body: { contents: [user('hi')] } });
      expectGoogleError(failed, 500, 'INTERNAL');
      const log = await logOf(gateway, failed.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', provider: 'openai', status_code: 500 });
    });
  });

  describe('translated for Anthropic', () => {
    it('sends a Messages request (system, max_tokens, temperature, stop_sequences) and answers a GenerateContentResponse', async () => {
      const answer = await sdk(ANTHROPIC).models.generateContent({
        model: 'claude-sonnet-4-5',
        contents: 'echo: from claude',
        config: { systemInstruction: 'Be brief.', temperature: 0.5, maxOutputTokens: 100, stopSequences: ['END'] },
      });
      expect(answer.candidates?.[0]).toMatchObject({ content: { role: 'model', parts: [{ text: 'from claude' }] }, finishReason: 'STOP' });
      // "Be brief." + "echo: from claude": 26 chars -> 7 input tokens; 2 words.
      expect(answer.usageMetadata).toMatchObject({ promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 });

      const sent = upstream();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(sent.headers['anthropic-version']).toEqual(expect.any(String));
      expect(sent.headers['x-goog-api-key']).toBeUndefined();
      expectNoGatewayKey();
      expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 100, temperature: 0.5, stop_sequences: ['END'] });
      expect(contentText(sent.body.system)).toBe('Be brief.');
      expect(sent.body.messages.map((message: any) => [message.role, contentText(message.content)])).toEqual([['user', 'echo: from claude']]);

      const log = await logOf(gateway, requestIdOf(answer));
      expect(log).toMatchObject({
        operation: 'gemini.generate_content',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        status_code: 200,
        prompt_tokens: 7,
        completion_tokens: 2,
      });
    });

    it('answers finishReason MAX_TOKENS when Claude stops at max_tokens', async () => {
      const answer = await sdk(ANTHROPIC).models.generateContent({
        model: 'claude-haiku-4-5',
        contents: 'echo: one two three four',
        config: { maxOutputTokens: 2 },
      });
      expect(answer.text).toBe('one two');
      expect(answer.candidates?.[0].finishReason).toBe('MAX_TOKENS');
      expect(upstream().body.max_tokens).toBe(2);
    });

    it('streams: the chunks join to the answer, the last carries finishReason and usageMetadata', async () => {
      const chunks: GenerateContentResponse[] = [];
      for await (const chunk of await sdk(ANTHROPIC).models.generateContentStream({ model: 'claude-sonnet-4-5', contents: 'echo: streamed from claude' }))
        chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('streamed from claude');
      const last = chunks.at(-1)!;
      expect(last.candidates?.[0].finishReason).toBe('STOP');
      expect(last.usageMetadata).toMatchObject({ candidatesTokenCount: 3, promptTokenCount: 7, totalTokenCount: 10 });
      expect(upstream().body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });

      const log = await logOf(gateway, requestIdOf(chunks[0]));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', provider: 'anthropic', is_stream: true, completion_tokens: 3 });
      expect(textOf(log.response_body)).toBe('streamed from claude');
    });

    it('runs a tool round trip: tool_use and tool_result blocks in Anthropic terms', async () => {
      await toolRoundTrip(sdk(ANTHROPIC), 'claude-sonnet-4-5');
      const [first, second] = mock.requests;
      expect(first.path).toBe('/v1/messages');
      expect(first.body.tools).toMatchObject([{ name: 'get_weather', description: WEATHER.description, input_schema: WEATHER.parametersJsonSchema }]);

      const [ask, assistant, result] = second.body.messages;
      expect([ask.role, assistant.role, result.role]).toEqual(['user', 'assistant', 'user']);
      const toolUse = assistant.content.find((block: any) => block.type === 'tool_use');
      expect(toolUse).toMatchObject({ id: expect.any(String), name: 'get_weather', input: { location: 'Paris' } });
      const toolResult = result.content.find((block: any) => block.type === 'tool_result');
      expect(toolResult.tool_use_id).toBe(toolUse.id);
      expect(JSON.stringify(toolResult.content)).toContain('18°C and sunny');
    });

    it('drops safetySettings and names them in x-gateway-ignored-params', async () => {
      const response = await gemini('/v1beta/models/claude-haiku-4-5:generateContent', {
        headers: ANTHROPIC,
        body: { contents: [user('hi')], safetySettings: SAFETY },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-ignored-params')?.split(',')).toContain('safetySettings');
      expect(JSON.stringify(upstream().body)).not.toMatch(/safety|HARM_CATEGORY/i);
    });

    it("answers Anthropic's errors in Google's shape", async () => {
      const limited = await gemini('/v1beta/models/mock-error-429:generateContent', { headers: ANTHROPIC, body: { contents: [user('hi')] } });
      expectGoogleError(limited, 429, 'RESOURCE_EXHAUSTED');
      const overloaded = await sdkError(sdk(ANTHROPIC).models.generateContent({ model: 'mock-error-529', contents: 'hi' }));
      expect(overloaded.body.error).toMatchObject({ status: expect.stringMatching(/^(UNAVAILABLE|INTERNAL|UNKNOWN)$/) });
      expect(overloaded.status).toBeGreaterThanOrEqual(500);
    });
  });

  describe('count tokens', () => {
    it("counts natively with Google's countTokens, logged as gemini.count_tokens at no cost", async () => {
      const counted = await sdk(GOOGLE).models.countTokens({ model: 'gemini-2.5-flash', contents: 'What is the weather in Paris?' });
      // 29 chars -> 8 tokens.
      expect(counted.totalTokens).toBe(8);
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.body).toEqual({ contents: [user('What is the weather in Paris?')] });
      expectNoGatewayKey();

      const log = await logOf(gateway, requestIdOf(counted));
      expect(log).toMatchObject({ operation: 'gemini.count_tokens', provider: 'google', model: 'gemini-2.5-flash', status_code: 200, cost_usd: 0 });
      expect(log.response_body).toMatchObject({ totalTokens: 8 });
    });

    it.each([
      ['OpenAI', OPENAI, 'gpt-4o'],
      ['Anthropic', ANTHROPIC, 'claude-sonnet-4-5'],
    ])('estimates for %s: a positive integer, logged as gemini.count_tokens at no cost', async (_name, headers, model) => {
      const counted = await sdk(headers).models.countTokens({
        model,
        contents: [user('What is the weather in Paris? Please tell me in some detail.'), { role: 'model', parts: [{ text: 'It is sunny.' }] }],
      });
      expect(Number.isInteger(counted.totalTokens)).toBe(true);
      expect(counted.totalTokens).toBeGreaterThan(5);
      if (headers === OPENAI) expect(mock.requests).toHaveLength(0);

      const log = await logOf(gateway, requestIdOf(counted));
      expect(log).toMatchObject({ operation: 'gemini.count_tokens', model, status_code: 200, cost_usd: 0 });
    });
  });

  describe('embeddings', () => {
    it('embedContent goes natively to Google with its body unchanged', async () => {
      const body = { content: { parts: [{ text: 'hello world' }] }, taskType: 'RETRIEVAL_DOCUMENT', title: 'Doc', outputDimensionality: 4 };
      const response = await gemini('/v1beta/models/gemini-embedding-001:embedContent', { headers: GOOGLE, body });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ embedding: { values: mockEmbeddingValues('hello world', 4) } });
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:embedContent');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.body).toEqual(body);
      expectNoGatewayKey();

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.embed_content', provider: 'google', model: 'gemini-embedding-001', status_code: 200 });
    });

    it('batchEmbedContents goes natively to Google with its body unchanged', async () => {
      const body = {
        requests: ['alpha', 'beta'].map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] }, taskType: 'CLUSTERING' })),
      };
      const response = await gemini('/v1beta/models/gemini-embedding-001:batchEmbedContents', { headers: GOOGLE, body });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ embeddings: [{ values: mockEmbeddingValues('alpha') }, { values: mockEmbeddingValues('beta') }] });
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.body).toEqual(body);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.embed_content', provider: 'google', model: 'gemini-embedding-001', status_code: 200 });
    });

    it("the SDK's embedContent (batchEmbedContents) with @slug/model: each request's model is the provider's", async () => {
      const embedded = await sdk().models.embedContent({
        model: '@gemini-prod/gemini-embedding-001',
        contents: ['first text', 'second text'],
        config: { outputDimensionality: 6, taskType: 'RETRIEVAL_QUERY' },
      });
      expect(embedded.embeddings?.map((embedding) => embedding.values)).toEqual([mockEmbeddingValues('first text', 6), mockEmbeddingValues('second text', 6)]);
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect(sent.body.requests.map((request: any) => request.model)).toEqual(['models/gemini-embedding-001', 'models/gemini-embedding-001']);
      expect(sent.body.requests[0]).toMatchObject({ taskType: 'RETRIEVAL_QUERY', outputDimensionality: 6, content: { parts: [{ text: 'first text' }] } });

      const log = await logOf(gateway, requestIdOf(embedded));
      expect(log).toMatchObject({ operation: 'gemini.embed_content', provider: 'google', model: 'gemini-embedding-001', status_code: 200 });
    });

    /** What OpenAI's embeddings mock answers for these inputs (asked directly, then forgotten). */
    async function openAIVectors(model: string, input: string[], dimensions: number): Promise<number[][]> {
      const reply = await fetch(`${mock.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer direct' },
        body: JSON.stringify({ model, input, dimensions, encoding_format: 'float' }),
      });
      const vectors = ((await reply.json()) as { data: { embedding: number[] }[] }).data.map((item) => item.embedding);
      mock.reset();
      return vectors;
    }

    it('batchEmbedContents for OpenAI becomes /v1/embeddings; the vectors come back as embeddings[].values', async () => {
      const expected = await openAIVectors('text-embedding-3-small', ['first text', 'second text'], 8);
      const embedded = await sdk(OPENAI).models.embedContent({
        model: 'text-embedding-3-small',
        contents: ['first text', 'second text'],
        config: { outputDimensionality: 8 },
      });
      expect(embedded.embeddings?.map((embedding) => embedding.values)).toEqual(expected);
      const sent = upstream();
      expect(sent.path).toBe('/v1/embeddings');
      expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
      expect(sent.body).toMatchObject({ model: 'text-embedding-3-small', input: ['first text', 'second text'], dimensions: 8 });
      expectNoGatewayKey();

      const log = await logOf(gateway, requestIdOf(embedded));
      // ceil(10 / 4) + ceil(11 / 4): the mock's usage.
      expect(log).toMatchObject({ operation: 'gemini.embed_content', provider: 'openai', model: 'text-embedding-3-small', status_code: 200, prompt_tokens: 6 });
    });

    it('embedContent for OpenAI answers embedding.values', async () => {
      const [expected] = await openAIVectors('text-embedding-3-small', ['just one'], 5);
      const response = await gemini('/v1beta/models/text-embedding-3-small:embedContent', {
        headers: OPENAI,
        body: { content: { parts: [{ text: 'just one' }] }, outputDimensionality: 5 },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ embedding: { values: expected } });
      const sent = upstream();
      expect(sent.path).toBe('/v1/embeddings');
      expect(sent.body).toMatchObject({ model: 'text-embedding-3-small', dimensions: 5 });
      expect([sent.body.input].flat()).toEqual(['just one']);
    });
  });

  describe('models', () => {
    it("lists a Google key's models natively, page by page through the SDK's pager", async () => {
      const pager = await sdk(GOOGLE).models.list({ config: { pageSize: 3 } });
      expect(pager.page.map((model) => model.name)).toEqual(GEMINI_MODELS.slice(0, 3).map((model) => model.name));
      const names: string[] = [];
      for await (const model of pager) names.push(model.name!);
      expect(names).toEqual(GEMINI_MODELS.map((model) => model.name));
      expect(pager.page.length).toBeGreaterThan(0);

      expect(mock.requests.map((sent) => sent.path)).toEqual(['/v1beta/models', '/v1beta/models']);
      expect(mock.requests[0].query).toMatchObject({ pageSize: '3' });
      expect(mock.requests[1].query.pageToken).toEqual(expect.any(String));
      expect(mock.requests[0].headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expectNoGatewayKey();

      const log = await logOf(gateway, requestIdOf(pager));
      expect(log).toMatchObject({ operation: 'gemini.models', provider: 'google', status_code: 200 });
    });

    it("answers GET /v1beta/models with Google's own list, and one model by @slug/model", async () => {
      const list = await gemini('/v1beta/models', { headers: GOOGLE });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ models: GEMINI_MODELS });
      const log = await logOf(gateway, list.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.models', provider: 'google', status_code: 200 });

      mock.reset();
      const model = await sdk().models.get({ model: '@gemini-prod/gemini-2.5-pro' });
      expect(model).toMatchObject({ name: 'models/gemini-2.5-pro', displayName: 'Gemini 2.5 Pro', inputTokenLimit: 1048576, outputTokenLimit: 65536 });
      expect(model.supportedActions).toEqual(expect.arrayContaining(['generateContent', 'countTokens']));
      expect(upstream().path).toBe('/v1beta/models/gemini-2.5-pro');

      mock.reset();
      const missing = await gemini('/v1beta/models/gemini-0-nope', { headers: GOOGLE });
      expectGoogleError(missing, 404, 'NOT_FOUND', /gemini-0-nope/);
    });

    it("lists an OpenAI key's models as Gemini models (name models/<id>)", async () => {
      const list = await gemini('/v1beta/models', { headers: OPENAI });
      expect(list.status).toBe(200);
      expect(list.body.models.map((model: any) => model.name)).toEqual(MOCK_MODEL_IDS.map((id) => `models/${id}`));
      const sent = upstream();
      expect(sent.path).toBe('/v1/models');
      expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
      const log = await logOf(gateway, list.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.models', provider: 'openai', status_code: 200 });

      mock.reset();
      const names: string[] = [];
      for await (const model of await sdk(OPENAI).models.list()) names.push(model.name!);
      expect(names).toEqual(MOCK_MODEL_IDS.map((id) => `models/${id}`));

      mock.reset();
      const one = await sdk(OPENAI).models.get({ model: 'gpt-4o' });
      expect(one.name).toBe('models/gpt-4o');
      expect(upstream().path).toBe('/v1/models/gpt-4o');
    });
  });

  describe('keys and errors', () => {
    const HI = { contents: [user('hi')] };

    it('takes the gateway key as x-goog-api-key, ?key= or x-gateway-api-key, and forwards none of them', async () => {
      const key = await createApiKey(gateway, { role: 'user' });
      const path = '/v1beta/models/gemini-2.5-flash:generateContent';
      const viaHeader = await gemini(path, { key: key.key, headers: GOOGLE, body: HI });
      const viaQuery = await gemini(`${path}?key=${encodeURIComponent(key.key)}`, { key: null, headers: GOOGLE, body: HI });
      const viaGatewayHeader = await gemini(path, { key: null, headers: { ...GOOGLE, 'x-gateway-api-key': key.key }, body: HI });
      expect([viaHeader.status, viaQuery.status, viaGatewayHeader.status]).toEqual([200, 200, 200]);
      expect(mock.requests).toHaveLength(3);
      for (const sent of mock.requests) expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expectNoGatewayKey(key.key);
      for (const response of [viaHeader, viaQuery, viaGatewayHeader]) {
        const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
        expect(log.api_key_id).toBe(key.id);
        expect(JSON.stringify(log)).not.toContain(key.key);
      }
    });

    it("refuses a missing or unknown key with 401 UNAUTHENTICATED in Google's shape (the SDK: ApiError 401); nothing is sent", async () => {
      const path = '/v1beta/models/gemini-2.5-flash:generateContent';
      expectGoogleError(await gemini(path, { key: null, headers: GOOGLE, body: HI }), 401, 'UNAUTHENTICATED');
      expectGoogleError(await gemini(path, { key: 'gk-not-a-key', headers: GOOGLE, body: HI }), 401, 'UNAUTHENTICATED');
      expectGoogleError(await gemini(`${path}?key=gk-not-a-key`, { key: null, headers: GOOGLE, body: HI }), 401, 'UNAUTHENTICATED');
      expectGoogleError(await gemini('/v1beta/models', { key: null, headers: GOOGLE }), 401, 'UNAUTHENTICATED');
      const refused = await sdkError(sdk(GOOGLE, 'gk-not-a-key').models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }));
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      expect(mock.requests).toHaveLength(0);
    });

    it('refuses a body that is no GenerateContentRequest with 400 INVALID_ARGUMENT naming the field', async () => {
      const notArray = await gemini('/v1beta/models/gpt-4o-mini:generateContent', { headers: OPENAI, body: { contents: 'hello' } });
      expectGoogleError(notArray, 400, 'INVALID_ARGUMENT', /contents/);
      const noContents = await gemini('/v1beta/models/claude-haiku-4-5:generateContent', { headers: ANTHROPIC, body: { generationConfig: {} } });
      expectGoogleError(noContents, 400, 'INVALID_ARGUMENT', /contents/);
      const badJson = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { headers: GOOGLE, body: '{"contents": [' });
      expectGoogleError(badJson, 400, 'INVALID_ARGUMENT');
      expect(mock.requests).toHaveLength(0);
      // Natively, Google's own check may answer instead: still a 400 about contents.
      const native = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { headers: GOOGLE, body: { contents: 'hello' } });
      expectGoogleError(native, 400, 'INVALID_ARGUMENT', /contents/);
    });

    it("answers the gateway's own refusals in Google's shape: 404 unknown virtual key, 400 no route, 403 a model the key does not allow", async () => {
      const unknown = await sdkError(sdk({ 'x-gateway-virtual-key': 'nope' }).models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: expect.stringContaining('nope'),
          details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'virtual_key_not_found', domain: 'ai-gateway' }],
        },
      });

      const noRoute = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { body: HI });
      expectGoogleError(noRoute, 400, 'INVALID_ARGUMENT');

      await createVirtualKey(gateway, {
        slug: 'gemini-narrow',
        provider: 'google',
        key: GEMINI_SECRET,
        custom_host: `${mock.url}/v1beta`,
        allowed_models: ['gemini-2.5-pro'],
      });
      const forbidden = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { headers: { 'x-gateway-virtual-key': 'gemini-narrow' }, body: HI });
      expectGoogleError(forbidden, 403, 'PERMISSION_DENIED');
      expect(mock.requests).toHaveLength(0);
    });

    it('answers a rate limit with 429 RESOURCE_EXHAUSTED and Retry-After', async () => {
      const key = await createApiKey(gateway, { role: 'user', rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
      const path = '/v1beta/models/gemini-2.5-flash:generateContent';
      expect((await gemini(path, { key: key.key, headers: GOOGLE, body: HI })).status).toBe(200);
      const limited = await gemini(path, { key: key.key, headers: GOOGLE, body: HI });
      expectGoogleError(limited, 429, 'RESOURCE_EXHAUSTED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(mock.requests).toHaveLength(1);
    });

    it('answers an unreachable provider with 502 UNAVAILABLE and a timeout with 504 DEADLINE_EXCEEDED', async () => {
      await createVirtualKey(gateway, { slug: 'gemini-down', provider: 'google', key: GEMINI_SECRET, custom_host: 'http://127.0.0.1:1/v1beta' });
      const down = await gemini('/v1beta/models/gemini-2.5-flash:generateContent', { headers: { 'x-gateway-virtual-key': 'gemini-down' }, body: HI });
      expectGoogleError(down, 502, 'UNAVAILABLE');

      const config = JSON.stringify({ virtual_key: 'gemini-prod', request_timeout: 300 });
      const late = await gemini('/v1beta/models/mock-hang:generateContent', { headers: { 'x-gateway-config': config }, body: HI });
      expectGoogleError(late, 504, 'DEADLINE_EXCEEDED');
      const log = await logOf(gateway, late.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'gemini.generate_content', status_code: 504 });
    });

    it("answers an unknown method under /v1beta/ with 404 NOT_FOUND in Google's shape", async () => {
      const response = await gemini('/v1beta/models/gemini-2.5-flash:frobnicate', { headers: GOOGLE, body: HI });
      expectGoogleError(response, 404, 'NOT_FOUND');
      expect(mock.requests).toHaveLength(0);
    });
  });
});
