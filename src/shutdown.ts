import type { INestApplication } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Environment } from './config/environment';
import type { EmbeddedPostgres } from './database/embedded-postgres';
import { Readiness } from './modules/health/readiness';
import { RequestLogger } from './modules/logging/request-logger';
import { RealtimeGateway } from './modules/realtime/realtime.gateway';
import { ResponsesSocketGateway } from './modules/responses/websocket/responses-socket.gateway';

/** After the grace deadline, how long the streams' error events get to reach their clients before every connection is closed. */
const ERROR_EVENT_FLUSH_MS = 500;
/** How long the rows of responses ended at the deadline get to be queued (a few ticks after their close). */
const LAST_ROWS_WAIT_MS = 2_000;

/**
 * Stopping an instance without dropping a request or a log row (SIGTERM, SIGINT):
 * 1. at once `/health/ready` answers 503 `shutting_down`, so load balancers take the
 *    instance out; every response from now on says `Connection: close`, so clients
 *    reconnect (elsewhere, once the balancer has noticed);
 * 2. for `SHUTDOWN_DELAY_MS` new requests are still served (the balancer may still send some);
 * 3. then the listener closes (no new connection) and idle keep-alive connections are
 *    closed; open requests and streams go on;
 * 4. `SHUTDOWN_GRACE_MS` after the signal, the streams still open end with their
 *    operation's error event (`shutting_down`, see Readiness) and realtime sessions are
 *    told 1001; `ERROR_EVENT_FLUSH_MS` later any connection left is closed;
 * 5. once every connection is gone: the last rows are queued, `app.close()` runs Nest's
 *    shutdown hooks (the log writer's last flush, Redis, the pool), the embedded
 *    database stops, the process exits 0.
 * The log writer's flush comes after step 4 on purpose: the rows of the open requests
 * must be queued before it. A second signal changes nothing: the sequence running ends
 * with the flush.
 */
export class GracefulShutdown {
  private stopping = false;

  constructor(
    private readonly app: INestApplication,
    private readonly env: Pick<Environment, 'SHUTDOWN_DELAY_MS' | 'SHUTDOWN_GRACE_MS'>,
    private readonly embedded?: EmbeddedPostgres,
  ) {}

  /** Runs the sequence on SIGTERM and SIGINT, then exits 0. */
  onSignals(): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        if (this.stopping) {
          say(`${signal}: already shutting down; open requests and the log writer are still waited for`);
          return;
        }
        this.stop(signal).then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`Shutdown failed: ${(error as Error)?.stack ?? error}\n`);
            process.exit(1);
          },
        );
      });
    }
  }

  /** The whole sequence; resolves once the logs are written and the database is stopped. */
  async stop(reason: string): Promise<void> {
    this.stopping = true;
    const { SHUTDOWN_DELAY_MS: delayMs, SHUTDOWN_GRACE_MS: graceMs } = this.env;
    const server = this.app.getHttpServer() as Server;
    const readiness = this.app.get(Readiness);

    readiness.drain();
    // First in line, before Express writes anything; an event stream sets its own header
    // and its connection is closed by the idle sweep once the stream has ended.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.setHeader('connection', 'close'));
    say(`${reason}: /health/ready answers 503; new requests served for ${delayMs} ms more, open ones get up to ${graceMs} ms`);

    const deadline = setTimeout(() => {
      readiness.reachDeadline();
      // Upgraded (realtime) connections are not the HTTP server's to close: their sessions are told to go away.
      this.app.get(RealtimeGateway).closeAll();
      this.app.get(ResponsesSocketGateway).closeAll();
      cutOff = setTimeout(() => server.closeAllConnections(), ERROR_EVENT_FLUSH_MS);
    }, graceMs);
    let cutOff: NodeJS.Timeout | undefined;

    await sleep(Math.min(delayMs, graceMs));
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    // A keep-alive connection whose response just ended would otherwise hold on until its timeout.
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    await drained;
    clearInterval(idleSweep);
    clearTimeout(deadline);
    clearTimeout(cutOff);

    await this.app.get(RequestLogger).whenIdle(LAST_ROWS_WAIT_MS);
    await this.app.close();
    await this.embedded?.stop();
  }
}

function say(message: string): void {
  process.stdout.write(`${message}\n`);
}
