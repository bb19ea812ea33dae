/**
 * Regular-expression denial of service (CONTRACT section 15, issue 32 item 4): patterns
 * callers and admins supply (config conditions' `$regex`, guardrail `regex` checks, JSON
 * Schema `pattern`s) run in RE2, in linear time. JavaScript's backtracking engine took
 * seconds on `^(a+)+$` against a few dozen `a`s and a `!`, doubling with each added
 * character, and held every other request meanwhile. A pattern RE2 cannot run
 * (backreferences, lookaround) is a 400 at validation naming the field.
 */
import { call, createVirtualKey } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

// JavaScript's RegExp backtracks ~2^27 steps on this: seconds (16 s on a slow machine), every other request waiting.
const HOSTILE_TEXT = `${'a'.repeat(27)}!`;
const CATASTROPHIC = '^(a+)+$';

describe('hostile regular expressions', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-redos', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const chatWith = (config: unknown, body: Record<string, unknown>) =>
    call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-config': JSON.stringify(config) }, body: { model: 'gpt-4o-mini', ...body } });

  /** Runs `request` while /health is asked every 20 ms: how long the request took, and the slowest /health. */
  async function whileHealthIsAsked<T>(request: () => Promise<T>): Promise<{ result: T; tookMs: number; slowestHealthMs: number }> {
    let slowestHealthMs = 0;
    let done = false;
    const health = (async () => {
      while (!done) {
        const started = performance.now();
        expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const started = performance.now();
    const result = await request();
    const tookMs = performance.now() - started;
    done = true;
    await health;
    return { result, tookMs, slowestHealthMs };
  }

  it('a conditional config whose $regex backtracks catastrophically answers at once, and /health meanwhile', async () => {
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.user': { $regex: CATASTROPHIC } }, then: 'matched' }], default: 'other' },
      targets: [
        { name: 'matched', virtual_key: 'openai-prod' },
        { name: 'other', virtual_key: 'openai-prod' },
      ],
    };
    const { result, tookMs, slowestHealthMs } = await whileHealthIsAsked(() =>
      chatWith(config, { user: HOSTILE_TEXT, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(result.status).toBe(200);
    expect(result.headers.get('x-gateway-target-index')).toBe('1'); // no match: the default
    expect(tookMs).toBeLessThan(2_000);
    expect(slowestHealthMs).toBeLessThan(500);
    // And the pattern still means what it says.
    const matching = await chatWith(config, { user: 'aaaa', messages: [{ role: 'user', content: 'hi' }] });
    expect(matching.headers.get('x-gateway-target-index')).toBe('0');
  });

  it('a guardrail regex check that backtracks catastrophically answers at once, and /health meanwhile', async () => {
    const config = {
      virtual_key: 'openai-prod',
      input_guardrails: [{ name: 'only-as', deny: true, checks: [{ type: 'regex', pattern: CATASTROPHIC, must: 'match' }] }],
    };
    const { result, tookMs, slowestHealthMs } = await whileHealthIsAsked(() => chatWith(config, { messages: [{ role: 'user', content: HOSTILE_TEXT }] }));
    expect(result.status).toBe(446);
    expect(result.body.error.guardrails[0]).toMatchObject({ name: 'only-as', checks: [{ type: 'regex', verdict: false }] });
    expect(tookMs).toBeLessThan(2_000);
    expect(slowestHealthMs).toBeLessThan(500);
    expect((await chatWith(config, { messages: [{ role: 'user', content: 'aaaa' }] })).status).toBe(200);
  });

  it.each([
    [
      'a $regex backreference',
      {
        strategy: { mode: 'conditional', conditions: [{ query: { 'params.user': { $regex: '^(a+)\\1$' } }, then: 'a' }] },
        targets: [{ name: 'a', virtual_key: 'openai-prod' }],
      },
      'config.strategy.conditions[0].query.params.user.$regex must not use backreferences',
    ],
    [
      'a guardrail lookahead',
      { virtual_key: 'openai-prod', input_guardrails: [{ checks: [{ type: 'regex', pattern: '(?=sk-)\\w+' }] }] },
      'config.input_guardrails[0].checks[0].pattern must not use lookahead or lookbehind',
    ],
    [
      'a guardrail lookbehind',
      { virtual_key: 'openai-prod', output_guardrails: [{ checks: [{ type: 'regex', pattern: '(?<!x)y' }] }] },
      'config.output_guardrails[0].checks[0].pattern must not use lookahead or lookbehind',
    ],
    [
      'a JSON schema pattern with a backreference',
      { virtual_key: 'openai-prod', output_guardrails: [{ checks: [{ type: 'json_schema', schema: { type: 'string', pattern: '(a)\\1' } }] }] },
      'config.output_guardrails[0].checks[0].schema is not a valid JSON schema: pattern "(a)\\\\1" must not use backreferences',
    ],
    [
      'a repeat count beyond RE2',
      { virtual_key: 'openai-prod', input_guardrails: [{ checks: [{ type: 'regex', pattern: '(a{1,1000}){1,1000}' }] }] },
      'config.input_guardrails[0].checks[0].pattern is too complex',
    ],
  ])('%s is a 400 naming the field, and nothing is sent', async (_name, config, message) => {
    mock.reset();
    const refused = await chatWith(config, { messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_config', message: expect.stringContaining(message) });
    expect(refused.body.error.message).toContain('linear-time engine (RE2)');
    expect(mock.requests).toHaveLength(0);
  });

  it('a stored config with a pattern RE2 cannot run is refused when it is saved', async () => {
    const config = { virtual_key: 'openai-prod', input_guardrails: [{ checks: [{ type: 'regex', pattern: '(\\w+)\\s\\1' }] }] };
    const refused = await call(gateway, '/v1/configs', { body: { name: 'Backreference', slug: 'backreference', config } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('config.input_guardrails[0].checks[0].pattern must not use backreferences');
  });
});
