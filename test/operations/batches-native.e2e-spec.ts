/**
 * Batches run natively at their provider (CONTRACT section 17), with the official SDKs as a
 * user would call the gateway: an OpenAI-shaped batch through an `openai` and an
 * `azure-openai` virtual key, an Anthropic one through an `anthropic` key, each submitted to
 * the provider's Batch API (the mock's, test/support/mock-openai-batches.ts and
 * mock-anthropic-batches.ts) and followed there; the gateway's output and error files and
 * results are the provider's; cancel goes to the provider; a batch the provider fails or
 * expires ends so; every line with a response is a log row at half the synchronous price;
 * a budget used up refuses the batch before anything is sent. A batch the gateway must run
 * itself (another provider, another window, a config) stays gateway-run.
 */
import { calcPrice } from '@pydantic/genai-prices';
import OpenAI, { toFile } from 'openai';
import { anthropicClient, chatLine, ended, fileLines, finished, jsonl, MESSAGE_REQUESTS } from '../support/batch-helpers';
import { chat, createApiKey, createConfig, createVirtualKey, openai, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

describe('Batches, run natively at the provider (e2e)', () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  /** Uploads the lines to the gateway and creates a batch of them, as a user would. */
  async function createBatch(with_: OpenAI, lines: unknown[], fields: Partial<OpenAI.BatchCreateParams> = {}): Promise<any> {
    const file = await with_.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'batch.jsonl'), purpose: 'batch' });
    return with_.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', ...fields });
  }

  /** The mock's record of the batch the gateway submitted for `gatewayBatchId`. */
  async function providerBatch(gatewayBatchId: string) {
    const [row] = await gateway.dataSource.query(`select provider_batch_id from batches where id = $1`, [gatewayBatchId]);
    expect(row.provider_batch_id).toMatch(/^batch_[0-9a-f]{32}$/);
    const record = mock.batches.all.get(row.provider_batch_id);
    expect(record).toBeDefined();
    return record!;
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ BATCH_POLL_MS: '50', BATCH_NATIVE_POLL_MS: '50' });
    await createVirtualKey(gateway, { slug: 'oai', provider: 'openai', key: 'sk-native-openai-0000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'azure', provider: 'azure-openai', key: 'azure-native-secret-0000', custom_host: mock.url });
    await createVirtualKey(gateway, { slug: 'claude', provider: 'anthropic', key: 'sk-ant-native-0000', custom_host: mock.url });
    await createVirtualKey(gateway, { slug: 'groq', provider: 'groq', key: 'gsk-native-0000', custom_host: `${mock.url}/openai/v1` });
    client = openai(gateway, { 'x-gateway-virtual-key': 'oai' });
  });

  afterEach(() => {
    mock.batches.release();
    mock.anthropicBatches.release();
    mock.reset();
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('runs an OpenAI-shaped batch at OpenAI: each line once there, its files as OpenAI wrote them, each line a log row at half price', async () => {
    const created = await createBatch(client, [chatLine('a', 'first'), chatLine('b', 'second'), '{not json', chatLine('c', 'third', 'mock-error-400')], {
      metadata: { job: 'eval' },
    });
    expect(created.gateway).toMatchObject({ mode: 'native', provider: 'openai' });
    expect(created.status).toBe('validating');
    expect(created.metadata).toEqual({ job: 'eval' });
    const record = await providerBatch(created.id);
    // The valid lines only, with the client's endpoint, window and metadata, and the gateway's batch id.
    expect(record.requests.map((request) => request.custom_id)).toEqual(['a', 'b', 'c']);
    expect(record.batch).toMatchObject({ endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'eval', gateway_batch_id: created.id } });
    expect(record.headers.authorization).toBe('Bearer sk-native-openai-0000');

    const batch = await finished(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 2, failed: 2 });
    expect([...mock.batches.executions.entries()].sort()).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    // No line was sent by the gateway itself.
    expect(mock.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(0);

    const settled = await mock.batches.settled(record.batch.id);
    const output = await fileLines(client, batch.output_file_id);
    const providerResult = (customId: string) => record.requests.find((request) => request.custom_id === customId)!.result;
    expect(output).toEqual([providerResult('a'), providerResult('b')]);
    expect(output[0].response.body.choices[0].message.content).toBe('first');
    const errors = await fileLines(client, batch.error_file_id);
    expect(errors[0]).toMatchObject({ custom_id: 'line-3', response: null, error: { code: 'invalid_line' } });
    expect(errors.slice(1)).toEqual([providerResult('c')]);
    expect(settled.output_file_id).toBeTruthy();

    await gateway.flushLogs();
    const logs = await admin(gateway, 'GET', `/v1/logs?batch_id=${batch.id}`);
    const rows = Object.fromEntries(logs.body.data.map((row: any) => [row.custom_id, row]));
    expect(Object.keys(rows).sort()).toEqual(['a', 'b', 'c']);
    for (const row of Object.values<any>(rows))
      expect(row).toMatchObject({ kind: 'request', batch_id: batch.id, provider: 'openai', operation: 'chat.completions', model: expect.any(String) });
    const a = rows.a;
    expect(a).toMatchObject({ status_code: 200, model: 'gpt-4o-mini', prompt_tokens: output[0].response.body.usage.prompt_tokens });
    expect(a.response_body).toEqual(output[0].response.body);
    expect(a.request_body).toEqual(chatLine('a', 'first').body);
    const full = calcPrice({ input_tokens: a.prompt_tokens, output_tokens: a.completion_tokens }, 'gpt-4o-mini', { providerId: 'openai' })!.total_price;
    expect(full).toBeGreaterThan(0);
    expect(a.cost_usd).toBeCloseTo(full / 2, 10);
    expect(rows.c).toMatchObject({ status_code: 400, cost_usd: null, error: { type: 'upstream_error', code: '400' } });
    const final = await client.batches.retrieve(batch.id);
    expect((final as any).gateway.cost_usd).toBeCloseTo(rows.a.cost_usd + rows.b.cost_usd, 10);
  });

  it('runs natively with x-gateway-provider and the provider key sent per request, polled with that key', async () => {
    const direct = openai(gateway, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1` }, 'sk-direct-per-request-0000');
    const created = await createBatch(direct, [chatLine('d1', 'one')]);
    expect(created.gateway).toMatchObject({ mode: 'native', provider: 'openai' });
    const record = await providerBatch(created.id);
    expect(record.headers.authorization).toBe('Bearer sk-direct-per-request-0000');
    // Read back with the gateway key alone: the poller uses the key sealed with the batch.
    const batch = await finished(openai(gateway, {}), created.id);
    expect(batch.status).toBe('completed');
    expect(mock.batches.executions.get('d1')).toBe(1);
    const polls = mock.requests.filter((request) => request.method === 'GET' && request.path === `/v1/batches/${record.batch.id}`);
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((request) => request.headers.authorization === 'Bearer sk-direct-per-request-0000')).toBe(true);
    await gateway.flushLogs();
    const stored = await gateway.dataSource.query(`select request_headers::text as headers from request_logs where batch_id = $1`, [created.id]);
    expect(stored).toHaveLength(1);
    expect(stored[0].headers).not.toContain('sk-direct-per-request');
  });

  it('runs an OpenAI-shaped batch at Azure OpenAI: its files and batches under /openai with api-version, endpoints without /v1', async () => {
    const azure = openai(gateway, { 'x-gateway-virtual-key': 'azure' });
    const created = await createBatch(azure, [chatLine('az-1', 'one'), chatLine('az-2', 'two')]);
    expect(created.gateway).toMatchObject({ mode: 'native', provider: 'azure-openai' });
    const record = await providerBatch(created.id);
    expect(record.batch.endpoint).toBe('/chat/completions');
    expect(record.requests.map((request) => [request.custom_id, request.url])).toEqual([
      ['az-1', '/chat/completions'],
      ['az-2', '/chat/completions'],
    ]);
    const batch = await finished(azure, created.id);
    expect(batch.status).toBe('completed');
    expect([...mock.batches.executions.keys()].sort()).toEqual(['az-1', 'az-2']);
    expect(await fileLines(azure, batch.output_file_id)).toEqual(record.requests.map((request) => request.result));
    expect(batch.error_file_id).toBeNull();

    // Half of what the same request costs when sent synchronously through the same key.
    const sync = await chat(gateway, { 'x-gateway-virtual-key': 'azure' }, chatLine('az-1', 'one').body);
    expect(sync.status).toBe(200);
    await gateway.flushLogs();
    const [syncRow] = await gateway.dataSource.query(`select cost_usd from request_logs where id = $1`, [sync.headers.get('x-gateway-request-id')]);
    const logs = await admin(gateway, 'GET', `/v1/logs?batch_id=${batch.id}`);
    const row = logs.body.data.find((r: any) => r.custom_id === 'az-1');
    expect(row).toMatchObject({ provider: 'azure-openai', batch_id: batch.id, status_code: 200 });
    expect(Number(syncRow.cost_usd)).toBeGreaterThan(0);
    expect(row.cost_usd).toBeCloseTo(Number(syncRow.cost_usd) / 2, 10);
  });

  it('runs an Anthropic-shaped batch at Anthropic: results through the SDK as Anthropic wrote them, each line a log row at half price', async () => {
    const anthropic = anthropicClient(gateway, { 'x-gateway-virtual-key': 'claude' });
    const created = await anthropic.messages.batches.create({ requests: MESSAGE_REQUESTS });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress' });
    const [stored] = await gateway.dataSource.query(`select mode, provider, provider_batch_id from batches where id = $1`, [created.id]);
    expect(stored).toMatchObject({ mode: 'native', provider: 'anthropic', provider_batch_id: expect.stringMatching(/^msgbatch_/) });
    const record = mock.anthropicBatches.all.get(stored.provider_batch_id)!;
    expect(record.headers['x-api-key']).toBe('sk-ant-native-0000');

    const batch = await ended(anthropic, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    expect([...mock.anthropicBatches.executions.entries()].sort()).toEqual([
      ['broken', 1],
      ['first', 1],
      ['second', 1],
    ]);
    const results: any[] = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results).toEqual(record.requests.map((request) => ({ custom_id: request.custom_id, result: request.result })));
    expect(results[0].result.message.content[0].text).toBe('one');
    expect(results[2].result).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error' } } });

    await gateway.flushLogs();
    const logs = await admin(gateway, 'GET', `/v1/logs?batch_id=${created.id}`);
    const rows = Object.fromEntries(logs.body.data.map((row: any) => [row.custom_id, row]));
    expect(Object.keys(rows).sort()).toEqual(['broken', 'first', 'second']);
    const first = rows.first;
    expect(first).toMatchObject({ kind: 'request', operation: 'messages', provider: 'anthropic', status_code: 200, batch_id: created.id });
    expect(first.prompt_tokens).toBe(results[0].result.message.usage.input_tokens);
    const full = calcPrice({ input_tokens: first.prompt_tokens, output_tokens: first.completion_tokens }, first.model, {
      providerId: 'anthropic',
    })!.total_price;
    expect(full).toBeGreaterThan(0);
    expect(first.cost_usd).toBeCloseTo(full / 2, 10);
    expect(rows.broken).toMatchObject({ status_code: 400, error: { type: 'upstream_error' }, cost_usd: null });
  });

  it('forwards a cancel to the provider: the lines it ran are in the output file, the others cancelled', async () => {
    mock.batches.hold('in_progress', { afterLines: 1 });
    const created = await createBatch(client, [chatLine('x1', 'one'), chatLine('x2', 'two'), chatLine('x3', 'three')]);
    const record = await providerBatch(created.id);
    await waitFor(() => mock.batches.executions.get('x1') === 1, 5000);
    // While it runs there, the batch's counts are the provider's (its lines are written at the end).
    const running = await waitFor(async () => {
      const batch = await client.batches.retrieve(created.id);
      return batch.request_counts?.completed === 1 ? batch : null;
    }, 5000);
    expect(running.status).toBe('in_progress');
    expect(running.request_counts).toEqual({ total: 3, completed: 1, failed: 0 });
    expect((running as any).gateway.lines).toMatchObject({ pending: 2, succeeded: 1 });
    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(['cancelling', 'cancelled']).toContain(record.batch.status);
    const batch = await finished(client, created.id);
    expect(batch.status).toBe('cancelled');
    expect(record.batch.status).toBe('cancelled');
    expect(mock.batches.executions.get('x2')).toBeUndefined();
    expect(await fileLines(client, batch.output_file_id)).toEqual([record.requests[0].result]);
    const errors = await fileLines(client, batch.error_file_id);
    expect(errors.map((line) => [line.custom_id, line.error?.code])).toEqual([
      ['x2', 'cancelled'],
      ['x3', 'cancelled'],
    ]);
    expect(batch.request_counts).toEqual({ total: 3, completed: 1, failed: 2 });
  });

  it('fails a batch its provider no longer knows (404) with the provider’s answer, instead of polling it forever', async () => {
    mock.batches.hold('in_progress');
    const created = await createBatch(client, [chatLine('g1', 'gone')]);
    const [row] = await gateway.dataSource.query(`select provider_batch_id from batches where id = $1`, [created.id]);
    // Gone at the provider (ended there first, so that it runs nothing later).
    mock.batches.expire(row.provider_batch_id);
    mock.batches.all.delete(row.provider_batch_id);
    const batch = await finished(client, created.id);
    expect(batch.status).toBe('failed');
    expect(batch.errors!.data![0]).toMatchObject({ code: 'provider_batch_not_found', message: expect.stringContaining(row.provider_batch_id) });
    expect(mock.batches.executions.get('g1')).toBeUndefined();
  });

  it('reports a batch the provider failed in validation with its errors, naming the lines of the client’s file', async () => {
    mock.batches.hold('validating');
    const created = await createBatch(client, ['{not json', chatLine('v1', 'one'), chatLine('v2', 'two')]);
    const record = await providerBatch(created.id);
    // The provider's validation finds what the gateway cannot (here OpenAI's enqueued token limit), on the second line it was sent.
    record.problems.push({ code: 'token_limit_exceeded', message: 'Enqueued token limit reached for gpt-4o-mini.', param: null, line: 2 });
    mock.batches.release();
    const batch = await finished(client, created.id);
    expect(batch.status).toBe('failed');
    expect(record.batch.status).toBe('failed');
    // Line 2 of what the gateway sent is line 3 of the client's file (line 1 was not sent).
    expect(batch.errors).toEqual({
      object: 'list',
      data: [{ code: 'token_limit_exceeded', message: 'Enqueued token limit reached for gpt-4o-mini.', param: null, line: 3 }],
    });
    expect(batch.failed_at).toEqual(expect.any(Number));
    expect(batch.output_file_id).toBeNull();
    expect(batch.error_file_id).toBeNull();
    expect(mock.batches.executions.size).toBe(0);
  });

  it('expires with the provider: the lines it ran in the output file, the others expired as the provider wrote them', async () => {
    mock.batches.hold('in_progress', { afterLines: 1 });
    const created = await createBatch(client, [chatLine('e1', 'one'), chatLine('e2', 'two'), chatLine('e3', 'three')]);
    const record = await providerBatch(created.id);
    await waitFor(() => mock.batches.executions.get('e1') === 1, 5000);
    expect(mock.batches.expire(record.batch.id)).toBe(true);
    const batch = await finished(client, created.id);
    expect(batch.status).toBe('expired');
    expect(batch.expired_at).toEqual(expect.any(Number));
    expect(await fileLines(client, batch.output_file_id)).toEqual([record.requests[0].result]);
    const errors = await fileLines(client, batch.error_file_id);
    expect(errors).toEqual(record.requests.slice(1).map((request) => request.result));
    expect(errors.every((line) => line.error.code === 'batch_expired')).toBe(true);
  });

  it('refuses a batch with 402 when the key’s budget is used up, before anything reaches the provider; a batch within it settles its cost', async () => {
    const spent = await createApiKey(gateway, { name: 'spent', budget_limit_usd: 0.000001 });
    const first = await chat(
      gateway,
      { 'x-gateway-virtual-key': 'oai' },
      { messages: [{ role: 'user', content: 'echo: enough words to cost something' }] },
      spent.key,
    );
    expect(first.status).toBe(200);
    await gateway.flushLogs();
    const before = mock.batches.all.size;
    const broke = openai(gateway, { 'x-gateway-virtual-key': 'oai' }, 'unused', spent.key);
    const refused: unknown = await createBatch(broke, [chatLine('n1', 'one')]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((refused as any).error).toMatchObject({ type: 'budget_exceeded', code: 'budget_exceeded' });
    expect(mock.batches.all.size).toBe(before);

    const funded = await createApiKey(gateway, { name: 'funded', budget_limit_usd: 10 });
    const funds = openai(gateway, { 'x-gateway-virtual-key': 'oai' }, 'unused', funded.key);
    const batch = await finished(funds, (await createBatch(funds, [chatLine('f1', 'one'), chatLine('f2', 'two')])).id);
    expect(batch.status).toBe('completed');
    await gateway.flushLogs();
    const [counter] = await gateway.dataSource.query(`select spent_usd::float8 as spent from budget_counters where scope = 'api_key' and scope_id = $1`, [
      funded.id,
    ]);
    const [logged] = await gateway.dataSource.query(`select sum(cost_usd)::float8 as cost from request_logs where batch_id = $1`, [batch.id]);
    expect(logged.cost).toBeGreaterThan(0);
    expect(counter.spent).toBeCloseTo(logged.cost, 10);
  });

  it('answers a provider’s refusal as the provider gave it, and keeps no batch of it', async () => {
    // A virtual key whose host has no Batch API: the provider's 404 is the answer.
    await createVirtualKey(gateway, { slug: 'oai-nowhere', provider: 'openai', key: 'sk-native-nowhere-0000', custom_host: `${mock.url}/nowhere/v1` });
    const before = mock.batches.all.size;
    const nowhere = openai(gateway, { 'x-gateway-virtual-key': 'oai-nowhere' });
    const refused = await createBatch(nowhere, [chatLine('r1', 'one')]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    const upload = mock.requests.find((request) => request.path === '/nowhere/v1/files');
    expect(upload?.headers.authorization).toBe('Bearer sk-native-nowhere-0000');
    expect(mock.batches.all.size).toBe(before);
    const [{ n }] = await gateway.dataSource.query(`select count(*)::int as n from batches b join batch_lines l on l.batch_id = b.id where l.custom_id = 'r1'`);
    expect(n).toBe(0);
  });

  it('leaves to the gateway what needs it: another provider, another window, a config', async () => {
    const before = mock.batches.all.size;
    const groq = openai(gateway, { 'x-gateway-virtual-key': 'groq' });
    const line = chatLine('g1', 'one', 'llama-3.1-8b-instant');
    const viaGroq = await createBatch(groq, [line]);
    expect(viaGroq.gateway).toMatchObject({ mode: 'gateway', provider: null });
    const hourly = await createBatch(client, [chatLine('w1', 'one')], { completion_window: '1h' as '24h' });
    expect(hourly.gateway).toMatchObject({ mode: 'gateway' });
    await createConfig(gateway, 'oai-fallback', { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'oai' }, { virtual_key: 'groq' }] });
    const configured = await createBatch(openai(gateway, { 'x-gateway-config': 'oai-fallback' }), [chatLine('cf1', 'one')]);
    expect(configured.gateway).toMatchObject({ mode: 'gateway' });
    for (const [with_, id] of [
      [groq, viaGroq.id],
      [client, hourly.id],
      [client, configured.id],
    ] as const)
      expect((await finished(with_, id)).status).toBe('completed');
    expect(mock.batches.all.size).toBe(before);
    await gateway.flushLogs();
    const logs = await admin(gateway, 'GET', `/v1/logs?batch_id=${hourly.id}`);
    expect(logs.body.data).toEqual([expect.objectContaining({ custom_id: 'w1', provider: 'openai', latency_ms: expect.any(Number) })]);
  });
});
