/**
 * What an adapter reads of the target it sends to: the provider, its credential and how
 * to reach it. Routing's `RouteTarget` extends it with what the gateway enforces around
 * the attempt (budgets, limits, allowed models), which adapters never see.
 */
export interface ProviderTarget {
  provider: string;
  /** Provider credential in clear; lives only in memory, never logged. */
  apiKey: string | null;
  /**
   * A short-lived bearer token the adapter's `authorize` minted from `apiKey` (or the
   * gateway's own cloud credentials) for this attempt; absent for other providers.
   */
  accessToken?: string;
  /** Base URL replacing the provider's default (an OpenAI-compatible server, an Azure resource). */
  customHost: string | null;
  organization: string | null;
  project: string | null;
  providerOptions: Record<string, string>;
  /** A config's `strict_params`: what a translation would ignore is refused instead (see IgnoredParams). */
  strictParams: boolean;
  /**
   * A config's `cache_breakpoints: "auto"`: an adapter of a target that caches by breakpoints
   * (Claude) places them when the client marked none (prompt-cache.ts). Absent: off.
   */
  autoCacheBreakpoints?: boolean;
  /** The virtual key the target came from; null: named per request, so the gateway's own cloud identity is refused. */
  virtualKeyId: string | null;
}
