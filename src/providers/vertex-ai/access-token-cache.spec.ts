import { AccessTokenCache, REFRESH_BEFORE_MS, USABLE_UNTIL_MS, type MintedToken } from './access-token-cache';

describe('AccessTokenCache', () => {
  let now: number;
  let minted: number;
  let cache: AccessTokenCache;
  const mint =
    (lifetimeMs = 3_600_000) =>
    async (): Promise<MintedToken> => {
      minted += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return { token: `token-${minted}`, expiresAt: now + lifetimeMs };
    };

  beforeEach(() => {
    now = 1_000_000;
    minted = 0;
    cache = new AccessTokenCache(() => now);
  });

  it('mints once for concurrent requests and serves the token until shortly before it expires', async () => {
    const tokens = await Promise.all([1, 2, 3, 4].map(() => cache.token('a', mint())));
    expect(tokens).toEqual(['token-1', 'token-1', 'token-1', 'token-1']);
    now += 3_600_000 - REFRESH_BEFORE_MS - 1;
    expect(await cache.token('a', mint())).toBe('token-1');
    expect(minted).toBe(1);
  });

  it('refreshes in the background near the end, serving the old token meanwhile', async () => {
    await cache.token('a', mint());
    now += 3_600_000 - REFRESH_BEFORE_MS + 1;
    expect(await cache.token('a', mint())).toBe('token-1');
    expect(await cache.token('a', mint())).toBe('token-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(minted).toBe(2);
    expect(await cache.token('a', mint())).toBe('token-2');
  });

  it('waits for a new token once the old one is too close to expiry, and keeps credentials apart', async () => {
    await cache.token('a', mint());
    now += 3_600_000 - USABLE_UNTIL_MS + 1;
    expect(await cache.token('a', mint())).toBe('token-2');
    expect(await cache.token('b', mint())).toBe('token-3');
  });

  it('lets a failed mint fail its waiters and tries again on the next request', async () => {
    const failing = async (): Promise<MintedToken> => {
      throw new Error('refused');
    };
    await expect(Promise.all([cache.token('a', failing), cache.token('a', failing)])).rejects.toThrow('refused');
    expect(await cache.token('a', mint())).toBe('token-1');
  });

  it('keys credentials by a hash, never the credential itself', () => {
    const id = AccessTokenCache.idOf('{"private_key": "secret"}');
    expect(id).not.toContain('secret');
    expect(id).toBe(AccessTokenCache.idOf('{"private_key": "secret"}'));
    expect(id).not.toBe(AccessTokenCache.idOf('{"private_key": "other"}'));
  });
});
