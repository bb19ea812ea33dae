import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calcPrice, findProvider } from '@pydantic/genai-prices';
import OpenAI from 'openai';
import { call, createApiKey, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

/** `/v1/prices`: operator overrides over the catalog's prices, and the cost they give the log. */
describe('prices: catalog and overrides', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;
  // The package's exports map hides package.json: read from the installed folder, as the gateway does.
  const catalogVersion = (
    JSON.parse(readFileSync(join(__dirname, '..', '..', 'node_modules', '@pydantic', 'genai-prices', 'package.json'), 'utf8')) as { version: string }
  ).version;
  /** gpt-4o-mini by the catalog itself, for the usage the mock reports. */
  const catalogCost = (usage: OpenAI.CompletionUsage) =>
    calcPrice({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens }, 'gpt-4o-mini', { providerId: 'openai' })!.total_price;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    const created = await admin(gateway, 'POST', '/v1/virtual-keys', {
      name: 'OpenAI',
      slug: 'openai-prices',
      provider: 'openai',
      key: 'sk-test-provider-secret-123456',
      custom_host: `${mock.url}/v1`,
    });
    expect(created.status).toBe(201);
    client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'openai-prices' },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  async function chatCost(stream = false): Promise<{ cost: number | null; usage: OpenAI.CompletionUsage }> {
    if (stream) {
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of data) usage = chunk.usage ?? usage;
      return { cost: (await logOf(gateway, response.headers.get('x-gateway-request-id'))).cost_usd, usage: usage! };
    }
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    return { cost: (await logOf(gateway, response.headers.get('x-gateway-request-id'))).cost_usd, usage: data.usage! };
  }

  it('an override prices requests (plain and streamed); deleting it brings the catalog price back', async () => {
    const before = await chatCost();
    expect(before.cost).toBeCloseTo(catalogCost(before.usage), 12);

    const set = await admin(gateway, 'POST', '/v1/prices', { provider: 'openai', model: 'gpt-4o-mini', input: 0.1, output: 0.2, cached_input: 0.05 });
    expect(set.status).toBe(201);
    expect(set.body).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      source: 'override',
      input: 0.1,
      output: 0.2,
      cached_input: 0.05,
      cache_write: null,
    });

    const plain = await chatCost();
    expect(plain.cost).toBeCloseTo((plain.usage.prompt_tokens * 0.1 + plain.usage.completion_tokens * 0.2) / 1e6, 12);
    const streamed = await chatCost(true);
    expect(streamed.cost).toBeCloseTo((streamed.usage.prompt_tokens * 0.1 + streamed.usage.completion_tokens * 0.2) / 1e6, 12);

    // An upsert replaces the price.
    expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'openai', model: 'gpt-4o-mini', input: 1, output: 2 })).status).toBe(201);
    const replaced = await chatCost();
    expect(replaced.cost).toBeCloseTo((replaced.usage.prompt_tokens * 1 + replaced.usage.completion_tokens * 2) / 1e6, 12);

    const removed = await call(gateway, '/v1/prices/openai/gpt-4o-mini', { method: 'DELETE' });
    expect(removed.status).toBe(204);
    const after = await chatCost();
    expect(after.cost).toBeCloseTo(catalogCost(after.usage), 12);
    expect((await call(gateway, '/v1/prices/openai/gpt-4o-mini', { method: 'DELETE' })).status).toBe(404);
  });

  it('GET lists catalog entries and overrides with their source, and names the catalog and its version', async () => {
    expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'openai', model: 'gpt-4o', input: 2, output: 8 })).status).toBe(201);
    // A self-hosted model, with a slash in its name.
    expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'ollama', model: 'library/llama3', input: 0, output: 0.01 })).status).toBe(201);

    const byModel = await admin(gateway, 'GET', '/v1/prices?provider=openai&model=gpt-4o');
    expect(byModel.status).toBe(200);
    expect(byModel.body.catalog).toEqual({ name: '@pydantic/genai-prices', version: catalogVersion });
    const catalogGpt4o = calcPrice({}, 'gpt-4o', { providerId: 'openai' })!.model_price;
    expect(byModel.body.data).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'gpt-4o', source: 'override', input: 2, output: 8 }),
      expect.objectContaining({
        provider: 'openai',
        model: 'gpt-4o',
        source: 'catalog',
        input: catalogGpt4o.input_mtok,
        output: catalogGpt4o.output_mtok,
        cached_input: catalogGpt4o.cache_read_mtok,
      }),
    ]);

    const byProvider = await admin(gateway, 'GET', '/v1/prices?provider=openai&limit=500');
    const sources = new Set(byProvider.body.data.map((e: { source: string }) => e.source));
    expect(sources).toEqual(new Set(['override', 'local', 'catalog']));
    expect(byProvider.body.data.filter((e: { source: string }) => e.source === 'catalog').length).toBeGreaterThan(20);

    expect((await call(gateway, '/v1/prices/ollama/library/llama3', { method: 'DELETE' })).status).toBe(204);
    expect((await admin(gateway, 'GET', '/v1/prices?provider=ollama')).body.data).toEqual([]);
    expect((await call(gateway, '/v1/prices/openai/gpt-4o', { method: 'DELETE' })).status).toBe(204);
  });

  it('GET with no filter pages through every routed provider’s prices: catalog, local table and overrides', async () => {
    expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'ollama', model: 'llama3', input: 0.1, output: 0.2 })).status).toBe(201);
    const providers = (await admin(gateway, 'GET', '/v1/providers')).body.data.map((p: { id: string }) => p.id) as string[];
    const all: Record<string, any>[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: any } = await admin(gateway, 'GET', `/v1/prices?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ object: 'list', catalog: { name: '@pydantic/genai-prices', version: catalogVersion } });
      expect(page.body.data.length).toBeLessThanOrEqual(500);
      all.push(...page.body.data);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    expect(cursor).toBeNull();
    expect(pages).toBeGreaterThan(1);
    // No entry twice across pages, and in (provider, model, source) order.
    const keys = all.map((e) => `${e.provider}|${e.model}|${e.source}`);
    expect(new Set(keys).size).toBe(keys.length);
    // Every catalog model of every mapped provider: Anthropic's, Google's under both google and vertex-ai, Cohere's.
    for (const [provider, catalogProvider] of [
      ['anthropic', 'anthropic'],
      ['vertex-ai', 'google'],
      ['google', 'google'],
      ['cohere', 'cohere'],
      ['bedrock', 'aws'],
    ]) {
      const theirs = findProvider({ providerId: catalogProvider })!
        .models.map((m) => m.id)
        .sort();
      const ours = all
        .filter((e) => e.provider === provider && e.source === 'catalog')
        .map((e) => e.model)
        .sort();
      expect(ours).toEqual(theirs);
    }
    // Every provider with catalog prices is listed (self-hosted ones only through overrides).
    for (const p of ['openai', 'azure-openai', 'groq', 'mistral-ai', 'deepseek', 'x-ai', 'together-ai'])
      expect(all.some((e) => e.provider === p && e.source === 'catalog')).toBe(true);
    expect(all.every((e) => providers.includes(e.provider))).toBe(true);
    const sonnet = all.find((e) => e.provider === 'anthropic' && e.model === 'claude-3-5-sonnet');
    expect(sonnet).toBeDefined();
    const catalogSonnet = calcPrice({}, sonnet!.model, { providerId: 'anthropic' })!.model_price;
    expect(sonnet).toMatchObject({
      source: 'catalog',
      input: catalogSonnet.input_mtok,
      output: catalogSonnet.output_mtok,
      cached_input: catalogSonnet.cache_read_mtok,
      cache_write: catalogSonnet.cache_write_mtok,
      per_search: (catalogSonnet.web_searches_kcount as number) / 1000,
    });
    // The local table (tts per character, DALL·E per image) and the override, with their sources.
    expect(all).toContainEqual(expect.objectContaining({ provider: 'openai', model: 'tts-1', source: 'local', per_character: 0.000015 }));
    expect(all).toContainEqual(expect.objectContaining({ provider: 'openai', model: 'dall-e-3', source: 'local', per_image: 0.04 }));
    expect(all).toContainEqual(expect.objectContaining({ provider: 'ollama', model: 'llama3', source: 'override', input: 0.1, output: 0.2 }));
    // Whisper per second, from the catalog's hourly price.
    const whisper = all.find((e) => e.provider === 'openai' && e.model === 'whisper-1' && e.source === 'catalog');
    expect(whisper?.per_second).toBeGreaterThan(0);

    // Small pages walk the same list.
    const first = await admin(gateway, 'GET', '/v1/prices?limit=3');
    expect(first.body.data).toEqual(all.slice(0, 3));
    const second = await admin(gateway, 'GET', `/v1/prices?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.data).toEqual(all.slice(3, 6));

    // Filters: a provider, a model across providers.
    const cohere = await admin(gateway, 'GET', '/v1/prices?provider=cohere&limit=500');
    expect(cohere.body.data).toEqual(all.filter((e) => e.provider === 'cohere'));
    const byModel = await admin(gateway, 'GET', '/v1/prices?model=llama3');
    expect(byModel.body.data).toEqual([expect.objectContaining({ provider: 'ollama', model: 'llama3', source: 'override' })]);

    expect((await admin(gateway, 'GET', '/v1/prices?cursor=nonsense')).body.error).toMatchObject({ type: 'invalid_request_error', param: 'cursor' });
    expect((await admin(gateway, 'GET', '/v1/prices?limit=501')).status).toBe(400);
    expect((await call(gateway, '/v1/prices/ollama/llama3', { method: 'DELETE' })).status).toBe(204);
  });

  it('GET /health names the price catalog and its version', async () => {
    const health = await fetch(`${gateway.url}/health`);
    expect(await health.json()).toMatchObject({ price_catalog: { name: '@pydantic/genai-prices', version: catalogVersion } });
  });

  it.each([
    [{ provider: 'openai', model: 'm', input: -1, output: 1 }, 'input'],
    [{ provider: 'openai', model: 'm', input: 1, output: '2' }, 'output'],
    [{ provider: 'openai', model: 'm', input: 1, output: 1, cache_write: -0.5 }, 'cache_write'],
    [{ provider: 'openai', model: 'm', input: 1, output: 1, per_image: 'x' }, 'per_image'],
    [{ provider: 'openai', model: 'm', output: 1 }, 'input'],
    [{ provider: 'no-such-provider', model: 'm', input: 1, output: 1 }, 'provider'],
    [{ provider: 'openai', model: '', input: 1, output: 1 }, 'model'],
    [{ provider: 'openai', model: 'm', input: 1, output: 1, cache_input: 1 }, 'cache_input'],
  ])('400 naming the field for %j', async (body, field) => {
    const answer = await admin(gateway, 'POST', '/v1/prices', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param: field });
  });

  it('a user-role key gets 403 on POST, GET and DELETE', async () => {
    const user = await createApiKey(gateway, { role: 'user' });
    expect((await call(gateway, '/v1/prices', { body: { provider: 'openai', model: 'gpt-4o-mini', input: 0, output: 0 }, apiKey: user.key })).status).toBe(403);
    expect((await call(gateway, '/v1/prices', { apiKey: user.key })).status).toBe(403);
    expect((await call(gateway, '/v1/prices/openai/gpt-4o-mini', { method: 'DELETE', apiKey: user.key })).status).toBe(403);
  });
});
