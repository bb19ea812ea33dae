import type { RawData, WebSocket } from 'ws';
import type { RequestContext } from '../../gateway/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { NormalizedUsage } from '../../providers/usage';
import type { Attempt } from '../routing/attempt';
import { addUsage, MAX_LOGGED_EVENTS, summariseEvent, usageOfResponseDone } from './realtime-events';

/** Above this many bytes waiting to be sent on one side, the other side is paused. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** A peer that does not answer a close within this time is cut off. */
const CLOSE_TIMEOUT_MS = 1000;

/** Events of one direction, as the log keeps them. */
interface EventLog {
  events: Record<string, unknown>[];
  /** Events past MAX_LOGGED_EVENTS, counted, not kept. */
  omitted: number;
}

/** A provider message that arrived before the session existed. */
export interface EarlyMessage {
  data: RawData;
  isBinary: boolean;
}

/** The provider's socket, open, with what it sent during the handshake. */
export interface UpstreamSocket {
  socket: WebSocket;
  early: EarlyMessage[];
  stopHolding(): void;
}

/**
 * A check on a client event before it goes upstream (input guardrails): null lets it
 * through as sent, `forward` sends a changed event instead (redacted), `refusal` keeps it
 * from the provider and answers the client with that event.
 */
export type ClientEventCheck = (event: Record<string, unknown>) => Promise<{ refusal?: Record<string, unknown>; forward?: Record<string, unknown> } | null>;

/**
 * One realtime session: the client's WebSocket and the provider's, relayed both ways
 * in order, with backpressure (a side that cannot keep up pauses the other). Every event
 * is noted for the log (audio summarised), the usage of each `response.done` summed; when
 * either side closes, the other is closed with the same code and the session's one log
 * row is written (`onEnd`).
 */
export class RealtimeSession {
  private client: WebSocket | null = null;
  /** Provider events that arrived before the client's socket was handed over. */
  private readonly early: EarlyMessage[];
  private readonly upstream: WebSocket;
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
  ) {
    context.isStream = true;
    context.requestBody = { model: attempt.model, events: this.sent.events };
    const upstream = (this.upstream = provider.socket);
    this.early = provider.early;
    provider.stopHolding();
    upstream.on('message', (data, isBinary) => (this.client ? this.fromUpstream(data, isBinary) : this.early.push({ data, isBinary })));
    upstream.once('close', (code, reason) => this.upstreamClosed(code, reason.toString()));
    upstream.on('error', () => undefined); // followed by 'close'
  }

  /** The client's socket, once the handshake has completed: relaying starts. */
  attach(client: WebSocket): void {
    this.client = client;
    client.on('message', (data, isBinary) => this.fromClient(data, isBinary));
    client.once('close', (code, reason) => this.clientClosed(code, reason.toString()));
    client.on('error', () => undefined); // followed by 'close'
    for (const { data, isBinary } of this.early.splice(0)) this.fromUpstream(data, isBinary);
    if (this.upstream.readyState !== this.upstream.OPEN) this.upstreamClosed(1011, 'The provider closed the session');
  }

  /** Shutdown: both sides told the gateway is going away. */
  goAway(): void {
    this.client?.close(1001, 'Gateway shutting down');
    this.upstream.close(1001, 'Gateway shutting down');
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    const event = isBinary ? null : parse(data);
    if (!this.checkClientEvent || !event) {
      if (event) note(this.sent, event);
      return this.forward(this.upstream, this.client!, data, isBinary);
    }
    // Checked in order: a later event never overtakes one still being checked. The log keeps
    // the event as checked (a redaction is what was sent, and what is kept).
    this.checking = this.checking.then(async () => {
      const verdict = await this.checkClientEvent!(event).finally(() => note(this.sent, event));
      if (verdict?.forward) return this.forward(this.upstream, this.client!, Buffer.from(JSON.stringify(verdict.forward)), false);
      if (!verdict?.refusal) return this.forward(this.upstream, this.client!, data, isBinary);
      // Refused: the provider never sees it; the client gets an `error` event saying why.
      this.refuse(verdict.refusal);
    });
    // A check that broke refuses its event (fails closed) and leaves the chain usable for the next ones.
    this.checking = this.checking.catch(() =>
      this.refuse({ type: 'error', error: { type: 'api_error', code: 'guardrail_error', message: 'The gateway could not check this event; it was not sent', event_id: event.event_id ?? null } }),
    );
  }

  private refuse(refusal: Record<string, unknown>): void {
    note(this.received, refusal);
    if (this.client!.readyState === this.client!.OPEN) this.client!.send(JSON.stringify(refusal));
  }

  private fromUpstream(data: RawData, isBinary: boolean): void {
    const event = isBinary ? null : parse(data);
    if (event) {
      note(this.received, event);
      if (this.ttftMs === null && typeof event.type === 'string' && event.type.endsWith('.delta')) this.ttftMs = this.context.elapsedMs();
      if (event.type === 'response.done') {
        const usage = usageOfResponseDone(event);
        if (usage) this.usage = addUsage(this.usage, usage);
      }
    }
    this.forward(this.client!, this.upstream, data, isBinary);
  }

  /** Sends on `to`; while `to` has more than HIGH_WATER_BYTES waiting, `from` is paused. */
  private forward(to: WebSocket, from: WebSocket, data: RawData, isBinary: boolean): void {
    if (to.readyState !== to.OPEN) return;
    to.send(data as Buffer, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < HIGH_WATER_BYTES / 2) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
  }

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

  private end(): void {
    if (this.ended || !this.client) return;
    this.ended = true;
    if (this.sent.omitted) (this.context.requestBody as Record<string, unknown>).omitted_events = this.sent.omitted;
    const responseBody = this.received.omitted ? { events: this.received.events, omitted_events: this.received.omitted } : { events: this.received.events };
    // The session is the attempt's answer: known only now.
    this.attempt.outcome = { responseBody, usage: this.usage, servedModel: null, ttftMs: this.ttftMs, error: this.error };
    this.onEnd(this.context);
  }
}

function parse(data: RawData): Record<string, unknown> | null {
  try {
    const event = JSON.parse(data.toString());
    return event !== null && typeof event === 'object' && !Array.isArray(event) ? event : null;
  } catch {
    return null;
  }
}

function note(log: EventLog, event: Record<string, unknown>): void {
  if (log.events.length < MAX_LOGGED_EVENTS) log.events.push(summariseEvent(event));
  else log.omitted++;
}

/** Close codes a peer may send (1005 and 1006 only describe a close, they cannot be sent). */
function sendableCode(code: number, otherwise: number): number {
  return code === 1000 || code === 1001 || (code >= 1007 && code <= 1014 && code !== 1010) || (code >= 3000 && code <= 4999) ? code : otherwise;
}

function closeWithin(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.CLOSED) return;
  socket.close(code, Buffer.byteLength(reason) <= 123 ? reason : '');
  setTimeout(() => socket.terminate(), CLOSE_TIMEOUT_MS).unref();
}
