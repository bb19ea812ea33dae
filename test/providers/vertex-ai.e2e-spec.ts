/**
 * Vertex AI (`vertex-ai`) driven with the official `openai` SDK: a virtual key holding a
 * service-account JSON whose `token_uri` is the mock's token endpoint, which verifies the
 * signed JWT with the account's public key (mock-vertex.ts). Gemini through
 * generateContent / streamGenerateContent, the token minted once and shared; Claude
 * through rawPredict / streamRawPredict, natively for the official Anthropic SDK on
 * `/v1/messages` and translated for chat completions.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ACCOUNT = 'gateway@vertex-test.iam.gserviceaccount.com';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

function rsaKeyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

function serviceAccountJson(tokenUri: string, privateKeyPem: string, clientEmail = ACCOUNT): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: 'vertex-test',
    private_key_id: 'a1b2c3',
    private_key: privateKeyPem,
    client_email: clientEmail,
    client_id: '1234567890',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
  });
}

describe('Vertex AI', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;
  const account = rsaKeyPair();

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    mock.vertex.registerServiceAccount(ACCOUNT, account.publicKey);
    const options = { project_id: 'vertex-test', region: 'us-central1' };
    await createVirtualKey(gateway, {
      slug: 'vertex',
      provider: 'vertex-ai',
      key: serviceAccountJson(`${mock.url}/token`, account.privateKeyPem),
      custom_host: mock.url,
      provider_options: options,
    });
    // The right account, signed with another key: Google's token endpoint refuses the signature.
    await createVirtualKey(gateway, {
      slug: 'vertex-wrong-key',
      provider: 'vertex-ai',
      key: serviceAccountJson(`${mock.url}/token`, rsaKeyPair().privateKeyPem),
      custom_host: mock.url,
      provider_options: options,
    });
    await createVirtualKey(gateway, {
      slug: 'vertex-no-project',
      provider: 'vertex-ai',
      key: serviceAccountJson(`${mock.url}/token`, account.privateKeyPem),
      custom_host: mock.url,
      provider_options: { region: 'us-central1' },
    });
    await createVirtualKey(gateway, {
      slug: 'vertex-ready-token',
      provider: 'vertex-ai',
      key: 'ya29.not-issued-by-google',
      custom_host: mock.url,
      provider_options: options,
    });
    client = openai(gateway, { 'x-gateway-virtual-key': 'vertex' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const vertexCalls = () => mock.requests.filter((request) => request.path.startsWith('/v1/projects/'));

  it('answers a plain chat completion from Gemini on Vertex, logged with its usage', async () => {
    mock.reset();
    const { data, response } = await client.chat.completions
      .create({
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: hello vertex' },
        ],
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'hello vertex' }, finish_reason: 'stop' });
    expect(data.usage!.prompt_tokens).toBeGreaterThan(0);

    const [sent] = vertexCalls();
    expect(sent.path).toBe('/v1/projects/vertex-test/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.mock-/);
    expect(mock.vertex.tokenRequests).toEqual([{ granted: true, clientEmail: ACCOUNT }]);

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      provider: 'vertex-ai',
      model: 'gemini-2.5-flash',
      status_code: 200,
      prompt_tokens: data.usage!.prompt_tokens,
      completion_tokens: data.usage!.completion_tokens,
    });
    // The service-account key is a secret like any provider key: nowhere in the row.
    expect(JSON.stringify(log)).not.toContain('PRIVATE KEY');
  });

  it('streams from streamGenerateContent?alt=sse with usage, reusing the token it already has', async () => {
    mock.reset();
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'echo: one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(usage?.completion_tokens).toBe(3);
    const [sent] = vertexCalls();
    expect(sent.path).toBe('/v1/projects/vertex-test/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent');
    expect(sent.query).toEqual({ alt: 'sse' });
    expect(mock.vertex.tokenRequests).toHaveLength(0);
  });

  it('round-trips a tool call, and concurrent requests share the one token', async () => {
    mock.reset();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [WEATHER_TOOL] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const toolCall = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function).toEqual({ name: 'get_weather', arguments: '{"location":"Paris"}' });

    const second = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: toolCall.id, content: '18°C and sunny' }],
      tools: [WEATHER_TOOL],
    });
    expect(second.choices[0].message.content).toBe('Hello from mock');
    const sentBack = vertexCalls()[1].body.contents;
    expect(sentBack[1].parts[0].functionCall).toEqual({ name: 'get_weather', args: { location: 'Paris' } });
    expect(sentBack[2].parts[0].functionResponse).toMatchObject({ name: 'get_weather' });

    await Promise.all([1, 2, 3, 4].map(() => client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })));
    expect(vertexCalls()).toHaveLength(6);
    expect(mock.vertex.tokenRequests).toHaveLength(0);
  });

  it('a token the cloud did not issue is refused with the cloud status, in OpenAI shape', async () => {
    const response = await call(gateway, '/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-gateway-virtual-key': 'vertex-ready-token' },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBe(401);
    expect(response.body.error.message).toMatch(/invalid authentication credentials/);
    expect(mock.requests.at(-1)!.headers.authorization).toBe('Bearer ya29.not-issued-by-google');
  });

  it('a key signed with the wrong private key: the token endpoint refuses it, and the client is told which account and why', async () => {
    mock.reset();
    const response = await call(gateway, '/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-gateway-virtual-key': 'vertex-wrong-key' },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
    });
    expectError(response, 401, { type: 'authentication_error', code: 'provider_credential_refused' });
    expect(response.body.error.message).toContain(ACCOUNT);
    expect(response.body.error.message).toContain('invalid_grant: Invalid JWT Signature.');
    expect(mock.vertex.tokenRequests).toEqual([{ granted: false, clientEmail: ACCOUNT, error: 'invalid_grant: Invalid JWT Signature.' }]);
    expect(vertexCalls()).toHaveLength(0);
  });

  it('a virtual key without provider_options.project_id is a 400 naming it, before any token is asked for', async () => {
    mock.reset();
    const response = await call(gateway, '/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-gateway-virtual-key': 'vertex-no-project' },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
    });
    expectError(response, 400, { type: 'invalid_request_error', param: 'provider_options.project_id', message: /project_id/ });
    expect(mock.requests).toHaveLength(0);
  });
  it("without a key, a virtual key uses the gateway's Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, its token_uri honoured)", async () => {
    const adcAccount = 'gateway-adc@vertex-test.iam.gserviceaccount.com';
    const pair = rsaKeyPair();
    mock.vertex.registerServiceAccount(adcAccount, pair.publicKey);
    const file = join(mkdtempSync(join(tmpdir(), 'vertex-adc-')), 'service-account.json');
    writeFileSync(file, serviceAccountJson(`${mock.url}/token`, pair.privateKeyPem, adcAccount));
    const previous = process.env.GOOGLE_APPLICATION_CREDENTIALS;
    process.env.GOOGLE_APPLICATION_CREDENTIALS = file;
    try {
      await createVirtualKey(gateway, {
        slug: 'vertex-adc',
        provider: 'vertex-ai',
        custom_host: mock.url,
        provider_options: { project_id: 'vertex-test', region: 'global' },
      });
      mock.reset();
      const adc = openai(gateway, { 'x-gateway-virtual-key': 'vertex-adc' });
      for (const text of ['one', 'two']) {
        const answer = await adc.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: `echo: ${text}` }] });
        expect(answer.choices[0].message.content).toBe(text);
      }
      expect(mock.vertex.tokenRequests).toEqual([{ granted: true, clientEmail: adcAccount }]);
      expect(vertexCalls()[0].path).toBe('/v1/projects/vertex-test/locations/global/publishers/google/models/gemini-2.5-flash:generateContent');

      // A header route has no provider_options (so no project): refused before any credential; the
      // rule that it may never borrow the gateway's identity is google-credentials.spec.ts's.
      const header = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'x-gateway-provider': 'vertex-ai', 'x-gateway-custom-host': mock.url },
        body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(header.status).toBe(400);
      expect(header.body.error.param).toBe('provider_options.project_id');
      expect(mock.vertex.tokenRequests).toHaveLength(1);
    } finally {
      if (previous === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
      else process.env.GOOGLE_APPLICATION_CREDENTIALS = previous;
    }
  });

  describe('Claude on Vertex', () => {
    const anthropic = () =>
      new Anthropic({
        baseURL: gateway.url,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'vertex' },
      });

    it('answers /v1/messages natively through rawPredict: model in the URL, vertex-2023-10-16 in the body', async () => {
      mock.reset();
      const { data, response } = await anthropic()
        .messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: 100,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'echo: hello claude on vertex' }],
        })
        .withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'hello claude on vertex' }]);
      expect(data.usage.input_tokens).toBeGreaterThan(0);
      const [sent] = vertexCalls();
      expect(sent.path).toBe('/v1/projects/vertex-test/locations/us-central1/publishers/anthropic/models/claude-sonnet-4-5:rawPredict');
      expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 100, system: 'Be brief.' });
      expect(sent.body.model).toBeUndefined();
      expect(sent.headers.authorization).toMatch(/^Bearer ya29\.mock-/);
      expect(sent.headers['x-api-key']).toBeUndefined();
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        provider: 'vertex-ai',
        model: 'claude-sonnet-4-5',
        status_code: 200,
        prompt_tokens: data.usage.input_tokens,
        completion_tokens: data.usage.output_tokens,
      });
    });

    it('streams /v1/messages through streamRawPredict, Anthropic events relayed', async () => {
      mock.reset();
      const stream = anthropic().messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'echo: streamed from vertex' }],
      });
      let text = '';
      stream.on('text', (delta) => (text += delta));
      const final = await stream.finalMessage();
      expect(text).toBe('streamed from vertex');
      expect(final.stop_reason).toBe('end_turn');
      const [sent] = vertexCalls();
      expect(sent.path).toMatch(/\/publishers\/anthropic\/models\/claude-sonnet-4-5:streamRawPredict$/);
      expect(sent.body.stream).toBe(true);
    });

    it('answers chat completions for Claude through the Anthropic translation, tool call included, and /v1/messages for Gemini through the chat bridge', async () => {
      mock.reset();
      const plain = await client.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: chat to claude' },
        ],
      });
      expect(plain.choices[0].message.content).toBe('chat to claude');
      expect(vertexCalls()[0].body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', system: 'Be brief.' });

      const stream = await client.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'What is the weather?' }],
        tools: [WEATHER_TOOL],
        stream: true,
      });
      let args = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        args += chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(JSON.parse(args)).toEqual({ location: 'Paris' });
      expect(finish).toBe('tool_calls');
      expect(vertexCalls()[1].path).toMatch(/:streamRawPredict$/);

      const viaBridge = await anthropic().messages.create({
        model: 'gemini-2.5-flash',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'echo: gemini via messages' }],
      });
      expect(viaBridge.content).toEqual([{ type: 'text', text: 'gemini via messages' }]);
      expect(vertexCalls()[2].path).toMatch(/\/publishers\/google\/models\/gemini-2\.5-flash:generateContent$/);
    });

    it("passes Vertex's refusal of a Claude request through with its status", async () => {
      const response = await call(gateway, '/v1/messages', {
        method: 'POST',
        headers: { 'x-gateway-virtual-key': 'vertex-ready-token', 'anthropic-version': '2023-06-01' },
        body: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(response.status).toBe(401);
      expect(JSON.stringify(response.body)).toMatch(/invalid authentication credentials/);
    });
  });
  describe("Gemini's own API (/v1beta) with @google/genai", () => {
    const genai = () =>
      new GoogleGenAI({
        apiKey: gateway.adminKey,
        httpOptions: { baseUrl: gateway.url, headers: { 'x-gateway-virtual-key': 'vertex' }, retryOptions: { attempts: 1 } },
      });

    it('sends generateContent, streams and countTokens of a Gemini model natively to Vertex (the token, never the key)', async () => {
      mock.reset();
      const answer = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: 'echo: native on vertex' });
      expect(answer.text).toBe('native on vertex');
      const streamed: string[] = [];
      for await (const chunk of await genai().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'echo: two words' }))
        streamed.push(chunk.text ?? '');
      expect(streamed.join('')).toBe('two words');
      // A whole request counted, as the Gemini API takes it (the SDK sends no system instruction in API-key mode).
      const counted = await call(gateway, '/v1beta/models/gemini-2.5-flash:countTokens', {
        headers: { 'x-gateway-virtual-key': 'vertex' },
        body: {
          generateContentRequest: {
            model: 'models/gemini-2.5-flash',
            contents: [{ role: 'user', parts: [{ text: 'How many tokens?' }] }],
            systemInstruction: { parts: [{ text: 'Count carefully.' }] },
          },
        },
      });
      expect(counted.status).toBe(200);
      expect(counted.body.totalTokens).toBeGreaterThan(0);

      const calls = vertexCalls();
      expect(calls.map((request) => request.path.replace(/^.*\/models\//, ''))).toEqual([
        'gemini-2.5-flash:generateContent',
        'gemini-2.5-flash:streamGenerateContent',
        'gemini-2.5-flash:countTokens',
      ]);
      expect(calls[1].query.alt).toBe('sse');
      for (const request of calls) {
        expect(request.headers.authorization).toMatch(/^Bearer ya29\.mock-/);
        expect(JSON.stringify(request.headers)).not.toContain(gateway.adminKey);
        expect(request.body.model).toBeUndefined();
      }
      // Vertex's countTokens takes the request's fields at the top, not a generateContentRequest.
      expect(Object.keys(calls[2].body).sort()).toEqual(['contents', 'systemInstruction']);
    });

    it("translates a Claude model on Vertex through chat (rawPredict), answered in Gemini's shape", async () => {
      mock.reset();
      const answer = await genai().models.generateContent({ model: 'claude-sonnet-4-5', contents: 'echo: claude for gemini' });
      expect(answer.text).toBe('claude for gemini');
      expect(vertexCalls()[0].path).toMatch(/\/publishers\/anthropic\/models\/claude-sonnet-4-5:rawPredict$/);
    });
  });
});
