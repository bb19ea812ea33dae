import type { RawData, WebSocket } from 'ws';
import type { RequestContext } from '../../context/request-context';
import { ClientClosedRequestError, type LoggedError } from '../../common/errors/gateway-error';
import { type ClientStreamLimits, IdleWatch } from '../../common/http/client-stream';
import { byteLength, closeWithin, parseEvent, Relay, sendableCode } from '../../common/http/socket-relay';
import type { NormalizedUsage } from '../../providers/usage';
import type { Attempt } from '../../context/attempt';
import type { CredentialScrubber } from '../upstream/credential-scrubber';
import type { EarlyMessage, UpstreamSocket } from '../upstream/provider-socket';
import { addUsage, MAX_LOGGED_EVENTS, summariseEvent, usageOfResponseDone } from './realtime-events';

/** Events of one direction, as the log keeps them. */
interface EventLog {
  events: Record<string, unknown>[];
  /** Events past MAX_LOGGED_EVENTS, counted, not kept. */
  omitted: number;
}

/**
 * A check on a client event before it goes upstream (input guardrails): null lets it
 * through as sent, `forward` sends a changed event instead (redacted), `refusal` keeps it
 * from the provider and answers the client with that event.
 */
export type ClientEventCheck = (event: Record<string, unknown>) => Promise<{ refusal?: Record<string, unknown>; forward?: Record<string, unknown> } | null>;

/**
 * One realtime session: the client's WebSocket and the provider's, relayed both ways
 * in order, with backpressure (a side that cannot keep up pauses the other, Relay) and,
 * as for streams over HTTP (CONTRACT section 15), a client that is behind and takes
 * nothing for STREAM_CLIENT_IDLE_MS closed (1008) and the session logged 499. Every event
 * is noted for the log (audio summarised), the usage of each `response.done` summed; when
 * either side closes, the other is closed with the same code and the session's one log
 * row is written (`onEnd`).
 */
export class RealtimeSession {
  private client: WebSocket | null = null;
  /** The two directions, once the client is attached. */
  private toClient: Relay | null = null;
  private toUpstream: Relay | null = null;
  /** Provider events that arrived before the client's socket was handed over. */
  private readonly early: EarlyMessage[];
  private readonly upstream: WebSocket;
  private readonly scrubber: CredentialScrubber;
  private readonly sent: EventLog = { events: [], omitted: 0 };
  private readonly received: EventLog = { events: [], omitted: 0 };
  private ended = false;
  private usage: NormalizedUsage | null = null;
  private ttftMs: number | null = null;
  private error: LoggedError | null = null;
  /** Client events are checked one at a time, in order, when a check is set. */
  private checking: Promise<void> = Promise.resolve();

  constructor(
    readonly context: RequestContext,
    /** The attempt that opened the session: the session's outcome goes on it when it ends. */
    private readonly attempt: Attempt,
    provider: UpstreamSocket,
    private readonly onEnd: (context: RequestContext) => void,
    private readonly checkClientEvent: ClientEventCheck | null,
    private readonly limits: ClientStreamLimits,
  ) {
    context.begin({ stream: true });
    context.logRequestAs({ model: attempt.model, events: this.sent.events });
    const upstream = (this.upstream = provider.socket);
    this.scrubber = provider.scrubber;
    this.early = provider.early;
    provider.stopHolding();
    upstream.on('message', (data, isBinary) => (this.client ? this.fromUpstream(data, isBinary) : this.early.push({ data, isBinary })));
    upstream.once('close', (code, reason) => this.upstreamClosed(code, reason.toString()));
    upstream.on('error', () => undefined); // followed by 'close'
  }

  /** The client's socket, once the handshake has completed: relaying starts. */
  attach(client: WebSocket): void {
    this.client = client;
    this.toClient = new Relay(client, this.upstream, this.limits.bufferBytes, new IdleWatch(this.limits.idleMs, () => this.toClient!.taken, this.clientIdle));
    this.toUpstream = new Relay(this.upstream, client, this.limits.bufferBytes, null);
    client.on('message', (data, isBinary) => this.fromClient(data, isBinary));
    client.once('close', (code, reason) => this.clientClosed(code, reason.toString()));
    client.on('error', () => undefined); // followed by 'close'
    for (const { data, isBinary } of this.early.splice(0)) this.fromUpstream(data, isBinary);
    if (this.upstream.readyState !== this.upstream.OPEN) this.upstreamClosed(1011, 'The provider closed the session');
  }

  /**
   * The client's connection was gone before its upgrade completed (it left during the
   * handshake): it will never be attached, so the provider's socket is closed here and
   * the session logged 499.
   */
  abandon(): void {
    this.context.noteFailure(new ClientClosedRequestError('The client left before the realtime session opened'));
    closeWithin(this.upstream, 1001, 'The client left');
    this.finish();
  }

  /** Shutdown: both sides told the gateway is going away. */
  goAway(): void {
    this.client?.close(1001, 'Gateway shutting down');
    this.upstream.close(1001, 'Gateway shutting down');
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    const event = isBinary ? null : parseEvent(data);
    const toUpstream = this.toUpstream!;
    if (!this.checkClientEvent || !event) {
      if (event) note(this.sent, event);
      return toUpstream.send(data, isBinary);
    }
    // Checked in order: a later event never overtakes one still being checked. The log keeps
    // the event as checked (a redaction is what was sent, and what is kept). Events waiting
    // for their check count as waiting to go upstream: a client that sends faster than its
    // events are checked is paused like one the provider does not keep up with.
    const size = byteLength(data);
    toUpstream.hold(size);
    this.checking = this.checking.then(async () => {
      const verdict = await this.checkClientEvent!(event).finally(() => {
        note(this.sent, event);
        toUpstream.release(size);
      });
      if (verdict?.forward) return toUpstream.send(Buffer.from(JSON.stringify(verdict.forward)), false);
      if (!verdict?.refusal) return toUpstream.send(data, isBinary);
      // Refused: the provider never sees it; the client gets an `error` event saying why.
      this.refuse(verdict.refusal);
    });
    // A check that broke refuses its event (fails closed) and leaves the chain usable for the next ones.
    this.checking = this.checking.catch(() =>
      this.refuse({
        type: 'error',
        error: {
          type: 'api_error',
          code: 'guardrail_error',
          message: 'The gateway could not check this event; it was not sent',
          event_id: event.event_id ?? null,
        },
      }),
    );
  }

  private refuse(refusal: Record<string, unknown>): void {
    note(this.received, refusal);
    this.toClient!.send(Buffer.from(JSON.stringify(refusal)), false);
  }

  private fromUpstream(received: RawData, isBinary: boolean): void {
    const data = isBinary ? received : this.scrubber.bytes(received as Buffer);
    const event = isBinary ? null : parseEvent(data);
    if (event) {
      note(this.received, event);
      if (this.ttftMs === null && typeof event.type === 'string' && event.type.endsWith('.delta')) this.ttftMs = this.context.elapsedMs();
      if (event.type === 'response.done') {
        const usage = usageOfResponseDone(event);
        if (usage) this.usage = addUsage(this.usage, usage);
      }
    }
    this.toClient!.send(data, isBinary);
  }

  /** The client is behind and took nothing for STREAM_CLIENT_IDLE_MS: closed, and the session logged 499 (its close ends the session). */
  private readonly clientIdle = () => {
    if (this.ended) return;
    this.context.noteFailure(new ClientClosedRequestError(`The client read nothing for ${this.limits.idleMs} ms (STREAM_CLIENT_IDLE_MS)`));
    // The close frame queues behind what the client did not read: closeWithin cuts the connection 1 s later.
    closeWithin(this.client!, 1008, `The client read nothing for ${this.limits.idleMs} ms`);
  };

  private clientClosed(code: number, reason: string): void {
    closeWithin(this.upstream, sendableCode(code, 1000), reason);
    this.end();
  }

  private upstreamClosed(code: number, reason: string): void {
    if (code !== 1000 && code !== 1001) {
      this.error = { type: 'upstream_error', code: 'realtime_closed', message: `The provider closed the session (${code}${reason ? ` ${reason}` : ''})` };
    }
    if (this.client) closeWithin(this.client, sendableCode(code, 1011), reason);
    this.end();
  }

  /** Both sides closed (or closing): the session's one row. Before the client is attached, attach() ends it. */
  private end(): void {
    if (this.client) this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.toClient?.stop();
    if (this.sent.omitted) (this.context.requestBody as Record<string, unknown>).omitted_events = this.sent.omitted;
    const responseBody = this.received.omitted ? { events: this.received.events, omitted_events: this.received.omitted } : { events: this.received.events };
    // The session is the attempt's answer: known only now.
    this.attempt.outcome = { responseBody, usage: this.usage, servedModel: null, ttftMs: this.ttftMs, error: this.error };
    this.onEnd(this.context);
  }
}

function note(log: EventLog, event: Record<string, unknown>): void {
  if (log.events.length < MAX_LOGGED_EVENTS) log.events.push(summariseEvent(event));
  else log.omitted++;
}
