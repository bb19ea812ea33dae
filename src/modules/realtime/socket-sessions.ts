import type { Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { HandshakeRefusal } from './realtime-handshake';

/** A relayed WebSocket session (realtime, the Responses API's WebSocket mode), as its gateway handles it. */
export interface SocketSession {
  /** The client's socket, once upgraded: relaying starts. */
  attach(client: WebSocket): void;
  /** The client left during the handshake: the session ends without a client. */
  abandon(): void;
  /** Shutdown: both sides told the gateway is going away. */
  goAway(): void;
}

const INTERNAL_ERROR = '{"error":{"message":"Internal gateway error","type":"api_error","param":null,"code":"internal_error"}}';

/**
 * The sessions of one WebSocket gateway, from the handshake to the end. `accept` runs as ws's
 * `verifyClient`, before the client's connection is upgraded (so a refusal is an HTTP
 * answer: a HandshakeRefusal, or a 500 for anything else); the session it gives is handed
 * the socket in `connected`, and counted live until it says it ended.
 */
export class SocketSessions<S extends SocketSession> {
  private readonly accepted = new WeakMap<IncomingMessage, S>();
  private readonly live = new Set<S>();

  constructor(
    private readonly logger: Logger,
    private readonly accept: (req: IncomingMessage, ended: (session: S) => void) => Promise<S>,
  ) {}

  /** Sets ws's `verifyClient` on `server` (ws consults its options at each upgrade). */
  install(server: WebSocketServer): void {
    Object.assign(server.options, {
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, status?: number, message?: string, headers?: Record<string, string>) => void) => {
        this.accept(info.req, (session) => this.live.delete(session)).then(
          (session) => {
            this.accepted.set(info.req, session);
            this.live.add(session);
            done(true);
            // done() upgrades at once (`connected` takes the session), unless the client left
            // meanwhile: then ws only destroys its socket, and the session is closed here.
            if (this.accepted.has(info.req) && info.req.socket.destroyed) {
              this.accepted.delete(info.req);
              session.abandon();
            }
          },
          (error: unknown) => {
            const refusal = error instanceof HandshakeRefusal ? error : new HandshakeRefusal(500, INTERNAL_ERROR, { 'Content-Type': 'application/json' });
            if (!(error instanceof HandshakeRefusal)) this.logger.error(`WebSocket handshake failed: ${String((error as Error)?.stack ?? error)}`);
            done(false, refusal.status, refusal.body, refusal.headers);
          },
        );
      },
    });
  }

  /** The session accepted for an upgrade still under way (its 101's headers). */
  acceptedFor(req: IncomingMessage): S | undefined {
    return this.accepted.get(req);
  }

  /** The upgraded socket to its session. */
  connected(client: WebSocket, req: IncomingMessage): void {
    const session = this.accepted.get(req);
    this.accepted.delete(req);
    if (session) session.attach(client);
    else client.close(1011, 'Session not found');
  }

  closeAll(): void {
    for (const session of this.live) session.goAway();
  }
}
