import { settlementsOf } from './budget-ledger.service';
import type { BudgetHold } from './budget-types';

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

  it("the final row releases every hold of the request and spends only on what it belongs to", () => {
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
