/**
 * Batches through the gateway with the official SDKs (CONTRACT section 17): OpenAI's shape
 * (a JSONL file uploaded with purpose "batch", `batches.create`, poll, the output and error
 * files) and Anthropic's (`messages.batches.create`, poll, `results`), run by the gateway
 * line by line for a provider without batches (or routed by a config). Every line is a log
 * row naming its batch; bad input is a 400 naming it, or fails its line alone.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { anthropicClient, chatLine as openAIChatLine, ended, fileLines, finished, jsonl, MESSAGE_REQUESTS } from '../support/batch-helpers';
import { call, createConfig, createVirtualKey, expectError, openai, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { BatchRunner } from '../../src/modules/batches/batch-runner';

/** A chat line for the groq target (a provider without batches). */
const chatLine = (customId: string, text: string, model = 'llama-3.1-8b-instant') => openAIChatLine(customId, text, model);

const FILE_LIMIT = 256 * 1024;

/** A multipart/form-data body in the order given (the SDKs choose their own). */
function form(parts: { name: string; value: string | Buffer; filename?: string }[]) {
  const boundary = `----batchtest${Date.now()}`;
  const chunks = parts.flatMap((part) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}\r\n\r\n`),
    Buffer.from(part.value),
    Buffer.from('\r\n'),
  ]);
  return { body: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('Batches, run by the gateway (e2e)', () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ BATCH_POLL_MS: '50', BATCH_CONCURRENCY: '4', BATCH_FILE_LIMIT_BYTES: String(FILE_LIMIT) });
    await createVirtualKey(gateway, { slug: 'groq', provider: 'groq', key: 'gsk-batch-000000', custom_host: `${mock.url}/openai/v1` });
    await createVirtualKey(gateway, { slug: 'claude', provider: 'anthropic', key: 'sk-ant-batch', custom_host: mock.url });
    await createVirtualKey(gateway, { slug: 'mistral', provider: 'mistral-ai', key: 'mistral-batch-000000', custom_host: `${mock.url}/v1` });
    client = openai(gateway, { 'x-gateway-virtual-key': 'groq' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('runs an OpenAI-shaped batch line by line: output file, error file, counts, log rows', async () => {
    const input = jsonl([chatLine('a', 'first'), chatLine('b', 'second'), '{not json', chatLine('c', 'third', 'mock-error-400')]);
    const file = await client.files.create({ file: await toFile(Buffer.from(input), 'batch.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', bytes: Buffer.byteLength(input), filename: 'batch.jsonl' });
    expect(file.id).toMatch(/^file-gw[0-9a-f]{32}$/);
    expect(await (await client.files.content(file.id)).text()).toBe(input);

    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'eval' },
    });
    expect(created).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: file.id, metadata: { job: 'eval' } });
    expect(created.request_counts!.total).toBe(4);

    const batch = await finished(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 2, failed: 2 });
    const output = await fileLines(client, batch.output_file_id);
    expect(output.map((line) => line.custom_id)).toEqual(['a', 'b']);
    expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion' } }, error: null });
    expect(output[0].response.body.choices[0].message.content).toBe('first');
    const errors = await fileLines(client, batch.error_file_id);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ custom_id: 'line-3', response: null, error: { code: 'invalid_line' } });
    expect(errors[1]).toMatchObject({ custom_id: 'c', response: { status_code: 400 }, error: null });

    // Each line that ran is a log row naming its batch and line, routed like any request.
    await gateway.flushLogs();
    const logs = await admin(gateway, 'GET', `/v1/logs?batch_id=${batch.id}`);
    expect(logs.status).toBe(200);
    expect(logs.body.data.map((row: any) => row.custom_id).sort()).toEqual(['a', 'b', 'c']);
    expect(logs.body.data.every((row: any) => row.batch_id === batch.id && row.provider === 'groq' && row.kind === 'request')).toBe(true);
    const lineA = logs.body.data.find((row: any) => row.custom_id === 'a');
    expect(output[0].response.request_id).toBe(lineA.id);
    expect(JSON.stringify(lineA.request_headers)).not.toMatch(/batch-line"\s*:\s*"v1\./);

    const listed = await client.batches.list({ limit: 10 });
    expect(listed.data.map((b) => b.id)).toContain(batch.id);
    const outputFiles = await call(gateway, '/v1/files?purpose=batch_output', { method: 'GET' });
    expect(outputFiles.body.data.map((f: any) => f.id)).toContain(batch.output_file_id);
  });

  it('runs Responses and embeddings lines as their synchronous calls would answer', async () => {
    const responses = jsonl([
      { custom_id: 'r1', method: 'POST', url: '/v1/responses', body: { model: 'llama-3.1-8b-instant', input: 'echo: through the bridge' } },
    ]);
    const rFile = await client.files.create({ file: await toFile(Buffer.from(responses), 'responses.jsonl'), purpose: 'batch' });
    const rBatch = await finished(client, (await client.batches.create({ input_file_id: rFile.id, endpoint: '/v1/responses', completion_window: '24h' })).id);
    const [answer] = await fileLines(client, rBatch.output_file_id);
    expect(answer).toMatchObject({ custom_id: 'r1', response: { status_code: 200, body: { object: 'response', status: 'completed' } } });
    expect(answer.response.body.output_text ?? answer.response.body.output[0].content[0].text).toBe('through the bridge');

    const mistral = openai(gateway, { 'x-gateway-virtual-key': 'mistral' });
    const embeddings = jsonl(
      ['one', 'two'].map((text) => ({ custom_id: text, method: 'POST', url: '/v1/embeddings', body: { model: 'mistral-embed', input: text } })),
    );
    const eFile = await mistral.files.create({ file: await toFile(Buffer.from(embeddings), 'embeddings.jsonl'), purpose: 'batch' });
    const eBatch = await finished(
      mistral,
      (await mistral.batches.create({ input_file_id: eFile.id, endpoint: '/v1/embeddings', completion_window: '24h' })).id,
    );
    const vectors = await fileLines(mistral, eBatch.output_file_id);
    expect(vectors.map((line) => [line.custom_id, line.response.body.object, Array.isArray(line.response.body.data[0].embedding)])).toEqual([
      ['one', 'list', true],
      ['two', 'list', true],
    ]);
    await gateway.flushLogs();
    const rows = (await admin(gateway, 'GET', `/v1/logs?batch_id=${eBatch.id}`)).body.data;
    expect(rows.map((row: any) => [row.operation, row.provider])).toEqual([
      ['embeddings', 'mistral-ai'],
      ['embeddings', 'mistral-ai'],
    ]);
  });

  it('keeps a batch file whatever the order of its form, and refuses one over the limit or without a purpose, naming it', async () => {
    const upload = (body: Buffer, contentType: string) =>
      fetch(`${gateway.url}/v1/files`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'groq', 'content-type': contentType },
        body,
      });
    const content = jsonl([chatLine('p', 'purpose first')]);
    const purposeFirst = form([
      { name: 'purpose', value: 'batch' },
      { name: 'file', value: content, filename: 'first.jsonl' },
    ]);
    const stored = await upload(purposeFirst.body, purposeFirst.contentType);
    expect(stored.status).toBe(200);
    const file = (await stored.json()) as { id: string; created_at: number };
    expect(file).toMatchObject({ purpose: 'batch', filename: 'first.jsonl', bytes: content.length });
    expect(await (await client.files.content(file.id)).text()).toBe(content);
    expect(file).toMatchObject({ expires_at: file.created_at + 30 * 86_400 });
    const expiring = form([
      { name: 'purpose', value: 'batch' },
      { name: 'expires_after[anchor]', value: 'created_at' },
      { name: 'expires_after[seconds]', value: '7200' },
      { name: 'file', value: content, filename: 'expiring.jsonl' },
    ]);
    const twoHours = (await (await upload(expiring.body, expiring.contentType)).json()) as any;
    expect(twoHours.expires_at).toBe(twoHours.created_at + 7200);
    const badExpiry = form([
      { name: 'purpose', value: 'batch' },
      { name: 'expires_after[anchor]', value: 'created_at' },
      { name: 'expires_after[seconds]', value: '60' },
      { name: 'file', value: content, filename: 'bad.jsonl' },
    ]);
    const refused = await upload(badExpiry.body, badExpiry.contentType);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error).toMatchObject({ param: 'expires_after[seconds]' });
    // Nothing of a batch file reaches the provider.
    expect(mock.requests.filter((request) => request.path.includes('/files'))).toEqual([]);

    const big = form([
      { name: 'file', value: Buffer.alloc(FILE_LIMIT + 1, 'x'), filename: 'big.jsonl' },
      { name: 'purpose', value: 'batch' },
    ]);
    const tooBig = await upload(big.body, big.contentType);
    expect(tooBig.status).toBe(400);
    expect(((await tooBig.json()) as any).error).toMatchObject({ param: 'file', code: 'file_too_large' });

    const noPurpose = form([{ name: 'file', value: content, filename: 'x.jsonl' }]);
    const missing = await upload(noPurpose.body, noPurpose.contentType);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error).toMatchObject({ param: 'purpose', code: 'missing_required_parameter' });

    // A line's token is the gateway's alone: one made up is refused.
    const forged = await call(gateway, '/v1/chat/completions', {
      apiKey: null,
      headers: { 'x-gateway-batch-line': 'v1.eyJrIjoiYSJ9.AAAA', 'x-gateway-virtual-key': 'groq' },
      body: { model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(forged.status).toBe(401);
  });

  it('refuses what OpenAI refuses at creation with a 400 naming it, and a cancel after the end with a 409', async () => {
    const duplicate = await client.files.create({
      file: await toFile(Buffer.from(jsonl([chatLine('same', 'x'), chatLine('same', 'y')])), 'dup.jsonl'),
      purpose: 'batch',
    });
    const dup = await call(gateway, '/v1/batches', {
      headers: { 'x-gateway-virtual-key': 'groq' },
      body: { input_file_id: duplicate.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expectError(dup, 400, { type: 'invalid_request_error', code: 'duplicate_custom_id', param: 'input_file_id', message: /'same'/ });

    const endpoint = await call(gateway, '/v1/batches', {
      headers: { 'x-gateway-virtual-key': 'groq' },
      body: { input_file_id: duplicate.id, endpoint: '/v1/moderations', completion_window: '24h' },
    });
    expectError(endpoint, 400, { type: 'invalid_request_error', param: 'endpoint' });

    const unknownFile = await call(gateway, '/v1/batches', {
      headers: { 'x-gateway-virtual-key': 'groq' },
      body: { input_file_id: 'file-gw00000000000000000000000000000000', endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(unknownFile.status).toBe(404);

    const window = await call(gateway, '/v1/batches', {
      headers: { 'x-gateway-virtual-key': 'groq' },
      body: { input_file_id: duplicate.id, endpoint: '/v1/chat/completions', completion_window: 'forever' },
    });
    expectError(window, 400, { type: 'invalid_request_error', param: 'completion_window' });

    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl([chatLine('one', 'done')])), 'one.jsonl'), purpose: 'batch' });
    const batch = await finished(
      client,
      (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
    );
    const cancel = await call(gateway, `/v1/batches/${batch.id}/cancel`, { headers: { 'x-gateway-virtual-key': 'groq' }, body: {} });
    expectError(cancel, 409, { type: 'conflict_error', code: 'batch_not_cancellable' });
  });

  it('expires the lines its completion window did not reach, and cancels those a cancel finds unsent', async () => {
    const slow = Array.from({ length: 12 }, (_, i) => chatLine(`slow-${i}`, `line ${i}`, 'mock-slow-1000'));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(slow)), 'slow.jsonl'), purpose: 'batch' });
    const expiring = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1s' as '24h' });
    const expired = await finished(client, expiring.id);
    expect(expired.status).toBe('expired');
    const errors = await fileLines(client, expired.error_file_id);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((line) => line.error?.code === 'batch_expired')).toBe(true);
    expect(expired.request_counts!.completed + errors.length).toBe(12);

    const file2 = await client.files.create({ file: await toFile(Buffer.from(jsonl(slow)), 'slow2.jsonl'), purpose: 'batch' });
    const running = await client.batches.create({ input_file_id: file2.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const cancelling = await client.batches.cancel(running.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    const cancelled = await finished(client, running.id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.request_counts!.completed).toBeLessThan(12);
  });

  it('fails the remaining lines with budget_exceeded once the key reaches its budget', async () => {
    const created = await admin(gateway, 'POST', '/v1/api-keys', { name: 'budgeted', role: 'member', budget_limit_usd: 0.000001 });
    expect(created.body).toMatchObject({ role: 'member' });
    const key = created.body;
    const budgeted = openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', key.key);
    const lines = Array.from({ length: 10 }, (_, i) => chatLine(`b-${i}`, 'a priced answer of several words'));
    const file = await budgeted.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'budget.jsonl'), purpose: 'batch' });
    const batch = await finished(
      budgeted,
      (await budgeted.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
    );
    expect(batch.status).toBe('completed');
    const errors = await fileLines(budgeted, batch.error_file_id);
    expect(errors.some((line) => line.error?.code === 'budget_exceeded' || line.response?.status_code === 402)).toBe(true);
    expect(batch.request_counts!.completed).toBeLessThan(10);
    // A member reads its own batches only.
    const others = await client.batches.list();
    expect(others.data.map((b) => b.id)).toContain(batch.id);
    const mine = await budgeted.batches.list();
    expect(mine.data.map((b) => b.id)).toEqual([batch.id]);
  });

  it('sends a line refused with 429 again after its Retry-After (nothing ran), and stops a batch whose key was revoked', async () => {
    const lines = [chatLine('limited', 'later', 'mock-flaky-1-429'), chatLine('fine', 'now')];
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'limited.jsonl'), purpose: 'batch' });
    const batch = await finished(
      client,
      (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
    );
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    expect(mock.requests.filter((request) => request.body?.messages?.[0]?.content === 'echo: later')).toHaveLength(2);

    const created = await admin(gateway, 'POST', '/v1/api-keys', { name: 'revoked mid-batch', role: 'member' });
    const revoked = openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', created.body.key);
    const slow = Array.from({ length: 12 }, (_, i) => chatLine(`r-${i}`, `revoked ${i}`, 'mock-slow-300'));
    const slowFile = await revoked.files.create({ file: await toFile(Buffer.from(jsonl(slow)), 'revoked.jsonl'), purpose: 'batch' });
    const running = await revoked.batches.create({ input_file_id: slowFile.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(() => mock.requests.some((request) => request.body?.messages?.[0]?.content === 'echo: revoked 0'));
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(200);
    const stopped = await finished(client, running.id);
    const errors = await fileLines(client, stopped.error_file_id);
    expect(stopped.request_counts!.completed).toBeLessThan(12);
    expect(errors.some((line) => line.error?.code === 'api_key_invalid')).toBe(true);
    expect(stopped.request_counts!.completed + errors.length).toBe(12);
  });

  it('keeps an ended batch as long as the log keeps its rows (LOG_RETENTION_DAYS), its lines and files with it', async () => {
    const kept = await startTestGateway({ BATCH_POLL_MS: '50', LOG_RETENTION_DAYS: '7' });
    try {
      await createVirtualKey(kept, { slug: 'groq', provider: 'groq', key: 'gsk-batch-000000', custom_host: `${mock.url}/openai/v1` });
      const keptClient = openai(kept, { 'x-gateway-virtual-key': 'groq' });
      const batches = [];
      for (const name of ['old', 'recent']) {
        const file = await keptClient.files.create({ file: await toFile(Buffer.from(jsonl([chatLine(name, name)])), `${name}.jsonl`), purpose: 'batch' });
        batches.push(
          await finished(
            keptClient,
            (await keptClient.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
          ),
        );
      }
      const [old, recent] = batches;
      await kept.dataSource.query(`update batches set completed_at = now() - interval '8 days' where id = $1`, [old.id]);
      await kept.app.get(BatchRunner).sweep();
      await expect(keptClient.batches.retrieve(old.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(keptClient.files.retrieve(old.output_file_id!)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      expect(await kept.dataSource.query(`select count(*)::int as n from batch_lines where batch_id = $1`, [old.id])).toEqual([{ n: 0 }]);
      expect((await keptClient.batches.retrieve(recent.id)).status).toBe('completed');
      expect((await keptClient.files.retrieve(recent.output_file_id!)).purpose).toBe('batch_output');
    } finally {
      await kept.close();
    }
  });

  it('runs an Anthropic-shaped batch: create, poll, results through the SDK', async () => {
    // Routed by a config, which the gateway runs line by line (to the one target named directly, Anthropic would run it natively).
    await createConfig(gateway, 'claude-config', { virtual_key: 'claude' });
    const anthropic = anthropicClient(gateway, { 'x-gateway-config': 'claude-config' });
    const created = await anthropic.messages.batches.create({ requests: MESSAGE_REQUESTS });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress' });
    expect(created.id).toMatch(/^msgbatch_/);
    const [stored] = await gateway.dataSource.query(`select mode, provider from batches where id = $1`, [created.id]);
    expect(stored).toEqual({ mode: 'gateway', provider: null });
    const batch = await ended(anthropic, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    const results: any[] = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
      ['first', 'succeeded'],
      ['second', 'succeeded'],
      ['broken', 'errored'],
    ]);
    expect(results[0].result.message.content[0].text).toBe('one');
    expect(results[2].result.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const duplicate = await anthropic.messages.batches
      .create({
        requests: [
          { custom_id: 'x', params: { model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'a' }] } },
          { custom_id: 'x', params: { model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'b' }] } },
        ],
      })
      .catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(Anthropic.BadRequestError);
    expect((duplicate as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(/requests\.1\.custom_id/);
    // Another shape's id is not found, like an unknown one.
    await expect(client.batches.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
