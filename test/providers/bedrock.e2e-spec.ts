/**
 * AWS Bedrock through the official `openai` SDK: chat completions become Converse /
 * ConverseStream calls, SigV4-signed; the mock (test/support/mock-bedrock.ts) recomputes
 * each signature from the test secret, so a wrong signature fails as at AWS.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { clearAwsCredentialCaches } from '../../src/providers/bedrock/aws-credentials';
import { createVirtualKey, logOf, openai } from '../support/e2e-helpers';
import { THINKING_TEXT } from '../support/mock-anthropic-body';
import { BEDROCK_TEST_ASSUMED, BEDROCK_TEST_CREDENTIALS, BEDROCK_TEST_ROLE, BEDROCK_TEST_SESSION, stsAssumeRoleCalls } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const CLAUDE = 'us.anthropic.claude-3-5-haiku-20241022-v1:0';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const PIXEL_BYTES = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** The SDK's error for a request that must fail with `status`; its OpenAI error fields match `fields`. */
async function expectError(request: Promise<unknown>, status: number, fields: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await request.then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const apiError = error as InstanceType<typeof OpenAI.APIError>;
  expect(apiError.status).toBe(status);
  expect(apiError.error).toMatchObject(fields);
  return apiError;
}

describe('AWS Bedrock through the OpenAI SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    const region = { aws_region: 'us-east-1' };
    await createVirtualKey(gateway, {
      slug: 'bedrock-prod',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { ...region, aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    await createVirtualKey(gateway, {
      slug: 'bedrock-session',
      provider: 'bedrock',
      key: BEDROCK_TEST_SESSION.secretAccessKey,
      custom_host: mock.url,
      provider_options: { ...region, aws_access_key_id: BEDROCK_TEST_SESSION.accessKeyId, aws_session_token: BEDROCK_TEST_SESSION.sessionToken },
    });
    await createVirtualKey(gateway, {
      slug: 'bedrock-wrong-secret',
      provider: 'bedrock',
      key: 'not/the+secret',
      custom_host: mock.url,
      provider_options: { ...region, aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    await createVirtualKey(gateway, {
      slug: 'bedrock-no-region',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    // No key at all: the gateway's own environment signs (the AWS default chain; here its environment variables).
    await createVirtualKey(gateway, { slug: 'bedrock-ambient', provider: 'bedrock', custom_host: mock.url, provider_options: region });
    await createVirtualKey(gateway, {
      slug: 'bedrock-no-key-id',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: region,
    });
    client = openai(gateway, {});
  });

  afterAll(async () => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    delete process.env.AWS_ENDPOINT_URL_STS;
    clearAwsCredentialCaches();
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  it('answers a plain chat through Converse, signed, with usage in the answer and the log', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: `@bedrock-prod/${CLAUDE}`,
        messages: [{ role: 'user', content: 'echo: hello bedrock' }],
        max_tokens: 50,
        temperature: 0.2,
        user: 'dana',
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'hello bedrock' }, finish_reason: 'stop' });
    expect(data.usage).toMatchObject({ completion_tokens: 2, prompt_tokens: expect.any(Number) });
    const sent = upstream();
    // The inference profile id is one path segment, its ':' escaped.
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/converse`);
    expect(sent.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_TEST_CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`),
    );
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'echo: hello bedrock' }] }],
      inferenceConfig: { maxTokens: 50, temperature: 0.2 },
    });

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'bedrock', model: CLAUDE, user: 'dana', prompt_tokens: data.usage!.prompt_tokens, completion_tokens: 2 });
    expect(log.response_body.choices[0].message.content).toBe('hello bedrock');
    expect(JSON.stringify(log)).not.toContain(BEDROCK_TEST_CREDENTIALS.secretAccessKey);
  });

  it('sends the system prompt as Converse system blocks and signs temporary credentials with their session token', async () => {
    const data = await client.chat.completions.create({
      model: '@bedrock-session/meta.llama3-1-70b-instruct-v1:0',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'system?' },
      ],
    });
    expect(data.choices[0].message.content).toBe('You are terse.');
    const sent = upstream();
    expect(sent.body.system).toEqual([{ text: 'You are terse.' }]);
    expect(sent.headers['x-amz-security-token']).toBe(BEDROCK_TEST_SESSION.sessionToken);
  });

  it('streams ConverseStream binary frames as OpenAI chunks, usage when asked for', async () => {
    const stream = await client.chat.completions.create({
      model: `@bedrock-prod/mistral.mistral-large-2407-v1:0`,
      messages: [{ role: 'user', content: 'echo: one two three four' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('one two three four');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ completion_tokens: 4, prompt_tokens: expect.any(Number) });
    expect(upstream().path).toBe(`/model/${encodeURIComponent('mistral.mistral-large-2407-v1:0')}/converse-stream`);
  });

  it('translates tools, tool calls and tool results both ways, streaming included', async () => {
    const model = '@bedrock-prod/amazon.nova-pro-v1:0';
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await client.chat.completions.create({ model, messages, tools: [WEATHER_TOOL], tool_choice: 'auto' });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const toolCall = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function).toEqual({ name: 'get_weather', arguments: '{"location":"Paris"}' });
    expect(upstream().body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather by city', inputSchema: { json: WEATHER_TOOL.function.parameters } } }],
      toolChoice: { auto: {} },
    });

    mock.reset();
    const second = await client.chat.completions.create({
      model,
      tools: [WEATHER_TOOL],
      messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: toolCall.id, content: '18°C and sunny' }],
    });
    expect(second.choices[0].message.content).toBe('Hello from mock');
    const sent = upstream().body;
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [{ toolUse: { toolUseId: toolCall.id, name: 'get_weather', input: { location: 'Paris' } } }],
    });
    expect(sent.messages[2]).toEqual({ role: 'user', content: [{ toolResult: { toolUseId: toolCall.id, content: [{ text: '18°C and sunny' }] } }] });

    mock.reset();
    const stream = await client.chat.completions.create({ model, messages, tools: [WEATHER_TOOL], stream: true });
    const calls: Record<number, { id?: string; name?: string; args: string }> = {};
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
        const entry = (calls[delta.index] ??= { args: '' });
        entry.id ??= delta.id;
        entry.name ??= delta.function?.name;
        entry.args += delta.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(calls[0]).toMatchObject({ name: 'get_weather', args: '{"location":"Paris"}', id: expect.stringMatching(/^tooluse_/) });
  });

  it('sends an image data URL as Converse image bytes', async () => {
    const data = await client.chat.completions.create({
      model: `@bedrock-prod/${CLAUDE}`,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_BYTES.toString('base64')}` } },
          ],
        },
      ],
    });
    expect(data.choices[0].message.content).toBe(`Image png ${PIXEL_BYTES.length} bytes`);
    expect(upstream().body.messages[0].content[1]).toEqual({ image: { format: 'png', source: { bytes: PIXEL_BYTES.toString('base64') } } });
    // Converse takes bytes, never a link: the gateway does not fetch one for it.
    await expectError(
      client.chat.completions.create({
        model: `@bedrock-prod/${CLAUDE}`,
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
      }),
      400,
      { param: 'messages[0].content[0].image_url.url' },
    );
  });

  it("passes AWS's refusal of a wrong signature through as a 403 that says what to check", async () => {
    const error = await expectError(
      client.chat.completions.create({ model: `@bedrock-wrong-secret/${CLAUDE}`, messages: [{ role: 'user', content: 'hi' }] }),
      403,
      {
        code: 'InvalidSignatureException',
        type: 'authentication_error',
      },
    );
    expect(error.message).toContain('The request signature we calculated does not match');
    expect(error.message).toContain('aws_access_key_id');
  });

  it('passes a throttle (429) and an unknown model (400 ValidationException) through with their status', async () => {
    const throttled = await expectError(
      client.chat.completions.create({ model: '@bedrock-prod/mock-error-429', messages: [{ role: 'user', content: 'hi' }] }, { maxRetries: 0 }),
      429,
      {
        code: 'ThrottlingException',
        type: 'rate_limit_error',
      },
    );
    expect(throttled.message).toContain('Too many requests');
    const unknown = await expectError(client.chat.completions.create({ model: '@bedrock-prod/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), 400, {
      code: 'ValidationException',
    });
    expect(unknown.message).toContain('The provided model identifier is invalid');
  });

  it('ends the OpenAI stream with an error event when Bedrock sends an exception frame mid-stream', async () => {
    const stream = await client.chat.completions.create({
      model: '@bedrock-prod/mock-stream-exception',
      messages: [{ role: 'user', content: 'echo: one two three' }],
      stream: true,
    });
    let text = '';
    let failure: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (error) {
      failure = error;
    }
    expect(text).toBe('one');
    expect(failure).toBeDefined();
    expect(String((failure as Error).message)).toContain('The model stopped mid-answer');
  });

  it('names the missing region or access key id (400)', async () => {
    await expectError(client.chat.completions.create({ model: `@bedrock-no-region/${CLAUDE}`, messages: [{ role: 'user', content: 'hi' }] }), 400, {
      param: 'provider_options.aws_region',
    });
    await expectError(client.chat.completions.create({ model: `@bedrock-no-key-id/${CLAUDE}`, messages: [{ role: 'user', content: 'hi' }] }), 400, {
      param: 'provider_options.aws_access_key_id',
    });
    expect(mock.requests).toHaveLength(0);
  });

  it("signs with the gateway's own AWS credentials (default chain) when the virtual key has no key, fetched once", async () => {
    clearAwsCredentialCaches();
    process.env.AWS_ACCESS_KEY_ID = BEDROCK_TEST_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = BEDROCK_TEST_CREDENTIALS.secretAccessKey;
    const first = await client.chat.completions.create({ model: `@bedrock-ambient/${CLAUDE}`, messages: [{ role: 'user', content: 'echo: ambient' }] });
    expect(first.choices[0].message.content).toBe('ambient');
    expect(upstream().headers.authorization).toContain(`Credential=${BEDROCK_TEST_CREDENTIALS.accessKeyId}/`);
    // Cached: a changed environment is not read again per request (static environment keys never expire).
    process.env.AWS_SECRET_ACCESS_KEY = 'changed/secret';
    mock.reset();
    const second = await client.chat.completions.create({ model: `@bedrock-ambient/${CLAUDE}`, messages: [{ role: 'user', content: 'echo: cached' }] });
    expect(second.choices[0].message.content).toBe('cached');
  });

  it('takes per-request AWS credentials with x-gateway-provider: bedrock, and never logs the secret or the session token', async () => {
    const awsHeaders = {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': mock.url,
      'x-gateway-aws-access-key-id': BEDROCK_TEST_SESSION.accessKeyId,
      'x-gateway-aws-secret-access-key': BEDROCK_TEST_SESSION.secretAccessKey,
      'x-gateway-aws-session-token': BEDROCK_TEST_SESSION.sessionToken,
      'x-gateway-aws-region': 'eu-west-3',
    };
    const { data, response } = await openai(gateway, awsHeaders)
      .chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'echo: per request' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('per request');
    const sent = upstream();
    expect(sent.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_TEST_SESSION.accessKeyId}/\\d{8}/eu-west-3/bedrock/aws4_request`),
    );
    expect(sent.headers['x-amz-security-token']).toBe(BEDROCK_TEST_SESSION.sessionToken);
    // None of the gateway's own headers reaches AWS.
    expect(Object.keys(sent.headers).filter((name) => name.startsWith('x-gateway-'))).toEqual([]);

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log.request_headers).toMatchObject({
      'x-gateway-aws-access-key-id': BEDROCK_TEST_SESSION.accessKeyId,
      'x-gateway-aws-secret-access-key': '[REDACTED]',
      'x-gateway-aws-session-token': '[REDACTED]',
      'x-gateway-aws-region': 'eu-west-3',
    });
    const logged = JSON.stringify(log);
    expect(logged).not.toContain(BEDROCK_TEST_SESSION.secretAccessKey);
    expect(logged).not.toContain(BEDROCK_TEST_SESSION.sessionToken);
  });

  it("refuses a header route without AWS keys (400 naming the header) instead of lending it the gateway's own identity", async () => {
    clearAwsCredentialCaches();
    process.env.AWS_ACCESS_KEY_ID = BEDROCK_TEST_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = BEDROCK_TEST_CREDENTIALS.secretAccessKey;
    const headerRoute = openai(gateway, { 'x-gateway-provider': 'bedrock', 'x-gateway-custom-host': mock.url, 'x-gateway-aws-region': 'us-east-1' });
    const error = await expectError(headerRoute.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }] }), 400, {
      param: 'x-gateway-aws-secret-access-key',
    });
    expect(error.message).toContain('x-gateway-aws-access-key-id');
    // The secret without its key id is named too.
    const withSecretOnly = openai(gateway, {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': mock.url,
      'x-gateway-aws-region': 'us-east-1',
      'x-gateway-aws-secret-access-key': 'secret',
    });
    const missingId = await expectError(withSecretOnly.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }] }), 400, {
      param: 'provider_options.aws_access_key_id',
    });
    expect(missingId.message).toContain('x-gateway-aws-access-key-id');
    expect(mock.requests).toHaveLength(0);
  });

  it("maps reasoning_effort to Claude's thinking budget on Converse and returns the reasoning as reasoning_content", async () => {
    const data = await client.chat.completions.create({
      model: `@bedrock-prod/${CLAUDE}`,
      messages: [{ role: 'user', content: 'echo: thought through' }],
      reasoning_effort: 'medium',
    });
    expect(data.choices[0].message.content).toBe('thought through');
    expect((data.choices[0].message as unknown as { reasoning_content: string }).reasoning_content).toBe(THINKING_TEXT);
    // No limit of the client's: room for the budget and an answer.
    expect(upstream().body).toMatchObject({
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 4096 } },
      inferenceConfig: { maxTokens: 4096 + 4096 },
    });

    mock.reset();
    // A limit below the budget: the budget is cut to half of it.
    const stream = await client.chat.completions.create({
      model: `@bedrock-prod/${CLAUDE}`,
      messages: [{ role: 'user', content: 'echo: one two' }],
      reasoning_effort: 'high',
      max_tokens: 4000,
      stream: true,
    });
    let reasoning = '';
    let text = '';
    for await (const chunk of stream) {
      reasoning += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(reasoning).toBe(THINKING_TEXT);
    expect(text).toBe('one two');
    expect(upstream().body).toMatchObject({ additionalModelRequestFields: { thinking: { budget_tokens: 2000 } }, inferenceConfig: { maxTokens: 4000 } });

    mock.reset();
    await expectError(
      client.chat.completions.create({
        model: `@bedrock-prod/${CLAUDE}`,
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: 'low',
        temperature: 0.2,
      }),
      400,
      { param: 'temperature' },
    );
    await expectError(
      client.chat.completions.create({ model: '@bedrock-prod/amazon.nova-pro-v1:0', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low' }),
      400,
      { param: 'reasoning_effort' },
    );
    expect(mock.requests).toHaveLength(0);
  });

  it('assumes aws_role_arn through STS (external id passed on) once, and signs Bedrock requests with the assumed credentials', async () => {
    clearAwsCredentialCaches();
    stsAssumeRoleCalls.length = 0;
    // The SDK's STS client reads its endpoint from the environment, as it would for a VPC endpoint.
    process.env.AWS_ENDPOINT_URL_STS = mock.url;
    const role = { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId, aws_role_arn: BEDROCK_TEST_ROLE.arn };
    await createVirtualKey(gateway, {
      slug: 'bedrock-role',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { ...role, aws_external_id: BEDROCK_TEST_ROLE.externalId },
    });
    await createVirtualKey(gateway, {
      slug: 'bedrock-role-no-external-id',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: role,
    });
    const bedrockCalls = () => mock.requests.filter((request) => request.path.startsWith('/model/'));

    for (const word of ['first', 'second', 'third']) {
      const data = await client.chat.completions.create({ model: `@bedrock-role/${CLAUDE}`, messages: [{ role: 'user', content: `echo: ${word}` }] });
      expect(data.choices[0].message.content).toBe(word);
    }
    // The mock checked each Bedrock signature with the assumed secret and its session token.
    const calls = bedrockCalls();
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call.headers.authorization).toContain(`Credential=${BEDROCK_TEST_ASSUMED.accessKeyId}/`);
      expect(call.headers['x-amz-security-token']).toBe(BEDROCK_TEST_ASSUMED.sessionToken);
    }
    expect(stsAssumeRoleCalls).toEqual([
      { roleArn: BEDROCK_TEST_ROLE.arn, externalId: BEDROCK_TEST_ROLE.externalId, signedBy: BEDROCK_TEST_CREDENTIALS.accessKeyId, granted: true },
    ]);

    // STS's refusal (the role wants its external id) is a 403 that names the role, and nothing reaches Bedrock.
    mock.reset();
    const refused = await expectError(
      client.chat.completions.create({ model: `@bedrock-role-no-external-id/${CLAUDE}`, messages: [{ role: 'user', content: 'hi' }] }),
      403,
      { param: 'provider_options.aws_role_arn' },
    );
    expect(refused.message).toContain('not authorized to perform: sts:AssumeRole');
    expect(bedrockCalls()).toHaveLength(0);
  });

  function anthropicClient(virtualKey = 'bedrock-prod', headers: Record<string, string> = {}): Anthropic {
    return new Anthropic({
      baseURL: gateway.url,
      apiKey: 'dummy-key',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': virtualKey, ...headers },
    });
  }

  it('answers the Anthropic SDK on /v1/messages for a model other than Claude through the chat bridge and Converse, streaming included', async () => {
    const anthropic = anthropicClient();
    const model = 'meta.llama3-1-70b-instruct-v1:0';
    const message = await anthropic.messages.create({ model, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'echo: hi llama' }] });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'hi llama' })]);
    expect(message.usage.output_tokens).toBe(2);
    expect(upstream().body.system).toEqual([{ text: 'Be brief.' }]);

    mock.reset();
    const stream = anthropic.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'echo: one two three' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('one two three');
    expect(final.stop_reason).toBe('end_turn');
    expect(upstream().path).toContain('/converse-stream');
  });

  it('sends /v1/messages for Claude natively through InvokeModel, signed, betas in the body, usage in the log', async () => {
    const { data: message, response } = await anthropicClient()
      .messages.create(
        { model: CLAUDE, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'echo: hi claude' }], metadata: { user_id: 'erin' } },
        { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19, interleaved-thinking-2025-05-14' } },
      )
      .withResponse();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'hi claude' }],
      stop_reason: 'end_turn',
      usage: { output_tokens: 2 },
    });
    const sent = upstream();
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(sent.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_TEST_CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`),
    );
    expect(sent.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14'],
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'echo: hi claude' }],
      metadata: { user_id: 'erin' },
    });
    expect(sent.headers['anthropic-beta']).toBeUndefined();

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'bedrock', model: CLAUDE, user: 'erin', prompt_tokens: message.usage.input_tokens, completion_tokens: 2 });
    expect(log.response_body.content[0].text).toBe('hi claude');
  });

  it('streams Claude through InvokeModelWithResponseStream: each chunk becomes the Anthropic event it carries', async () => {
    const stream = anthropicClient().messages.stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'echo: one two three' }] });
    const types: string[] = [];
    let text = '';
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('one two three');
    expect(final).toMatchObject({ stop_reason: 'end_turn', usage: { output_tokens: 3 } });
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    const sent = upstream();
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    expect(sent.body.stream).toBeUndefined();
    const { response } = await stream.withResponse();
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'bedrock', completion_tokens: 3, prompt_tokens: final.usage.input_tokens });
    expect(log.response_body.content[0].text).toBe('one two three');
  });

  it('calls tools natively for Claude, JSON and streamed', async () => {
    const anthropic = anthropicClient();
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
    ];
    const first = await anthropic.messages.create({
      model: CLAUDE,
      max_tokens: 200,
      tools,
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(toolUse).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
    expect(upstream().body.tools).toEqual(tools);

    mock.reset();
    const second = await anthropic.messages.create({
      model: CLAUDE,
      max_tokens: 200,
      tools,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18°C and sunny' }] },
      ],
    });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello from mock' })]);

    mock.reset();
    const streamed = await anthropic.messages
      .stream({ model: CLAUDE, max_tokens: 200, tools, messages: [{ role: 'user', content: 'What is the weather in Paris?' }] })
      .finalMessage();
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.content.find((block) => block.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
  });

  it("answers Bedrock's errors on /v1/messages in Anthropic's shape, and an exception frame mid-stream as an error event", async () => {
    const anthropic = anthropicClient();
    const failure = await anthropic.messages
      .create({ model: 'us.anthropic.claude-mock-error-429', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.RateLimitError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.stringContaining('ThrottlingException') },
    });

    mock.reset();
    const invalid = await anthropic.messages
      .create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'assistant', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('first message must use the "user" role') },
    });

    mock.reset();
    const stream = anthropic.messages.stream({
      model: 'us.anthropic.claude-mock-stream-exception',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'echo: one two three' }],
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const broken = await stream.finalMessage().catch((error: unknown) => error);
    expect(broken).toBeInstanceOf(Error);
    expect(String((broken as Error).message)).toContain('The model stopped mid-answer');
    expect(text).toBe('one');
  });
});
