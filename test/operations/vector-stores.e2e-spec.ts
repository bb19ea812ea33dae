/**
 * Vector stores through the gateway with the official `openai` SDK: a store, its files
 * and batches, search, and the `file_search` tool of the Responses API pointing at it.
 */
import { call, createVirtualKey, expectError, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('vector stores', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-vs', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, {
      slug: 'azure-vs',
      provider: 'azure-openai',
      key: 'azure-secret',
      custom_host: mock.url,
      provider_options: { api_version: '2025-04-01-preview' },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const client = () => openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' });

  it('creates a store, adds files one by one and in a batch, searches it, and the file_search tool uses it', async () => {
    const store = await client().vectorStores.create({ name: 'Support articles', file_ids: ['file-intro'], metadata: { team: 'support' } });
    expect(store).toMatchObject({
      object: 'vector_store',
      id: expect.stringMatching(/^vs_/),
      name: 'Support articles',
      file_counts: { completed: 1, total: 1 },
      metadata: { team: 'support' },
    });

    const file = await client().vectorStores.files.create(store.id, { file_id: 'file-reset-password' });
    expect(file).toMatchObject({ object: 'vector_store.file', id: 'file-reset-password', vector_store_id: store.id, status: 'completed' });
    const batch = await client().vectorStores.fileBatches.create(store.id, { file_ids: ['file-billing', 'file-refunds'] });
    expect(batch).toMatchObject({ object: 'vector_store.files_batch', status: 'completed', file_counts: { completed: 2 } });
    expect(await client().vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id })).toMatchObject({ id: batch.id });

    const files = await client().vectorStores.files.list(store.id, { limit: 10 });
    expect(files.data.map((f) => f.id).sort()).toEqual(['file-billing', 'file-intro', 'file-refunds', 'file-reset-password']);
    const results = await client().vectorStores.search(store.id, { query: 'reset my password' });
    expect(results.data).toHaveLength(4);
    expect(results.data[0].content[0].text).toContain('reset my password');

    const renamed = await client().vectorStores.update(store.id, { name: 'Help centre' });
    expect(renamed.name).toBe('Help centre');
    expect((await client().vectorStores.retrieve(store.id)).file_counts.total).toBe(4);
    expect(await client().vectorStores.files.delete('file-billing', { vector_store_id: store.id })).toMatchObject({ deleted: true });

    const response = await client().responses.create({
      model: 'gpt-4o-mini',
      input: 'How do I reset my password?',
      tools: [{ type: 'file_search', vector_store_ids: [store.id], max_num_results: 3 }],
    });
    expect(response.object).toBe('response');
    expect(mock.requests.at(-1)!.body.tools[0]).toEqual({ type: 'file_search', vector_store_ids: [store.id], max_num_results: 3 });

    expect(await client().vectorStores.delete(store.id)).toMatchObject({ id: store.id, object: 'vector_store.deleted', deleted: true });
    const gone = await client()
      .vectorStores.retrieve(store.id)
      .catch((error: { status: number }) => error);
    expect(gone).toMatchObject({ status: 404 });

    await gateway.flushLogs();
    const logs = await call(gateway, '/v1/logs?include_bodies=false&limit=50');
    const operations = new Set(logs.body.data.map((row: { operation: string }) => row.operation));
    for (const operation of [
      'vector_stores.create',
      'vector_stores.files.create',
      'vector_stores.file_batches.create',
      'vector_stores.search',
      'vector_stores.delete',
      'responses',
    ]) {
      expect([operation, operations.has(operation)]).toEqual([operation, true]);
    }
  });

  it('checks bodies before sending them', async () => {
    const send = (path: string, body: unknown) => call(gateway, path, { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body });
    expectError(await send('/v1/vector_stores', { file_ids: 'file-a' }), 400, {
      type: 'invalid_request_error',
      param: 'file_ids',
      message: 'file_ids must be an array',
    });
    expectError(await send('/v1/vector_stores/vs_1/files', {}), 400, { type: 'invalid_request_error', param: 'file_id', message: 'file_id must be a string' });
    expectError(await send('/v1/vector_stores/vs_1/file_batches', { file_ids: [] }), 400, { type: 'invalid_request_error', param: 'file_ids' });
    expectError(await send('/v1/vector_stores/vs_1/search', { query: 42 }), 400, { type: 'invalid_request_error', param: 'query' });
    expect(mock.requests).toHaveLength(0);
  });

  it('reaches Azure OpenAI at {resource}/openai/vector_stores with its api-version', async () => {
    const store = await openai(gateway, { 'x-gateway-virtual-key': 'azure-vs' }).vectorStores.create({ name: 'on Azure' });
    expect(store.name).toBe('on Azure');
    expect(mock.requests.map((r) => [r.path, r.query['api-version'], r.headers['api-key']])).toEqual([
      ['/openai/vector_stores', '2025-04-01-preview', 'azure-secret'],
    ]);
  });
});
