import type { LoggerService } from '@nestjs/common';

/**
 * A cache store that is down fails on every cached request; one warning per interval,
 * saying how many were left out, keeps the log readable through an outage.
 */
export class ThrottledWarning {
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly logger: Pick<LoggerService, 'warn'>,
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string): void {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    const note = this.suppressed ? ` (${this.suppressed} more since the last warning)` : '';
    this.logger.warn(`${message}${note}`);
    this.lastAt = now;
    this.suppressed = 0;
  }
}
