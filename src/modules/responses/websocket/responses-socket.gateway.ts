import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayInit, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { SocketSessions } from '../../realtime/socket-sessions';
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
  private readonly sessions: SocketSessions<ResponsesSocketSession>;

  constructor(handshake: ResponsesSocketHandshake) {
    this.sessions = new SocketSessions(new Logger(ResponsesSocketGateway.name), (req, ended) => handshake.accept(req, ended));
  }

  afterInit(server: WebSocketServer): void {
    this.sessions.install(server);
  }

  handleConnection(client: WebSocket, req: IncomingMessage): void {
    this.sessions.connected(client, req);
  }

  /** Shutdown: open sockets are told the gateway is going away (their open responses are then logged). */
  closeAll(): void {
    this.sessions.closeAll();
  }

  beforeApplicationShutdown(): void {
    this.closeAll();
  }
}
