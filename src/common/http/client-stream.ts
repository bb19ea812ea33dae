import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/** How a stream's writer slows its source: the SSE relay pauses the provider's body, a binary body pauses itself. */
export interface StreamFlow {
  pause(): void;
  resume(): void;
}

/** CONTRACT section 15: what the gateway holds for one streaming client, and how long it waits for one that reads nothing. */
export interface ClientStreamLimits {
  /** STREAM_CLIENT_BUFFER_BYTES: written and not yet taken by the client past this, the source is paused. */
  bufferBytes: number;
  /** STREAM_CLIENT_IDLE_MS: a client that is behind and reads nothing this long is disconnected. */
  idleMs: number;
}

export const DEFAULT_CLIENT_STREAM_LIMITS: ClientStreamLimits = { bufferBytes: 1024 * 1024, idleMs: 60_000 };

const LIMITS_SETTING = 'client stream limits';

/** Where the edge finds the limits: a setting of the Express app, so each app (and test gateway) has its own. */
export function setClientStreamLimits(app: { set(setting: string, value: unknown): unknown }, limits: ClientStreamLimits): void {
  app.set(LIMITS_SETTING, limits);
}

export function clientStreamLimitsOf(res: { app?: { get(setting: string): unknown } }): ClientStreamLimits {
  return (res.app?.get(LIMITS_SETTING) as ClientStreamLimits | undefined) ?? DEFAULT_CLIENT_STREAM_LIMITS;
}

/**
 * The idle watch on a client that is behind (CONTRACT section 15), for any kind of socket:
 * `behind()` when a write could not go out at once starts it; if after `idleMs` what the
 * client has taken (`taken()`: it rises only when the client reads) has not risen,
 * `onIdle` is called; if it has, it watches on. `caughtUp()` (nothing left to send, or the client gone) stops it.
 * A client that reads slowly but steadily is never cut.
 */
export class IdleWatch {
  private timer: NodeJS.Timeout | undefined;
  private takenAtStart = 0;

  constructor(
    private readonly idleMs: number,
    private readonly taken: () => number,
    private readonly onIdle: () => void,
  ) {}

  behind(): void {
    if (this.timer) return;
    this.takenAtStart = this.taken();
    this.timer = setTimeout(this.check, this.idleMs);
  }

  caughtUp(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly check = () => {
    this.timer = undefined;
    if (this.taken() > this.takenAtStart)
      this.behind(); // it read something: watch on
    else this.onIdle();
  };
}

/**
 * Writes a stream to one client no faster than the client reads it (CONTRACT section 15).
 * Once the response holds `bufferBytes` the client has not taken, the source is paused
 * (`flow`), and what it still hands over meanwhile (the rest of a provider chunk already
 * parsed, or frames already in memory) waits here, in order, until the client has read
 * the response's buffer empty ('drain'); then the source resumes. A paused provider body
 * stops being read, so the provider's own writes block (TCP, or HTTP/2's window).
 *
 * While the client is behind (a write was refused) an IdleWatch watches it: if after
 * `idleMs` not a byte more went to the client's socket, `onIdle` is called (the edge
 * disconnects it).
 */
export class ClientStreamWriter {
  /** Characters handed to the response (string and Buffer lengths, as Node counts `writableLength`). */
  private written = 0;
  /** What came while the source was paused, or null: not paused. */
  private held: Array<string | Buffer> | null = null;
  private ending = false;
  private readonly idle: IdleWatch;

  constructor(
    private readonly res: ServerResponse,
    private readonly flow: StreamFlow | null,
    private readonly limits: ClientStreamLimits,
    onIdle: () => void,
  ) {
    this.idle = new IdleWatch(limits.idleMs, () => this.flushed(), onIdle);
    res.on('drain', this.onDrain);
    res.once('close', () => this.idle.caughtUp());
  }

  write(chunk: string | Buffer): void {
    if (this.held) {
      this.held.push(chunk);
      return;
    }
    this.written += chunk.length;
    if (this.res.write(chunk)) return;
    // The client is behind (its socket's buffer is full): watch that it reads at all,
    // and stop the source once it is `bufferBytes` behind.
    if (!this.res.destroyed) this.idle.behind();
    if (this.res.writableLength >= this.limits.bufferBytes) {
      this.held = [];
      this.flow?.pause();
    }
  }

  /** Ends the response once everything written and held has gone out. */
  end(): void {
    if (this.held) this.ending = true;
    else this.res.end();
  }

  private readonly onDrain = () => {
    // The client took everything written: it is not behind any more.
    this.idle.caughtUp();
    const held = this.held;
    if (!held) return;
    this.held = null;
    // Written in order; a chunk that fills the buffer again holds the rest (write pushes it).
    for (const chunk of held) this.write(chunk);
    if (this.held) return;
    if (this.ending) this.res.end();
    else this.flow?.resume();
  };

  /**
   * What the client's socket has taken so far: written minus what the response still
   * buffers. (Chunked encoding's few framing bytes per write sit in the buffer too, so
   * new writes alone can only lower it: it rises only when the client reads.)
   */
  private flushed(): number {
    return this.written - this.res.writableLength;
  }
}

/**
 * Pipes a binary body (audio, a file's content) to the client through a ClientStreamWriter:
 * `pipe()`'s backpressure plus the idle watch. A body that breaks cuts the response; a
 * client that leaves destroys the body (aborting the provider's request).
 */
export function pipeToClient(res: ServerResponse, body: Readable, limits: ClientStreamLimits, onIdle: () => void): void {
  if (res.destroyed) {
    body.destroy();
    return;
  }
  const writer = new ClientStreamWriter(res, body, limits, onIdle);
  body.on('data', (chunk: Buffer) => writer.write(chunk));
  body.once('end', () => writer.end());
  body.once('error', () => res.destroy());
  res.once('close', () => body.destroy());
}
