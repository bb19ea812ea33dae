import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestContext } from '../../gateway/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { budgetPeriodStart } from '../keys/key-limits';
import { KeyBudget, KeyLookupService } from '../keys/key-lookup.service';
import { PricingService } from '../pricing/pricing.service';
import { estimatePromptTokens } from '../../providers/usage';
import type { RouteTarget } from '../routing/route-plan';
import type { BudgetHold, BudgetScope, BudgetSettlement } from './budget-types';
import { CounterStore } from './counter-store';

/** A lifetime budget (no period) counts from here. */
const LIFETIME = new Date(0);
/** Output tokens assumed for the estimate when the request sets no limit. */
const DEFAULT_OUTPUT_TOKENS = 1024;
const LOG_COLUMN: Record<BudgetScope, string> = { api_key: 'api_key_id', virtual_key: 'virtual_key_id', end_user: 'end_user' };

/**
 * Budgets that hold under concurrency and across instances. Before a request is sent,
 * its estimated cost (prices × prompt size and max_tokens) is reserved on the counter of
 * each budgeted key (CounterStore: PostgreSQL, or Redis), in one atomic step that refuses
 * once spent + reserved reaches the limit; that is a 402 `budget_exceeded` and nothing
 * goes upstream. When the log rows are stored, their cost is added to the spend and the
 * reservation released, once per row, so a counter always equals the sum of its logged
 * costs. Keys without a budget cost nothing here.
 */
@Injectable()
export class BudgetLedger {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
    private readonly keys: KeyLookupService,
    private readonly counters: CounterStore,
  ) {}

  /** Reserves on the budgets of the API key and the end user (once per request) and of the target's virtual key (once per key). */
  async reserve(context: RequestContext, target: RouteTarget, body: Record<string, unknown>): Promise<void> {
    const held = (scope: BudgetScope, owner: string) => context.budgetHolds.some((hold) => hold.scope === scope && hold.owner === owner);
    const wanted: [BudgetScope, string, string, KeyBudget][] = [];
    const principal = context.principal;
    if (principal?.budget && !held('api_key', principal.id)) wanted.push(['api_key', principal.id, principal.id, principal.budget]);
    if (target.virtualKeyId && target.virtualKeyBudget && !held('virtual_key', target.virtualKeyId)) wanted.push(['virtual_key', target.virtualKeyId, target.virtualKeyId, target.virtualKeyBudget]);
    if (context.user && !held('end_user', context.user)) {
      const endUser = await this.keys.endUserBudget(context.user);
      if (endUser) wanted.push(['end_user', endUser.id, context.user, endUser.budget]);
    }
    if (wanted.length === 0) return;
    const amountUsd = this.estimate(target.provider, body);
    for (const [scope, scopeId, owner, budget] of wanted) {
      const periodStart = budgetPeriodStart(budget.period) ?? LIFETIME;
      const seed = () => this.loggedSpend(scope, owner, periodStart);
      const reservation = await this.counters.reserveBudget({ scope, scopeId, periodStart }, amountUsd, budget.limitUsd, seed);
      if (reservation === 'refused') throw budgetExceeded(scope, budget);
      // Held locally (store unreachable): nothing stored to release when the rows settle.
      context.budgetHolds.push({ scope, scopeId, owner, periodStart, amountUsd: reservation === 'held' ? amountUsd : 0 });
    }
  }

  /** The cost of the request if it used its whole output allowance; 0 for a model without a price. */
  estimate(provider: string, body: Record<string, unknown>): number {
    const model = typeof body.model === 'string' ? body.model : '';
    const promptTokens = estimatePromptTokens(body);
    const limit = [body.max_completion_tokens, body.max_tokens, body.max_output_tokens].find((value) => typeof value === 'number');
    const completionTokens = typeof limit === 'number' ? limit : DEFAULT_OUTPUT_TOKENS;
    const usage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    return this.pricing.cost(provider, model, usage) ?? 0;
  }

  /** What the log holds for the owner since the period started: where a new counter starts. */
  private async loggedSpend(scope: BudgetScope, owner: string, periodStart: Date): Promise<number> {
    const [row] = await this.dataSource.query(
      `select coalesce(sum(cost_usd), 0)::float8 as spent from request_logs where ${LOG_COLUMN[scope]} = $1 and created_at >= $2`,
      [owner, periodStart],
    );
    return Number(row.spent);
  }
}

function budgetExceeded(scope: BudgetScope, budget: KeyBudget): GatewayError {
  const whose = { api_key: 'this API key', virtual_key: 'this virtual key', end_user: 'this end user' }[scope];
  const period = budget.period ? `${budget.period} ` : '';
  return new GatewayError(402, 'budget_exceeded', `The ${period}budget of ${whose} ($${budget.limitUsd}) is used up`, 'budget_exceeded');
}

/**
 * The settlements of one log row: its cost added to the counters of the budgets the
 * request holds and that the row belongs to; on the request's final row, the
 * reservations released.
 */
export function settlementsOf(
  holds: BudgetHold[],
  row: { apiKeyId: string | null; virtualKeyId: string | null; user: string | null; costUsd: number | null },
  final: boolean,
): BudgetSettlement[] {
  const settlements: BudgetSettlement[] = [];
  for (const hold of holds) {
    const owned = hold.owner === (hold.scope === 'api_key' ? row.apiKeyId : hold.scope === 'virtual_key' ? row.virtualKeyId : row.user);
    const spend = owned && row.costUsd ? row.costUsd : 0;
    const release = final ? hold.amountUsd : 0;
    if (spend || release) settlements.push({ scope: hold.scope, scope_id: hold.scopeId, period_start: hold.periodStart.toISOString(), spend_usd: spend, release_usd: release });
  }
  return settlements;
}
