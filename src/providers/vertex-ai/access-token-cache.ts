import { createHash } from 'node:crypto';

/** An access token and when (ms since the epoch) it stops being accepted. */
export interface MintedToken {
  token: string;
  expiresAt: number;
}

/** A token with less than this left is refreshed (in the background while it is still usable). */
export const REFRESH_BEFORE_MS = 5 * 60_000;
/** A token with less than this left is not sent any more: it could expire on the way. */
export const USABLE_UNTIL_MS = 30_000;
/** Credentials remembered at most (per-request credentials must not grow the map without bound). */
const MAX_ENTRIES = 1000;

interface Entry {
  minted?: MintedToken;
  /** The refresh under way, which every concurrent request waits on instead of minting its own. */
  refreshing?: Promise<MintedToken>;
}

/**
 * Access tokens per credential, keyed by a hash of it (the credential itself is kept
 * nowhere here). A token is served until shortly before it expires, never fetched per
 * request; near its end one refresh starts and requests keep the old token meanwhile;
 * a missing or spent token makes every concurrent request wait on the same refresh.
 */
export class AccessTokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The id a credential is cached under. */
  static idOf(credential: string): string {
    return createHash('sha256').update(credential).digest('base64url');
  }

  /** A usable token for the credential `id`, minted by `mint` when there is none. */
  async token(id: string, mint: () => Promise<MintedToken>): Promise<string> {
    const entry = this.entries.get(id);
    const minted = entry?.minted;
    if (entry && minted) {
      const left = minted.expiresAt - this.now();
      if (left > REFRESH_BEFORE_MS) return minted.token;
      if (left > USABLE_UNTIL_MS) {
        // A failed background refresh is tried again by the next request; this token still works.
        this.refresh(entry, mint).catch(() => undefined);
        return minted.token;
      }
    }
    return (await this.refresh(entry ?? this.add(id), mint)).token;
  }

  private add(id: string): Entry {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    const entry: Entry = {};
    this.entries.set(id, entry);
    return entry;
  }

  private refresh(entry: Entry, mint: () => Promise<MintedToken>): Promise<MintedToken> {
    entry.refreshing ??= mint()
      .then((minted) => {
        entry.minted = minted;
        return minted;
      })
      .finally(() => {
        entry.refreshing = undefined;
      });
    return entry.refreshing;
  }
}
