import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { chat, createConfig, createVirtualKey, logOf, openai } from '../support/e2e-helpers';

const VK_SECRET = 'sk-routing-vk-secret-111111';
const DIRECT_SECRET = 'sk-routing-direct-secret-222222';
const CONFIG_SECRET = 'sk-routing-config-secret-333333';

describe('routing: every mode reaches the provider with the right credential and model', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let vk: any;
  let base: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    base = `${mock.url}/v1`;
    vk = await createVirtualKey(gateway, {
      slug: 'openai-main',
      key: VK_SECRET,
      custom_host: base,
      provider_organization: 'org-from-vk',
      provider_project: 'proj-from-vk',
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** The single request the mock saw. */
  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  it.each([
    ['slug', () => 'openai-main'],
    ['id', () => vk.id as string],
  ])('x-gateway-virtual-key by %s', async (_, ref) => {
    const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': ref() })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('Hello from mock');
    expect(upstream()).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } });
    expect(upstream().headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ virtual_key_id: vk.id, provider: 'openai', model: 'gpt-4o-mini', status_code: 200, config_id: null });
  });

  it('x-gateway-provider with Authorization and x-gateway-custom-host', async () => {
    const client = openai(gateway, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': base }, DIRECT_SECRET);
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'echo: direct' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('direct');
    expect(upstream().headers.authorization).toBe(`Bearer ${DIRECT_SECRET}`);
    expect(upstream().body.model).toBe('gpt-4o');
    expect(upstream().headers['openai-organization']).toBeUndefined();
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ virtual_key_id: null, provider: 'openai', model: 'gpt-4o' });
  });

  it('model prefix @<slug>/<model> routes through the virtual key and is stripped before forwarding', async () => {
    const { data, response } = await openai(gateway, {})
      .chat.completions.create({ model: '@openai-main/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.model).toBe('gpt-4o-mini');
    expect(upstream().body.model).toBe('gpt-4o-mini');
    expect(upstream().headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ virtual_key_id: vk.id, model: 'gpt-4o-mini' });
  });

  it('inline x-gateway-config JSON', async () => {
    const config = { provider: 'openai', api_key: CONFIG_SECRET, custom_host: base };
    const response = await chat(gateway, { 'x-gateway-config': JSON.stringify(config) });
    expect(response.status).toBe(200);
    expect(upstream().headers.authorization).toBe(`Bearer ${CONFIG_SECRET}`);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'openai', config_id: null, virtual_key_id: null });
    expect(JSON.parse(log.request_headers['x-gateway-config'])).toEqual({ ...config, api_key: '[REDACTED]' });
  });

  it('stored config by slug and by id', async () => {
    const stored = await createConfig(gateway, 'stored-direct', { provider: 'openai', api_key: CONFIG_SECRET, custom_host: base });
    for (const ref of ['stored-direct', stored.id]) {
      mock.reset();
      const response = await chat(gateway, { 'x-gateway-config': ref });
      expect(response.status).toBe(200);
      expect(upstream().headers.authorization).toBe(`Bearer ${CONFIG_SECRET}`);
      expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).config_id).toBe(stored.id);
    }
  });

  it('config override_params are merged into the forwarded body', async () => {
    const config = { provider: 'openai', api_key: CONFIG_SECRET, custom_host: base, override_params: { model: 'gpt-4o', max_tokens: 7 } };
    const response = await chat(gateway, { 'x-gateway-config': JSON.stringify(config) }, { temperature: 0.5, user: 'ovr' });
    expect(response.status).toBe(200);
    expect(upstream().body).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hello' }], temperature: 0.5, user: 'ovr', max_tokens: 7 });
    expect(response.body.model).toBe('gpt-4o');
  });

  it('config targets with strategy single: the first target serves and inherits from its parent', async () => {
    const config = { strategy: { mode: 'single' }, api_key: CONFIG_SECRET, custom_host: base, targets: [{ provider: 'openai' }] };
    const response = await chat(gateway, { 'x-gateway-config': JSON.stringify(config) });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-target-index')).toBe('0');
    expect(upstream().headers.authorization).toBe(`Bearer ${CONFIG_SECRET}`);
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).target_index).toBe('0');
  });

  it('config naming a virtual_key uses that key', async () => {
    const response = await chat(gateway, { 'x-gateway-config': JSON.stringify({ virtual_key: 'openai-main' }) });
    expect(response.status).toBe(200);
    expect(upstream().headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).virtual_key_id).toBe(vk.id);
  });

  describe('precedence', () => {
    const direct = () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': base, authorization: `Bearer ${DIRECT_SECRET}` });

    it('config beats the virtual key header and the provider header', async () => {
      const config = JSON.stringify({ provider: 'openai', api_key: CONFIG_SECRET, custom_host: base });
      const response = await chat(gateway, { ...direct(), 'x-gateway-virtual-key': 'openai-main', 'x-gateway-config': config });
      expect(response.status).toBe(200);
      expect(upstream().headers.authorization).toBe(`Bearer ${CONFIG_SECRET}`);
    });

    it('the virtual key header beats the provider header', async () => {
      const response = await chat(gateway, { ...direct(), 'x-gateway-virtual-key': 'openai-main' });
      expect(response.status).toBe(200);
      expect(upstream().headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    });
  });

  it("organization and project: the virtual key's, overridden by the request headers", async () => {
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'openai-main' })).status).toBe(200);
    expect(upstream().headers).toMatchObject({ 'openai-organization': 'org-from-vk', 'openai-project': 'proj-from-vk' });
    mock.reset();
    const headers = { 'x-gateway-virtual-key': 'openai-main', 'x-gateway-provider-organization': 'org-hdr', 'x-gateway-provider-project': 'proj-hdr' };
    expect((await chat(gateway, headers)).status).toBe(200);
    expect(upstream().headers).toMatchObject({ 'openai-organization': 'org-hdr', 'openai-project': 'proj-hdr' });
  });

  it("organization and project: the config's, overridden by the request headers", async () => {
    const config = JSON.stringify({
      provider: 'openai',
      api_key: CONFIG_SECRET,
      custom_host: base,
      provider_organization: 'org-cfg',
      provider_project: 'proj-cfg',
    });
    expect((await chat(gateway, { 'x-gateway-config': config })).status).toBe(200);
    expect(upstream().headers).toMatchObject({ 'openai-organization': 'org-cfg', 'openai-project': 'proj-cfg' });
    mock.reset();
    const headers = { 'x-gateway-config': config, 'x-gateway-provider-organization': 'org-hdr2', 'x-gateway-provider-project': 'proj-hdr2' };
    expect((await chat(gateway, headers)).status).toBe(200);
    expect(upstream().headers).toMatchObject({ 'openai-organization': 'org-hdr2', 'openai-project': 'proj-hdr2' });
  });

  it('azure-openai: deployment URL, api-version and the api-key header', async () => {
    await createVirtualKey(gateway, {
      slug: 'azure-main',
      provider: 'azure-openai',
      key: 'azure-secret-key-444444',
      custom_host: mock.url,
      provider_options: { api_version: '2024-10-21', deployment: 'my-dep' },
    });
    const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'azure-main' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'echo: azure' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('azure');
    expect(upstream()).toMatchObject({ path: '/openai/deployments/my-dep/chat/completions', query: { 'api-version': '2024-10-21' } });
    expect(upstream().headers['api-key']).toBe('azure-secret-key-444444');
    expect(upstream().headers.authorization).toBeUndefined();
    expect(response.headers.get('x-gateway-provider')).toBe('azure-openai');
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'azure-openai', model: 'gpt-4o-mini', status_code: 200 });
    expect(log.cost_usd).toBeCloseTo((data.usage!.prompt_tokens * 0.15 + data.usage!.completion_tokens * 0.6) / 1e6, 12); // OpenAI's list price
  });

  it('groq virtual key with custom_host (OpenAI-compatible base)', async () => {
    await createVirtualKey(gateway, { slug: 'groq-main', provider: 'groq', key: 'gsk-groq-secret-555555', custom_host: `${mock.url}/openai/v1` });
    const response = await chat(gateway, { 'x-gateway-virtual-key': 'groq-main' }, { model: 'llama-3.1-8b-instant' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-provider')).toBe('groq');
    expect(upstream()).toMatchObject({ path: '/openai/v1/chat/completions', body: { model: 'llama-3.1-8b-instant' } });
    expect(upstream().headers.authorization).toBe('Bearer gsk-groq-secret-555555');
    expect(upstream().headers['openai-organization']).toBeUndefined();
  });

  it('returns the headers of CONTRACT section 2', async () => {
    const response = await chat(gateway, { 'x-gateway-virtual-key': 'openai-main', 'x-gateway-trace-id': 'trace-routing-1' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-trace-id')).toBe('trace-routing-1');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-retry-count')).toBe('0');
    expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
    expect(response.headers.get('x-gateway-target-index')).toBeNull();
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ id: response.headers.get('x-gateway-request-id'), trace_id: 'trace-routing-1', retry_count: 0, cache_status: 'DISABLED' });
  });

  it('generates a uuid trace id when none is given', async () => {
    const response = await chat(gateway, { 'x-gateway-virtual-key': 'openai-main' });
    const traceId = response.headers.get('x-gateway-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).trace_id).toBe(traceId);
    expect((await admin(gateway, 'GET', `/v1/logs?trace_id=${traceId}`)).body.data).toHaveLength(1);
  });
});
