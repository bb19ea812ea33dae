import type { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { PostgresCounterStore } from './postgres-counter-store';

/** A data source that answers from `answer` until `down` is set, then fails as a stopped server does. */
function fakeDatabase(answer: (sql: string) => unknown[]) {
  const state = { down: false };
  const dataSource = {
    query: async (sql: string) => {
      if (state.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return answer(sql);
    },
  } as unknown as DataSource;
  return { dataSource, state };
}

const counter = { scope: 'api_key' as const, scopeId: 'key-1', periodStart: new Date(0) };
const window = { scope: 'api_key' as const, scopeId: 'key-1', limitKey: 'requests:rpm', windowStart: new Date(60_000), windowMs: 60_000 };

describe('PostgresCounterStore while the database is unreachable', () => {
  it('admits from the budget it last read, counting its own reservations, and refuses past the limit', async () => {
    const { dataSource, state } = fakeDatabase(() => [{ used: 0.4 }]);
    const store = new PostgresCounterStore(dataSource);
    expect(await store.reserveBudget(counter, 0.1, 1, async () => 0)).toBe('held');
    state.down = true;
    const outcomes = [];
    for (let i = 0; i < 8; i++) outcomes.push(await store.reserveBudget(counter, 0.2, 1, async () => 0));
    // 0.4 known, then 0.6, 0.8, 1.0: three more admitted locally.
    expect(outcomes).toEqual(['held_locally', 'held_locally', 'held_locally', 'refused', 'refused', 'refused', 'refused', 'refused']);
  });

  it('answers 503 for a budget it has never read', async () => {
    const { dataSource, state } = fakeDatabase(() => []);
    state.down = true;
    const error = await new PostgresCounterStore(dataSource).reserveBudget(counter, 0.1, 1, async () => 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(503);
  });

  it('counts requests of a window on top of what it last read, from zero for a window it never read', async () => {
    const { dataSource, state } = fakeDatabase(() => [{ used: 3 }]);
    const store = new PostgresCounterStore(dataSource);
    expect(await store.countRequest(window, 5)).toBe(true);
    state.down = true;
    expect([await store.countRequest(window, 5), await store.countRequest(window, 5), await store.countRequest(window, 5)]).toEqual([true, true, false]);
    const next = { ...window, windowStart: new Date(120_000) };
    expect([await store.countRequest(next, 2), await store.countRequest(next, 2), await store.countRequest(next, 2)]).toEqual([true, true, false]);
  });

  it('rethrows what is not an outage (a bug must not pass as one)', async () => {
    const dataSource = { query: async () => Promise.reject(Object.assign(new Error('syntax error'), { code: '42601' })) } as unknown as DataSource;
    await expect(new PostgresCounterStore(dataSource).countRequest(window, 5)).rejects.toThrow('syntax error');
  });
});
