interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Read-through cache for look-ups on the request path. Concurrent misses for one key
 * share a single load; when a refresh fails (database down) the last known value is
 * served, so keys already seen keep working through an outage.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V>>();
  /** Bumped on every invalidation, so a load that started before it is not cached. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * `ttlFor` lets a caller keep some values shorter, or not at all (null: the entry is
   * dropped, so it is no fallback either).
   */
  get(key: string, load: () => Promise<V>, ttlFor?: (value: V) => number | null): V | Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    const pending = this.loading.get(key);
    if (pending) return pending;

    const generation = this.generation;
    const promise = load().then(
      (value) => {
        const ttlMs = ttlFor ? ttlFor(value) : this.ttlMs;
        if (ttlMs === null) this.entries.delete(key);
        else if (generation === this.generation) this.set(key, value, ttlMs);
        // An invalidation overtook this load, so the value may be stale: it loads again on
        // the next get, but stays the fallback should that load fail (an outage).
        else this.set(key, value, 0);
        return value;
      },
      (error: unknown) => {
        if (entry) return entry.value;
        throw error;
      },
    );
    const settled = promise.finally(() => this.loading.delete(key));
    this.loading.set(key, settled);
    return settled;
  }

  /** The value while it is fresh, without loading. */
  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : undefined;
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // Maps iterate in insertion order: drop the oldest entry.
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs });
  }

  /** Every entry must be loaded again, but stays the fallback should that load fail. */
  expireAll(): void {
    this.generation++;
    for (const entry of this.entries.values()) entry.expiresAt = 0;
  }
}
