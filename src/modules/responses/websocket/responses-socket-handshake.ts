import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { IncomingMessage } from 'node:http';
import { RequestContext } from '../../../context/request-context';
import { describeFailure, GatewayError } from '../../../common/errors/gateway-error';
import { traceIdFrom } from '../../../common/ids';
import type { ClientStreamLimits } from '../../../common/http/client-stream';
import type { Environment } from '../../../config/environment';
import { EMPTY_OUTCOME } from '../../../context/attempt';
import { ProviderRegistry } from '../../../providers/registry';
import { BudgetLedger } from '../../budgets/budget-ledger';
import { RateLimiter } from '../../budgets/rate-limiter';
import { authenticate } from '../../keys/authenticate';
import { KeyLookupService } from '../../keys/key-lookup.service';
import { RequestLogger } from '../../logging/request-logger';
import { refusalOf, sessionHeaders } from '../../realtime/realtime-handshake';
import { routeRequest } from '../../routing/provider-routing.guard';
import { RouteExecutor } from '../../routing/route-executor';
import { RouteResolver } from '../../routing/route-resolver';
import { openProviderSocket, type UpstreamSocket } from '../../upstream/provider-socket';
import { UpstreamClient } from '../../upstream/upstream-client';
import { roleMay } from '../../workspaces/roles';
import { ResponsesSocketSession } from './responses-socket-session';

/** Refusals the client must see as they are; any other means "use HTTP" (426). */
const KEPT_STATUSES = new Set([401, 402, 403, 429]);

/**
 * The handshake of `GET /v1/responses` upgraded to a WebSocket (CONTRACT section 16), before
 * the client's connection is upgraded: the gateway key, routing as for any request (the
 * model may come as `?model=`; without it the key's default route or the headers decide),
 * and the provider's socket opened for a target with the Responses API's WebSocket mode
 * (OpenAI). Any other target, or a route that cannot be chosen without the body, is a 426
 * JSON error: clients (Codex) then fall back to HTTP at once, where every provider is
 * served. The key's own refusals (401, 403) and its spent limits (402, 429) stay as they are.
 * The handshake writes no row: each response on the socket writes its own.
 */
@Injectable()
export class ResponsesSocketHandshake {
  private readonly timeoutMs: number;
  private readonly limits: ClientStreamLimits;

  constructor(
    private readonly keys: KeyLookupService,
    private readonly resolver: RouteResolver,
    private readonly executor: RouteExecutor,
    private readonly registry: ProviderRegistry,
    private readonly upstreamClient: UpstreamClient,
    private readonly requestLogger: RequestLogger,
    private readonly budgets: BudgetLedger,
    private readonly rateLimiter: RateLimiter,
    config: ConfigService<Environment, true>,
  ) {
    this.timeoutMs = config.get('UPSTREAM_TIMEOUT_MS', { infer: true });
    this.limits = { bufferBytes: config.get('STREAM_CLIENT_BUFFER_BYTES', { infer: true }), idleMs: config.get('STREAM_CLIENT_IDLE_MS', { infer: true }) };
  }

  async accept(req: IncomingMessage, sessionEnded: (session: ResponsesSocketSession) => void): Promise<ResponsesSocketSession> {
    const headers = req.headers;
    const context = new RequestContext(traceIdFrom(headers['x-gateway-trace-id']), headers);
    context.operation = 'responses';
    let upstream: UpstreamSocket | null = null;
    try {
      const key = await authenticate(this.keys, headers, context);
      if (!roleMay(key.role, 'models.call'))
        throw GatewayError.permission(`This operation needs role owner, admin or member; the key's role is ${key.role}`, 'role_not_allowed');
      const model = new URL(req.url ?? '/', 'http://gateway').searchParams.get('model') ?? undefined;
      await routeRequest(this.resolver, context, headers, model);
      await this.executor.execute(
        context.begin({}),
        model ? { model } : {},
        async (target) => {
          const capability = this.registry.get(target.provider).responsesSocket;
          if (!capability) throw upgradeRequired(`provider ${target.provider} has no WebSocket mode for the Responses API`);
          const { url, headers: upstreamHeaders } = capability.connection(target);
          const beta = headers['openai-beta'];
          if (typeof beta === 'string') upstreamHeaders['openai-beta'] = beta;
          upstream = await openProviderSocket(this.upstreamClient, context, target, url, upstreamHeaders, this.timeoutMs);
          return { kind: 'json', status: 101, body: Buffer.alloc(0), outcome: EMPTY_OUTCOME };
        },
        // Each response is budgeted and counted on its own (the session's gate); the handshake asks nothing of the model.
        { cacheable: false, metered: false },
      );
    } catch (error) {
      const status = describeFailure(error).status;
      const refusal = KEPT_STATUSES.has(status) ? error : upgradeRequired(describeFailure(error).error.message);
      throw refusalOf(refusal, sessionHeaders(context));
    }
    const target = context.lastAttempt!.target;
    const gate = {
      admit: async (response: RequestContext, body: Record<string, unknown>) => {
        await this.rateLimiter.admit(response, target);
        await this.budgets.reserve(response, target, body);
      },
      opened: () => this.requestLogger.opened(),
      logged: (response: RequestContext, status: number) => this.requestLogger.sessionClosed(response, status),
    };
    const session: ResponsesSocketSession = new ResponsesSocketSession(
      context,
      context.lastAttempt!,
      upstream!,
      gate,
      () => sessionEnded(session),
      this.limits,
    );
    return session;
  }
}

/** The 426 that sends a client back to HTTP (`POST /v1/responses`), saying why. */
function upgradeRequired(why: string): GatewayError {
  return new GatewayError(
    426,
    'invalid_request_error',
    `The Responses API over WebSocket is relayed to providers with a WebSocket mode (OpenAI) only, and ${why}: send the request over HTTP (POST /v1/responses)`,
    'websocket_not_supported',
  );
}
