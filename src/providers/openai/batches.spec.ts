import type { BatchHttp } from '../native-batches';
import type { ProviderTarget } from '../provider-target';
import type { UpstreamRequest } from '../upstream-request';
import { AzureOpenAIAdapter } from '../azure-openai/azure-openai.adapter';
import { openAICompatibleVendors } from '../openai-compatible/vendors';
import { openAIAdapter } from './openai.adapter';

const target = (fields: Partial<ProviderTarget> = {}) =>
  ({ provider: 'openai', apiKey: 'sk-1', customHost: null, providerOptions: {}, ...fields }) as ProviderTarget;

/** A BatchHttp that records the requests and answers each from `answers` in turn (JSONL lines for `lines`). */
function fakeHttp(answers: unknown[]): BatchHttp & { sent: UpstreamRequest[] } {
  const sent: UpstreamRequest[] = [];
  return {
    sent,
    json: async (request) => {
      sent.push(request);
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer as Record<string, unknown>;
    },
    lines: async function* (request) {
      sent.push(request);
      yield* answers.shift() as string[];
    },
  };
}

const lines = [
  { customId: 'a', body: { model: 'gpt-4o-mini', messages: [] } },
  { customId: 'b', body: { model: 'gpt-4o-mini', messages: [] } },
];
const submission = { gatewayBatchId: 'batch_gw1', endpoint: '/v1/chat/completions', completionWindow: '24h', metadata: { job: 'eval' }, lines, headers: {} };

describe("OpenAI's Batch API (native batches)", () => {
  it('only OpenAI and Azure OpenAI run batches natively among the OpenAI-format vendors', () => {
    expect(openAIAdapter.batches?.shape).toBe('openai');
    expect(new AzureOpenAIAdapter().batches.shape).toBe('openai');
    expect(openAICompatibleVendors.filter((vendor) => vendor.batches).map((vendor) => vendor.id)).toEqual([]);
  });

  it('uploads the lines as a JSONL file with purpose "batch", then creates the batch on it with the gateway id in its metadata', async () => {
    const http = fakeHttp([{ id: 'file-1' }, { id: 'batch_p1', status: 'validating', request_counts: { total: 5, completed: 1, failed: 2 } }]);
    const state = await openAIAdapter.batches!.submit(submission, target(), http);
    expect(state).toEqual({ id: 'batch_p1', status: 'validating', errors: null, resultFiles: [], progress: { succeeded: 1, failed: 2, total: 5 } });
    const [upload, create] = http.sent;
    expect(upload).toMatchObject({ method: 'POST', url: 'https://api.openai.com/v1/files', headers: { authorization: 'Bearer sk-1' } });
    expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = (upload.body as Buffer).toString();
    expect(form).toContain('name="purpose"\r\n\r\nbatch\r\n');
    expect(form).toContain(
      `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: lines[0].body })}\n${JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: lines[1].body })}\n`,
    );
    expect(create).toMatchObject({ method: 'POST', url: 'https://api.openai.com/v1/batches' });
    expect(JSON.parse(create.body as string)).toEqual({
      input_file_id: 'file-1',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'eval', gateway_batch_id: 'batch_gw1' },
    });
  });

  it('leaves the metadata as the client sent it when its 16 pairs leave no room; deletes the uploaded file when the batch is refused', async () => {
    const full = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    const refusal = new Error('400 from the provider');
    const http = fakeHttp([{ id: 'file-2' }, refusal, { id: 'file-2', deleted: true }]);
    await expect(openAIAdapter.batches!.submit({ ...submission, metadata: full }, target(), http)).rejects.toBe(refusal);
    expect(JSON.parse(http.sent[1].body as string).metadata).toEqual(full);
    expect(http.sent[2]).toMatchObject({ method: 'DELETE', url: 'https://api.openai.com/v1/files/file-2' });
  });

  it('Azure: /openai/files and /openai/batches with api-version, endpoints without /v1, the deployment as each line model', async () => {
    const azure = new AzureOpenAIAdapter();
    const http = fakeHttp([{ id: 'file-3' }, { id: 'batch_a1', status: 'validating' }]);
    const options = { resource_name: 'res', deployment: 'gpt-4o-mini-batch' };
    await azure.batches.submit(submission, target({ provider: 'azure-openai', providerOptions: options }), http);
    expect(http.sent[0]).toMatchObject({ url: 'https://res.openai.azure.com/openai/files?api-version=2024-10-21', headers: { 'api-key': 'sk-1' } });
    expect((http.sent[0].body as Buffer).toString()).toContain('"url":"/chat/completions","body":{"model":"gpt-4o-mini-batch","messages":[]}');
    expect(http.sent[1].url).toBe('https://res.openai.azure.com/openai/batches?api-version=2024-10-21');
    expect(JSON.parse(http.sent[1].body as string).endpoint).toBe('/chat/completions');
  });

  it("reads a batch's state, its failure's errors, and its output and error files line by line", async () => {
    const api = openAIAdapter.batches!;
    const failed = await api.poll(
      'batch_p1',
      target(),
      fakeHttp([{ id: 'batch_p1', status: 'failed', errors: { data: [{ code: 'x', message: 'y', line: 2 }] } }]),
    );
    expect(failed).toMatchObject({ status: 'failed', errors: [{ code: 'x', message: 'y', line: 2 }] });
    const done = await api.poll('batch_p1', target(), fakeHttp([{ id: 'batch_p1', status: 'completed', output_file_id: 'file-o', error_file_id: 'file-e' }]));
    expect(done.resultFiles).toEqual(['file-o', 'file-e']);
    const output = [
      JSON.stringify({ id: 'batch_req_1', custom_id: 'a', response: { status_code: 200, request_id: 'req_1', body: { id: 'c1' } }, error: null }),
    ];
    const errors = [
      JSON.stringify({ id: 'batch_req_2', custom_id: 'b', response: { status_code: 400, request_id: 'req_2', body: { error: {} } }, error: null }),
      '{cut',
      JSON.stringify({ id: 'batch_req_3', custom_id: 'c', response: null, error: { code: 'batch_expired', message: 'late' } }),
    ];
    const http = fakeHttp([output, errors]);
    const results = [];
    for await (const result of api.results(done, target(), http)) results.push(result);
    expect(http.sent.map((request) => request.url)).toEqual([
      'https://api.openai.com/v1/files/file-o/content',
      'https://api.openai.com/v1/files/file-e/content',
    ]);
    expect(results).toEqual([
      { customId: 'a', status: 'succeeded', statusCode: 200, body: { id: 'c1' }, requestId: 'req_1', error: null, resultId: 'batch_req_1' },
      { customId: 'b', status: 'failed', statusCode: 400, body: { error: {} }, requestId: 'req_2', error: null, resultId: 'batch_req_2' },
      {
        customId: 'c',
        status: 'expired',
        statusCode: null,
        body: null,
        requestId: null,
        error: { code: 'batch_expired', message: 'late' },
        resultId: 'batch_req_3',
      },
    ]);
  });
});
