import type { ConfigService } from '@nestjs/config';
import { Subject } from 'rxjs';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import { jsonPayload, keepReceivedBytes } from '../../common/http/received-body';
import type { Environment } from '../../config/environment';
import { type OpenedContext, RequestContext } from '../../context/request-context';
import type { BudgetLedger } from '../budgets/budget-ledger';
import type { RateLimiter } from '../budgets/rate-limiter';
import type { CachedResponse, ResponseCache } from '../cache/response-cache';
import { buildGuardrails } from '../guardrails/guardrail-registry';
import { CHAT_TEXTS } from '../chat/chat-dialect';
import type { AnswerOutcome, Attempt } from '../../context/attempt';
import type { GatewayResult } from './gateway-result';
import { RouteExecutor, upstreamBodyFor, type AttemptSender } from './route-executor';
import type { RouteNode, RouteTarget } from '../../context/route-plan';
import { singleTargetTree } from './route-tree';

function target(provider = 'openai'): RouteTarget {
  return {
    provider,
    apiKey: `sk-${provider}`,
    customHost: null,
    organization: null,
    project: null,
    providerOptions: {},
    strictParams: false,
    virtualKeyId: null,
    overrideParams: {},
    requestTimeoutMs: null,
    virtualKeyBudget: null,
    virtualKeyRateLimits: [],
    allowedModels: null,
    model: null,
    privateNetworkAllowed: false,
  };
}

/** A leaf sending to `provider`, with the node settings a test needs. */
function leaf(provider: string, settings: Partial<RouteNode> = {}): RouteNode {
  return { ...singleTargetTree(target(provider)), ...settings };
}

/** A fallback over `children`, numbered by their place. */
function fallback(children: RouteNode[]): RouteNode {
  return { ...singleTargetTree(target()), source: null, mode: 'fallback', children: children.map((child, i) => ({ ...child, path: String(i) })) };
}

/** A context as an operation hands it to the executor: opened (begin). */
function contextFor(root: RouteNode): OpenedContext {
  const context = new RequestContext('trace-1', {});
  context.operation = 'chat.completions';
  context.route = {
    root,
    configId: null,
    configVersion: null,
    via: 'config',
    organization: null,
    project: null,
    configHostsAdminChosen: false,
    workspaceId: 'ws-1',
  };
  return context.begin({});
}

const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

function chatOutcome(content: string): AnswerOutcome {
  return { responseBody: { choices: [{ message: { role: 'assistant', content } }] }, usage, servedModel: 'gpt-4o-2024-08-06', error: null };
}

function json(outcome: AnswerOutcome): GatewayResult {
  return { kind: 'json', status: 200, body: Buffer.from(JSON.stringify(outcome.responseBody)), outcome };
}

const upstreamError = (status: number) => new UpstreamHttpError(status, Buffer.from('{"error":{"message":"no"}}'), 'application/json', {});

/** A sender answering from a script, one step per call: a result, or an error to throw. */
function scriptedSender(...steps: (GatewayResult | Error)[]): jest.MockedFunction<AttemptSender> {
  return jest.fn<ReturnType<AttemptSender>, Parameters<AttemptSender>>(async () => {
    const step = steps.shift();
    if (!step) throw new Error('the sender was called more often than scripted');
    if (step instanceof Error) throw step;
    return step;
  });
}

function setup() {
  const store = new Map<string, CachedResponse>();
  const cache = {
    get: async (key: string) => store.get(key) ?? null,
    set: async (key: string, value: CachedResponse) => void store.set(key, value),
  } as ResponseCache;
  const rateLimiter = { admit: jest.fn(async () => undefined) };
  const budgets = { reserve: jest.fn(async () => undefined) };
  const resolver = { resolveLeaf: async (node: RouteNode) => ({ ...(node.source as { target: RouteTarget }).target }) };
  const config = { get: () => 0 } as unknown as ConfigService<Environment, true>;
  const executor = new RouteExecutor(resolver as never, cache, budgets as unknown as BudgetLedger, rateLimiter as unknown as RateLimiter, config);
  return { executor, store, rateLimiter, budgets };
}

const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

/** What a test reads of each attempt record. */
const summary = (attempt: Attempt) => ({
  provider: attempt.provider,
  targetIndex: attempt.targetIndex,
  retry: attempt.retry,
  sent: attempt.sent,
  status: attempt.failure?.status ?? null,
  ended: attempt.ended,
});

describe('RouteExecutor', () => {
  afterEach(() => jest.restoreAllMocks());

  it('retries a 503 as a second attempt: the first failed with 503, the second answered', async () => {
    const { executor } = setup();
    const context = contextFor(leaf('openai', { retry: { attempts: 2, onStatusCodes: [503] } }));
    const answer = chatOutcome('hello');
    const send = scriptedSender(upstreamError(503), json(answer));

    const result = await executor.execute(context, body, send);

    expect(result.kind).toBe('json');
    expect(context.attempts.map(summary)).toEqual([
      { provider: 'openai', targetIndex: null, retry: 0, sent: true, status: 503, ended: true },
      { provider: 'openai', targetIndex: null, retry: 1, sent: true, status: null, ended: true },
    ]);
    expect(context.attempts[0].outcome).toBeNull();
    expect(context.attempts[1].outcome).toBe(answer);
    expect(context.attempts[1].model).toBe('gpt-4o');
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('does not retry a status outside the retry policy', async () => {
    const { executor } = setup();
    const context = contextFor(leaf('openai', { retry: { attempts: 2, onStatusCodes: [503] } }));
    const send = scriptedSender(upstreamError(400));

    await expect(executor.execute(context, body, send)).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(context.attempts.map(summary)).toEqual([{ provider: 'openai', targetIndex: null, retry: 0, sent: true, status: 400, ended: true }]);
  });

  it('falls back to the next target: one attempt per child, each with its target index', async () => {
    const { executor } = setup();
    const context = contextFor(fallback([leaf('openai'), leaf('anthropic')]));
    const answer = chatOutcome('from the second');
    const send = scriptedSender(upstreamError(500), json(answer));

    await executor.execute(context, body, send);

    expect(context.attempts.map(summary)).toEqual([
      { provider: 'openai', targetIndex: '0', retry: 0, sent: true, status: 500, ended: true },
      { provider: 'anthropic', targetIndex: '1', retry: 0, sent: true, status: null, ended: true },
    ]);
    expect(context.attempts[1].outcome).toBe(answer);
    expect(send.mock.calls.map(([sentTo]) => sentTo.provider)).toEqual(['openai', 'anthropic']);
  });

  it('answers a repeated request from the cache: a HIT attempt, not sent, with the cached outcome', async () => {
    const { executor, store } = setup();
    const node = leaf('openai', { cache: { maxAgeSeconds: 60 } });
    const answer = chatOutcome('cached');
    const send = scriptedSender(json(answer));

    const first = contextFor(node);
    await executor.execute(first, body, send);
    expect(first.attempts.map((a) => a.cacheStatus)).toEqual(['MISS']);
    expect(store.size).toBe(1);

    const second = contextFor(node);
    const result = await executor.execute(second, body, send);

    expect(send).toHaveBeenCalledTimes(1);
    expect(second.attempts).toHaveLength(1);
    const hit = second.attempts[0];
    expect(hit.cacheStatus).toBe('HIT');
    expect(hit.sent).toBe(false);
    expect(hit.ended).toBe(true);
    expect(hit.outcome).toMatchObject({ usage, responseBody: answer.responseBody, servedModel: 'gpt-4o-2024-08-06' });
    expect(result.kind === 'json' && JSON.parse(result.body.toString('utf8'))).toEqual(answer.responseBody);
  });

  it('fails the opened attempt with 429 and sends nothing when the rate limiter refuses', async () => {
    const { executor, rateLimiter, budgets } = setup();
    rateLimiter.admit.mockRejectedValueOnce(new GatewayError(429, 'rate_limit_error', 'limited', 'rate_limit_exceeded'));
    const context = contextFor(leaf('openai'));
    const send = scriptedSender();

    await expect(executor.execute(context, body, send)).rejects.toMatchObject({ status: 429 });

    expect(context.attempts.map(summary)).toEqual([{ provider: 'openai', targetIndex: null, retry: 0, sent: false, status: 429, ended: true }]);
    expect(context.attempts[0].failure?.error.code).toBe('rate_limit_exceeded');
    expect(send).not.toHaveBeenCalled();
    expect(budgets.reserve).not.toHaveBeenCalled();
  });

  it('fails the opened attempt with 402 and sends nothing when the budget is spent', async () => {
    const { executor, budgets } = setup();
    budgets.reserve.mockRejectedValueOnce(new GatewayError(402, 'budget_exceeded', 'spent', 'budget_exceeded'));
    const context = contextFor(leaf('openai'));
    const send = scriptedSender();

    await expect(executor.execute(context, body, send)).rejects.toMatchObject({ status: 402 });
    expect(context.attempts.map(summary)).toEqual([{ provider: 'openai', targetIndex: null, retry: 0, sent: false, status: 402, ended: true }]);
    expect(send).not.toHaveBeenCalled();
  });

  it('sets aside a load-balanced target whose circuit is open and draws again among the rest', async () => {
    const { executor } = setup();
    jest.spyOn(Math, 'random').mockReturnValue(0); // always the first candidate with weight
    const breaking = leaf('openai', { circuitBreaker: { failureThreshold: 1, windowMs: 60_000, cooldownMs: 60_000, onStatusCodes: [500] } });
    const root: RouteNode = { ...fallback([breaking, leaf('anthropic')]), mode: 'loadbalance' };
    const answer = chatOutcome('from the other');
    const send = scriptedSender(upstreamError(500), json(answer));
    await expect(executor.execute(contextFor(root), body, send)).rejects.toBeInstanceOf(UpstreamHttpError);

    const context = contextFor(root);
    await executor.execute(context, body, send);

    expect(context.attempts.map(summary)).toEqual([
      { provider: 'openai', targetIndex: '0', retry: 0, sent: false, status: 503, ended: true },
      { provider: 'anthropic', targetIndex: '1', retry: 0, sent: true, status: null, ended: true },
    ]);
    expect(context.attempts[1].outcome).toBe(answer);
  });

  it('answers 503 circuit_open without sending once the breaker has opened', async () => {
    const { executor } = setup();
    const node = leaf('openai', { circuitBreaker: { failureThreshold: 1, windowMs: 60_000, cooldownMs: 60_000, onStatusCodes: [500] } });
    const send = scriptedSender(upstreamError(500));

    await expect(executor.execute(contextFor(node), body, send)).rejects.toBeInstanceOf(UpstreamHttpError);

    const context = contextFor(node);
    const error = await executor.execute(context, body, send).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'circuit_open' });
    expect((error as GatewayError).headers['retry-after']).toBe('60');
    expect(context.attempts.map(summary)).toEqual([{ provider: 'openai', targetIndex: null, retry: 0, sent: false, status: 503, ended: true }]);
    expect(context.attempts[0].failure?.error.code).toBe('circuit_open');
    expect(send).toHaveBeenCalledTimes(1);
  });

  it('fails the opened attempt with 446 before any other stage when an input guardrail denies', async () => {
    const { executor, rateLimiter } = setup();
    const inputGuardrails = buildGuardrails([{ name: 'no-hi', deny: true, checks: [{ type: 'contains', words: ['hi'], operator: 'none' }] }]);
    const context = contextFor(leaf('openai', { inputGuardrails }));
    const send = scriptedSender();

    await expect(executor.execute(context, body, send, { texts: CHAT_TEXTS })).rejects.toMatchObject({ status: 446, code: 'guardrail_denied' });
    expect(context.attempts.map(summary)).toEqual([{ provider: 'openai', targetIndex: null, retry: 0, sent: false, status: 446, ended: true }]);
    expect(context.attempts[0].guardrails?.input?.map((g) => g.name)).toEqual(['no-hi']);
    expect(rateLimiter.admit).not.toHaveBeenCalled();
    expect(send).not.toHaveBeenCalled();
  });

  it("carries the input guardrails' results and failed flag over to a retry", async () => {
    const { executor } = setup();
    const inputGuardrails = buildGuardrails([{ name: 'warn-hi', deny: false, checks: [{ type: 'contains', words: ['hi'], operator: 'none' }] }]);
    const context = contextFor(leaf('openai', { inputGuardrails, retry: { attempts: 1, onStatusCodes: [503] } }));
    const send = scriptedSender(upstreamError(503), json(chatOutcome('ok')));

    await executor.execute(context, body, send, { texts: CHAT_TEXTS });

    expect(context.attempts.map((a) => [a.guardrailsFailed, a.guardrails?.input?.map((g) => [g.name, g.verdict])])).toEqual([
      [true, [['warn-hi', false]]],
      [true, [['warn-hi', false]]],
    ]);
  });

  it('keeps the usage of a JSON answer an output guardrail denied, failing its attempt with 446', async () => {
    const { executor } = setup();
    const outputGuardrails = buildGuardrails([{ name: 'no-secrets', deny: true, checks: [{ type: 'contains', words: ['secret'], operator: 'none' }] }]);
    const context = contextFor(leaf('openai', { outputGuardrails }));
    const send = scriptedSender(json(chatOutcome('the secret is 42')));

    await expect(executor.execute(context, body, send, { texts: CHAT_TEXTS })).rejects.toMatchObject({ status: 446, code: 'guardrail_denied' });

    const [attempt] = context.attempts;
    expect(summary(attempt)).toEqual({ provider: 'openai', targetIndex: null, retry: 0, sent: true, status: 446, ended: true });
    expect(attempt.outcome?.usage).toEqual(usage);
    expect(attempt.error?.code).toBe('guardrail_denied');
    expect(attempt.guardrails?.output?.map((g) => [g.name, g.verdict])).toEqual([['no-secrets', false]]);
  });

  it('sends (and caches) a JSON answer an output guardrail redacted as redacted, the same as its outcome for the log', async () => {
    const { executor, store } = setup();
    const outputGuardrails = buildGuardrails([{ name: 'pii', deny: true, checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] }]);
    const context = contextFor(leaf('openai', { outputGuardrails, cache: { maxAgeSeconds: 60 } }));
    const send = scriptedSender(json(chatOutcome('mail ada@example.com')));

    const result = await executor.execute(context, body, send, { texts: CHAT_TEXTS });
    if (result.kind !== 'json') throw new Error('expected a JSON answer');

    const sent = JSON.parse(result.body.toString('utf8'));
    expect(sent.choices[0].message.content).toBe('mail [REDACTED_EMAIL]');
    expect(result.outcome.responseBody).toEqual(sent);
    expect(context.attempts[0].outcome?.responseBody).toEqual(sent);
    expect([...store.values()][0].body).not.toContain('ada@example.com');
  });

  it('ends a streamed attempt only once the stream outcome settles', async () => {
    const { executor } = setup();
    const context = contextFor(leaf('openai'));
    let settle!: (outcome: AnswerOutcome) => void;
    const outcome = new Promise<AnswerOutcome>((resolve) => (settle = resolve));
    const frames = new Subject<string>();
    const send = scriptedSender({ kind: 'sse', status: 200, frames, outcome });

    const result = await executor.execute(context, body, send);

    expect(result.kind).toBe('sse');
    const [attempt] = context.attempts;
    expect(attempt.sent).toBe(true);
    expect(attempt.ended).toBe(false);
    expect(attempt.outcome).toBeNull();

    const answered = chatOutcome('streamed');
    settle(answered);
    await attempt.settled;
    expect(attempt.ended).toBe(true);
    expect(attempt.outcome).toBe(answered);
    expect(attempt.failure).toBeNull();
  });

  it("puts an output guardrail's denial of a stream into its frames (before the final one) and its outcome", async () => {
    const { executor } = setup();
    const outputGuardrails = buildGuardrails([{ name: 'no-secrets', deny: true, checks: [{ type: 'contains', words: ['secret'], operator: 'none' }] }]);
    const context = contextFor(leaf('openai', { outputGuardrails }));
    const upstreamFrames = new Subject<string>();
    const send = scriptedSender({ kind: 'sse', status: 200, frames: upstreamFrames, outcome: Promise.resolve(chatOutcome('a secret')) });

    const result = await executor.execute(context, body, send, { texts: CHAT_TEXTS });
    if (result.kind !== 'sse') throw new Error('expected a stream');
    const received: string[] = [];
    const done = new Promise<void>((resolve) => result.frames.subscribe({ next: (frame) => received.push(frame), complete: resolve }));
    upstreamFrames.next('data: {"chunk":1}\n\n');
    upstreamFrames.next('data: [DONE]\n\n');
    upstreamFrames.complete();
    await done;

    expect(received).toHaveLength(3);
    expect(received[0]).toBe('data: {"chunk":1}\n\n');
    expect(JSON.parse(received[1].slice('data: '.length)).error.code).toBe('guardrail_denied');
    expect(received[2]).toBe('data: [DONE]\n\n');
    expect((await result.outcome).error?.code).toBe('guardrail_denied');
    const [attempt] = context.attempts;
    await attempt.settled;
    expect(attempt.failure).toBeNull(); // the stream's 200 stands
    expect(attempt.error?.code).toBe('guardrail_denied');
  });

  it('keeps the denial of a stream whose client left during the output check (it had the last frame)', async () => {
    const { executor } = setup();
    const outputGuardrails = buildGuardrails([{ name: 'no-secrets', deny: true, checks: [{ type: 'contains', words: ['secret'], operator: 'none' }] }]);
    const context = contextFor(leaf('openai', { outputGuardrails }));
    const upstreamFrames = new Subject<string>();
    let settle!: (outcome: AnswerOutcome) => void;
    const outcome = new Promise<AnswerOutcome>((resolve) => (settle = resolve));
    const send = scriptedSender({ kind: 'sse', status: 200, frames: upstreamFrames, outcome });
    // Responses' texts hold no final frame back: the client has the last event before the check ends.
    const texts = { ...CHAT_TEXTS, isFinalFrame: undefined };

    const result = await executor.execute(context, body, send, { texts });
    if (result.kind !== 'sse') throw new Error('expected a stream');
    const subscription = result.frames.subscribe();
    upstreamFrames.next('data: {"type":"response.completed"}\n\n');
    upstreamFrames.complete();
    subscription.unsubscribe(); // the client leaves at the last event, before the stream's outcome is in
    settle(chatOutcome('a secret'));

    expect((await result.outcome).error?.code).toBe('guardrail_denied');
    const [attempt] = context.attempts;
    await attempt.settled;
    expect(attempt.error?.code).toBe('guardrail_denied');
  });
});

describe('the body sent to a target', () => {
  /** A body as the body parser leaves it: its bytes kept beside it. */
  function received(): Record<string, unknown> {
    const bytes = Buffer.from('{ "model" : "gpt-4o", "messages": [{"role":"user","content":"hi \\u00e9"}], "temperature": 1.0 }');
    const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
    keepReceivedBytes(parsed, bytes);
    return parsed;
  }

  it("is the client's own object, sent as the bytes received, when routing changes nothing", () => {
    const client = received();
    const sent = upstreamBodyFor(client, { ...target(), model: 'gpt-4o' });
    expect(sent).toBe(client);
    expect(jsonPayload(sent)).toEqual(Buffer.from('{ "model" : "gpt-4o", "messages": [{"role":"user","content":"hi \\u00e9"}], "temperature": 1.0 }'));
  });

  it("is a serialised copy with routing's model or a config's override_params; the client's object stays as it came", () => {
    const client = received();
    const renamed = upstreamBodyFor(client, { ...target(), model: 'gpt-4o-mini' });
    const overridden = upstreamBodyFor(client, { ...target(), overrideParams: { temperature: 0 } });
    expect(jsonPayload(renamed)).toBe('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi é"}],"temperature":1}');
    expect(jsonPayload(overridden)).toBe('{"model":"gpt-4o","messages":[{"role":"user","content":"hi é"}],"temperature":0}');
    expect(client).toMatchObject({ model: 'gpt-4o', temperature: 1 });
    expect(Buffer.isBuffer(jsonPayload(client))).toBe(true);
  });

  it('is serialised once a leaf has input guardrails (a redaction writes into it), on that leaf and every later one', async () => {
    const { executor } = setup();
    const pii = buildGuardrails([{ name: 'pii', deny: false, checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] }]);
    const context = contextFor(fallback([leaf('openai', { inputGuardrails: pii }), leaf('groq')]));
    const client = received();
    (client.messages as { content: string }[])[0].content = 'mail a@example.com';
    const payloads: (string | Buffer)[] = [];
    const send = jest.fn<ReturnType<AttemptSender>, Parameters<AttemptSender>>(async (_target, sent) => {
      payloads.push(jsonPayload(sent));
      if (payloads.length === 1) throw upstreamError(503);
      return json(chatOutcome('ok'));
    });

    await executor.execute(context, client, send, { texts: CHAT_TEXTS });

    expect(payloads).toHaveLength(2);
    for (const payload of payloads) expect(typeof payload).toBe('string');
    expect(payloads[0]).not.toContain('a@example.com');
  });
});
