/**
 * Self-test of the mock upstream's batch APIs (mock-openai-batches.ts, mock-anthropic-batches.ts),
 * driven by the official `openai` and `@anthropic-ai/sdk` clients pointed straight at the mock (no
 * gateway): the lifecycle, held and released by the mock's pace; each request answered as the
 * synchronous route answers it; the output, error and results files; cancel; expiry; validation.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI, toFile } from 'openai';
import { mockErrorBody } from '../support/mock-openai-chunks';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream';

/** Polls `read` until `ok` holds (or fails after `timeoutMs`). */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const jsonl = (lines: unknown[]) => Buffer.from(lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
const chatLine = (custom_id: string, text: string, model = 'gpt-4o-mini', url = '/v1/chat/completions') => ({
  custom_id,
  method: 'POST',
  url,
  body: { model, messages: [{ role: 'user', content: text }] },
});
const readLines = async (response: Response) =>
  (await response.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('mock upstream: batch APIs', () => {
  let mock: MockUpstream;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    openai = new OpenAI({ baseURL: mock.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(() => mock.close());
  beforeEach(() => {
    mock.reset();
    mock.batches.stepMs = 10;
    mock.anthropicBatches.stepMs = 10;
  });

  const upload = async (lines: unknown[], purpose: 'batch' | 'fine-tune' = 'batch') =>
    openai.files.create({ file: await toFile(jsonl(lines), 'requests.jsonl'), purpose });

  describe('OpenAI Batch API', () => {
    it('runs validating, in_progress, finalizing, completed; the files hold each request as a synchronous call answers it', async () => {
      const input = await upload([chatLine('a', 'echo: one two'), chatLine('b', 'hello', 'mock-error-400'), chatLine('c', 'echo: three')]);
      mock.batches.hold('validating');
      const created = await openai.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { job: 'nightly' },
      });
      expect(created).toEqual({
        id: expect.stringMatching(/^batch_[0-9a-f]{32}$/),
        object: 'batch',
        endpoint: '/v1/chat/completions',
        model: null,
        errors: null,
        input_file_id: input.id,
        completion_window: '24h',
        status: 'validating',
        output_file_id: null,
        error_file_id: null,
        created_at: expect.any(Number),
        in_progress_at: null,
        expires_at: created.created_at + 86400,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        request_counts: { total: 0, completed: 0, failed: 0 },
        usage: {
          input_tokens: 0,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 0,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 0,
        },
        metadata: { job: 'nightly' },
      });
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect((await openai.batches.retrieve(created.id)).status).toBe('validating'); // held

      mock.batches.hold('in_progress');
      const inProgress = await until(
        () => openai.batches.retrieve(created.id),
        (b) => b.status === 'in_progress',
      );
      expect(inProgress).toMatchObject({ model: 'gpt-4o-mini', in_progress_at: expect.any(Number), request_counts: { total: 3, completed: 0, failed: 0 } });
      expect(mock.batches.executions.size).toBe(0);

      mock.batches.hold('finalizing');
      const finalizing = await until(
        () => openai.batches.retrieve(created.id),
        (b) => b.status === 'finalizing',
      );
      expect(finalizing).toMatchObject({ finalizing_at: expect.any(Number), output_file_id: null, request_counts: { total: 3, completed: 2, failed: 1 } });

      mock.batches.release();
      const done = await until(
        () => openai.batches.retrieve(created.id),
        (b) => b.status === 'completed',
      );
      expect(done).toMatchObject({ completed_at: expect.any(Number), errors: null, request_counts: { total: 3, completed: 2, failed: 1 } });
      expect(Object.fromEntries(mock.batches.executions)).toEqual({ a: 1, b: 1, c: 1 });
      // The requests ran inside the mock: none of them is a recorded HTTP request.
      expect(mock.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);

      const outputFile = await openai.files.retrieve(done.output_file_id!);
      expect(outputFile).toMatchObject({ purpose: 'batch_output', filename: `${done.id}_output.jsonl`, status: 'processed' });
      const output = await readLines(await openai.files.content(done.output_file_id!));
      const one = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'echo: one two' }] });
      const three = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'echo: three' }] });
      expect(output).toEqual(
        [
          ['a', one],
          ['c', three],
        ].map(([custom_id, sync]: any) => ({
          id: expect.stringMatching(/^batch_req_[0-9a-f]{32}$/),
          custom_id,
          response: {
            status_code: 200,
            request_id: expect.stringMatching(/^req_/),
            body: { ...sync, id: expect.stringMatching(/^chatcmpl-/), created: expect.any(Number) },
          },
          error: null,
        })),
      );
      expect(output[0].response.body.choices[0].message.content).toBe('one two');
      expect(done.usage).toEqual({
        input_tokens: one.usage!.prompt_tokens + three.usage!.prompt_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: one.usage!.completion_tokens + three.usage!.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: one.usage!.total_tokens + three.usage!.total_tokens,
      });

      const errors = await readLines(await openai.files.content(done.error_file_id!));
      expect(errors).toEqual([
        {
          id: expect.stringMatching(/^batch_req_/),
          custom_id: 'b',
          response: { status_code: 400, request_id: expect.stringMatching(/^req_/), body: JSON.parse(mockErrorBody(400)) },
          error: null,
        },
      ]);

      const listed = await openai.batches.list({ limit: 1 });
      expect(listed.data.map((b) => b.id)).toEqual([done.id]);
      expect(await mock.batches.settled(done.id)).toMatchObject({ status: 'completed' });
    });

    it('answers /v1/embeddings and /v1/responses requests as those routes do', async () => {
      const embeddings = await upload([
        { custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'hi there', dimensions: 4 } },
      ]);
      const responses = await upload([{ custom_id: 'r', method: 'POST', url: '/v1/responses', body: { model: 'gpt-4.1', input: 'echo: from a batch' } }]);
      const [e, r] = await Promise.all([
        openai.batches.create({ input_file_id: embeddings.id, endpoint: '/v1/embeddings', completion_window: '24h' }),
        openai.batches.create({ input_file_id: responses.id, endpoint: '/v1/responses', completion_window: '24h' }),
      ]);
      const [eDone, rDone] = await Promise.all([mock.batches.settled(e.id), mock.batches.settled(r.id)]);
      expect([eDone.status, rDone.status]).toEqual(['completed', 'completed']);

      const [eLine] = await readLines(await openai.files.content(eDone.output_file_id));
      const syncEmbedding = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi there', dimensions: 4, encoding_format: 'float' });
      expect(eLine.response.body).toEqual(syncEmbedding);
      expect(eDone.usage).toMatchObject({ input_tokens: syncEmbedding.usage.prompt_tokens, output_tokens: 0 });

      const [rLine] = await readLines(await openai.files.content(rDone.output_file_id));
      expect(rLine.response).toMatchObject({ status_code: 200, request_id: expect.stringMatching(/^req_/) });
      expect(rLine.response.body).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-4.1' });
      expect(rLine.response.body.output.at(-1).content[0].text).toBe('from a batch');
      expect(rDone.usage.input_tokens).toBe(rLine.response.body.usage.input_tokens);

      const page = await openai.batches.list({ limit: 1 });
      expect(page.data.map((b) => b.id)).toEqual([r.id]);
      expect(page.hasNextPage()).toBe(true);
      expect((await page.getNextPage()).data.map((b) => b.id)).toEqual([e.id]);
    });

    it('cancels: cancelling, then cancelled with the requests answered so far; a finished batch cannot be cancelled', async () => {
      const input = await upload([chatLine('first', 'echo: 1'), chatLine('second', 'echo: 2'), chatLine('third', 'echo: 3')]);
      mock.batches.hold('in_progress', { afterLines: 1 });
      const batch = await openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await until(
        () => openai.batches.retrieve(batch.id),
        (b) => b.request_counts?.completed === 1,
      );
      // A second in cancelling (not 50 ms, which a loaded machine may let pass): a cancel meanwhile is answered as cancelling.
      mock.batches.stepMs = 1000;
      const cancelling = await openai.batches.cancel(batch.id);
      expect(cancelling).toMatchObject({ status: 'cancelling', cancelling_at: expect.any(Number), cancelled_at: null });
      expect((await openai.batches.cancel(batch.id)).status).toBe('cancelling');

      const cancelled = await mock.batches.settled(batch.id);
      expect(cancelled).toMatchObject({
        status: 'cancelled',
        cancelled_at: expect.any(Number),
        error_file_id: null,
        request_counts: { total: 3, completed: 1, failed: 0 },
      });
      const output = await readLines(await openai.files.content(cancelled.output_file_id));
      expect(output.map((line) => [line.custom_id, line.response.body.choices[0].message.content])).toEqual([['first', '1']]);
      expect(Object.fromEntries(mock.batches.executions)).toEqual({ first: 1 });

      const again = await openai.batches.cancel(batch.id).catch((error) => error);
      expect(again).toBeInstanceOf(OpenAI.BadRequestError);
      expect(again.error).toMatchObject({ type: 'invalid_request_error', message: "Cannot cancel a batch with status 'cancelled'." });
    });

    it('expires: requests not answered by expires_at go in the error file as batch_expired', async () => {
      mock.batches.expiresInMs = 300;
      mock.batches.hold('in_progress', { afterLines: 1 });
      const input = await upload([chatLine('x', 'echo: done'), chatLine('y', 'late'), chatLine('z', 'later')]);
      const batch = await openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(batch.expires_at).toBe(batch.created_at + 1);
      const expired = await mock.batches.settled(batch.id);
      expect(expired).toMatchObject({
        status: 'expired',
        expired_at: expect.any(Number),
        completed_at: null,
        request_counts: { total: 3, completed: 1, failed: 2 },
      });
      expect((await readLines(await openai.files.content(expired.output_file_id))).map((line) => line.custom_id)).toEqual(['x']);
      expect(await readLines(await openai.files.content(expired.error_file_id))).toEqual(
        ['y', 'z'].map((custom_id) => ({
          id: expect.stringMatching(/^batch_req_/),
          custom_id,
          response: null,
          error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
        })),
      );
      expect(Object.fromEntries(mock.batches.executions)).toEqual({ x: 1 });
      // expire(id) does nothing to a finished batch.
      expect(mock.batches.expire(batch.id)).toBe(false);
    });

    it('a request that never answers (mock-hang) keeps the batch in progress until it is cancelled or expires', async () => {
      const hung = await upload([chatLine('hung', 'hello', 'mock-hang'), chatLine('after', 'hello')]);
      const cancelled = await openai.batches.create({ input_file_id: hung.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await until(
        async () => mock.batches.executions.has('hung'),
        (ran) => ran,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await openai.batches.retrieve(cancelled.id)).status).toBe('in_progress');
      await openai.batches.cancel(cancelled.id);
      expect(await mock.batches.settled(cancelled.id)).toMatchObject({
        status: 'cancelled',
        output_file_id: null,
        error_file_id: null,
        request_counts: { total: 2, completed: 0, failed: 0 },
      });

      const expiring = await openai.batches.create({ input_file_id: hung.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await until(
        async () => mock.batches.executions.get('hung'),
        (n) => n === 2,
      );
      expect(mock.batches.expire(expiring.id)).toBe(true);
      const expired = await mock.batches.settled(expiring.id);
      expect(expired).toMatchObject({ status: 'expired', output_file_id: null, request_counts: { total: 2, completed: 0, failed: 2 } });
      const errors = await readLines(await openai.files.content(expired.error_file_id));
      expect(errors.map((line) => [line.custom_id, line.error?.code])).toEqual([
        ['hung', 'batch_expired'],
        ['after', 'batch_expired'],
      ]);
      expect(Object.fromEntries(mock.batches.executions)).toEqual({ hung: 2 });
    });

    it('fails a batch whose input file has invalid lines, naming each line', async () => {
      const input = await upload([
        chatLine('ok', 'hello'),
        '{"custom_id": "broken", ',
        { custom_id: 'nobody', method: 'POST', url: '/v1/chat/completions' },
        chatLine('elsewhere', 'hello', 'gpt-4o-mini', '/v1/embeddings'),
        chatLine('ok', 'again'),
      ]);
      const batch = await openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const failed = await mock.batches.settled(batch.id);
      expect(failed).toMatchObject({ status: 'failed', failed_at: expect.any(Number), in_progress_at: null, output_file_id: null, error_file_id: null });
      expect(failed.errors).toEqual({
        object: 'list',
        data: [
          { code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', param: null, line: 2 },
          { code: 'missing_required_parameter', message: "Missing required parameter: 'body'.", param: 'body', line: 3 },
          { code: 'invalid_url', message: 'The URL provided for this request does not prefix-match the batch endpoint.', param: 'url', line: 4 },
          { code: 'duplicate_custom_id', message: expect.stringContaining('must be unique'), param: 'custom_id', line: 5 },
        ],
      });
      expect(mock.batches.executions.size).toBe(0);
    });

    it('refuses a create OpenAI would refuse', async () => {
      const before = mock.batches.all.size;
      const good = await upload([chatLine('a', 'hi')]);
      const tuning = await upload([chatLine('a', 'hi')], 'fine-tune');
      const create = (body: Record<string, unknown>) =>
        openai.batches.create({ input_file_id: good.id, endpoint: '/v1/chat/completions', completion_window: '24h', ...body } as any).catch((error) => error);
      const refusals = {
        unknownFile: await create({ input_file_id: 'file-nope' }),
        wrongPurpose: await create({ input_file_id: tuning.id }),
        endpoint: await create({ endpoint: '/v1/moderations' }),
        window: await create({ completion_window: '48h' }),
        metadata: await create({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }),
        metadataValue: await create({ metadata: { k: 5 } }),
      };
      for (const error of Object.values(refusals)) expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(Object.fromEntries(Object.entries(refusals).map(([name, error]) => [name, error.error.param]))).toEqual({
        unknownFile: 'input_file_id',
        wrongPurpose: 'input_file_id',
        endpoint: 'endpoint',
        window: 'completion_window',
        metadata: 'metadata',
        metadataValue: 'metadata.k',
      });
      expect(refusals.endpoint.error.message).toBe(
        "Invalid value: '/v1/moderations'. Supported values are: '/v1/chat/completions', '/v1/responses', '/v1/embeddings', and '/v1/completions'.",
      );
      expect(refusals.wrongPurpose.error.message).toContain("purpose 'batch'");
      expect(mock.batches.all.size).toBe(before);

      const noKey = await fetch(`${mock.url}/v1/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(noKey.status).toBe(401);
      const missing = await openai.batches.retrieve('batch_nope').catch((error) => error);
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      expect(missing.error.message).toBe("No batch found with id 'batch_nope'.");
      const azureNoVersion = await fetch(`${mock.url}/openai/batches`, { headers: { 'api-key': 'k' } });
      expect(azureNoVersion.status).toBe(404);
    });

    it("serves Azure OpenAI's paths: files and batches under /openai?api-version, endpoints without /v1", async () => {
      const azure = new AzureOpenAI({ endpoint: mock.url, apiKey: 'azure-key', apiVersion: '2025-03-01-preview', maxRetries: 0 });
      const input = await azure.files.create({
        file: await toFile(jsonl([chatLine('az', 'echo: azure', 'my-deployment', '/chat/completions')]), 'azure.jsonl'),
        purpose: 'batch',
      });
      const batch = await azure.batches.create({ input_file_id: input.id, endpoint: '/chat/completions' as any, completion_window: '24h' });
      expect(mock.requests.at(-1)).toMatchObject({ path: '/openai/batches', query: { 'api-version': '2025-03-01-preview' } });
      const done = await until(
        () => azure.batches.retrieve(batch.id),
        (b) => b.status === 'completed',
      );
      const [line] = await readLines(await azure.files.content(done.output_file_id!));
      expect(line).toMatchObject({ custom_id: 'az', response: { status_code: 200, body: { model: 'my-deployment' } } });
      expect(line.response.body.choices[0].message.content).toBe('azure');
    });
  });

  describe('Anthropic Message Batches API', () => {
    const params = (text: string, model = 'claude-mock-1') => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: text }] });

    it('creates, processes each request as POST /v1/messages answers it, and serves the results at results_url', async () => {
      mock.anthropicBatches.hold('in_progress', { afterLines: 2 });
      const created = await anthropic.messages.batches.create({
        requests: [
          { custom_id: 'ok', params: params('echo: batched hello') },
          { custom_id: 'overloaded', params: params('hi', 'mock-error-529') },
          { custom_id: 'invalid', params: { model: 'claude-mock-1', messages: [{ role: 'user', content: 'hi' }] } as any },
        ],
      });
      expect(created).toEqual({
        id: expect.stringMatching(/^msgbatch_01[0-9A-Za-z]{22}$/),
        type: 'message_batch',
        processing_status: 'in_progress',
        request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
        ended_at: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        expires_at: expect.any(String),
        archived_at: null,
        cancel_initiated_at: null,
        results_url: null,
      });
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(86_400_000);

      // Held after two requests: they ran, yet every request counts as processing until the batch ends.
      await until(
        async () => mock.anthropicBatches.executions.has('overloaded'),
        (ran) => ran,
      );
      expect((await anthropic.messages.batches.retrieve(created.id)).request_counts).toEqual({
        processing: 3,
        succeeded: 0,
        errored: 0,
        canceled: 0,
        expired: 0,
      });
      const early = await fetch(`${mock.url}/v1/messages/batches/${created.id}/results`, { headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' } });
      expect(early.status).toBe(400);
      expect(((await early.json()) as any).error.type).toBe('invalid_request_error');

      mock.anthropicBatches.release();
      const ended = await until(
        () => anthropic.messages.batches.retrieve(created.id),
        (b) => b.processing_status === 'ended',
      );
      expect(ended).toMatchObject({
        ended_at: expect.any(String),
        results_url: `${mock.url}/v1/messages/batches/${created.id}/results`,
        request_counts: { processing: 0, succeeded: 1, errored: 2, canceled: 0, expired: 0 },
      });

      const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
      for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
      const sync = await anthropic.messages.create(params('echo: batched hello'));
      expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
        ['ok', 'succeeded'],
        ['overloaded', 'errored'],
        ['invalid', 'errored'],
      ]);
      expect(results[0].result).toEqual({ type: 'succeeded', message: { ...sync, id: expect.stringMatching(/^msg_01/) } });
      expect((results[0].result as any).message.content).toEqual([{ type: 'text', text: 'batched hello' }]);
      expect((results[1].result as any).error).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
        request_id: expect.stringMatching(/^req_01/),
      });
      expect((results[2].result as any).error.error).toEqual({ type: 'invalid_request_error', message: 'max_tokens: Field required' });
      expect(Object.fromEntries(mock.anthropicBatches.executions)).toEqual({ ok: 1, overloaded: 1, invalid: 1 });
      expect(mock.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(1); // the synchronous call only

      const raw = await fetch(ended.results_url!, { headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' } });
      expect(raw.headers.get('content-type')).toBe('application/x-jsonl');
      const page = await anthropic.messages.batches.list({ limit: 1 });
      expect(page.data.map((b) => b.id)).toEqual([created.id]);
    });

    it('cancels: canceling, then ended with the requests not run canceled; delete once ended', async () => {
      mock.anthropicBatches.hold('in_progress', { afterLines: 1 });
      const batch = await anthropic.messages.batches.create({
        requests: ['one', 'two', 'three'].map((id) => ({ custom_id: id, params: params(`echo: ${id}`) })),
      });
      await until(
        async () => mock.anthropicBatches.executions.has('one'),
        (ran) => ran,
      );
      const canceling = await anthropic.messages.batches.cancel(batch.id);
      expect(canceling).toMatchObject({ processing_status: 'canceling', cancel_initiated_at: expect.any(String), ended_at: null });
      const ended = await mock.anthropicBatches.settled(batch.id);
      expect(ended.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 0, canceled: 2, expired: 0 });
      const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
      for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
      expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
        ['one', 'succeeded'],
        ['two', 'canceled'],
        ['three', 'canceled'],
      ]);
      expect(results[1].result).toEqual({ type: 'canceled' });
      expect(Object.fromEntries(mock.anthropicBatches.executions)).toEqual({ one: 1 });

      const again = await anthropic.messages.batches.cancel(batch.id).catch((error) => error);
      expect(again).toBeInstanceOf(Anthropic.BadRequestError);
      expect(await anthropic.messages.batches.delete(batch.id)).toEqual({ id: batch.id, type: 'message_batch_deleted' });
      expect(await anthropic.messages.batches.retrieve(batch.id).catch((error) => error)).toBeInstanceOf(Anthropic.NotFoundError);
    });

    it('expires: the requests not run by expires_at (or expire(id)) are expired', async () => {
      mock.anthropicBatches.hold('in_progress', { afterLines: 1 });
      const batch = await anthropic.messages.batches.create({
        requests: ['p', 'q'].map((id) => ({ custom_id: id, params: params('hello') })),
      });
      await until(
        async () => mock.anthropicBatches.executions.has('p'),
        (ran) => ran,
      );
      expect(mock.anthropicBatches.expire(batch.id)).toBe(true);
      const ended = await mock.anthropicBatches.settled(batch.id);
      expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { processing: 0, succeeded: 1, errored: 0, canceled: 0, expired: 1 } });
      const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
      for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
      expect(results.map((r) => r.result.type)).toEqual(['succeeded', 'expired']);

      mock.anthropicBatches.release();
      mock.anthropicBatches.expiresInMs = 200;
      mock.anthropicBatches.hold('in_progress');
      const timed = await anthropic.messages.batches.create({ requests: [{ custom_id: 'late', params: params('hello') }] });
      expect(Date.parse(timed.expires_at) - Date.parse(timed.created_at)).toBe(200);
      expect((await mock.anthropicBatches.settled(timed.id)).request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 1 });
      expect(mock.anthropicBatches.executions.has('late')).toBe(false);
    });

    it('refuses a create Anthropic would refuse', async () => {
      const before = mock.anthropicBatches.all.size;
      const create = (requests: unknown) => anthropic.messages.batches.create({ requests } as any).catch((error) => error);
      const tooLong = await create([{ custom_id: 'a'.repeat(65), params: params('hi') }]);
      expect(tooLong).toBeInstanceOf(Anthropic.BadRequestError);
      expect(tooLong.error.error).toEqual({ type: 'invalid_request_error', message: 'requests.0.custom_id: String should have at most 64 characters' });
      expect((await create([{ custom_id: 'has space', params: params('hi') }])).error.error.message).toBe(
        "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
      );
      const duplicate = await create([
        { custom_id: 'same', params: params('hi') },
        { custom_id: 'same', params: params('ho') },
      ]);
      expect(duplicate.error.error.message).toMatch(/^requests\.1\.custom_id: Duplicate custom_id 'same'/);
      expect((await create([])).error.error.message).toBe('requests: List should have at least 1 item after validation, not 0');
      expect(mock.anthropicBatches.all.size).toBe(before);

      const noKey = await fetch(`${mock.url}/v1/messages/batches`, { headers: { 'anthropic-version': '2023-06-01' } });
      expect(noKey.status).toBe(401);
      const missing = await anthropic.messages.batches.retrieve('msgbatch_nope').catch((error) => error);
      expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    });
  });
});
