import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';

/** Queued rows moved per statement: seconds of heavy traffic, one short transaction. */
const COMPACT_BATCH_ROWS = 20_000;

/**
 * Folds the log rows queued by the insert trigger into the analytics rollups (migration
 * LogRollups: `request_log_rollups_compact`) every ROLLUP_COMPACT_INTERVAL_MS, off the
 * request path. Analytics read the queue too, so this only keeps the queue short; while
 * the database is down it waits for the next tick. Instances share the work through an
 * advisory lock: the one that holds it compacts, the others skip.
 */
@Injectable()
export class LogRollupCompactor implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(LogRollupCompactor.name);
  private readonly intervalMs: number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private failing = false;

  constructor(
    private readonly dataSource: DataSource,
    config: ConfigService<Environment, true>,
  ) {
    this.intervalMs = config.get('ROLLUP_COMPACT_INTERVAL_MS', { infer: true });
  }

  onModuleInit(): void {
    this.timer = setInterval(() => {
      this.running ??= this.compact().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Moves every queued row into the rollups (a full batch means there may be more). */
  async compact(): Promise<void> {
    try {
      for (;;) {
        const [{ moved }] = await this.dataSource.query('select request_log_rollups_compact($1) as moved', [COMPACT_BATCH_ROWS]);
        if (moved < COMPACT_BATCH_ROWS) break;
      }
      if (this.failing) this.logger.log('Compacting the analytics rollups works again');
      this.failing = false;
    } catch (error) {
      // Once per outage: the rows wait in the queue, where analytics read them meanwhile.
      if (!this.failing) this.logger.warn(`Compacting the analytics rollups failed: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}
