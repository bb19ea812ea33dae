import type { RawData, WebSocket } from 'ws';
import type { RequestContext } from '../../../context/request-context';
import { Attempt } from '../../../context/attempt';
import { ClientClosedRequestError, describeFailure, GatewayError, type LoggedError } from '../../../common/errors/gateway-error';
import { type ClientStreamLimits, IdleWatch } from '../../../common/http/client-stream';
import { closeWithin, parseEvent, Relay, sendableCode } from '../../../common/http/socket-relay';
import { usageFromOpenAIResponse } from '../../../providers/openai-usage';
import type { EarlyMessage, UpstreamSocket } from '../../upstream/provider-socket';

/** The events that end a response of the Responses API (its stream's last). */
const RESPONSE_ENDS = new Set(['response.completed', 'response.failed', 'response.incomplete', 'response.cancelled']);

/** What the session needs of the gateway for each response: admission (rate limits, budgets) and its log row. */
export interface ResponseGate {
  /** A response begins (the gateway counts open requests until their rows are written). */
  opened(): void;
  /** Rate limits and budget reservations of one response; throws a GatewayError (429, 402) to refuse it. */
  admit(context: RequestContext, body: Record<string, unknown>): Promise<void>;
  /** Writes the response's row. */
  logged(context: RequestContext, status: number): void;
}

/** One response asked for on the socket, until its stream's last event. */
interface OpenResponse {
  context: RequestContext;
  attempt: Attempt;
  ttftMs: number | null;
}

/**
 * A Responses API WebSocket (OpenAI's "WebSocket mode", Codex's `supports_websockets`): the
 * client's socket and the provider's, relayed both ways in order with backpressure (Relay),
 * as a realtime session is. Unlike a realtime session, each `response.create` is a request of
 * its own: it passes the key's rate limits and budgets before it goes upstream (refused: an
 * `error` event, and the socket stays open), and it is logged as one row (operation
 * `responses`, a stream) when its last event (`response.completed`, `.failed`,
 * `.incomplete`, or an `error`) comes back, with the response and its usage, priced. The
 * provider answers one response at a time, in order: the open ones are a queue.
 */
export class ResponsesSocketSession {
  private client: WebSocket | null = null;
  private toClient: Relay | null = null;
  private toUpstream: Relay | null = null;
  private readonly upstream: WebSocket;
  private readonly early: EarlyMessage[];
  private readonly scrubber: UpstreamSocket['scrubber'];
  /** Responses sent upstream whose last event has not come back, oldest first. */
  private readonly open: OpenResponse[] = [];
  /** Client events are admitted one at a time, in order. */
  private admitting: Promise<void> = Promise.resolve();
  private ended = false;
  private closeError: LoggedError | null = null;

  constructor(
    /** The handshake's context: the caller, route and trace every response inherits. */
    readonly context: RequestContext,
    /** The handshake's attempt: the target every response goes to. */
    private readonly handshake: Attempt,
    provider: UpstreamSocket,
    private readonly gate: ResponseGate,
    private readonly onEnd: () => void,
    private readonly limits: ClientStreamLimits,
  ) {
    this.upstream = provider.socket;
    this.scrubber = provider.scrubber;
    this.early = provider.early;
    provider.stopHolding();
    this.upstream.on('message', (data, isBinary) => (this.client ? this.fromUpstream(data, isBinary) : this.early.push({ data, isBinary })));
    this.upstream.once('close', (code, reason) => this.upstreamClosed(code, reason.toString()));
    this.upstream.on('error', () => undefined); // followed by 'close'
  }

  attach(client: WebSocket): void {
    this.client = client;
    this.toClient = new Relay(client, this.upstream, this.limits.bufferBytes, new IdleWatch(this.limits.idleMs, () => this.toClient!.taken, this.clientIdle));
    this.toUpstream = new Relay(this.upstream, client, this.limits.bufferBytes, null);
    client.on('message', (data, isBinary) => this.fromClient(data, isBinary));
    client.once('close', (code, reason) => this.clientClosed(code, reason.toString()));
    client.on('error', () => undefined); // followed by 'close'
    for (const { data, isBinary } of this.early.splice(0)) this.fromUpstream(data, isBinary);
    if (this.upstream.readyState !== this.upstream.OPEN) this.upstreamClosed(1011, 'The provider closed the socket');
  }

  /** The client left during the handshake: the provider's socket is closed, nothing was asked. */
  abandon(): void {
    closeWithin(this.upstream, 1001, 'The client left');
    this.finish();
  }

  goAway(): void {
    this.client?.close(1001, 'Gateway shutting down');
    this.upstream.close(1001, 'Gateway shutting down');
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    const event = isBinary ? null : parseEvent(data);
    const toUpstream = this.toUpstream!;
    if (event?.type !== 'response.create') {
      // Anything else (a cancel, an event the gateway does not know) goes as sent, after the responses before it.
      this.admitting = this.admitting.then(() => toUpstream.send(data, isBinary));
      return;
    }
    const { type: _type, ...body } = event;
    const context = this.context.child();
    context.begin({ body, stream: true, user: typeof body.user === 'string' && body.user ? body.user : null });
    if (typeof body.model === 'string') context.model = body.model;
    const attempt = new Attempt(this.handshake.target, this.handshake.targetIndex, 0);
    attempt.model = context.model;
    context.attempts.push(attempt);
    this.gate.opened();
    const size = data instanceof Buffer ? data.length : 0;
    toUpstream.hold(size);
    this.admitting = this.admitting
      .then(() => this.gate.admit(context, body))
      .then(
        () => {
          attempt.sent = true;
          this.open.push({ context, attempt, ttftMs: null });
          toUpstream.send(data, isBinary);
        },
        (error: unknown) => this.refuse(context, attempt, error),
      )
      .finally(() => toUpstream.release(size));
  }

  /** A response the gateway refused (rate limit, budget): an `error` event, its row, and the socket stays open. */
  private refuse(context: RequestContext, attempt: Attempt, error: unknown): void {
    attempt.fail(error);
    const { status, error: described } = describeFailure(error);
    const details = error instanceof GatewayError ? error.details : {};
    const event = { type: 'error', status, error: { type: described.type, code: described.code, message: described.message, param: null, ...details } };
    this.toClient!.send(Buffer.from(JSON.stringify(event)), false);
    this.gate.logged(context, status);
  }

  private fromUpstream(received: RawData, isBinary: boolean): void {
    const data = isBinary ? received : this.scrubber.bytes(received as Buffer);
    const event = isBinary ? null : parseEvent(data);
    const current = this.open[0];
    if (event && current) {
      if (current.ttftMs === null && typeof event.type === 'string' && event.type.endsWith('.delta')) current.ttftMs = current.context.elapsedMs();
      if (typeof event.type === 'string' && RESPONSE_ENDS.has(event.type)) this.responseEnded(event.response);
      else if (event.type === 'error') this.responseFailed(event);
    }
    this.toClient!.send(data, isBinary);
  }

  /** The response's last event: its row, with the response, its usage and the model that served it. */
  private responseEnded(response: unknown): void {
    const { context, attempt, ttftMs } = this.open.shift()!;
    const answer = typeof response === 'object' && response !== null ? (response as Record<string, unknown>) : {};
    const error = answer.status === 'failed' ? responseError(answer.error) : null;
    attempt.answered(200, {
      responseBody: answer,
      usage: usageFromOpenAIResponse(answer),
      servedModel: typeof answer.model === 'string' ? answer.model : null,
      ttftMs,
      error,
    });
    this.gate.logged(context, 200);
  }

  /** The provider's `error` event ends the response it answers (OpenAI sends one for a request it refuses). */
  private responseFailed(event: Record<string, unknown>): void {
    const { context, attempt } = this.open.shift()!;
    const inner = typeof event.error === 'object' && event.error !== null ? (event.error as Record<string, unknown>) : {};
    const status = typeof event.status === 'number' && event.status >= 400 && event.status <= 599 ? event.status : 502;
    attempt.answered(status, { responseBody: event, usage: null, servedModel: null, error: responseError(inner) });
    this.gate.logged(context, status);
  }

  /** The client is behind and took nothing for STREAM_CLIENT_IDLE_MS: closed; its open responses are logged 499. */
  private readonly clientIdle = () => {
    if (this.ended) return;
    this.closeError = { type: 'client_closed', code: 'client_idle', message: `The client read nothing for ${this.limits.idleMs} ms (STREAM_CLIENT_IDLE_MS)` };
    closeWithin(this.client!, 1008, `The client read nothing for ${this.limits.idleMs} ms`);
  };

  private clientClosed(code: number, reason: string): void {
    closeWithin(this.upstream, sendableCode(code, 1000), reason);
    if (this.client) this.finish();
  }

  private upstreamClosed(code: number, reason: string): void {
    if (code !== 1000 && code !== 1001) {
      this.closeError ??= { type: 'upstream_error', code: 'socket_closed', message: `The provider closed the socket (${code}${reason ? ` ${reason}` : ''})` };
    }
    if (this.client) {
      closeWithin(this.client, sendableCode(code, 1011), reason);
      this.finish();
    }
  }

  /** The socket is over: responses still open are logged (499 when the client left, 502 when the provider did). */
  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.toClient?.stop();
    for (const { context, attempt } of this.open.splice(0)) {
      const providerLeft = this.closeError?.type === 'upstream_error';
      const failure = providerLeft ? GatewayError.upstreamUnreachable(this.closeError!.message) : new ClientClosedRequestError(this.closeError?.message);
      attempt.fail(failure);
      context.noteFailure(failure);
      this.gate.logged(context, providerLeft ? 502 : 499);
    }
    this.onEnd();
  }
}

/** A response's or an error event's `error` as the log keeps it. */
function responseError(error: unknown): LoggedError {
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  return {
    type: typeof fields.type === 'string' ? fields.type : 'upstream_error',
    code: typeof fields.code === 'string' ? fields.code : null,
    message: typeof fields.message === 'string' ? fields.message : 'The provider reported an error',
  };
}
