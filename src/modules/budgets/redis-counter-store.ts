import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { GatewayError } from '../../common/errors/gateway-error';
import { ThrottledWarning } from '../../common/logging/throttled-warning';
import { closeRedis, connectRedis } from '../../common/redis/redis-client';
import { RATE_WINDOW_MS, RateLimit } from '../../context/key-limits';
import type { RateWindow } from '../../context/budget-records';
import { BudgetCounter, BudgetReservation, CounterStore, RowSettlements } from './counter-store';

const PREFIX = 'gateway:';
/** Amounts are kept as integer nano-dollars: HINCRBY is exact where floats would drift. */
const NANO = 1e9;
/** A budget counter unused this long expires; it is rebuilt from the log when next needed. */
const BUDGET_TTL_MS = 35 * 86_400_000;
/** How long a settled row's marker is kept: longer than any retry of its settlement. */
const SETTLED_MARKER_TTL_S = 2 * 86_400;
/** Settlements waiting for Redis beyond this are dropped (and said so): memory stays bounded. */
const PENDING_MAX = 100_000;
const SETTLE_BATCH = 500;
const COMMAND_TIMEOUT_MS = 500;

/** Lua scripts: each runs atomically in Redis, so no two instances interleave inside one. */
const SCRIPTS = {
  // KEYS[1] budget hash; ARGV amount, limit, ttl. -1: no counter yet (seed it), 0: refused, 1: reserved.
  gatewayReserveBudget: `
    if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
    local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
    local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
    if spent + reserved >= tonumber(ARGV[2]) then return 0 end
    redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[1])
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1`,
  // KEYS[1] budget hash; ARGV spend, ttl. Creates the counter unless another instance just did.
  gatewaySeedBudget: `
    if redis.call('HSETNX', KEYS[1], 'spent', ARGV[1]) == 1 then
      redis.call('HSET', KEYS[1], 'reserved', 0)
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
    end
    return 1`,
  // KEYS[1] window counter; ARGV max, ttl. 1 when counted, 0 when the window is full.
  gatewayCountRequest: `
    local used = tonumber(redis.call('GET', KEYS[1]) or '0')
    if used >= tonumber(ARGV[1]) then return 0 end
    redis.call('INCR', KEYS[1])
    if used == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return 1`,
  // ARGV marker prefix, marker ttl, rows as JSON [{id, b: [[hash, spend, release]], t: [[key, tokens, ttl]]}].
  // A row settles only if its marker is new: a retried settlement changes nothing.
  gatewaySettle: `
    local applied = 0
    for _, row in ipairs(cjson.decode(ARGV[3])) do
      if redis.call('SET', ARGV[1] .. row.id, 1, 'NX', 'EX', ARGV[2]) then
        applied = applied + 1
        for _, b in ipairs(row.b) do
          -- A counter that expired is rebuilt from the log, which holds this row.
          if redis.call('EXISTS', b[1]) == 1 then
            if b[2] ~= 0 then redis.call('HINCRBY', b[1], 'spent', b[2]) end
            if b[3] ~= 0 and redis.call('HINCRBY', b[1], 'reserved', -b[3]) < 0 then redis.call('HSET', b[1], 'reserved', 0) end
          end
        end
        for _, t in ipairs(row.t) do
          redis.call('INCRBY', t[1], t[2])
          if redis.call('PTTL', t[1]) < 0 then redis.call('PEXPIRE', t[1], t[3]) end
        end
      end
    end
    return applied`,
} as const;

type ScriptedRedis = Redis & {
  [name in keyof typeof SCRIPTS]: (...args: (string | number)[]) => Promise<number>;
};

/**
 * Counters in Redis (REDIS_URL), for fleets where a PostgreSQL round trip per budgeted
 * request is too slow. Checks are Lua scripts; settlement follows the log INSERT, once
 * per row thanks to a `settled:<log id>` marker, and waits in memory (retried with
 * back-off) while Redis is unreachable. With Redis down, requests of keys that have a
 * budget or a rate limit get 503: the gateway does not spend what it cannot count.
 * Counters lost with Redis are rebuilt from the request log on first use.
 */
export class RedisCounterStore extends CounterStore implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisCounterStore.name);
  private readonly warning = new ThrottledWarning(this.logger);
  private readonly redis: ScriptedRedis;
  private pending: RowSettlements[] = [];
  private flushing: Promise<void> | null = null;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  private closing = false;

  constructor(url: string) {
    super();
    // Counting must not fail just because the connection is still being set up: commands wait for it (up to the timeout).
    this.redis = connectRedis(url, (error) => this.warning.warn(`Counter Redis connection: ${error.message}`), COMMAND_TIMEOUT_MS, true) as ScriptedRedis;
    for (const [name, lua] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, { numberOfKeys: name === 'gatewaySettle' ? 0 : 1, lua });
  }

  async reserveBudget(counter: BudgetCounter, amountUsd: number, limitUsd: number, seed: () => Promise<number>): Promise<BudgetReservation> {
    const key = `${PREFIX}budget:${counter.scope}:${counter.scopeId}:${counter.periodStart.getTime()}`;
    const reserve = async () => (await this.run(() => this.redis.gatewayReserveBudget(key, nano(amountUsd), nano(limitUsd), BUDGET_TTL_MS))) as -1 | 0 | 1;
    let reserved = await reserve();
    if (reserved === -1) {
      const spent = await seed();
      await this.run(() => this.redis.gatewaySeedBudget(key, nano(spent), BUDGET_TTL_MS));
      reserved = await reserve();
    }
    return reserved === 1 ? 'held' : 'refused';
  }

  async countRequest(window: RateWindow, max: number): Promise<boolean> {
    return (await this.run(() => this.redis.gatewayCountRequest(rateKey(window), max, windowTtl(window.windowStart, window.windowMs)))) === 1;
  }

  async tokensUsed(window: RateWindow): Promise<number> {
    return Number(await this.run(() => this.redis.get(rateKey(window))));
  }

  logInsertSteps(): string[] {
    return [];
  }

  async afterLogInsert(rows: RowSettlements[]): Promise<void> {
    const settling = rows.filter((row) => row.budgets.length || row.tokens.length);
    if (settling.length === 0) return;
    this.pending.push(...settling);
    if (this.pending.length > PENDING_MAX) {
      const dropped = this.pending.splice(0, this.pending.length - PENDING_MAX);
      this.logger.error(`Redis unreachable: ${dropped.length} budget/rate settlements dropped (their rows are in the log)`);
    }
    // While a retry is scheduled, the new rows wait for it (Redis is known to be failing).
    if (!this.retryTimer) await this.flush();
  }

  private async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.settlePending().finally(() => (this.flushing = null));
    return this.flushing;
  }

  /** Sends pending settlements in batches; on failure keeps them and retries with back-off. */
  private async settlePending(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.splice(0, SETTLE_BATCH);
      try {
        await this.redis.gatewaySettle(`${PREFIX}settled:`, SETTLED_MARKER_TTL_S, JSON.stringify(batch.map(wireRow)));
        this.failures = 0;
      } catch (error) {
        this.pending.unshift(...batch);
        this.failures++;
        this.warning.warn(`Settling ${this.pending.length} rows in Redis failed, retrying: ${(error as Error).message}`);
        if (this.closing) return;
        this.retryTimer ??= setTimeout(
          () => {
            this.retryTimer = undefined;
            void this.flush();
          },
          Math.min(30_000, 250 * 2 ** Math.min(this.failures, 7)),
        ).unref();
        return;
      }
    }
  }

  /** After the log writer's last flush (it runs in beforeApplicationShutdown): settle what is left, then close. */
  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.closing = true;
    await this.flush();
    if (this.pending.length) this.logger.error(`${this.pending.length} budget/rate settlements not written to Redis at shutdown`);
    await closeRedis(this.redis);
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      this.warning.warn(`Counter Redis command failed: ${(error as Error).message}`);
      throw GatewayError.unavailable(
        'The budget and rate-limit store (Redis) cannot be reached; requests of keys with a budget or rate limit are refused until it is back',
      );
    }
  }
}

function nano(usd: number): number {
  return Math.round(usd * NANO);
}

function rateKey(window: { scope: string; scopeId: string; limitKey: string; windowStart: Date }): string {
  return `${PREFIX}rate:${window.scope}:${window.scopeId}:${window.limitKey}:${window.windowStart.getTime()}`;
}

/** Until a minute after the window ends. */
function windowTtl(windowStart: Date, windowMs: number): number {
  return Math.max(1, windowStart.getTime() + windowMs + 60_000 - Date.now());
}

function wireRow(row: RowSettlements) {
  return {
    id: row.logId,
    b: row.budgets.map((s) => [`${PREFIX}budget:${s.scope}:${s.scope_id}:${Date.parse(s.period_start)}`, nano(s.spend_usd), nano(s.release_usd)]),
    t: row.tokens.map((s) => {
      const windowStart = new Date(s.window_start);
      const unit = s.limit_key.split(':')[1] as RateLimit['unit'];
      return [rateKey({ scope: s.scope, scopeId: s.scope_id, limitKey: s.limit_key, windowStart }), s.tokens, windowTtl(windowStart, RATE_WINDOW_MS[unit])];
    }),
  };
}
