import type { BatchHttp } from '../native-batches';
import type { ProviderTarget } from '../provider-target';
import type { UpstreamRequest } from '../upstream-request';
import { anthropicAdapter } from './anthropic.adapter';

const target = { provider: 'anthropic', apiKey: 'sk-ant-1', customHost: 'http://claude.test', providerOptions: {} } as unknown as ProviderTarget;

function fakeHttp(answer: unknown): BatchHttp & { sent: UpstreamRequest[] } {
  const sent: UpstreamRequest[] = [];
  return {
    sent,
    json: async (request) => (sent.push(request), answer as Record<string, unknown>),
    lines: async function* (request) {
      sent.push(request);
      yield* answer as string[];
    },
  };
}

describe("Anthropic's Message Batches API (native batches)", () => {
  const api = anthropicAdapter.batches!;

  it('creates the batch with the requests inline, the key and the client’s version', async () => {
    const http = fakeHttp({
      id: 'msgbatch_1',
      processing_status: 'in_progress',
      request_counts: { processing: 3, succeeded: 2, errored: 1, canceled: 0, expired: 1 },
    });
    const lines = [{ customId: 'a', body: { model: 'claude-haiku-4-5', max_tokens: 8, messages: [] } }];
    const state = await api.submit(
      {
        gatewayBatchId: 'msgbatch_gw',
        endpoint: '/v1/messages',
        completionWindow: '24h',
        metadata: null,
        lines,
        headers: { 'anthropic-version': '2023-06-01' },
      },
      target,
      http,
    );
    expect(state).toEqual({ id: 'msgbatch_1', status: 'in_progress', errors: null, resultFiles: [], progress: { succeeded: 2, failed: 2, total: 7 } });
    expect(http.sent[0]).toMatchObject({
      method: 'POST',
      url: 'http://claude.test/messages/batches',
      headers: { 'x-api-key': 'sk-ant-1', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    });
    expect(JSON.parse(http.sent[0].body as string)).toEqual({ requests: [{ custom_id: 'a', params: lines[0].body }] });
  });

  it('reads canceling as cancelling, ended as completed, or cancelled once a cancel was initiated', async () => {
    const status = async (batch: Record<string, unknown>) => (await api.poll('msgbatch_1', target, fakeHttp({ id: 'msgbatch_1', ...batch }))).status;
    expect(await status({ processing_status: 'canceling', cancel_initiated_at: '2026-01-01T00:00:00Z' })).toBe('cancelling');
    expect(await status({ processing_status: 'ended', cancel_initiated_at: null })).toBe('completed');
    expect(await status({ processing_status: 'ended', cancel_initiated_at: '2026-01-01T00:00:00Z' })).toBe('cancelled');
  });

  it("reads the results from the target's own host, an errored one with the status of its error type", async () => {
    const error = { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' }, request_id: 'req_9' };
    const http = fakeHttp([
      JSON.stringify({ custom_id: 'a', result: { type: 'succeeded', message: { id: 'msg_1' } } }),
      JSON.stringify({ custom_id: 'b', result: { type: 'errored', error } }),
      JSON.stringify({ custom_id: 'c', result: { type: 'canceled' } }),
      JSON.stringify({ custom_id: 'd', result: { type: 'expired' } }),
    ]);
    const results = [];
    for await (const result of api.results({ id: 'msgbatch_1', status: 'completed', errors: null, resultFiles: [], progress: null }, target, http))
      results.push(result);
    expect(http.sent[0]).toMatchObject({ method: 'GET', url: 'http://claude.test/messages/batches/msgbatch_1/results' });
    expect(results.map((r) => [r.customId, r.status, r.statusCode])).toEqual([
      ['a', 'succeeded', 200],
      ['b', 'failed', 429],
      ['c', 'cancelled', null],
      ['d', 'expired', null],
    ]);
    expect(results[1]).toMatchObject({ body: error, requestId: 'req_9' });
  });
});
