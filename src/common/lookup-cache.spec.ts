import { LookupCache } from './lookup-cache';

/** A table to look things up in: present names, a switch for an outage, a count of queries, a query to hold open. */
function fakeTable() {
  const table = {
    rows: new Set<string>(),
    down: false,
    queries: 0,
    hold: false,
    release: null as null | ((found: string | null) => void),
    load: (name: string) => async (): Promise<string | null> => {
      table.queries++;
      if (table.down) throw new Error('database unreachable');
      if (table.hold) return new Promise((resolve) => (table.release = resolve));
      return table.rows.has(name) ? `row ${name}` : null;
    },
  };
  return table;
}

describe('LookupCache', () => {
  it('serves what it found and what it found missing from memory', async () => {
    const table = fakeTable();
    const cache = new LookupCache<string>(60_000, 5_000);
    table.rows.add('a');
    expect(await cache.get('a', table.load('a'))).toBe('row a');
    expect(await cache.get('b', table.load('b'))).toBeNull();
    expect(cache.get('a', table.load('a'))).toBe('row a');
    expect(cache.get('b', table.load('b'))).toBeNull();
    expect(table.queries).toBe(2);
  });

  it('keeps what it found through a flood of misses, so an outage after it still serves them', async () => {
    const table = fakeTable();
    const cache = new LookupCache<string>(60_000, 5_000);
    table.rows.add('in-use');
    await cache.get('in-use', table.load('in-use'));
    for (let i = 0; i < 25_000; i++) await cache.get(`made-up-${i}`, table.load(`made-up-${i}`));

    table.down = true;
    cache.expireAll(); // a change announced just before the outage: reload, and fall back when that fails
    expect(await cache.get('in-use', table.load('in-use'))).toBe('row in-use');
    await expect(cache.get('never-seen', table.load('never-seen'))).rejects.toThrow('database unreachable');
  });

  it('asks again after a change, and does not remember a miss that a change overtook', async () => {
    const table = fakeTable();
    const cache = new LookupCache<string>(60_000, 5_000);
    expect(await cache.get('new', table.load('new'))).toBeNull();
    table.rows.add('new');
    cache.expireAll();
    expect(await cache.get('new', table.load('new'))).toBe('row new');

    table.hold = true;
    const miss = cache.get('newer', table.load('newer'));
    table.rows.add('newer');
    cache.expireAll(); // the row was committed while the miss was being read
    table.release!(null);
    expect(await miss).toBeNull();
    table.hold = false;
    expect(await cache.get('newer', table.load('newer'))).toBe('row newer');
  });

  it('forgets a removed entry: it is no fallback in an outage', async () => {
    const table = fakeTable();
    const cache = new LookupCache<string>(60_000, 0);
    table.rows.add('revoked');
    await cache.get('revoked', table.load('revoked'));
    table.rows.delete('revoked');
    cache.expireAll();
    expect(await cache.get('revoked', table.load('revoked'))).toBeNull();

    table.down = true;
    await expect(cache.get('revoked', table.load('revoked'))).rejects.toThrow('database unreachable');
  });

  it('never remembers a miss for longer than what it found', async () => {
    const table = fakeTable();
    const cache = new LookupCache<string>(0, 5_000);
    expect(await cache.get('later', table.load('later'))).toBeNull();
    table.rows.add('later');
    expect(await cache.get('later', table.load('later'))).toBe('row later');
  });
});
