/**
 * The config routing engine (CONTRACT section 5): fallback, loadbalance, conditional,
 * retry, request_timeout, cache, circuit breaker, inheritance, the per-attempt log rows
 * and the routing headers of section 2.
 *
 * Every target points at the mock upstream with `override_params.model` set to a mock
 * switch (see test/support/mock-upstream.ts): `mock-error-503` always fails, `mock-flaky-2-503`
 * fails twice, any name not starting with `mock-` (`ok-a`, `ok-b`...) answers normally and
 * echoes its model, so `models()` tells which targets were tried, in order.
 */
import { mockErrorBody } from '../support/mock-openai-chunks';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { call, createConfig, expectError, openai, RawResponse, sleep, waitFor } from '../support/e2e-helpers';

type Config = Record<string, any>;
interface Send {
  /** Merged into the default body; a string is sent as it is. */
  body?: Record<string, unknown> | string;
  headers?: Record<string, string>;
}

const CACHE = { mode: 'simple', max_age: 60 };
/** A closed port: connection refused. */
const REFUSED = { provider: 'openai', api_key: 'sk-test', custom_host: 'http://127.0.0.1:1/v1' };
const UPSTREAM_503 = JSON.parse(mockErrorBody(503));

describe('config routing', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  /** A second provider host. */
  let spare: MockUpstream;

  beforeAll(async () => {
    [mock, spare] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gateway = await startTestGateway({ RETRY_BASE_DELAY_MS: '10', RETRY_MAX_DELAY_MS: '2000' });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([mock?.close(), spare?.close()]);
  });

  beforeEach(() => {
    mock.reset();
    spare.reset();
  });

  // ---------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------

  /** A target on `upstream` answering as `model`. */
  const on = (model: string, extra: Config = {}, upstream: MockUpstream = mock): Config => ({
    provider: 'openai',
    api_key: 'sk-test',
    custom_host: `${upstream.url}/v1`,
    override_params: { model },
    ...extra,
  });
  const fallback = (targets: Config[], extra: Config = {}): Config => ({ strategy: { mode: 'fallback' }, targets, ...extra });

  /** The models the mock was asked for, in order: which targets were tried. */
  const models = (upstream: MockUpstream = mock) => upstream.requests.map((r) => r.body?.model);

  let counter = 0;
  /** A message no other test sends (the cache and the flaky counters key on it). */
  const unique = (label: string) => `echo: ${label} #${++counter}`;

  /** POST /v1/chat/completions, `config` inline (object) or by reference (string); a string body is sent as it is. */
  function post(config: Config | string | undefined, { body = {}, headers = {} }: Send = {}): Promise<RawResponse> {
    const all = { ...headers };
    if (config !== undefined) all['x-gateway-config'] = typeof config === 'string' ? config : JSON.stringify(config);
    const payload = typeof body === 'string' ? body : { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], ...body };
    return call(gateway, '/v1/chat/completions', { body: payload, headers: all });
  }

  /** The routing headers of CONTRACT section 2 (request and trace id checked present). */
  function routing(res: { status?: number; headers: Headers }) {
    expect(res.headers.get('x-gateway-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-gateway-trace-id')).toBeTruthy();
    return {
      status: res.status,
      target: res.headers.get('x-gateway-target-index'),
      retries: res.headers.get('x-gateway-retry-count'),
      cache: res.headers.get('x-gateway-cache-status'),
    };
  }
  const served = (target: string | null, retries = '0', cache = 'DISABLED') => ({ status: 200, target, retries, cache });

  /** Streams through the official SDK; returns the text and the response headers. */
  async function sdkStream(config: Config, content = 'Say hello') {
    const { data, response } = await openai(gateway, { 'x-gateway-config': JSON.stringify(config) })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
    return { text, headers: response.headers };
  }

  /** The `data:` payloads of an SSE body, `[DONE]` kept as a string. */
  const sseEvents = (text: string) =>
    text
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => frame.replace(/^data: /, ''))
      .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));

  async function rows(sql: string, value: string | null): Promise<any[]> {
    await gateway.flushLogs();
    return gateway.dataSource.query(sql, [value]);
  }
  /** The request's own log row. */
  const logRow = async (res: RawResponse) => (await rows('select * from request_logs where id = $1', res.headers.get('x-gateway-request-id')))[0];
  /**
   * Every row of the request's trace as [status, target_index, retry_count, model, error code]:
   * the failed attempts in the order a fallback makes them, then the request's own row. (Not by
   * id: the request id is made when the request arrives, and UUIDv7 ids made in the same
   * millisecond are in random order.)
   */
  async function attemptRows(res: RawResponse) {
    const all = await rows('select * from request_logs where trace_id = $1 order by target_index, retry_count', res.headers.get('x-gateway-trace-id'));
    const own = all.filter((r) => r.id === res.headers.get('x-gateway-request-id'));
    expect(own).toHaveLength(1);
    return [...all.filter((r) => r !== own[0]), own[0]].map((r) => [r.status_code, r.target_index, r.retry_count, r.model, r.error?.code ?? null]);
  }

  const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
    const started = Date.now();
    const result = await run();
    return [result, Date.now() - started];
  };

  // ---------------------------------------------------------------------------------------

  describe('routing headers', () => {
    it('a config without targets: no target index, retry count 0, cache DISABLED, the trace id echoed', async () => {
      const res = await post(on('ok-flat'), { headers: { 'x-gateway-trace-id': 'trace-config-routing-1' } });
      expect(routing(res)).toEqual(served(null));
      expect(res.headers.get('x-gateway-trace-id')).toBe('trace-config-routing-1');
      expect(res.body.model).toBe('ok-flat');
    });

    it('nested targets: the dotted path of the target that served', async () => {
      const inner = fallback([on('mock-error-503'), on('mock-error-500'), on('ok-nested')]);
      const res = await post(fallback([inner, on('ok-outer')]));
      expect(routing(res)).toEqual(served('0.2'));
      expect(models()).toEqual(['mock-error-503', 'mock-error-500', 'ok-nested']);
    });
  });

  describe('fallback', () => {
    it('moves on from a failing target to the next one', async () => {
      const res = await post(fallback([on('mock-error-503'), on('ok-b')]));
      expect(routing(res)).toEqual(served('1'));
      expect(res.body.model).toBe('ok-b');
      expect(models()).toEqual(['mock-error-503', 'ok-b']);
    });

    it('each target is sent to its own host with its own credential', async () => {
      const res = await post(fallback([on('mock-error-500', { api_key: 'sk-first' }), on('ok-spare', { api_key: 'sk-second' }, spare)]));
      expect(routing(res)).toEqual(served('1'));
      expect(mock.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-first']);
      expect(spare.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-second']);
    });

    /** Falls back on 429 only. */
    const ONLY_429 = { strategy: { mode: 'fallback', on_status_codes: [429] } };

    it('on_status_codes: a listed status moves on, any other is returned at once', async () => {
      const config = (first: string) => fallback([on(first), on('ok-c')], ONLY_429);
      const passed = await post(config('mock-error-503'));
      expect(routing(passed)).toEqual({ ...served('0'), status: 503 });
      expect(passed.body).toEqual(UPSTREAM_503);
      expect(models()).toEqual(['mock-error-503']); // the second target untouched

      mock.reset();
      expect(routing(await post(config('mock-flaky-1-429')))).toEqual(served('1'));
      expect(models()).toEqual(['mock-flaky-1-429', 'ok-c']);
    });

    it('network errors move on whatever on_status_codes says: connection refused, a dropped connection', async () => {
      const res = await post(fallback([REFUSED, on('mock-drop'), on('ok-d')], ONLY_429));
      expect(routing(res)).toEqual(served('2'));
      expect(models()).toEqual(['mock-drop', 'ok-d']);
    });

    it('timeouts move on: a hanging and a slow target, each given up after its request_timeout', async () => {
      const config = fallback([on('mock-hang'), on('mock-slow-1500'), on('ok-e', { request_timeout: 5000 })], { ...ONLY_429, request_timeout: 200 });
      const [res, elapsed] = await timed(() => post(config));
      expect(routing(res)).toEqual(served('2'));
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(elapsed).toBeLessThan(1400);
      expect(models()).toEqual(['mock-hang', 'mock-slow-1500', 'ok-e']);
      await waitFor(() => mock.requests[0].aborted && mock.requests[1].aborted); // both given up, not left running
    });

    describe('when every target fails, the client gets the last target’s error', () => {
      it('an upstream error passes through with its status and body', async () => {
        const res = await post(fallback([on('mock-error-500'), on('mock-error-503')]));
        expect(routing(res)).toEqual({ ...served('1'), status: 503 });
        expect(res.body).toEqual(UPSTREAM_503);
      });

      it('an unreachable last target is a 502 upstream_unreachable', async () => {
        const res = await post(fallback([on('mock-error-503'), REFUSED]));
        expectError(res, 502, { type: 'upstream_error', code: 'upstream_unreachable' });
        expect(routing(res)).toEqual({ ...served('1'), status: 502 });
      });

      it('a timed-out last target is a 504 request_timeout', async () => {
        const res = await post(fallback([on('mock-error-503'), on('mock-hang', { request_timeout: 200 })]));
        expectError(res, 504, { type: 'timeout_error', code: 'request_timeout' });
        expect(routing(res)).toEqual({ ...served('1'), status: 504 });
      });
    });

    it('a stream failing before its first byte falls back; the client gets one whole stream', async () => {
      const { text, headers } = await sdkStream(fallback([on('mock-stream-empty'), on('ok-stream')]));
      expect(text).toBe('Hello from mock');
      expect(routing({ headers })).toMatchObject({ target: '1', retries: '0' });
      expect(models()).toEqual(['mock-stream-empty', 'ok-stream']);
    });

    it('a stream cut after bytes reached the client does not fall back: it ends with an error event', async () => {
      const res = await post(fallback([on('mock-stream-cut'), on('ok-never')]), { body: { stream: true } });
      expect(routing(res)).toEqual(served('0'));
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = sseEvents(res.text);
      expect(events.map((e) => e.choices?.[0]?.delta?.content ?? null)).toEqual(['', 'Hello', ' from', null]);
      expect(events[3]).toMatchObject({ error: { code: 'upstream_stream_broken', message: expect.any(String) } });
      expect(res.text).not.toContain('[DONE]');
      expect(models()).toEqual(['mock-stream-cut']);
    });

    it('a stored config, by slug', async () => {
      const stored = await createConfig(gateway, 'fallback-stored', fallback([on('mock-error-502'), on('ok-stored')]));
      const res = await post('fallback-stored');
      expect(routing(res)).toEqual(served('1'));
      expect(models()).toEqual(['mock-error-502', 'ok-stored']);
      expect((await logRow(res)).config_id).toBe(stored.id);
    });
  });

  describe('loadbalance', () => {
    /** Sends `total` requests, 10 at a time; every answer's target index must match the model that answered. */
    async function spread(config: Config | string, targets: Config[], total: number): Promise<Record<string, number>> {
      for (let sent = 0; sent < total; sent += 10) {
        const batch = await Promise.all(Array.from({ length: Math.min(10, total - sent) }, () => post(config)));
        for (const res of batch) {
          expect(res.status).toBe(200);
          expect(res.headers.get('x-gateway-target-index')).toBe(String(targets.findIndex((t) => t.override_params.model === res.body.model)));
        }
      }
      const counts: Record<string, number> = {};
      for (const model of models()) counts[model] = (counts[model] ?? 0) + 1;
      return counts;
    }

    it('weights 3:1:0 over 200 requests (stored config): about 3/4, 1/4 and nothing', async () => {
      const targets = [on('lb-heavy', { weight: 3 }), on('lb-light', { weight: 1 }), on('lb-never', { weight: 0 })];
      await createConfig(gateway, 'lb-3-1-0', { strategy: { mode: 'loadbalance' }, targets });
      const counts = await spread('lb-3-1-0', targets, 200);
      expect(counts['lb-never']).toBeUndefined();
      expect(counts['lb-heavy'] + counts['lb-light']).toBe(200);
      expect(counts['lb-heavy']).toBeGreaterThanOrEqual(120);
      expect(counts['lb-heavy']).toBeLessThanOrEqual(180);
    });

    it('the default weight is 1: an even split', async () => {
      const targets = [on('lb-one'), on('lb-two')];
      const counts = await spread({ strategy: { mode: 'loadbalance' }, targets }, targets, 100);
      expect(counts['lb-one'] + counts['lb-two']).toBe(100);
      expect(counts['lb-one']).toBeGreaterThanOrEqual(30);
      expect(counts['lb-one']).toBeLessThanOrEqual(70);
    });
  });

  describe('conditional', () => {
    const TARGETS = ['yes', 'no', 'other'];
    const conditional = (strategy: Config): Config => ({
      strategy: { mode: 'conditional', ...strategy },
      targets: TARGETS.map((name) => on(`cond-${name}`, { name })),
    });
    /** Which target answered (and the header agrees with the model that answered). */
    async function chosen(config: Config, metadata?: Record<string, string>, body: Record<string, unknown> = {}) {
      mock.reset();
      const headers: Record<string, string> = metadata ? { 'x-gateway-metadata': JSON.stringify(metadata) } : {};
      const res = await post(config, { headers, body });
      expect(res.status).toBe(200);
      const name = TARGETS[Number(res.headers.get('x-gateway-target-index'))];
      expect(models()).toEqual([`cond-${name}`]);
      return name;
    }

    // [name, query, x-gateway-metadata, body params, does the query match?]
    it.each<[string, Config, Record<string, string> | undefined, Record<string, unknown>, boolean]>([
      ['$eq on metadata', { 'metadata.tier': { $eq: 'pro' } }, { tier: 'pro' }, {}, true],
      ['$eq, another value', { 'metadata.tier': { $eq: 'pro' } }, { tier: 'free' }, {}, false],
      ['$eq, no metadata at all', { 'metadata.tier': { $eq: 'pro' } }, undefined, {}, false],
      ['a plain value means $eq', { 'metadata.tier': 'pro' }, { tier: 'pro' }, {}, true],
      ['a plain value, another value', { 'metadata.tier': 'pro' }, { tier: 'pro-plus' }, {}, false],
      ['$ne', { 'metadata.tier': { $ne: 'free' } }, { tier: 'pro' }, {}, true],
      ['$ne, equal', { 'metadata.tier': { $ne: 'free' } }, { tier: 'free' }, {}, false],
      ['$in', { 'metadata.region': { $in: ['eu', 'uk'] } }, { region: 'uk' }, {}, true],
      ['$in, not in', { 'metadata.region': { $in: ['eu', 'uk'] } }, { region: 'us' }, {}, false],
      ['$nin', { 'metadata.region': { $nin: ['eu', 'uk'] } }, { region: 'us' }, {}, true],
      ['$nin, in', { 'metadata.region': { $nin: ['eu', 'uk'] } }, { region: 'eu' }, {}, false],
      ['$gt on a body param', { 'params.max_tokens': { $gt: 100 } }, undefined, { max_tokens: 101 }, true],
      ['$gt, equal', { 'params.max_tokens': { $gt: 100 } }, undefined, { max_tokens: 100 }, false],
      ['$gte, equal', { 'params.max_tokens': { $gte: 100 } }, undefined, { max_tokens: 100 }, true],
      ['$gte, below', { 'params.max_tokens': { $gte: 100 } }, undefined, { max_tokens: 99 }, false],
      ['$lt', { 'params.temperature': { $lt: 0.5 } }, undefined, { temperature: 0.2 }, true],
      ['$lt, equal', { 'params.temperature': { $lt: 0.5 } }, undefined, { temperature: 0.5 }, false],
      ['$lte, equal', { 'params.temperature': { $lte: 0.5 } }, undefined, { temperature: 0.5 }, true],
      ['$lte, above', { 'params.temperature': { $lte: 0.5 } }, undefined, { temperature: 0.7 }, false],
      ['$gt and $lt on one field', { 'params.max_tokens': { $gt: 10, $lt: 20 } }, undefined, { max_tokens: 15 }, true],
      ['$gt and $lt, outside', { 'params.max_tokens': { $gt: 10, $lt: 20 } }, undefined, { max_tokens: 25 }, false],
      ['$regex on the model', { 'params.model': { $regex: '^gpt-4o' } }, undefined, { model: 'gpt-4o-mini' }, true],
      ['$regex, no match', { 'params.model': { $regex: '^gpt-4o' } }, undefined, { model: 'o3-mini' }, false],
      ['a dotted params path', { 'params.response_format.type': 'json_object' }, undefined, { response_format: { type: 'json_object' } }, true],
      ['a dotted params path, another value', { 'params.response_format.type': 'json_object' }, undefined, { response_format: { type: 'text' } }, false],
      ['several keys: all match', { 'metadata.tier': 'pro', 'params.temperature': { $gte: 1 } }, { tier: 'pro' }, { temperature: 1 }, true],
      ['several keys: one does not', { 'metadata.tier': 'pro', 'params.temperature': { $gte: 1 } }, { tier: 'pro' }, { temperature: 0 }, false],
      ['$and', { $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'eu' }] }, { tier: 'pro', region: 'eu' }, {}, true],
      ['$and, one fails', { $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'eu' }] }, { tier: 'pro', region: 'us' }, {}, false],
      ['$or', { $or: [{ 'metadata.tier': 'pro' }, { 'params.max_tokens': { $gt: 1000 } }] }, { tier: 'free' }, { max_tokens: 2000 }, true],
      ['$or, none', { $or: [{ 'metadata.tier': 'pro' }, { 'params.max_tokens': { $gt: 1000 } }] }, { tier: 'free' }, { max_tokens: 10 }, false],
    ])('%s', async (_, query, metadata, body, matches) => {
      const config = conditional({ conditions: [{ query, then: 'yes' }], default: 'no' });
      expect(await chosen(config, metadata, body)).toBe(matches ? 'yes' : 'no');
    });

    it('the first matching condition wins', async () => {
      const conditions = [
        { query: { 'metadata.tier': 'free' }, then: 'no' },
        { query: { 'metadata.tier': 'pro' }, then: 'other' },
        { query: { 'metadata.tier': { $in: ['pro'] } }, then: 'yes' },
      ];
      expect(await chosen(conditional({ conditions, default: 'no' }), { tier: 'pro' })).toBe('other');
    });

    it('no match and no default: 400 no_matching_condition, nothing sent', async () => {
      const res = await post(conditional({ conditions: [{ query: { 'metadata.tier': 'pro' }, then: 'yes' }] }));
      expectError(res, 400, { type: 'invalid_request_error', code: 'no_matching_condition' });
      expect(mock.requests).toHaveLength(0);
    });
  });

  describe('retry', () => {
    const retrying = (model: string, retry: Config) => on(model, { retry });

    it('retries a flaky target until it answers: attempts are retries after the first try', async () => {
      const res = await post(retrying('mock-flaky-2-503', { attempts: 3 }));
      expect(routing(res)).toEqual(served(null, '2'));
      expect(models()).toEqual(Array(3).fill('mock-flaky-2-503'));
    });

    it('too few attempts: the last error passes through', async () => {
      const res = await post(retrying('mock-flaky-2-503', { attempts: 1 }));
      expect(routing(res)).toEqual({ ...served(null, '1'), status: 503 });
      expect(res.body).toEqual(UPSTREAM_503);
      expect(mock.requests).toHaveLength(2);
    });

    it.each([500, 502, 503, 504])('retries %i by default', async (status) => {
      expect(routing(await post(retrying(`mock-flaky-1-${status}`, { attempts: 1 })))).toEqual(served(null, '1'));
      expect(mock.requests).toHaveLength(2);
    });

    it.each([400, 401, 404, 409])('does not retry %i by default', async (status) => {
      expect(routing(await post(retrying(`mock-flaky-1-${status}`, { attempts: 3 })))).toEqual({ ...served(null), status });
      expect(mock.requests).toHaveLength(1);
    });

    it('on_status_codes replaces the default list', async () => {
      const retry = { attempts: 2, on_status_codes: [409] };
      expect(routing(await post(retrying('mock-flaky-1-409', retry)))).toEqual(served(null, '1'));
      mock.reset();
      expect(routing(await post(retrying('mock-flaky-1-503', retry)))).toEqual({ ...served(null), status: 503 });
      expect(mock.requests).toHaveLength(1);
    });

    it('a streamed request is retried before its first byte', async () => {
      const { text, headers } = await sdkStream(retrying('mock-flaky-1-503', { attempts: 1 }));
      expect(text).toBe('Hello from mock');
      expect(routing({ headers })).toMatchObject({ retries: '1' });
      expect(mock.requests).toHaveLength(2);
    });

    it('waits as long as retry-after-ms says', async () => {
      const [res, elapsed] = await timed(() => post(retrying('mock-retry-after-300', { attempts: 1 })));
      expect(routing(res)).toEqual({ ...served(null, '1'), status: 429 });
      expect(elapsed).toBeGreaterThanOrEqual(300);
      expect(mock.requests).toHaveLength(2);
    });

    it('a Retry-After beyond RETRY_MAX_DELAY_MS is not waited for: the 429 passes through at once', async () => {
      const [res, elapsed] = await timed(() => post(retrying('mock-retry-after-5000', { attempts: 3 })));
      expect(routing(res)).toEqual({ ...served(null), status: 429 });
      expect(res.body).toEqual(JSON.parse(mockErrorBody(429)));
      expect(elapsed).toBeLessThan(1000);
      expect(mock.requests).toHaveLength(1);
    });

    it('retries, then falls back; the retry count is the serving target’s', async () => {
      const res = await post(fallback([on('mock-error-503'), on('ok-after-retries')], { retry: { attempts: 2 } }));
      expect(routing(res)).toEqual(served('1'));
      expect(models()).toEqual(['mock-error-503', 'mock-error-503', 'mock-error-503', 'ok-after-retries']);
    });
  });

  describe('request_timeout', () => {
    it('a provider that does not answer in time is a 504 request_timeout', async () => {
      const [res, elapsed] = await timed(() => post(on('mock-hang', { request_timeout: 250 })));
      expectError(res, 504, { type: 'timeout_error', code: 'request_timeout', param: null });
      expect(routing(res)).toEqual({ ...served(null), status: 504 });
      expect(elapsed).toBeGreaterThanOrEqual(240);
      expect(elapsed).toBeLessThan(1200);
      await waitFor(() => mock.requests[0]?.aborted);
    });
  });

  describe('cache (simple)', () => {
    const cached = (): Config => on('cache-model', { cache: CACHE });
    const ask = (content: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      post(cached(), { body: { messages: [{ role: 'user', content }], ...params }, headers });

    it('MISS, then a HIT with the same bytes and no upstream request', async () => {
      const content = unique('cache');
      const miss = await ask(content);
      const hit = await ask(content);
      expect(routing(miss)).toEqual(served(null, '0', 'MISS'));
      expect(routing(hit)).toEqual(served(null, '0', 'HIT'));
      expect(hit.text).toBe(miss.text);
      expect(mock.requests).toHaveLength(1);
    });

    it('another message or another temperature is a MISS', async () => {
      const content = unique('cache-differs');
      expect(routing(await ask(content))).toMatchObject({ cache: 'MISS' });
      expect(routing(await ask(content + ' more'))).toMatchObject({ cache: 'MISS' });
      expect(routing(await ask(content, { temperature: 0.3 }))).toMatchObject({ cache: 'MISS' });
      expect(mock.requests).toHaveLength(3);
    });

    it('the order of the keys in the JSON body does not matter', async () => {
      const content = JSON.stringify(unique('cache-order'));
      const first = await post(cached(), { body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${content}}],"temperature":0.2}` });
      const second = await post(cached(), { body: `{"temperature":0.2,"messages":[{"content":${content},"role":"user"}],"model":"gpt-4o-mini"}` });
      expect([routing(first).cache, routing(second).cache]).toEqual(['MISS', 'HIT']);
      expect(mock.requests).toHaveLength(1);
    });

    it('x-gateway-cache-force-refresh: REFRESH asks the provider again and stores the new answer', async () => {
      const content = unique('cache-refresh');
      const miss = await ask(content);
      const refresh = await ask(content, {}, { 'x-gateway-cache-force-refresh': 'true' });
      const hit = await ask(content);
      expect([miss, refresh, hit].map((r) => routing(r).cache)).toEqual(['MISS', 'REFRESH', 'HIT']);
      expect(mock.requests).toHaveLength(2);
      expect(refresh.body.id).not.toBe(miss.body.id);
      expect(hit.body.id).toBe(refresh.body.id);
    });

    it('a streamed answer is cached; the HIT replays a stream the SDK reads to the same text', async () => {
      const content = unique('cache-stream');
      const miss = await sdkStream(cached(), content);
      const hit = await sdkStream(cached(), content);
      expect(miss.text).toBe(content.slice('echo: '.length));
      expect(hit.text).toBe(miss.text);
      expect([routing(miss).cache, routing(hit).cache]).toEqual(['MISS', 'HIT']);
      expect(mock.requests).toHaveLength(1);

      const raw = await ask(content, { stream: true });
      expect(routing(raw).cache).toBe('HIT');
      expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(sseEvents(raw.text).pop()).toBe('[DONE]');
    });

    it('an error answer is never cached', async () => {
      const flaky = on('mock-flaky-1-500', { cache: CACHE });
      const content = unique('cache-error');
      const send = () => post(flaky, { body: { messages: [{ role: 'user', content }] } });
      expect([await send(), await send(), await send()].map((r) => [r.status, routing(r).cache])).toEqual([
        [500, 'MISS'],
        [200, 'MISS'],
        [200, 'HIT'],
      ]);
      expect(mock.requests).toHaveLength(2);
    });

    it('log rows: a MISS of a priced model has a cost, its HIT costs 0 and keeps the usage', async () => {
      const priced = { provider: 'openai', api_key: 'sk-test', custom_host: `${mock.url}/v1`, cache: CACHE };
      const body = { messages: [{ role: 'user', content: unique('cache-cost') }] };
      const miss = await logRow(await post(priced, { body }));
      const hit = await logRow(await post(priced, { body }));
      expect(miss).toMatchObject({ cache_status: 'MISS', model: 'gpt-4o-mini', status_code: 200 });
      expect(Number(miss.cost_usd)).toBeGreaterThan(0);
      expect(hit).toMatchObject({ cache_status: 'HIT', status_code: 200, prompt_tokens: miss.prompt_tokens, completion_tokens: miss.completion_tokens });
      expect(hit.prompt_tokens).toBeGreaterThan(0);
      expect(hit.cost_usd).not.toBeNull();
      expect(Number(hit.cost_usd)).toBe(0);
    });
  });

  describe('inheritance and override_params', () => {
    it('targets inherit provider, api_key, custom_host and retry; a child may override them', async () => {
      const config = {
        ...fallback([
          { override_params: { model: 'mock-error-503' } },
          { api_key: 'sk-child', custom_host: `${mock.url}/v1`, override_params: { model: 'ok-child' } },
        ]),
        provider: 'openai',
        api_key: 'sk-parent',
        custom_host: `${spare.url}/v1`,
        retry: { attempts: 1 },
      };
      expect(routing(await post(config))).toEqual(served('1'));
      expect(spare.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([
        ['mock-error-503', 'Bearer sk-parent'],
        ['mock-error-503', 'Bearer sk-parent'], // the inherited retry
      ]);
      expect(mock.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([['ok-child', 'Bearer sk-child']]);
    });

    it('override_params merge down the tree, the deepest level winning per key, over the request body', async () => {
      const child = { override_params: { model: 'child-model' } };
      const middle = { ...fallback([child]), override_params: { max_tokens: 9 } };
      const config = { ...on('parent-model'), ...fallback([middle]), override_params: { model: 'parent-model', temperature: 0.1, max_tokens: 5 } };
      const res = await post(config, { body: { temperature: 0.9, max_tokens: 100, user: 'u-1' } });
      expect(routing(res)).toEqual(served('0.0'));
      expect(mock.requests[0].body).toEqual({
        model: 'child-model',
        messages: [{ role: 'user', content: 'Say hello' }],
        temperature: 0.1,
        max_tokens: 9,
        user: 'u-1',
      });
    });
  });

  describe('per-attempt log rows', () => {
    it('fallback: the failed attempt and the answer, one row each under one trace id', async () => {
      const res = await post(fallback([on('mock-error-503'), on('ok-log')]));
      expect(await attemptRows(res)).toEqual([
        [503, '0', 0, 'mock-error-503', '503'],
        [200, '1', 0, 'ok-log', null],
      ]);
    });

    it('retries then fallback: a row per attempt with its retry count', async () => {
      const res = await post(fallback([on('mock-error-503', { retry: { attempts: 1 } }), on('ok-log-2')]));
      expect(await attemptRows(res)).toEqual([
        [503, '0', 0, 'mock-error-503', '503'],
        [503, '0', 1, 'mock-error-503', '503'],
        [200, '1', 0, 'ok-log-2', null],
      ]);
    });

    it('all failing: gateway-made and upstream errors, the last one the request’s own row', async () => {
      const res = await post(fallback([REFUSED, on('mock-error-502')]));
      expect(res.status).toBe(502);
      expect(await attemptRows(res)).toEqual([
        [502, '0', 0, 'gpt-4o-mini', 'upstream_unreachable'],
        [502, '1', 0, 'mock-error-502', '502'],
      ]);
    });
  });

  describe('circuit breaker', () => {
    /** A host of its own per test, so that no breaker state is shared between tests. */
    let sick: MockUpstream;
    beforeEach(async () => {
      sick = await startMockUpstream();
    });
    afterEach(() => sick.close());

    /** One request through `config`: which models each host saw for it (no reset: it would clear the flaky counters). */
    async function round(config: Config) {
      const [sickBefore, healthyBefore] = [sick.requests.length, mock.requests.length];
      const res = await post(config);
      return { routing: routing(res), sick: models(sick).slice(sickBefore), healthy: models().slice(healthyBefore) };
    }
    const breakerConfig = (sickModel: string, cooldown_ms: number, window_ms = 10_000) =>
      fallback([on(sickModel, {}, sick), on('ok-healthy')], { circuit_breaker: { failure_threshold: 2, window_ms, cooldown_ms } });

    it('opens after failure_threshold failures: the target is skipped, then probed once after the cooldown', async () => {
      const config = breakerConfig('mock-error-503', 500);
      const tried = { routing: served('1'), sick: ['mock-error-503'], healthy: ['ok-healthy'] };
      const skipped = { ...tried, sick: [] };
      expect(await round(config)).toEqual(tried);
      expect(await round(config)).toEqual(tried);
      expect(await round(config)).toEqual(skipped);
      await sleep(600);
      expect(await round(config)).toEqual(tried); // the probe, which fails
      expect(await round(config)).toEqual(skipped); // open again
    });

    it('a successful probe closes it', async () => {
      const config = breakerConfig('mock-flaky-2-503', 300);
      for (const sickSeen of [1, 1, 0]) expect((await round(config)).sick).toHaveLength(sickSeen);
      await sleep(400);
      const probe = { routing: served('0'), sick: ['mock-flaky-2-503'], healthy: [] };
      expect(await round(config)).toEqual(probe);
      expect(await round(config)).toEqual(probe);
    });

    it('only failures within window_ms count', async () => {
      const config = breakerConfig('mock-error-503', 5000, 300);
      expect((await round(config)).sick).toHaveLength(1);
      await sleep(400);
      expect((await round(config)).sick).toHaveLength(1);
      expect((await round(config)).sick).toHaveLength(1); // still closed: the first failure left the window
    });

    it('a single target whose breaker is open: 503 circuit_open with Retry-After', async () => {
      const config = on('mock-error-500', { circuit_breaker: { failure_threshold: 1, cooldown_ms: 5000 } }, sick);
      expect((await post(config)).status).toBe(500);
      const res = await post(config);
      expectError(res, 503, { type: expect.any(String), code: 'circuit_open' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(5);
      expect(sick.requests).toHaveLength(1);
    });
  });

  describe('invalid configs: 400 invalid_config naming the field, never a 500', () => {
    const ok = () => on('ok-never');
    const conditional = (query: Config, then = 'a') => ({
      strategy: { mode: 'conditional', conditions: [{ query, then }] },
      targets: [{ ...ok(), name: 'a' }],
    });

    it.each<[string, () => Config | string, string[]]>([
      ['bad JSON', () => '{"strategy": {"mode": "fallback"', ['JSON']],
      ['an unknown mode', () => ({ strategy: { mode: 'roundrobin' }, targets: [ok()] }), ['config.strategy.mode']],
      ['a then naming no target', () => conditional({ 'metadata.tier': 'pro' }, 'ghost'), ['config.strategy.conditions[0].then']],
      ['an unknown query operator', () => conditional({ 'metadata.tier': { $foo: 'pro' } }), ['config.strategy.conditions[0].query', '$foo']],
      ['a query key outside metadata. and params.', () => conditional({ 'user.tier': 'pro' }), ['config.strategy.conditions[0].query', 'user.tier']],
      ['a negative weight', () => ({ strategy: { mode: 'loadbalance' }, targets: [ok(), { ...ok(), weight: -1 }] }), ['config.targets[1].weight']],
      ['retry.attempts 11', () => ({ ...ok(), retry: { attempts: 11 } }), ['config.retry.attempts']],
      ['retry.attempts in a target', () => fallback([ok(), { ...ok(), retry: { attempts: 11 } }]), ['config.targets[1].retry.attempts']],
      ['circuit_breaker.failure_threshold 0', () => ({ ...ok(), circuit_breaker: { failure_threshold: 0 } }), ['config.circuit_breaker.failure_threshold']],
      [
        'circuit_breaker.cooldown_ms negative',
        () => fallback([ok(), { ...ok(), circuit_breaker: { cooldown_ms: -1 } }]),
        ['config.targets[1].circuit_breaker.cooldown_ms'],
      ],
      ['circuit_breaker.window_ms not a number', () => ({ ...ok(), circuit_breaker: { window_ms: 'soon' } }), ['config.circuit_breaker.window_ms']],
      ['circuit_breaker not an object', () => ({ ...ok(), circuit_breaker: true }), ['config.circuit_breaker']],
      ['cache.mode unknown', () => ({ ...ok(), cache: { mode: 'fuzzy' } }), ['config.cache.mode']],
    ])('%s', async (_, config, named) => {
      const res = await post(config());
      expectError(res, 400, { type: 'invalid_request_error', code: 'invalid_config' });
      for (const part of named) expect(res.body.error.message).toContain(part);
      expect(mock.requests).toHaveLength(0);
    });
  });
});
