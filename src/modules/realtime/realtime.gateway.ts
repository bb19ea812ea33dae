import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { OnGatewayConnection, OnGatewayInit, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { RealtimeHandshake, sessionHeaders } from './realtime-handshake';
import type { RealtimeSession } from './realtime-session';
import { SocketSessions } from './socket-sessions';

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
  private readonly sessions: SocketSessions<RealtimeSession>;

  constructor(handshake: RealtimeHandshake) {
    this.sessions = new SocketSessions(new Logger(RealtimeGateway.name), (req, ended) => handshake.accept(req, ended));
  }

  afterInit(server: WebSocketServer): void {
    this.sessions.install(server);
    // Browsers offer `realtime` plus the key-bearing subprotocols; the answer names `realtime` only.
    Object.assign(server.options, { handleProtocols: (protocols: Set<string>) => (protocols.has('realtime') ? 'realtime' : false) });
    // The 101 carries the gateway's response headers (trace id, the session's log id, provider).
    server.on('headers', (headers: string[], req: IncomingMessage) => {
      const session = this.sessions.acceptedFor(req);
      if (session) for (const [name, value] of Object.entries(sessionHeaders(session.context))) headers.push(`${name}: ${value}`);
    });
  }

  handleConnection(client: WebSocket, req: IncomingMessage): void {
    this.sessions.connected(client, req);
  }

  /** Shutdown: open sessions are told the gateway is going away (their rows are then written). */
  closeAll(): void {
    this.sessions.closeAll();
  }

  /** An application closed without main.ts's signal handling (tests, embedding) still closes its sessions properly. */
  beforeApplicationShutdown(): void {
    this.closeAll();
  }
}
