import { GatewayError } from '../../common/errors/gateway-error';
import { parseAnthropicRequests, parseOpenAiInput } from './batch-lines';
import { completionWindowMs } from './dto/batch-create.dto';
import { replayedHeaders } from './batches.service';

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] }, ...extra });
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
};

describe('parseOpenAiInput', () => {
  it('reads each line, and fails a malformed one alone', () => {
    const input = [
      line('a'),
      '',
      '{oops',
      JSON.stringify({ method: 'POST' }),
      line('b', { url: '/v1/embeddings' }),
      line('c', { body: { stream: true } }),
      line('d'),
    ].join('\n');
    const lines = parseOpenAiInput(Buffer.from(input), '/v1/chat/completions');
    expect(lines.map((l) => [l.customId, l.error?.code ?? null])).toEqual([
      ['a', null],
      ['line-3', 'invalid_line'],
      ['line-4', 'invalid_line'],
      ['b', 'invalid_line'],
      ['c', 'invalid_line'],
      ['d', null],
    ]);
    expect(lines[3].error!.message).toMatch(/url "\/v1\/embeddings" is not the batch's endpoint/);
    expect(lines[0].body).toEqual({ model: 'm', messages: [] });
  });

  it('refuses a duplicate custom_id, an empty file, too many lines', () => {
    expect(refusal(() => parseOpenAiInput(Buffer.from([line('x'), line('x')].join('\n')), '/v1/chat/completions'))).toMatchObject({
      status: 400,
      code: 'duplicate_custom_id',
      param: 'input_file_id',
    });
    expect(refusal(() => parseOpenAiInput(Buffer.from('\n\n'), '/v1/chat/completions'))).toMatchObject({ code: 'empty_file' });
    const many = Array.from({ length: 50_001 }, (_, i) => line(`l${i}`)).join('\n');
    expect(refusal(() => parseOpenAiInput(Buffer.from(many), '/v1/chat/completions'))).toMatchObject({ code: 'too_many_lines' });
  });
});

describe('parseAnthropicRequests', () => {
  const params = { model: 'claude', max_tokens: 8, messages: [] };
  it('takes custom ids of 1-64 letters, digits, _ and -, once each', () => {
    expect(parseAnthropicRequests([{ custom_id: 'a-1_B', params }]).map((l) => l.customId)).toEqual(['a-1_B']);
    expect(refusal(() => parseAnthropicRequests([{ custom_id: 'a b', params }]))).toMatchObject({ param: 'requests.0.custom_id' });
    expect(refusal(() => parseAnthropicRequests([{ custom_id: 'x'.repeat(65), params }]))).toMatchObject({ param: 'requests.0.custom_id' });
    expect(
      refusal(() =>
        parseAnthropicRequests([
          { custom_id: 'x', params },
          { custom_id: 'x', params },
        ]),
      ),
    ).toMatchObject({ param: 'requests.1.custom_id', code: 'duplicate_custom_id' });
    expect(refusal(() => parseAnthropicRequests([{ custom_id: 'x', params: [] }]))).toMatchObject({ param: 'requests.0.params' });
    expect(refusal(() => parseAnthropicRequests([{ custom_id: 'x', params: { ...params, stream: true } }]))).toMatchObject({
      param: 'requests.0.params.stream',
    });
    expect(refusal(() => parseAnthropicRequests([]))).toMatchObject({ param: 'requests' });
  });
});

describe('completionWindowMs', () => {
  it("takes OpenAI's 24h and durations up to 7 days", () => {
    expect(completionWindowMs('24h')).toBe(86_400_000);
    expect(completionWindowMs('90s')).toBe(90_000);
    expect(completionWindowMs('7d')).toBe(7 * 86_400_000);
    for (const bad of ['8d', '0h', '24', 'h', '1.5h', '-1h', '24H']) expect(completionWindowMs(bad)).toBeNull();
  });
});

describe('replayedHeaders', () => {
  it("keeps routing and provider headers, never the caller's gateway key or the connection's", () => {
    const kept = replayedHeaders({
      authorization: 'Bearer gk-secret-key',
      'x-gateway-virtual-key': 'groq',
      'x-gateway-metadata': '{"team":"a"}',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'gk-secret-key',
      'x-stainless-retry-count': '0',
      host: 'gateway',
      'content-length': '10',
      cookie: 'session=1',
    });
    expect(kept).toEqual({ 'x-gateway-virtual-key': 'groq', 'x-gateway-metadata': '{"team":"a"}', 'anthropic-version': '2023-06-01' });
    // A provider key sent for x-gateway-provider is a provider's credential: kept (the batch seals it).
    expect(replayedHeaders({ 'x-gateway-api-key': 'gk-a', authorization: 'Bearer sk-provider' })).toEqual({ authorization: 'Bearer sk-provider' });
  });
});
