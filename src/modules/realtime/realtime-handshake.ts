import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { RequestContext } from '../../context/request-context';
import { describeFailure, GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import { authenticate } from '../keys/authenticate';
import { routeRequest } from '../routing/provider-routing.guard';
import { routingHeaders } from '../routing/gateway-result';
import { traceIdFrom } from '../../common/ids';
import type { Environment } from '../../config/environment';
import type { ClientStreamLimits } from '../../common/http/client-stream';
import { ProviderRegistry } from '../../providers/registry';
import type { Guardrail } from '../../context/guardrail-records';
import { enforceGuardrails } from '../guardrails/guardrail-stage';
import { realtimeEventSlots } from '../guardrails/operation-texts';
import { KeyLookupService } from '../keys/key-lookup.service';
import { RequestLogger } from '../logging/request-logger';
import { RequestTracer } from '../telemetry/request-tracer';
import { RouteExecutor } from '../routing/route-executor';
import { RouteResolver } from '../routing/route-resolver';
import { EMPTY_OUTCOME, type Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { leavesOf } from '../routing/route-tree';
import { UpstreamClient } from '../upstream/upstream-client';
import { type ClientEventCheck, RealtimeSession } from './realtime-session';
import { openProviderSocket, type UpstreamSocket } from '../upstream/provider-socket';
import { roleMay } from '../workspaces/roles';

/** Browsers cannot set headers on a WebSocket: the key and the virtual key come as subprotocols. */
const PROTOCOL_HEADERS: [prefix: string, header: string][] = [
  ['gateway-key.', 'x-gateway-api-key'],
  ['gateway-virtual-key.', 'x-gateway-virtual-key'],
];

/** A handshake refused: the HTTP answer the client gets instead of a WebSocket. */
export class HandshakeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(`realtime handshake refused with ${status}`);
  }
}

/** The response headers of CONTRACT section 2 a realtime handshake answers with, refused or not. */
export function sessionHeaders(context: RequestContext): Record<string, string> {
  return { 'x-gateway-trace-id': context.traceId, 'x-gateway-request-id': context.requestId, ...routingHeaders(context) };
}

/**
 * The realtime handshake, before the client's connection is upgraded: the gateway key
 * (header or subprotocol), the `model` query, routing as for any request (the executor:
 * rate limits, budgets, retries and fallbacks while connecting), and the provider's
 * WebSocket opened. Only then is the client's upgraded, so a refusal is a plain HTTP
 * answer in the gateway's error shape (401, 400, 402, 429, or the provider's own).
 */
@Injectable()
export class RealtimeHandshake {
  private readonly timeoutMs: number;
  /** STREAM_CLIENT_BUFFER_BYTES and STREAM_CLIENT_IDLE_MS, for each session's client (CONTRACT section 15). */
  private readonly limits: ClientStreamLimits;

  constructor(
    private readonly keys: KeyLookupService,
    private readonly resolver: RouteResolver,
    private readonly executor: RouteExecutor,
    private readonly registry: ProviderRegistry,
    private readonly upstreamClient: UpstreamClient,
    private readonly requestLogger: RequestLogger,
    private readonly tracer: RequestTracer,
    config: ConfigService<Environment, true>,
  ) {
    this.timeoutMs = config.get('UPSTREAM_TIMEOUT_MS', { infer: true });
    this.limits = { bufferBytes: config.get('STREAM_CLIENT_BUFFER_BYTES', { infer: true }), idleMs: config.get('STREAM_CLIENT_IDLE_MS', { infer: true }) };
  }

  /** Resolves with the session (provider connected) or rejects with a HandshakeRefusal; either way the session's log row is taken care of. */
  async accept(req: IncomingMessage, sessionEnded: (session: RealtimeSession) => void): Promise<RealtimeSession> {
    const headers = effectiveHeaders(req.headers);
    const span = this.tracer.enabled ? this.tracer.begin(req.headers) : null;
    const context = new RequestContext(traceIdFrom(headers['x-gateway-trace-id'], span?.spanContext().traceId), redactProtocols(req.headers), span);
    context.operation = 'realtime';
    this.requestLogger.opened();
    let upstream: UpstreamSocket | null = null;
    try {
      const key = await authenticate(this.keys, headers, context);
      if (!roleMay(key.role, 'models.call'))
        throw GatewayError.permission(`This operation needs role owner, admin or member; the key's role is ${key.role}`, 'role_not_allowed');
      const model = new URL(req.url ?? '/', 'http://gateway').searchParams.get('model');
      if (!model) throw GatewayError.invalidRequest('The realtime session needs ?model=… in the URL', 'model');
      context.model = model;
      await routeRequest(this.resolver, context, headers, model);
      await this.executor.execute(
        context.begin({}), // the session logs its events and streams once it is open (RealtimeSession)
        { model },
        async (target) => {
          upstream = await this.connect(context, target, target.model ?? model, headers);
          // The handshake's answer; the session's own outcome is known when it ends (RealtimeSession).
          return { kind: 'json', status: 101, body: Buffer.alloc(0), outcome: EMPTY_OUTCOME };
        },
        { cacheable: false },
      );
    } catch (error) {
      context.noteFailure(error);
      this.requestLogger.sessionClosed(context, context.failure!.status);
      throw refusalOf(error, sessionHeaders(context));
    }
    const attempt = context.lastAttempt!;
    const leaf = leavesOf(context.route!.root).find((node) => node.path === attempt.targetIndex) ?? context.route!.root;
    const session: RealtimeSession = new RealtimeSession(
      context,
      attempt,
      upstream!,
      () => {
        sessionEnded(session);
        // 101, the session's answer; a failure the session noted (its client cut, or gone before the upgrade) is 499.
        this.requestLogger.sessionClosed(context, context.failure?.status ?? 101);
      },
      leaf.inputGuardrails.length ? (event) => checkRealtimeEvent(leaf.inputGuardrails, event, context, attempt) : null,
      this.limits,
    );
    return session;
  }

  /** Opens the provider's socket for `target`; its refusal becomes the gateway's (passed through like an HTTP error). */
  private connect(context: RequestContext, target: RouteTarget, model: string, headers: IncomingHttpHeaders): Promise<UpstreamSocket> {
    const capability = this.registry.get(target.provider).realtime;
    if (!capability) throw GatewayError.invalidRequest(`Provider ${target.provider} does not offer the realtime API`, 'model');
    if (target.allowedModels && !target.allowedModels.includes(model)) {
      throw GatewayError.permission(`Model '${model}' is not allowed for this virtual key`, 'model_not_allowed');
    }
    const { url, headers: upstreamHeaders } = capability.connection(target, model);
    const beta = headers['openai-beta'];
    if (typeof beta === 'string') upstreamHeaders['openai-beta'] = beta;
    return openProviderSocket(this.upstreamClient, context, target, url, upstreamHeaders, this.timeoutMs);
  }
}

/**
 * Input guardrails on a client event's text (`conversation.item.create`): a redaction is
 * forwarded in place of the event, a denial answered with an `error` event (the 446's
 * body as its `error`), other events pass as sent.
 */
async function checkRealtimeEvent(
  guardrails: Guardrail[],
  event: Record<string, unknown>,
  context: RequestContext,
  attempt: Attempt,
): ReturnType<ClientEventCheck> {
  const slots = realtimeEventSlots(event);
  if (!slots.length) return null;
  const before = slots.map((slot) => slot.text);
  try {
    await enforceGuardrails('input', guardrails, slots, { model: attempt.model, metadata: context.metadata }, attempt);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    const refusal = {
      type: 'error',
      event_id: `event_gateway_${context.requestId}`,
      error: { type: error.type, code: error.code, message: error.message, event_id: event.event_id ?? null, ...error.details },
    };
    return { refusal };
  }
  return slots.some((slot, i) => slot.text !== before[i]) ? { forward: event } : null;
}

/** The request's headers with the subprotocol-borne key and virtual key added (a header of the same name wins). */
function effectiveHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const effective = { ...headers };
  for (const protocol of protocolsOf(headers)) {
    for (const [prefix, header] of PROTOCOL_HEADERS) {
      if (protocol.startsWith(prefix) && effective[header] === undefined) effective[header] = protocol.slice(prefix.length);
    }
  }
  return effective;
}

function protocolsOf(headers: IncomingHttpHeaders): string[] {
  const value = headers['sec-websocket-protocol'];
  return typeof value === 'string' ? value.split(',').map((protocol) => protocol.trim()) : [];
}

/** The headers as logged: the gateway key inside the subprotocols is a secret too. */
function redactProtocols(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  if (headers['sec-websocket-protocol'] === undefined) return headers;
  const protocols = protocolsOf(headers).map((protocol) => (protocol.startsWith('gateway-key.') ? 'gateway-key.[REDACTED]' : protocol));
  return { ...headers, 'sec-websocket-protocol': protocols.join(', ') };
}

/** The HTTP answer for a failed handshake: the gateway's error shape, or the provider's own body. */
export function refusalOf(error: unknown, headers: Record<string, string>): HandshakeRefusal {
  if (error instanceof UpstreamHttpError)
    return new HandshakeRefusal(error.status, error.body.toString('utf8'), { ...headers, ...error.headers, 'Content-Type': error.contentType });
  const { status, error: described } = describeFailure(error);
  const gatewayError = error instanceof GatewayError ? error : null;
  const body = {
    error: { message: described.message, type: described.type, param: gatewayError?.param ?? null, code: described.code, ...gatewayError?.details },
  };
  return new HandshakeRefusal(status, JSON.stringify(body), { ...headers, ...gatewayError?.headers, 'Content-Type': 'application/json' });
}
