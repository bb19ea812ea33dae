import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayInit, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { HandshakeRefusal } from '../../realtime/realtime-handshake';
import { ResponsesSocketHandshake } from './responses-socket-handshake';
import type { ResponsesSocketSession } from './responses-socket-session';

/** The largest event a client may send: a `response.create` carries a whole agent's conversation (Codex's first turn). */
const MAX_CLIENT_EVENT_BYTES = 32 * 1024 * 1024;

/**
 * `GET /v1/responses` upgraded to a WebSocket: the Responses API's WebSocket mode (Codex with
 * `supports_websockets`, `client.responses.connect()` of the OpenAI SDKs), relayed to OpenAI
 * targets with one log row per response; other targets get a 426 so the client uses HTTP
 * (ResponsesSocketHandshake, run as ws's `verifyClient`).
 */
@WebSocketGateway({ path: '/v1/responses', maxPayload: MAX_CLIENT_EVENT_BYTES })
export class ResponsesSocketGateway implements OnGatewayInit<WebSocketServer>, OnGatewayConnection<WebSocket>, BeforeApplicationShutdown {
  private readonly logger = new Logger(ResponsesSocketGateway.name);
  private readonly accepted = new WeakMap<IncomingMessage, ResponsesSocketSession>();
  private readonly live = new Set<ResponsesSocketSession>();

  constructor(private readonly handshake: ResponsesSocketHandshake) {}

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
              // The client left meanwhile: ws only destroys its socket, and the session is closed here.
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
              if (!(error instanceof HandshakeRefusal)) this.logger.error(`Responses WebSocket handshake failed: ${String((error as Error)?.stack ?? error)}`);
              done(false, refusal.status, refusal.body, refusal.headers);
            },
          );
      },
    });
  }

  handleConnection(client: WebSocket, req: IncomingMessage): void {
    const session = this.accepted.get(req);
    this.accepted.delete(req);
    if (session) session.attach(client);
    else client.close(1011, 'Session not found');
  }

  /** Shutdown: open sockets are told the gateway is going away (their open responses are then logged). */
  closeAll(): void {
    for (const session of this.live) session.goAway();
  }

  beforeApplicationShutdown(): void {
    this.closeAll();
  }
}
