import type { DataSource } from 'typeorm';
import type { RequestContext } from '../../context/request-context';
import type { KeyLookupService } from '../keys/key-lookup.service';
import type { PricingService } from '../pricing/pricing.service';
import type { RouteTarget } from '../../context/route-plan';
import type { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { BudgetLedger, settlementsOf } from './budget-ledger';
import type { BudgetHold } from '../../context/budget-records';
import type { CounterStore } from './counter-store';

const PERIOD = new Date('2026-11-01T00:00:00Z');
const WS = 'ws-1';
const holds: BudgetHold[] = [
  { scope: 'api_key', scopeId: 'key-1', owner: 'key-1', workspaceId: WS, periodStart: PERIOD, amountUsd: 0.5 },
  { scope: 'virtual_key', scopeId: 'vk-a', owner: 'vk-a', workspaceId: WS, periodStart: PERIOD, amountUsd: 0.5 },
  { scope: 'virtual_key', scopeId: 'vk-b', owner: 'vk-b', workspaceId: WS, periodStart: new Date(0), amountUsd: 0.25 },
  { scope: 'end_user', scopeId: 'eu-1', owner: 'alice', workspaceId: WS, periodStart: PERIOD, amountUsd: 0.5 },
  { scope: 'workspace', scopeId: WS, owner: WS, workspaceId: WS, periodStart: PERIOD, amountUsd: 0.5 },
];

describe('settlementsOf', () => {
  it("a failed attempt's row adds its cost to the API key and its own virtual key, releasing nothing", () => {
    expect(settlementsOf(holds, { apiKeyId: 'key-1', virtualKeyId: 'vk-a', user: 'alice', workspaceId: WS, costUsd: 0.1 }, false)).toEqual([
      { scope: 'api_key', scope_id: 'key-1', period_start: PERIOD.toISOString(), spend_usd: 0.1, release_usd: 0 },
      { scope: 'virtual_key', scope_id: 'vk-a', period_start: PERIOD.toISOString(), spend_usd: 0.1, release_usd: 0 },
      { scope: 'end_user', scope_id: 'eu-1', period_start: PERIOD.toISOString(), spend_usd: 0.1, release_usd: 0 },
      { scope: 'workspace', scope_id: WS, period_start: PERIOD.toISOString(), spend_usd: 0.1, release_usd: 0 },
    ]);
  });

  it('the final row releases every hold of the request and spends only on what it belongs to', () => {
    expect(settlementsOf(holds, { apiKeyId: 'key-1', virtualKeyId: 'vk-b', user: 'bob', workspaceId: WS, costUsd: 0.2 }, true)).toEqual([
      { scope: 'api_key', scope_id: 'key-1', period_start: PERIOD.toISOString(), spend_usd: 0.2, release_usd: 0.5 },
      { scope: 'virtual_key', scope_id: 'vk-a', period_start: PERIOD.toISOString(), spend_usd: 0, release_usd: 0.5 },
      { scope: 'virtual_key', scope_id: 'vk-b', period_start: new Date(0).toISOString(), spend_usd: 0.2, release_usd: 0.25 },
      { scope: 'end_user', scope_id: 'eu-1', period_start: PERIOD.toISOString(), spend_usd: 0, release_usd: 0.5 },
      { scope: 'workspace', scope_id: WS, period_start: PERIOD.toISOString(), spend_usd: 0.2, release_usd: 0.5 },
    ]);
  });

  it("the same user's row in another workspace is not this end user's, nor this workspace's", () => {
    expect(settlementsOf(holds, { apiKeyId: 'key-2', virtualKeyId: null, user: 'alice', workspaceId: 'ws-2', costUsd: 0.3 }, false)).toEqual([]);
  });

  it('a row without cost and not final settles nothing; no holds, nothing', () => {
    expect(settlementsOf(holds, { apiKeyId: 'key-1', virtualKeyId: 'vk-a', user: null, workspaceId: WS, costUsd: null }, false)).toEqual([]);
    expect(settlementsOf([], { apiKeyId: 'key-1', virtualKeyId: null, user: null, workspaceId: WS, costUsd: 1 }, true)).toEqual([]);
  });
});

describe('BudgetLedger.reserve', () => {
  // $1 per output token, prompts free: the amounts read as output tokens.
  const pricing = { cost: (_provider: string, _model: string, usage: { completionTokens: number }) => usage.completionTokens } as unknown as PricingService;
  const target = { provider: 'openai', virtualKeyId: null, virtualKeyBudget: null } as unknown as RouteTarget;
  let reserveBudget: jest.Mock;
  let ledger: BudgetLedger;

  afterEach(() => jest.restoreAllMocks());
  beforeEach(() => {
    reserveBudget = jest.fn().mockResolvedValue('held');
    const counters = { reserveBudget } as unknown as CounterStore;
    const workspaces = { byId: async () => null } as unknown as WorkspaceDirectory;
    ledger = new BudgetLedger({} as DataSource, pricing, {} as KeyLookupService, counters, workspaces);
  });

  const context = () =>
    ({ principal: { id: 'key-1', workspaceId: WS, budget: { limitUsd: 100, period: null } }, budgetHolds: [], user: null }) as unknown as RequestContext;
  const reserved = async (body: Record<string, unknown>) => {
    const request = context();
    await ledger.reserve(request, target, body);
    return request.budgetHolds.map((hold) => hold.amountUsd);
  };
  const logged = (costUsd: number, model = 'gpt-4o-mini') => ({
    apiKeyId: 'key-1',
    virtualKeyId: null,
    user: null,
    workspaceId: WS,
    costUsd,
    provider: 'openai',
    model,
  });

  it('reserves every choice the request asks for (`n`)', async () => {
    expect(await reserved({ model: 'gpt-4o-mini', max_tokens: 3 })).toEqual([3]);
    expect(await reserved({ model: 'gpt-4o-mini', max_tokens: 3, n: 5 })).toEqual([15]);
    expect(reserveBudget).toHaveBeenLastCalledWith({ scope: 'api_key', scopeId: 'key-1', periodStart: new Date(0) }, 15, 100, expect.any(Function));
  });

  it("reserves what this budget's requests to the model really cost lately when the body promises less", async () => {
    // Time stands still: the learned cost decays with it.
    jest.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
    // The provider ignored max_tokens: 1 and answered with 40 tokens.
    ledger.observe(
      context().budgetHolds.concat({ scope: 'api_key', scopeId: 'key-1', owner: 'key-1', workspaceId: WS, periodStart: new Date(0), amountUsd: 1 }),
      logged(40),
    );
    expect(await reserved({ model: 'gpt-4o-mini', max_tokens: 1 })).toEqual([40]);
    // The body's own estimate still wins when it is larger; another model has its own history.
    expect(await reserved({ model: 'gpt-4o-mini', max_tokens: 100 })).toEqual([100]);
    expect(await reserved({ model: 'gpt-4o', max_tokens: 1 })).toEqual([1]);
  });

  it('learns only from rows the budget owns, and from priced ones', async () => {
    const hold: BudgetHold = { scope: 'api_key', scopeId: 'key-1', owner: 'key-1', workspaceId: WS, periodStart: new Date(0), amountUsd: 1 };
    ledger.observe([hold], { ...logged(40), apiKeyId: 'key-2' });
    ledger.observe([hold], { ...logged(0), costUsd: null });
    expect(await reserved({ model: 'gpt-4o-mini', max_tokens: 1 })).toEqual([1]);
  });
});
