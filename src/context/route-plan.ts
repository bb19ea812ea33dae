import type { Guardrail } from './guardrail-records';
import type { RateLimit } from './key-limits';
import type { KeyBudget } from './caller';
import type { ProviderTarget } from '../providers/provider-target';

/** How an inner node of a route chooses among its children. */
export const STRATEGY_MODES = ['single', 'fallback', 'loadbalance', 'conditional'] as const;
export type StrategyMode = (typeof STRATEGY_MODES)[number];

/**
 * Where one attempt goes: what the adapter reads (ProviderTarget) plus what the gateway
 * enforces around the attempt. Built from a virtual key, a provider header or a config
 * target; lives only in memory (the credential is in clear) and is never logged.
 */
export interface RouteTarget extends ProviderTarget {
  /** Merged into the request body before it is sent (a config's `override_params`). */
  overrideParams: Record<string, unknown>;
  /** This attempt's timeout (a config's `request_timeout`); null: UPSTREAM_TIMEOUT_MS. */
  requestTimeoutMs: number | null;
  /** The virtual key's budget, enforced per attempt (see BudgetLedger). */
  virtualKeyBudget: KeyBudget | null;
  virtualKeyRateLimits: RateLimit[];
  allowedModels: string[] | null;
  /** The model to send when routing rewrote it (`@slug/model` prefix stripped). */
  model: string | null;
  /**
   * An admin chose the host (a built-in provider's URL, a virtual key's or stored config's
   * `custom_host`, or one an admin key named per request), so it may be on a private
   * network; a host a non-admin key names per request follows UPSTREAM_ALLOW_PRIVATE_NETWORKS.
   */
  privateNetworkAllowed: boolean;
}

export interface RetryPolicy {
  /** Retries after the first try. */
  attempts: number;
  onStatusCodes: number[];
}

export interface CachePolicy {
  maxAgeSeconds: number;
}

export interface CircuitBreakerPolicy {
  failureThreshold: number;
  windowMs: number;
  cooldownMs: number;
  onStatusCodes: number[];
}

/** How a leaf names its provider before it is resolved (virtual keys are looked up per attempt). */
export type TargetSource =
  { kind: 'resolved'; target: RouteTarget } | { kind: 'virtual_key'; slug: string } | { kind: 'provider'; provider: string; apiKey: string | null };

/**
 * One node of a routing tree. A config becomes a tree with every inherited field already
 * applied; a request routed by header is a tree of one leaf. Leaves send; inner nodes
 * choose among their children by `mode`.
 */
export interface RouteNode {
  /** Path of this node among the config's targets, e.g. `1` or `0.2`; null for the root. */
  path: string | null;
  name: string | null;
  weight: number;
  children: RouteNode[];
  mode: StrategyMode;
  /** Fallback: the statuses that move on to the next target; null = any non-2xx. */
  fallbackOn: number[] | null;
  conditions: { query: Record<string, unknown>; then: string }[];
  defaultTarget: string | null;

  // What a leaf needs to send (inherited from the parents where the leaf does not set it).
  source: TargetSource | null;
  customHost: string | null;
  organization: string | null;
  project: string | null;
  overrideParams: Record<string, unknown>;
  retry: RetryPolicy | null;
  requestTimeoutMs: number | null;
  strictParams: boolean;
  /** A config's `cache_breakpoints: "auto"`. */
  autoCacheBreakpoints: boolean;
  cache: CachePolicy | null;
  circuitBreaker: CircuitBreakerPolicy | null;
  /** Checks on the request before it is sent to this leaf, and on its answer (CONTRACT section 5). */
  inputGuardrails: Guardrail[];
  outputGuardrails: Guardrail[];
  /** MCP servers whose tools the gateway runs (`mcp_servers`): this node's and every descendant's, so the root holds the config's union. */
  mcpServers: string[];
}

export interface RoutePlan {
  root: RouteNode;
  configId: string | null;
  configVersion: number | null;
  /** How the route was chosen, for error messages and the log. */
  via: 'config' | 'virtual_key' | 'provider_header' | 'model_prefix';
  /** x-gateway-provider-organization / -project: win over the config's and the virtual key's. */
  organization: string | null;
  project: string | null;
  /** The config's own `custom_host`s were chosen by an admin: a stored config, or an inline one an admin key sent. */
  configHostsAdminChosen: boolean;
  /** The calling key's workspace: the virtual keys a config's leaves name are looked up there only. */
  workspaceId: string;
}
