import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { budgetPeriodStart } from '../../context/key-limits';
import { KeyLookupService } from '../keys/key-lookup.service';
import { KeyBudget } from '../../context/caller';
import { PricingService } from '../pricing/pricing.service';
import { estimatePromptTokens } from '../../providers/usage';
import type { RouteTarget } from '../../context/route-plan';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { DEFAULT_WORKSPACE_ID } from '../workspaces/workspace.entity';
import type { BudgetHold, BudgetScope, BudgetSettlement } from '../../context/budget-records';
import { CounterStore } from './counter-store';
import { outputTokenAllowance, RecentCosts } from './reservation-estimate';

/** A lifetime budget (no period) counts from here. */
const LIFETIME = new Date(0);
/** The log rows a counter is seeded from: `$1` the owner, `$3` the request's workspace (an end user is a user inside one). */
const LOG_ROWS: Record<BudgetScope, string> = {
  api_key: 'api_key_id = $1',
  virtual_key: 'virtual_key_id = $1',
  end_user: 'end_user = $1 and workspace_id = $3',
  workspace: 'workspace_id = $1',
};

/**
 * Budgets that hold under concurrency and across instances. Before a request is sent,
 * its estimated cost is reserved on the counter of each budgeted key, end user and
 * workspace (CounterStore: PostgreSQL, or Redis), in one atomic step that refuses once
 * spent + reserved reaches the limit; that is a 402 `budget_exceeded` and nothing goes
 * upstream. The estimate is the larger of the body's (prices × prompt size and output
 * allowance, `n` choices included) and what that counter's requests to the model cost
 * lately (`RecentCosts`, learned from the log rows): a provider answering past
 * `max_tokens` cannot make concurrent requests overshoot by more than about one. When
 * the log rows are stored, their cost is added to the spend and the reservation
 * released, once per row, so a counter always equals the sum of its logged costs. Keys
 * without a budget cost nothing here.
 */
@Injectable()
export class BudgetLedger {
  private readonly recentCosts = new RecentCosts();

  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
    private readonly keys: KeyLookupService,
    private readonly counters: CounterStore,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  /**
   * Reserves on the budgets of the API key, its workspace and the end user (once per
   * request) and of the target's virtual key (once per key). The workspace and end user
   * budgets come from in-memory caches: no database trip unless a counter is checked.
   */
  async reserve(context: RequestContext, target: RouteTarget, body: Record<string, unknown>): Promise<void> {
    const held = (scope: BudgetScope, owner: string) => context.budgetHolds.some((hold) => hold.scope === scope && hold.owner === owner);
    const wanted = (await this.budgetsOf(context, target)).filter((budget) => !held(budget.scope, budget.owner));
    if (wanted.length === 0) return;
    const model = typeof body.model === 'string' ? body.model : '';
    const fromBody = this.estimate(target.provider, body);
    for (const budget of wanted) {
      const amountUsd = toCounterScale(Math.max(fromBody, this.recentCosts.expected(costKey(budget.scope, budget.scopeId, target.provider, model))));
      const reservation = await this.reserveOn(budget, amountUsd);
      // Held locally (store unreachable): nothing stored to release when the rows settle.
      context.budgetHolds.push({ ...holdOf(budget), amountUsd: reservation === 'held' ? amountUsd : 0 });
    }
  }

  /**
   * 402 when a budget the caller's requests to `target` count towards is used up already;
   * reserves nothing. For work whose cost is known only later (a batch run at its provider).
   */
  async refuseIfSpent(caller: BudgetCaller, target: RouteTarget): Promise<void> {
    for (const budget of await this.budgetsOf(caller, target)) await this.reserveOn(budget, 0);
  }

  /**
   * The budgets the caller's requests to `target` count towards, as holds of nothing: what
   * log rows written without a request (a native batch's lines) settle their cost on.
   */
  async holdsFor(caller: BudgetCaller, target: RouteTarget): Promise<BudgetHold[]> {
    return (await this.budgetsOf(caller, target)).map((budget) => ({ ...holdOf(budget), amountUsd: 0 }));
  }

  /** Adds `amountUsd` to the budget's reservations; 402 when its spend and reservations have reached its limit. */
  private async reserveOn(budget: WantedBudget, amountUsd: number): Promise<'held' | 'held_locally'> {
    const seed = () => this.loggedSpend(budget.scope, budget.owner, budget.periodStart, budget.workspaceId);
    const reservation = await this.counters.reserveBudget(
      { scope: budget.scope, scopeId: budget.scopeId, periodStart: budget.periodStart },
      amountUsd,
      budget.budget.limitUsd,
      seed,
    );
    if (reservation === 'refused') throw budgetExceeded(budget.scope, budget.budget, budget.name);
    return reservation;
  }

  /** The budgets of the caller's key, its workspace and end user, and of the target's virtual key, in this period. */
  private async budgetsOf(caller: BudgetCaller, target: RouteTarget): Promise<WantedBudget[]> {
    const wanted: WantedBudget[] = [];
    const principal = caller.principal;
    // As its log rows: a request without a key is the default workspace's.
    const workspaceId = principal?.workspaceId ?? DEFAULT_WORKSPACE_ID;
    const add = (scope: BudgetScope, scopeId: string, owner: string, budget: KeyBudget, name: string | null = null) =>
      wanted.push({ scope, scopeId, owner, budget, name, workspaceId, periodStart: budgetPeriodStart(budget.period) ?? LIFETIME });
    if (principal?.budget) add('api_key', principal.id, principal.id, principal.budget);
    const workspace = await this.workspaces.byId(workspaceId);
    if (workspace?.budget) add('workspace', workspace.id, workspace.id, workspace.budget, workspace.slug);
    if (target.virtualKeyId && target.virtualKeyBudget) add('virtual_key', target.virtualKeyId, target.virtualKeyId, target.virtualKeyBudget);
    if (caller.user) {
      const endUser = await this.keys.endUserBudget(workspaceId, caller.user);
      if (endUser) add('end_user', endUser.id, caller.user, endUser.budget);
    }
    return wanted;
  }

  /** The cost of the request if it used its whole output allowance (every choice); 0 for a model without a price. */
  estimate(provider: string, body: Record<string, unknown>): number {
    const model = typeof body.model === 'string' ? body.model : '';
    const promptTokens = estimatePromptTokens(body);
    const completionTokens = outputTokenAllowance(body);
    const usage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    return this.pricing.cost(provider, model, usage) ?? 0;
  }

  /**
   * A log row's cost, learned by the budgets it counts towards (as `settlementsOf` decides),
   * under the provider and model its request named: what the next reservations hold.
   */
  observe(holds: BudgetHold[], row: LoggedCost): void {
    // Unpriced and free rows (a cache hit, an MCP tool call) teach nothing.
    if (!row.costUsd || !row.provider || !row.model) return;
    for (const hold of holds) {
      if (ownsRow(hold, row)) this.recentCosts.observe(costKey(hold.scope, hold.scopeId, row.provider, row.model), row.costUsd);
    }
  }

  /** What the log holds for the owner since the period started: where a new counter starts. */
  private async loggedSpend(scope: BudgetScope, owner: string, periodStart: Date, workspaceId: string): Promise<number> {
    const [row] = await this.dataSource.query(
      `select coalesce(sum(cost_usd), 0)::float8 as spent from request_logs where ${LOG_ROWS[scope]} and created_at >= $2`,
      scope === 'end_user' ? [owner, periodStart, workspaceId] : [owner, periodStart],
    );
    return Number(row.spent);
  }
}

/** Whose requests count towards budgets: the caller's key (its workspace) and end user. A request's context is one. */
export type BudgetCaller = Pick<RequestContext, 'principal' | 'user'>;

/** One budget a request counts towards, in its current period. */
interface WantedBudget {
  scope: BudgetScope;
  scopeId: string;
  /** What the log rows of this scope carry (see BudgetHold). */
  owner: string;
  budget: KeyBudget;
  /** The workspace's slug, for the 402's message. */
  name: string | null;
  workspaceId: string;
  periodStart: Date;
}

function holdOf(budget: WantedBudget): Omit<BudgetHold, 'amountUsd'> {
  return { scope: budget.scope, scopeId: budget.scopeId, owner: budget.owner, workspaceId: budget.workspaceId, periodStart: budget.periodStart };
}

/** What a log row tells the budgets: whose it is, and what it cost. */
type LoggedCost = {
  apiKeyId: string | null;
  virtualKeyId: string | null;
  user: string | null;
  workspaceId: string;
  costUsd: number | null;
  provider?: string | null;
  model?: string | null;
};

function costKey(scope: BudgetScope, scopeId: string, provider: string, model: string): string {
  return `${scope}:${scopeId}:${provider}:${model}`;
}

function budgetExceeded(scope: BudgetScope, budget: KeyBudget, name: string | null): GatewayError {
  const whose = { api_key: 'this API key', virtual_key: 'this virtual key', end_user: 'this end user', workspace: `workspace '${name}'` }[scope];
  const period = budget.period ? `${budget.period} ` : '';
  return new GatewayError(402, 'budget_exceeded', `The ${period}budget of ${whose} ($${budget.limitUsd}) is used up`, 'budget_exceeded');
}

/**
 * The settlements of one log row: its cost added to the counters of the budgets the
 * request holds and that the row belongs to; on the request's final row, the
 * reservations released.
 */
export function settlementsOf(holds: BudgetHold[], row: LoggedCost, final: boolean): BudgetSettlement[] {
  const settlements: BudgetSettlement[] = [];
  for (const hold of holds) {
    const owned = ownsRow(hold, row);
    const spend = owned && row.costUsd ? row.costUsd : 0;
    const release = final ? hold.amountUsd : 0;
    if (spend || release)
      settlements.push({ scope: hold.scope, scope_id: hold.scopeId, period_start: hold.periodStart.toISOString(), spend_usd: spend, release_usd: release });
  }
  return settlements;
}

/** Whether a log row counts towards the hold's budget (an end user's: its `user` inside the hold's workspace). */
function ownsRow(hold: BudgetHold, row: { apiKeyId: string | null; virtualKeyId: string | null; user: string | null; workspaceId: string }): boolean {
  switch (hold.scope) {
    case 'api_key':
      return hold.owner === row.apiKeyId;
    case 'virtual_key':
      return hold.owner === row.virtualKeyId;
    case 'end_user':
      return hold.owner === row.user && hold.workspaceId === row.workspaceId;
    case 'workspace':
      return hold.owner === row.workspaceId;
  }
}

/**
 * Rounded up to the counters' scale (numeric(20, 10)): a reservation is added one by one
 * but released as a sum, and unrounded amounts would leave a residue such as 1e-10
 * reserved after every request has settled.
 */
function toCounterScale(usd: number): number {
  return Math.ceil(usd * 1e10) / 1e10;
}
