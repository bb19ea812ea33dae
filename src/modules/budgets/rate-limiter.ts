import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { RATE_WINDOW_MS, RateLimit } from '../../context/key-limits';
import type { RouteTarget } from '../../context/route-plan';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import type { BudgetScope, RateWindow, TokenSettlement } from '../../context/budget-records';
import { CounterStore } from './counter-store';

const UNIT_NAMES: Record<RateLimit['unit'], string> = { rpm: 'minute', rph: 'hour', rpd: 'day' };

/**
 * Request and token rate limits of API keys, workspaces (across all their keys) and virtual keys, in fixed windows (a
 * minute, an hour or a day, UTC) counted in the CounterStore, shared by every instance.
 * A request limit is one atomic upsert that counts the request only while under the
 * limit; a token limit admits while the window's tokens are under it, the tokens being
 * added by the log rows. Over a limit: 429 `rate_limit_exceeded` with `Retry-After`
 * (the end of the window). Keys without limits cost nothing.
 */
@Injectable()
export class RateLimiter {
  constructor(
    private readonly counters: CounterStore,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  /** The API key's and its workspace's limits once per request (the workspace's from the in-memory directory), a virtual key's once per key. */
  async admit(context: RequestContext, target: RouteTarget): Promise<void> {
    const principal = context.principal;
    if (principal?.rateLimits.length && !context.rateLimited.has(principal.id)) {
      context.rateLimited.add(principal.id);
      await this.check(context, 'api_key', principal.id, principal.rateLimits);
    }
    if (principal && !context.rateLimited.has(principal.workspaceId)) {
      const workspace = await this.workspaces.byId(principal.workspaceId);
      if (workspace?.rateLimits.length) {
        context.rateLimited.add(workspace.id);
        await this.check(context, 'workspace', workspace.id, workspace.rateLimits, workspace.slug);
      }
    }
    if (target.virtualKeyId && target.virtualKeyRateLimits.length && !context.rateLimited.has(target.virtualKeyId)) {
      context.rateLimited.add(target.virtualKeyId);
      await this.check(context, 'virtual_key', target.virtualKeyId, target.virtualKeyRateLimits);
    }
  }

  private async check(context: RequestContext, scope: BudgetScope, scopeId: string, limits: RateLimit[], name: string | null = null): Promise<void> {
    const now = Date.now();
    for (const limit of limits) {
      const windowMs = RATE_WINDOW_MS[limit.unit];
      const window = { scope, scopeId, limitKey: `${limit.type}:${limit.unit}`, windowStart: new Date(Math.floor(now / windowMs) * windowMs), windowMs };
      const admitted =
        limit.type === 'requests' ? await this.counters.countRequest(window, limit.value) : (await this.counters.tokensUsed(window)) < limit.value;
      if (!admitted) throw rateLimited(scope, name, limit, Math.ceil((window.windowStart.getTime() + windowMs - now) / 1000));
      // A tool loop checks again each model round: a window already held is not added twice (its tokens would settle twice).
      if (limit.type === 'tokens' && !context.tokenWindows.some((held) => sameWindow(held, window))) context.tokenWindows.push(window);
    }
  }
}

function sameWindow(a: RateWindow, b: RateWindow): boolean {
  return a.scopeId === b.scopeId && a.limitKey === b.limitKey && a.windowStart.getTime() === b.windowStart.getTime();
}

function rateLimited(scope: BudgetScope, name: string | null, limit: RateLimit, retryAfterSeconds: number): GatewayError {
  const whose = scope === 'workspace' ? `Workspace '${name}'` : scope === 'api_key' ? 'This API key' : 'This virtual key';
  const seconds = String(Math.max(1, retryAfterSeconds));
  const message = `${whose} is limited to ${limit.value} ${limit.type} per ${UNIT_NAMES[limit.unit]}; retry in ${seconds} s`;
  return new GatewayError(429, 'rate_limit_error', message, 'rate_limit_exceeded', null, { 'retry-after': seconds });
}

/** The tokens of one log row, for each token window of the request that the row belongs to. */
export function tokenSettlementsOf(
  windows: RateWindow[],
  row: { apiKeyId: string | null; virtualKeyId: string | null; workspaceId: string; totalTokens: number | null },
): TokenSettlement[] {
  if (!row.totalTokens) return [];
  const ownerOf = { api_key: row.apiKeyId, virtual_key: row.virtualKeyId, workspace: row.workspaceId, end_user: null };
  return windows
    .filter((window) => ownerOf[window.scope] === window.scopeId)
    .map((window) => ({
      scope: window.scope,
      scope_id: window.scopeId,
      limit_key: window.limitKey,
      window_start: window.windowStart.toISOString(),
      tokens: row.totalTokens!,
    }));
}
