import type { RawData, WebSocket } from 'ws';
import type { IdleWatch } from './client-stream';

/*
 * Relaying between two WebSockets (a client's and a provider's): the realtime sessions and
 * the Responses API's WebSocket mode share it.
 */

/** A peer that does not answer a close within this time is cut off. */
const CLOSE_TIMEOUT_MS = 1000;

/**
 * One direction of a session: events sent on `to`, no faster than `to`'s peer takes them.
 * What waits to go out (ws's `bufferedAmount`, plus events `hold()` counts, still being
 * checked) past `bufferBytes` (STREAM_CLIENT_BUFFER_BYTES) pauses `from`: its socket is no
 * longer read, so its peer's writes block (TCP) instead of piling up in the gateway. `from`
 * resumes below half of it (a margin, so it does not flip at every event). With an
 * IdleWatch, a peer of `to` that is behind and takes nothing is reported.
 */
export class Relay {
  /** Bytes of events `to`'s socket has taken (their send completed): rises only when its peer reads. */
  taken = 0;
  /** Bytes accepted from `from` that are not yet handed to `to`. */
  private held = 0;

  constructor(
    private readonly to: WebSocket,
    private readonly from: WebSocket,
    private readonly bufferBytes: number,
    private readonly idle: IdleWatch | null,
  ) {}

  send(data: RawData, isBinary: boolean): void {
    const to = this.to;
    if (to.readyState !== to.OPEN) return;
    const size = byteLength(data);
    to.send(data as Buffer, { binary: isBinary }, (error) => {
      if (!error) this.taken += size;
      if (to.bufferedAmount === 0) this.idle?.caughtUp();
      this.balance();
    });
    // Not all of it went out at once: `to`'s peer is behind (for now).
    if (to.bufferedAmount > 0) this.idle?.behind();
    this.balance();
  }

  hold(bytes: number): void {
    this.held += bytes;
    this.balance();
  }

  release(bytes: number): void {
    this.held -= bytes;
    this.balance();
  }

  stop(): void {
    this.idle?.caughtUp();
  }

  private balance(): void {
    const waiting = this.held + this.to.bufferedAmount;
    if (waiting > this.bufferBytes && !this.from.isPaused) this.from.pause();
    else if (waiting < this.bufferBytes / 2 && this.from.isPaused) this.from.resume();
  }
}

export function byteLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, part) => sum + part.length, 0) : data.byteLength;
}

/** A text message as a JSON object (an event), or null when it is none. */
export function parseEvent(data: RawData): Record<string, unknown> | null {
  const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
  try {
    const event: unknown = JSON.parse(text);
    return event !== null && typeof event === 'object' && !Array.isArray(event) ? (event as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Close codes a peer may send (1005 and 1006 only describe a close, they cannot be sent). */
export function sendableCode(code: number, otherwise: number): number {
  return code === 1000 || code === 1001 || (code >= 1007 && code <= 1014 && code !== 1010) || (code >= 3000 && code <= 4999) ? code : otherwise;
}

export function closeWithin(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.CLOSED) return;
  socket.close(code, Buffer.byteLength(reason) <= 123 ? reason : '');
  setTimeout(() => socket.terminate(), CLOSE_TIMEOUT_MS).unref();
}
