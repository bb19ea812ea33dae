/**
 * Prompt templates: the admin API (versions, soft delete, validation) and
 * `POST /v1/prompts/{id}/completions` run with only x-gateway-api-key, rendered with
 * Mustache and sent through the same routing, adapters, log and cost as chat.
 */
import OpenAI from 'openai';
import { call, createApiKey, createVirtualKey, expectError, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const OPENAI_SECRET = 'sk-prompt-openai-999999';
const LOOKUP_TOOL = {
  type: 'function',
  function: { name: 'lookup_order', description: 'Look up an order of {{customer}}', parameters: { type: 'object', properties: { id: { type: 'string' } } } },
};
const SUPPORT = {
  name: 'Support reply',
  slug: 'support-reply',
  model: 'gpt-4o-mini',
  virtual_key: 'openai-prod',
  messages: [
    { role: 'system', content: 'You are a {{tone}} support agent for {{company}}.' },
    { role: 'user', content: 'Customer {{customer}} asks: {{question}}{{#items}}\n- {{name}}{{/items}}' },
  ],
  variables: { tone: 'friendly', company: 'Acme' },
  hyperparameters: { max_tokens: 200, temperature: 0.3, presence_penalty: 0.1, tools: [LOOKUP_TOOL] },
};

describe('prompt templates', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let prompt: any;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: OPENAI_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-prompt-1', custom_host: `${mock.url}/v1` });
    const created = await admin(gateway, 'POST', '/v1/prompts', SUPPORT);
    expect(created.status).toBe(201);
    prompt = created.body;
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const run = (idOrSlug: string, body: Record<string, unknown>, apiKey?: string) => call(gateway, `/v1/prompts/${idOrSlug}/completions`, { body, apiKey });
  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  it('creates version 1 and reads it back', async () => {
    expect(prompt).toMatchObject({
      object: 'prompt',
      slug: 'support-reply',
      version: 1,
      model: 'gpt-4o-mini',
      virtual_key: 'openai-prod',
      messages: SUPPORT.messages,
    });
    const read = await admin(gateway, 'GET', `/v1/prompts/${prompt.id}`);
    expect(read.body).toMatchObject({ id: prompt.id, version: 1, hyperparameters: SUPPORT.hyperparameters });
  });

  it('runs with only the gateway key: rendered messages and tools, overrides over the template, a chat completion back, logged with the prompt', async () => {
    const response = await run('support-reply', {
      variables: { customer: 'Ada <ada@example.com>', question: 'Where is my order?', items: [{ name: 'Lamp' }, { name: 'Desk & chair' }], unused: 'ignored' },
      max_tokens: 50,
      presence_penalty: 0.5,
      user: 'ada',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Hello from mock' } }] });

    const sent = upstream();
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a friendly support agent for Acme.' },
        // No HTML escaping: this is model text.
        { role: 'user', content: 'Customer Ada <ada@example.com> asks: Where is my order?\n- Lamp\n- Desk & chair' },
      ],
      max_tokens: 50,
      temperature: 0.3,
      presence_penalty: 0.5,
      user: 'ada',
      tools: [{ ...LOOKUP_TOOL, function: { ...LOOKUP_TOOL.function, description: 'Look up an order of Ada <ada@example.com>' } }],
    });

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      operation: 'prompts.completions',
      prompt_id: prompt.id,
      prompt_version: 1,
      provider: 'openai',
      model: 'gpt-4o-mini',
      user: 'ada',
      status_code: 200,
    });
    expect(log.request_body.variables).toMatchObject({ customer: 'Ada <ada@example.com>', question: 'Where is my order?' });
    expect(log.request_body.request.messages[1].content).toContain('Desk & chair');
    expect(log.cost_usd).toBeGreaterThan(0);
  });

  it('streams with stream: true', async () => {
    const response = await run(prompt.id, { variables: { customer: 'Bo', question: 'Any news?' }, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = response.text
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: {'))
      .map((frame) => JSON.parse(frame.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Hello from mock');
    expect(response.text.trim().endsWith('data: [DONE]')).toBe(true);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ is_stream: true, prompt_id: prompt.id, completion_tokens: 3 });
  });

  it('the OpenAI SDK can call it as a custom path', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': gateway.adminKey } });
    const completion: any = await client.post('/prompts/support-reply/completions', { body: { variables: { customer: 'Cy', question: 'Hi' }, max_tokens: 9 } });
    expect(completion).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'Hello from mock' } }] });
    expect(upstream().body).toMatchObject({ max_tokens: 9, messages: [{}, { content: 'Customer Cy asks: Hi' }] });
  });

  it('a PATCH makes a new version; calls use the latest unless one is pinned (body or query)', async () => {
    const patched = await admin(gateway, 'PATCH', '/v1/prompts/support-reply', {
      messages: [{ role: 'user', content: 'v2 for {{customer}}: {{question}}' }],
      hyperparameters: { max_tokens: 20 },
    });
    expect(patched.body).toMatchObject({
      version: 2,
      messages: [{ role: 'user', content: 'v2 for {{customer}}: {{question}}' }],
      hyperparameters: { max_tokens: 20 },
    });

    await run('support-reply', { variables: { customer: 'Di', question: 'hi' } });
    expect(upstream().body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'v2 for Di: hi' }], max_tokens: 20 });

    mock.reset();
    const pinned = await run('support-reply', { variables: { customer: 'Di', question: 'hi' }, version: 1 });
    expect(upstream().body.messages[0].content).toBe('You are a friendly support agent for Acme.');
    expect((await logOf(gateway, pinned.headers.get('x-gateway-request-id'))).prompt_version).toBe(1);

    mock.reset();
    await call(gateway, '/v1/prompts/support-reply/completions?version=1', { body: { variables: { customer: 'Di', question: 'hi' } } });
    expect(upstream().body.max_tokens).toBe(200);

    expect((await admin(gateway, 'GET', '/v1/prompts/support-reply?version=1')).body).toMatchObject({ version: 1, messages: SUPPORT.messages });
    const versions = await admin(gateway, 'GET', '/v1/prompts/support-reply/versions');
    expect(versions.body.data.map((v: any) => v.version)).toEqual([2, 1]);
    expect((await run('support-reply', { variables: { customer: 'Di', question: 'hi' }, version: 7 })).status).toBe(404);
  });

  it('render returns the request that would be sent, without sending it', async () => {
    const rendered = await call(gateway, '/v1/prompts/support-reply/render?version=1', {
      body: { variables: { customer: 'Eve', question: 'Hi?' }, temperature: 0 },
    });
    expect(rendered.status).toBe(200);
    expect(rendered.body).toMatchObject({ object: 'prompt.render', prompt_id: prompt.id, version: 1 });
    expect(rendered.body.request).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0,
      messages: [{ content: 'You are a friendly support agent for Acme.' }, { content: 'Customer Eve asks: Hi?' }],
    });
    expect(mock.requests).toHaveLength(0);
  });

  it('a missing variable is a 400 naming it, nothing sent', async () => {
    const response = await run('support-reply', { variables: { customer: 'Fay' } });
    expectError(response, 400, {
      type: 'invalid_request_error',
      code: 'missing_variable',
      param: 'variables.question',
      message: 'Missing prompt variable: question',
    });
    expect(mock.requests).toHaveLength(0);
  });

  it.each([
    ['no variables', {}, 'variables'],
    ['an override out of range', { variables: {}, temperature: 3 }, 'temperature'],
    ['a field a call cannot give', { variables: {}, model: 'gpt-4o' }, 'model'],
  ])('%s is a 400 naming the field', async (_name, body, param) => {
    const response = await run('support-reply', body);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
    expect(mock.requests).toHaveLength(0);
  });

  it('an unknown prompt is a 404', async () => {
    expectError(await run('no-such-prompt', { variables: {} }), 404, {
      type: 'not_found_error',
      code: 'prompt_not_found',
      param: null,
      message: "Unknown prompt 'no-such-prompt'",
    });
  });

  it('a user key can run prompts but not create, read or render them', async () => {
    const user = await createApiKey(gateway, { role: 'user' });
    const ran = await run('support-reply', { variables: { customer: 'Gus', question: 'hi' } }, user.key);
    expect(ran.status).toBe(200);
    const created = await call(gateway, '/v1/prompts', { body: { ...SUPPORT, slug: 'by-user' }, apiKey: user.key });
    expect(created.status).toBe(403);
    expect((await call(gateway, '/v1/prompts', { apiKey: user.key })).status).toBe(403);
    expect((await call(gateway, '/v1/prompts/support-reply/render', { body: { variables: {} }, apiKey: user.key })).status).toBe(403);
  });

  it("goes through the routing engine: the call's config (fallback, cache) wins over the template's key", async () => {
    const config = {
      strategy: { mode: 'fallback' },
      cache: { mode: 'simple' },
      targets: [
        { provider: 'openai', api_key: 'sk-a', custom_host: `${mock.url}/v1`, override_params: { model: 'mock-error-503' } },
        { provider: 'openai', api_key: 'sk-b', custom_host: `${mock.url}/v1` },
      ],
    };
    const headers = { 'x-gateway-config': JSON.stringify(config) };
    const body = { variables: { customer: 'Hal', question: 'Is it cached?' }, version: 1 };
    const first = await call(gateway, '/v1/prompts/support-reply/completions', { headers, body });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-target-index')).toBe('1');
    expect(mock.requests.map((r) => [r.headers.authorization, r.body.model])).toEqual([
      ['Bearer sk-a', 'mock-error-503'],
      ['Bearer sk-b', 'gpt-4o-mini'],
    ]);
    const second = await call(gateway, '/v1/prompts/support-reply/completions', { headers, body });
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.body).toEqual(first.body);
    // The cache is per target: the failing first target is asked again, the second answers from the cache.
    expect(mock.requests.slice(2).map((r) => r.headers.authorization)).toEqual(['Bearer sk-a']);
  });

  it('runs a template on an Anthropic key through the chat translation', async () => {
    const created = await admin(gateway, 'POST', '/v1/prompts', {
      name: 'Claude haiku',
      slug: 'claude-haiku',
      model: 'claude-sonnet-4-5',
      virtual_key: 'anthropic-prod',
      messages: [
        { role: 'system', content: 'Write haiku.' },
        { role: 'user', content: 'echo: {{topic}}' },
      ],
      hyperparameters: { max_tokens: 64 },
    });
    expect(created.status).toBe(201);
    const response = await run('claude-haiku', { variables: { topic: 'autumn rain' } });
    expect(response.body.choices[0].message.content).toBe('autumn rain');
    expect(upstream()).toMatchObject({ path: '/v1/messages', body: { system: 'Write haiku.', max_tokens: 64 } });
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'anthropic', prompt_id: created.body.id });
    expect(log.cost_usd).toBeGreaterThan(0);
  });

  it.each([
    ['a hyperparameter out of range', { hyperparameters: { temperature: 3 } }, 'hyperparameters.temperature'],
    ['a call-only field as hyperparameter', { hyperparameters: { stream: true } }, 'hyperparameters.stream'],
    ['an unclosed tag', { messages: [{ role: 'user', content: 'Hi {{#items}}' }] }, 'messages[0].content'],
    ['a partial', { messages: [{ role: 'user', content: 'Hi {{> footer}}' }] }, 'messages[0].content'],
    ['no messages', { messages: undefined }, 'messages'],
    ['a bad role', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['an unknown provider', { virtual_key: undefined, provider: 'nope' }, 'provider'],
    [
      'a bad tool template',
      { hyperparameters: { tools: [{ type: 'function', function: { name: 'f', description: '{{#a}}' } }] } },
      'hyperparameters.tools[0].function.description',
    ],
  ])('creating with %s is a 400 naming the field', async (_name, change, param) => {
    const response = await admin(gateway, 'POST', '/v1/prompts', { ...SUPPORT, slug: 'invalid-one', ...change });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
  });

  it('a taken slug is a 409; a deleted prompt is gone and frees its slug', async () => {
    const body = { ...SUPPORT, slug: 'short-lived' };
    expect((await admin(gateway, 'POST', '/v1/prompts', body)).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/prompts', body)).status).toBe(409);
    expect((await admin(gateway, 'DELETE', '/v1/prompts/short-lived')).body).toMatchObject({ object: 'prompt', deleted: true });
    expect((await run('short-lived', { variables: { customer: 'x', question: 'y' } })).status).toBe(404);
    expect((await admin(gateway, 'POST', '/v1/prompts', body)).status).toBe(201);
  });
});
