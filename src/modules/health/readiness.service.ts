import { Injectable } from '@nestjs/common';

/**
 * Whether this instance takes new work, shared by `GET /health/ready`, the stream relay
 * and the shutdown sequence (`src/shutdown.ts`): draining from the signal on (readiness
 * 503 while requests are still served); at the grace deadline `deadline` aborts, and the
 * streams still open end with their operation's error event instead of a cut socket.
 */
@Injectable()
export class Readiness {
  private stopping = false;
  private readonly deadlineReached = new AbortController();

  get ready(): boolean {
    return !this.stopping;
  }

  /** Aborted at the shutdown grace deadline. */
  get deadline(): AbortSignal {
    return this.deadlineReached.signal;
  }

  drain(): void {
    this.stopping = true;
  }

  reachDeadline(): void {
    this.stopping = true;
    this.deadlineReached.abort();
  }
}
