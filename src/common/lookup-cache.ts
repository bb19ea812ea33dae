import { TtlCache } from './ttl-cache';

/**
 * Look-ups that may find nothing (a key by its secret, a virtual key or config by slug):
 * what exists is kept in one TtlCache, with its outage fallback; what does not, in
 * another, shorter-lived and bounded on its own, so that a flood of made-up names
 * cannot push the ones in use out of memory.
 */
export class LookupCache<V> {
  private readonly found: TtlCache<V | null>;
  private readonly missing: TtlCache<true>;
  /** Bumped by every invalidation: a miss one overtook is not remembered (the entry may be new). */
  private changes = 0;

  constructor(
    private readonly ttlMs: number,
    missTtlMs: number,
  ) {
    this.found = new TtlCache(ttlMs);
    this.missing = new TtlCache(Math.min(ttlMs, missTtlMs));
  }

  get(key: string, load: () => Promise<V | null>): V | null | Promise<V | null> {
    if (this.missing.peek(key)) return null;
    const changes = this.changes;
    const loadAndNoteMiss = async () => {
      const value = await load();
      if (value === null && changes === this.changes) this.missing.set(key, true);
      return value;
    };
    // A miss leaves no entry among the found, so an entry since removed is no fallback either.
    return this.found.get(key, loadAndNoteMiss, (value) => (value === null ? null : this.ttlMs));
  }

  /** Every entry loads again; those found stay the fallback should that load fail. */
  expireAll(): void {
    this.changes++;
    this.found.expireAll();
    this.missing.expireAll();
  }
}
