import { TtlCache } from './ttl-cache';

describe('TtlCache', () => {
  it('loads once for concurrent misses and serves from memory after', async () => {
    const cache = new TtlCache<number>(60_000);
    let loads = 0;
    const load = async () => ++loads;
    const results = await Promise.all([cache.get('k', load), cache.get('k', load), cache.get('k', load)]);
    expect(results).toEqual([1, 1, 1]);
    expect(cache.get('k', load)).toBe(1); // synchronous hit
    expect(loads).toBe(1);
  });

  it('serves the last known value when a refresh fails, and fails without one', async () => {
    const cache = new TtlCache<string>(0);
    await cache.get('k', async () => 'v1');
    await expect(cache.get('k', async () => Promise.reject(new Error('db down')))).resolves.toBe('v1');
    await expect(cache.get('other', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
  });

  it('loads again after a load that an invalidation overtook, keeping that value as the fallback', async () => {
    const cache = new TtlCache<string>(60_000);
    let release!: (v: string) => void;
    const pending = cache.get('k', () => new Promise<string>((r) => (release = r)));
    cache.expireAll(); // e.g. a NOTIFY for another key's creation arriving while this key loads
    release('stale');
    await pending;
    await expect(cache.get('k', async () => 'fresh')).resolves.toBe('fresh');

    const second = cache.get('other', () => new Promise<string>((r) => (release = r)));
    cache.expireAll();
    release('known');
    await second;
    await expect(cache.get('other', async () => Promise.reject(new Error('db down')))).resolves.toBe('known');
  });

  it('drops a value it is asked not to keep, which is then no fallback either', async () => {
    const cache = new TtlCache<string | null>(0);
    await cache.get('k', async () => 'known');
    await expect(
      cache.get(
        'k',
        async () => null,
        (v) => (v === null ? null : 60_000),
      ),
    ).resolves.toBeNull();
    await expect(cache.get('k', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
  });

  it('uses a shorter lifetime where asked', async () => {
    const cache = new TtlCache<string | null>(60_000);
    await cache.get(
      'missing',
      async () => null,
      (v) => (v === null ? 0 : 60_000),
    );
    await expect(cache.get('missing', async () => 'now here')).resolves.toBe('now here');
  });

  it('expireAll reloads every entry but keeps it as the fallback when the reload fails', async () => {
    const cache = new TtlCache<string>(60_000);
    await cache.get('a', async () => 'a1');
    await cache.get('b', async () => 'b1');
    cache.expireAll();
    await expect(cache.get('a', async () => 'a2')).resolves.toBe('a2');
    await expect(cache.get('b', async () => Promise.reject(new Error('db down')))).resolves.toBe('b1');
  });
});
