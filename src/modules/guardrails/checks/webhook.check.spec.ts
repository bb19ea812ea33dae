import { PostJson } from '../guardrail-check';
import { CheckInput } from '../../../context/guardrail-records';
import { DEFAULT_TIMEOUT_MS, WebhookCheck } from './webhook.check';

const input: CheckInput = { stage: 'output', texts: ['a', 'b'], model: 'gpt-4o', metadata: { team: 'x' } };
const build = (postJson: PostJson, params: Record<string, unknown> = {}) => {
  const { check, problems } = WebhookCheck.parse({ url: 'https://hooks.example.com/check', ...params }, 'c', { postJson });
  if (!check) throw new Error(problems.join('; '));
  return check;
};
const answering = (status: number, json: unknown): PostJson => jest.fn().mockResolvedValue({ status, json });

describe('WebhookCheck', () => {
  it('POSTs stage, model, texts and metadata with the headers and timeout of the config', async () => {
    const postJson = answering(200, { verdict: true });
    await build(postJson, { headers: { Authorization: 'Bearer t' }, timeout_ms: 500 }).run(input);
    expect(postJson).toHaveBeenCalledWith(
      'https://hooks.example.com/check',
      { Authorization: 'Bearer t' },
      { stage: 'output', model: 'gpt-4o', texts: ['a', 'b'], metadata: { team: 'x' } },
      500,
    );
  });

  it('defaults to no headers and a 3000 ms timeout', async () => {
    const postJson = answering(200, { verdict: true });
    await build(postJson).run(input);
    expect(postJson).toHaveBeenCalledWith(expect.any(String), {}, expect.anything(), DEFAULT_TIMEOUT_MS);
  });

  it("takes the hook's verdict and reason", async () => {
    expect(await build(answering(200, { verdict: true, reason: 'looks fine' })).run(input)).toEqual({ type: 'webhook', verdict: true, reason: 'looks fine' });
    expect(await build(answering(201, { verdict: false, reason: 'off topic' })).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'off topic' });
    expect(await build(answering(200, { verdict: false })).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'webhook answered verdict false' });
  });

  it('cuts a long reason to 500 characters', async () => {
    const result = await build(answering(200, { verdict: false, reason: 'x'.repeat(2000) })).run(input);
    expect(result.reason).toHaveLength(500);
  });

  it('fails on a non-2xx answer', async () => {
    expect(await build(answering(503, { verdict: true })).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'webhook answered HTTP 503' });
  });

  it.each([[null], ['yes'], [{ verdict: 'true' }], [{ reason: 'no verdict' }], [[true]]])('fails on an answer of another shape: %j', async (json) => {
    expect(await build(answering(200, json)).run(input)).toEqual({
      type: 'webhook',
      verdict: false,
      reason: 'webhook answer is not {"verdict": true|false, "reason": "..."}',
    });
  });

  it('fails when postJson rejects', async () => {
    const postJson: PostJson = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.9:443'));
    expect(await build(postJson).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'webhook call failed: connect ECONNREFUSED 10.0.0.9:443' });
  });

  it('fails as a timeout when postJson rejects with a TimeoutError', async () => {
    const postJson: PostJson = () => Promise.reject(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    expect(await build(postJson, { timeout_ms: 250 }).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'webhook did not answer within 250 ms' });
  });

  it('fails as a timeout when postJson does not settle in time', async () => {
    const postJson: PostJson = () => new Promise(() => undefined);
    const started = Date.now();
    expect(await build(postJson, { timeout_ms: 20 }).run(input)).toEqual({ type: 'webhook', verdict: false, reason: 'webhook did not answer within 20 ms' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it.each([
    [{}, ['c.url must be an http(s) URL']],
    [{ url: 'ftp://example.com' }, ['c.url must be an http(s) URL']],
    [{ url: 'not a url' }, ['c.url must be an http(s) URL']],
    [{ url: 'https://h.example', headers: [] }, ['c.headers must be an object']],
    [{ url: 'https://h.example', headers: { 'bad name': 'v' } }, ['c.headers.bad name is not a valid header name']],
    [
      { url: 'https://h.example', headers: { 'x-a': 1, 'x-b': 'a\r\nb' } },
      [
        'c.headers.x-a must be a string',
        'c.headers.x-b must not contain line breaks, other control characters or characters outside Latin-1 (it is sent as an HTTP header)',
      ],
    ],
    [{ url: 'https://h.example', timeout_ms: 0 }, ['c.timeout_ms must be an integer number of milliseconds from 1 to 30000']],
    [{ url: 'https://h.example', timeout_ms: 30001 }, ['c.timeout_ms must be an integer number of milliseconds from 1 to 30000']],
    [{ url: 'https://h.example', method: 'GET' }, ['c.method is not a known field']],
  ])('refuses %j', (params, problems) => {
    expect(WebhookCheck.parse(params, 'c', { postJson: answering(200, {}) })).toEqual({ problems });
  });
});
