import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayInit, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { HandshakeRefusal, RealtimeHandshake, sessionHeaders } from './realtime-handshake';
import type { RealtimeSession } from './realtime-session';

/** The largest event a client may send (audio is sent in small appends; this bounds a hostile one). */
const MAX_CLIENT_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * `ws://…/v1/realtime?model=…`: OpenAI's Realtime API through the gateway (CONTRACT
 * section 7). The handshake authenticates, routes and connects to the provider before
 * the client's connection is upgraded (RealtimeHandshake, run as ws's `verifyClient`);
 * the session then relays events both ways (RealtimeSession) and writes one log row
 * (operation `realtime`) when it ends.
 */
@WebSocketGateway({ path: '/v1/realtime', maxPayload: MAX_CLIENT_EVENT_BYTES })
export class RealtimeGateway implements OnGatewayInit<WebSocketServer>, OnGatewayConnection<WebSocket>, BeforeApplicationShutdown {
  private readonly logger = new Logger(RealtimeGateway.name);
  /** Sessions whose handshake passed, waiting for their upgraded socket. */
  private readonly accepted = new WeakMap<IncomingMessage, RealtimeSession>();
  private readonly live = new Set<RealtimeSession>();

  constructor(private readonly handshake: RealtimeHandshake) {}

  /** ws consults these options at each upgrade; they are set here because they need the gateway's services. */
  afterInit(server: WebSocketServer): void {
    Object.assign(server.options, {
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, status?: number, message?: string, headers?: Record<string, string>) => void) => {
        this.handshake
          .accept(info.req, (session) => this.live.delete(session))
          .then(
            (session) => {
              this.accepted.set(info.req, session);
              this.live.add(session);
              done(true);
              // done() upgrades at once (handleConnection takes the session), unless the client
              // left meanwhile: then ws only destroys its socket, and the session is closed here.
              if (this.accepted.has(info.req) && info.req.socket.destroyed) {
                this.accepted.delete(info.req);
                session.abandon();
              }
            },
            (error: unknown) => {
              const refusal =
                error instanceof HandshakeRefusal
                  ? error
                  : new HandshakeRefusal(500, '{"error":{"message":"Internal gateway error","type":"api_error","param":null,"code":"internal_error"}}', {
                      'Content-Type': 'application/json',
                    });
              if (!(error instanceof HandshakeRefusal)) this.logger.error(`Realtime handshake failed: ${(error as Error)?.stack ?? error}`);
              done(false, refusal.status, refusal.body, refusal.headers);
            },
          );
      },
      // Browsers offer `realtime` plus the key-bearing subprotocols; the answer names `realtime` only.
      handleProtocols: (protocols: Set<string>) => (protocols.has('realtime') ? 'realtime' : false),
    });
    // The 101 carries the gateway's response headers (trace id, the session's log id, provider).
    server.on('headers', (headers: string[], req: IncomingMessage) => {
      const session = this.accepted.get(req);
      if (session) for (const [name, value] of Object.entries(sessionHeaders(session.context))) headers.push(`${name}: ${value}`);
    });
  }

  handleConnection(client: WebSocket, req: IncomingMessage): void {
    const session = this.accepted.get(req);
    this.accepted.delete(req);
    if (session) session.attach(client);
    else client.close(1011, 'Session not found');
  }

  /** Shutdown: open sessions are told the gateway is going away (their rows are then written). */
  closeAll(): void {
    for (const session of this.live) session.goAway();
  }

  /** An application closed without main.ts's signal handling (tests, embedding) still closes its sessions properly. */
  beforeApplicationShutdown(): void {
    this.closeAll();
  }
}
