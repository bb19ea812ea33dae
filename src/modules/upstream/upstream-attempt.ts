import { Injectable } from '@nestjs/common';
import { pipeline, Transform } from 'node:stream';
import { ConfigService } from '@nestjs/config';
import type { RequestContext } from '../../context/request-context';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../routing/gateway-result';
import type { Environment } from '../../config/environment';
import type { JsonOperationCapability, ProviderOperation, ProviderOperations, ResourceOperation, UpstreamRequest } from '../../providers/provider-adapter';
import { ProviderRegistry } from '../../providers/registry';
import type { NormalizedUsage } from '../../providers/usage';
import type { AnswerOutcome, Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { MetricsService } from '../metrics/metrics.service';
import { Readiness } from '../health/readiness';
import { isEventStream } from './aws-event-stream';
import { relayUpstreamSse, type SseStreamHandler } from './sse-relay';
import { UpstreamClient, UpstreamResponse } from './upstream-client';
import { CredentialScrubber } from './credential-scrubber';

/** The capabilities that build a request from a body (all but the REST resources and the realtime socket). */
export type BodyOperation = Exclude<ProviderOperation, ResourceOperation | 'anthropicModels' | 'geminiModels' | 'realtime' | 'responsesSocket'>;

const NEVER_ABORTED = new AbortController().signal;

/**
 * Upstream requests of one fanned-out client request in flight at once (Titan: one per
 * input): enough to answer a batch of dozens in a few round trips, few enough not to trip
 * the account's request-rate quota on one client's behalf.
 */
const FAN_OUT_CONCURRENCY = 8;

/** What the shared attempt steps need to know of an operation. */
export interface OperationSpec<K extends ProviderOperation = BodyOperation> {
  /** The adapter capability that builds its request. */
  capability: K;
  /** Its name in the 400 for a provider without it: "Provider groq does not offer embeddings". */
  title: string;
  /** The provider's `usage` object in normalised form. */
  usage(usage: Record<string, any> | undefined): NormalizedUsage | null;
  /** Where the answer outside `usage` counts billed units too (Responses: its web_search_call items): the usage of the whole answer, used instead of `usage`. */
  answerUsage?(answer: Record<string, any>): NormalizedUsage | null;
  /** For an answer without usage that is priced otherwise (DALL·E: per image): its cost in USD, or null. */
  cost?(answer: Record<string, any>, priced: { provider: string; model: string | null; requestBody: unknown }): number | null;
  /**
   * The answer in the operation's own shape, whatever the provider (rerank: sorted, `object: "list"`),
   * from the provider's JSON (already translated by the capability's `translation`) and the body as sent.
   */
  answer?(answer: Record<string, any>, body: Record<string, unknown>): Record<string, unknown>;
}

/** What aborts a provider request: the client's request (its context), or a background job's own controller. */
export type AbortedBy = Pick<RequestContext, 'abort'>;

/** An answer's usage in normalised form, as the operation maps it (its `answerUsage` when the whole answer counts). */
export function usageOfAnswer(operation: Pick<OperationSpec, 'usage' | 'answerUsage'>, json: Record<string, unknown> | null): NormalizedUsage | null {
  return operation.answerUsage && json ? operation.answerUsage(json) : operation.usage(json?.usage as Record<string, unknown> | undefined);
}

/** A sent attempt whose provider answered 2xx; its body is still unread. */
export interface SentAttempt {
  response: UpstreamResponse;
  timeoutMs: number;
  /** Hides the credentials this attempt sent from its answer: every read of the body goes through it. */
  scrubber: CredentialScrubber;
}

/**
 * The steps every operation's attempt shares (the executor calls the attempt once per
 * target and retry): pick the adapter's capability, send, turn an error answer into
 * UpstreamHttpError, and for JSON answers pass the provider's bytes through with the
 * parsed object, usage and served model as the result's outcome; relay a stream.
 */
@Injectable()
export class UpstreamAttempt {
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly upstream: UpstreamClient,
    private readonly metrics: MetricsService,
    private readonly readiness: Readiness,
    config: ConfigService<Environment, true>,
  ) {
    this.defaultTimeoutMs = config.get('UPSTREAM_TIMEOUT_MS', { infer: true });
  }

  /** The whole attempt of an operation whose answer is one JSON body (several requests when the capability fans out). */
  async json(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Record<string, unknown>, operation: OperationSpec): Promise<GatewayResult> {
    const capability = this.capability(target, operation) as JsonOperationCapability;
    const translation = capability.translation;
    const parts = capability.fanOut?.split(body) ?? null;
    if (parts && capability.fanOut) return this.jsonFanOut(context, attempt, target, body, parts, capability, operation);
    const sent = await this.sendJsonOperation(context, attempt, target, body, operation, translation);
    if (!translation && !operation.answer) return this.readJson(context, attempt, sent, operation);
    return this.readJson(context, attempt, sent, operation, (json) => {
      const translated = translation ? translation.toAnswer(json, body, sent.response.headers) : json;
      return operation.answer ? operation.answer(translated, body) : translated;
    });
  }

  /** `send`, a translated vendor's error answer in OpenAI's shape (status and headers kept). */
  private async sendJsonOperation(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    body: Record<string, unknown>,
    operation: OperationSpec,
    translation: JsonOperationCapability['translation'],
  ): Promise<SentAttempt> {
    try {
      return await this.send(context, attempt, target, body, operation);
    } catch (error) {
      if (!(error instanceof UpstreamHttpError) || !translation) throw error;
      const openAIError = translation.toOpenAIError(error.status, error.parsedBody(), error.headers);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(openAIError)), 'application/json', error.headers);
    }
  }

  /**
   * One client request as several upstream requests (see JsonFanOut), at most
   * FAN_OUT_CONCURRENCY in flight: each part is built, signed, sent and read whole. The
   * first failure fails the attempt with its error (as a single request's would, so retries
   * and fallbacks apply to the whole) and no further part is sent; parts already in flight
   * finish and are dropped. The merged answer is logged once, its usage summed by `merge`.
   */
  private async jsonFanOut(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    body: Record<string, unknown>,
    parts: Record<string, unknown>[],
    capability: JsonOperationCapability,
    operation: OperationSpec,
  ): Promise<GatewayResult> {
    const translation = capability.translation;
    const answers: Record<string, any>[] = new Array(parts.length);
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (!failed && next < parts.length) {
        const index = next++;
        try {
          const sent = await this.sendJsonOperation(context, attempt, target, parts[index], operation, translation);
          const { json } = await this.readJsonObject(context, sent);
          answers[index] = translation ? translation.toAnswer(json, parts[index], sent.response.headers) : json;
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FAN_OUT_CONCURRENCY, parts.length) }, worker));
    const merged = capability.fanOut!.merge(answers, body);
    const json = operation.answer ? operation.answer(merged, body) : merged;
    return { kind: 'json', status: 200, body: Buffer.from(JSON.stringify(json)), outcome: this.jsonOutcome(context, attempt, json, operation) };
  }

  /**
   * Sends `body` to `target`: 400 when the provider lacks the operation, 403 for a model
   * the virtual key does not allow, UpstreamHttpError for a provider's error answer.
   * `headers` are the request headers the operation passes on (see RequestBuilder).
   */
  async send(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    body: Record<string, unknown>,
    operation: OperationSpec,
    headers?: Record<string, string>,
  ): Promise<SentAttempt> {
    const builder = this.capability(target, operation);
    const model = String(body.model);
    if (target.allowedModels && !target.allowedModels.includes(model)) {
      throw GatewayError.permission(`Model '${model}' is not allowed for this virtual key`, 'model_not_allowed');
    }
    attempt.model = model;
    const request = builder.buildRequest(body, await this.authorized(target), headers);
    attempt.noteIgnoredParams(request.ignoredParams);
    return this.sendRequest(context, target, request);
  }

  /** The target to build a request with: after the adapter's `authorize` step (a minted access token), where it has one. */
  async authorized(target: RouteTarget): Promise<RouteTarget> {
    const adapter = this.registry.get(target.provider);
    return adapter.authorize ? adapter.authorize(target, (request) => this.fetchCredential(target, request)) : target;
  }

  /**
   * A token request of an adapter's `authorize`, through the same client and host policy
   * as the target's own requests. It is not aborted with the client that happened to
   * start it: concurrent requests wait on the same refresh.
   */
  private async fetchCredential(target: RouteTarget, request: UpstreamRequest): Promise<{ status: number; body: Buffer }> {
    const timeoutMs = target.requestTimeoutMs ?? this.defaultTimeoutMs;
    const response = await this.upstream.send(request, { signal: NEVER_ABORTED, timeoutMs, privateNetworkAllowed: target.privateNetworkAllowed });
    return { status: response.status, body: await this.upstream.readBody(response, timeoutMs, NEVER_ABORTED) };
  }

  /** The adapter's capability for an operation; 400 naming the provider when it lacks it. */
  capability<K extends ProviderOperation>(target: RouteTarget, operation: { capability: K; title: string }): NonNullable<ProviderOperations[K]> {
    const builder = this.registry.get(target.provider)[operation.capability];
    if (!builder) throw GatewayError.invalidRequest(`Provider ${target.provider} does not offer ${operation.title}`, 'model');
    return builder;
  }

  /**
   * Sends a request an adapter built; a provider's error answer becomes UpstreamHttpError.
   * `caller` is the request it is sent for, or whatever else aborts it (a background job's own controller).
   */
  async sendRequest(caller: AbortedBy, target: RouteTarget, unsigned: UpstreamRequest): Promise<SentAttempt> {
    const sign = this.registry.get(target.provider).signRequest;
    const request = sign ? await sign(unsigned, target) : unsigned;
    const scrubber = CredentialScrubber.of(request, target);
    const timeoutMs = target.requestTimeoutMs ?? this.defaultTimeoutMs;
    const signal = caller.abort.signal;
    const sentAt = performance.now();
    const response = await this.upstream
      .send(request, { signal, timeoutMs, privateNetworkAllowed: target.privateNetworkAllowed, provider: target.provider })
      .catch((error: unknown) => {
        this.metrics.observeUpstream(target.provider, 'failed', (performance.now() - sentAt) / 1000);
        throw error;
      });
    this.metrics.observeUpstream(target.provider, response.status, (performance.now() - sentAt) / 1000);
    if (response.status >= 400) {
      const raw = scrubber.bytes(await this.upstream.readBody(response, timeoutMs, signal));
      const contentType = String(response.headers['content-type'] ?? '') || 'application/json';
      throw new UpstreamHttpError(response.status, raw, contentType, scrubber.headers(passThroughHeaders(response.headers)));
    }
    return { response, timeoutMs, scrubber };
  }

  /** A whole answer's bytes, the credentials sent hidden (see CredentialScrubber). */
  async readBody(caller: AbortedBy, { response, timeoutMs, scrubber }: SentAttempt): Promise<Buffer> {
    return scrubber.bytes(await this.upstream.readBody(response, timeoutMs, caller.abort.signal));
  }

  /** Reads a JSON answer whole and parses it; a body that is not JSON is a 502 (and can fall back). */
  async readJsonObject(caller: AbortedBy, sent: SentAttempt): Promise<{ raw: Buffer; json: Record<string, any> }> {
    const { response } = sent;
    const raw = await this.readBody(caller, sent);
    let json: Record<string, any>;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw GatewayError.upstreamMalformed(`The provider answered ${response.status} with a body that is not JSON`);
    }
    // Some servers answer 200 with nothing but an error envelope: that is a failure, not an answer.
    const inner = json?.error;
    if (inner && typeof inner === 'object' && json.object === undefined && json.id === undefined) {
      const message = typeof inner.message === 'string' ? inner.message : JSON.stringify(inner).slice(0, 500);
      throw GatewayError.upstreamMalformed(`The provider answered ${response.status} with an error inside: ${message}`);
    }
    return { raw, json };
  }

  /**
   * Reads a JSON answer and passes its bytes through, with the object, usage and served
   * model as its outcome; with `reshape` (a translated vendor, an operation's own shape)
   * the reshaped object is written instead.
   */
  async readJson(
    context: RequestContext,
    attempt: Attempt,
    answer: SentAttempt,
    operation: Pick<OperationSpec, 'usage' | 'answerUsage' | 'cost'>,
    reshape?: (json: Record<string, any>) => Record<string, any>,
  ): Promise<GatewayResult> {
    const read = await this.readJsonObject(context, answer);
    const json = reshape ? reshape(read.json) : read.json;
    const raw = reshape ? Buffer.from(JSON.stringify(json)) : read.raw;
    return { kind: 'json', status: answer.response.status, body: raw, outcome: this.jsonOutcome(context, attempt, json, operation) };
  }

  /**
   * A sent attempt's answer: relayed event by event through `handler` when the client
   * asked for a stream and the provider answered with events (SSE or AWS's event stream),
   * else read as JSON (a provider may answer a stream request with one JSON error-free body).
   */
  async answer(
    context: RequestContext,
    attempt: Attempt,
    answer: SentAttempt,
    operation: Pick<OperationSpec, 'usage' | 'answerUsage' | 'cost'>,
    handler: () => SseStreamHandler,
  ): Promise<GatewayResult> {
    if (context.isStream && isEventStream(String(answer.response.headers['content-type'] ?? ''))) return this.stream(context, answer, handler());
    return this.readJson(context, attempt, answer, operation);
  }

  /** A provider's event stream relayed to the client through `handler` (see relayUpstreamSse). */
  async stream(context: RequestContext, answer: SentAttempt, handler: SseStreamHandler): Promise<GatewayResult> {
    const { frames, outcome, flow } = await relayUpstreamSse(answer.response, context, answer.timeoutMs, answer.scrubber.stream(handler), this.readiness);
    return { kind: 'sse', status: answer.response.status, frames, outcome, flow };
  }

  /** A JSON answer's outcome: the object, its usage (or the cost the operation prices itself) and served model. */
  private jsonOutcome(
    context: RequestContext,
    attempt: Attempt,
    json: Record<string, any>,
    operation: Pick<OperationSpec, 'usage' | 'answerUsage' | 'cost'>,
  ): AnswerOutcome {
    const usage = usageOfAnswer(operation, json);
    const servedModel = typeof json?.model === 'string' ? json.model : null;
    const costUsd =
      !usage && operation.cost
        ? operation.cost(json, { provider: attempt.provider, model: servedModel ?? attempt.model, requestBody: context.requestBody })
        : null;
    return { responseBody: json, usage, servedModel, costUsd };
  }
}

/**
 * A binary answer (audio, a file's content) streamed to the client as it arrives, never
 * held whole; the log keeps `{type, content_type, bytes}`, counted on the way through.
 */
export function binaryResult({ response }: SentAttempt, type: 'audio' | 'file', usage: NormalizedUsage | null = null): GatewayResult {
  const contentType = String(response.headers['content-type'] ?? 'application/octet-stream');
  const logged = { type, content_type: contentType, bytes: 0 };
  let settle!: (outcome: AnswerOutcome) => void;
  const outcome = new Promise<AnswerOutcome>((resolve) => (settle = resolve));
  // The body timer covers a stall between chunks; the headers are in.
  response.clearTimeout();
  // Counted in a transform (a 'data' listener would start the flow before the client's pipe is there).
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      logged.bytes += chunk.length;
      done(null, chunk);
    },
  });
  // Settled however the body ends (done, broken, the client gone): the bytes that went through.
  const body = pipeline(response.body, counted, () => settle({ responseBody: logged, usage, servedModel: null }));
  return { kind: 'binary', status: response.status, contentType, body, outcome };
}

/** A provider's rate-limit hints go back to the client with its error, and AWS's name of the error (`x-amzn-errortype`). */
function passThroughHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['retry-after', 'retry-after-ms', 'x-amzn-errortype']) {
    const value = headers[name];
    if (value !== undefined) kept[name] = String(value);
  }
  return kept;
}
