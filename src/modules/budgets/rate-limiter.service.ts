import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestContext } from '../../common/context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import type { RateLimit } from '../keys/key-limits';
import type { RouteTarget } from '../routing/route-plan';
import type { BudgetScope } from './budget-ledger.service';

const WINDOW_MS: Record<RateLimit['unit'], number> = { rpm: 60_000, rph: 3_600_000, rpd: 86_400_000 };
const UNIT_NAMES: Record<RateLimit['unit'], string> = { rpm: 'minute', rph: 'hour', rpd: 'day' };

/** A token window a request counts against; its rows add their tokens when written (see LogWriter). */
export interface TokenWindow {
  scope: BudgetScope;
  scopeId: string;
  limitKey: string;
  windowStart: Date;
}

/** What a log row adds to a token window. */
export interface TokenSettlement {
  scope: BudgetScope;
  scope_id: string;
  limit_key: string;
  window_start: string;
  tokens: number;
}

/**
 * Request and token rate limits of API keys and virtual keys, in fixed windows (a
 * minute, an hour or a day, UTC) counted in `rate_counters`, shared by every instance.
 * A request limit is one atomic upsert that counts the request only while under the
 * limit; a token limit admits while the window's tokens are under it, the tokens being
 * added by the log rows. Over a limit: 429 `rate_limit_exceeded` with `Retry-After`
 * (the end of the window). Keys without limits cost nothing.
 */
@Injectable()
export class RateLimiter {
  constructor(private readonly dataSource: DataSource) {}

  /** The API key's limits once per request, a virtual key's once per key. */
  async admit(context: RequestContext, target: RouteTarget): Promise<void> {
    const principal = context.principal;
    if (principal?.rateLimits.length && !context.rateLimited.has(principal.id)) {
      context.rateLimited.add(principal.id);
      await this.check(context, 'api_key', principal.id, principal.rateLimits);
    }
    if (target.virtualKeyId && target.virtualKeyRateLimits.length && !context.rateLimited.has(target.virtualKeyId)) {
      context.rateLimited.add(target.virtualKeyId);
      await this.check(context, 'virtual_key', target.virtualKeyId, target.virtualKeyRateLimits);
    }
  }

  private async check(context: RequestContext, scope: BudgetScope, scopeId: string, limits: RateLimit[]): Promise<void> {
    const now = Date.now();
    for (const limit of limits) {
      const windowMs = WINDOW_MS[limit.unit];
      const windowStart = new Date(Math.floor(now / windowMs) * windowMs);
      const limitKey = `${limit.type}:${limit.unit}`;
      const admitted = limit.type === 'requests' ? await this.countRequest(scope, scopeId, limitKey, windowStart, limit.value) : await this.underTokens(scope, scopeId, limitKey, windowStart, limit.value);
      if (!admitted) throw rateLimited(scope, limit, Math.ceil((windowStart.getTime() + windowMs - now) / 1000));
      if (limit.type === 'tokens') context.tokenWindows.push({ scope, scopeId, limitKey, windowStart });
    }
  }

  private async countRequest(scope: BudgetScope, scopeId: string, limitKey: string, windowStart: Date, max: number): Promise<boolean> {
    const [row] = await this.dataSource.query(
      `with counted as (
         insert into rate_counters (scope, scope_id, limit_key, window_start, used) values ($1, $2, $3, $4, 1)
         on conflict (scope, scope_id, limit_key, window_start) do update set used = rate_counters.used + 1 where rate_counters.used < $5
         returning 1)
       select count(*)::int as n from counted`,
      [scope, scopeId, limitKey, windowStart, max],
    );
    return Number(row.n) > 0;
  }

  private async underTokens(scope: BudgetScope, scopeId: string, limitKey: string, windowStart: Date, max: number): Promise<boolean> {
    const [row] = await this.dataSource.query(
      `select coalesce(max(used), 0)::float8 as used from rate_counters where scope = $1 and scope_id = $2 and limit_key = $3 and window_start = $4`,
      [scope, scopeId, limitKey, windowStart],
    );
    return Number(row.used) < max;
  }
}

function rateLimited(scope: BudgetScope, limit: RateLimit, retryAfterSeconds: number): GatewayError {
  const key = scope === 'api_key' ? 'API key' : 'virtual key';
  const seconds = String(Math.max(1, retryAfterSeconds));
  const message = `This ${key} is limited to ${limit.value} ${limit.type} per ${UNIT_NAMES[limit.unit]}; retry in ${seconds} s`;
  return new GatewayError(429, 'rate_limit_error', message, 'rate_limit_exceeded', null, { 'retry-after': seconds });
}

/** The tokens of one log row, for each token window of the request that the row belongs to. */
export function tokenSettlementsOf(windows: TokenWindow[], row: { apiKeyId: string | null; virtualKeyId: string | null; totalTokens: number | null }): TokenSettlement[] {
  if (!row.totalTokens) return [];
  return windows
    .filter((window) => (window.scope === 'api_key' ? row.apiKeyId === window.scopeId : row.virtualKeyId === window.scopeId))
    .map((window) => ({ scope: window.scope, scope_id: window.scopeId, limit_key: window.limitKey, window_start: window.windowStart.toISOString(), tokens: row.totalTokens! }));
}
