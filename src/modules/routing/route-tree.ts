import type { GatewayConfig } from './gateway-config.schema';
import { buildGuardrails } from '../guardrails/guardrail-registry';
import type { PostJson } from '../guardrails/guardrail-check';
import type { RouteNode, RouteTarget } from '../../context/route-plan';

/** What building a config's guardrails needs: how webhook checks call out (through the host policy). */
export interface GuardrailDeps {
  postJson?: PostJson;
}

/** Statuses worth another try on the same target (CONTRACT section 5's example). */
export const DEFAULT_RETRY_STATUS_CODES = [429, 500, 502, 503, 504];
/** A target counts as failing on server errors and unreachability, not on the caller's own 4xx. */
export const DEFAULT_BREAKER_STATUS_CODES = [500, 502, 503, 504];
export const DEFAULT_CACHE_MAX_AGE_SECONDS = 3600;

/** Fields a target takes from its parent when it does not set them (CONTRACT section 5). */
const INHERITED = [
  'provider',
  'api_key',
  'virtual_key',
  'provider_organization',
  'provider_project',
  'custom_host',
  'retry',
  'request_timeout',
  'strict_params',
  'cache_breakpoints',
  'cache',
  'circuit_breaker',
  'input_guardrails',
  'output_guardrails',
] as const;

/**
 * Turns a validated config into a routing tree, applying inheritance once so that the
 * executor never has to look up the chain. `override_params` merge (the child wins per
 * key) rather than replace: a parent sets `max_tokens`, each child its `model`.
 */
export function buildRouteTree(config: GatewayConfig, deps: GuardrailDeps = {}, path: string | null = null): RouteNode {
  const strategy = config.strategy ?? {};
  const children = (config.targets ?? []).map((child, index) =>
    buildRouteTree(inherit(config, child), deps, path === null ? String(index) : `${path}.${index}`),
  );
  return {
    path,
    name: config.name ?? null,
    weight: config.weight ?? 1,
    children,
    mode: strategy.mode ?? 'single',
    fallbackOn: strategy.on_status_codes ?? null,
    conditions: strategy.conditions ?? [],
    defaultTarget: strategy.default ?? null,
    source: children.length ? null : sourceOf(config),
    customHost: config.custom_host ?? null,
    organization: config.provider_organization ?? null,
    project: config.provider_project ?? null,
    overrideParams: config.override_params ?? {},
    retry: config.retry ? { attempts: config.retry.attempts ?? 0, onStatusCodes: config.retry.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES } : null,
    requestTimeoutMs: config.request_timeout ?? null,
    strictParams: config.strict_params === true,
    autoCacheBreakpoints: config.cache_breakpoints === 'auto',
    cache: config.cache ? { maxAgeSeconds: config.cache.max_age ?? DEFAULT_CACHE_MAX_AGE_SECONDS } : null,
    circuitBreaker: config.circuit_breaker
      ? {
          failureThreshold: config.circuit_breaker.failure_threshold ?? 5,
          windowMs: config.circuit_breaker.window_ms ?? 60_000,
          cooldownMs: config.circuit_breaker.cooldown_ms ?? 30_000,
          onStatusCodes: config.circuit_breaker.on_status_codes ?? DEFAULT_BREAKER_STATUS_CODES,
        }
      : null,
    // Built (regexes and schemas compiled) for the leaves only, which are what runs them.
    inputGuardrails: children.length || !config.input_guardrails ? [] : buildGuardrails(config.input_guardrails, deps),
    outputGuardrails: children.length || !config.output_guardrails ? [] : buildGuardrails(config.output_guardrails, deps),
    mcpServers: [...new Set([...(config.mcp_servers ?? []), ...children.flatMap((child) => child.mcpServers)])],
  };
}

function inherit(parent: GatewayConfig, child: GatewayConfig): GatewayConfig {
  const merged: Record<string, unknown> = { ...child };
  for (const field of INHERITED) if (merged[field] === undefined && parent[field] !== undefined) merged[field] = parent[field];
  // A child naming its own provider or virtual key does not inherit the parent's other one.
  if (child.virtual_key !== undefined && child.provider === undefined) delete merged.provider;
  if (child.provider !== undefined && child.virtual_key === undefined) delete merged.virtual_key;
  if (parent.override_params || child.override_params) merged.override_params = { ...parent.override_params, ...child.override_params };
  return merged;
}

function sourceOf(config: GatewayConfig): RouteNode['source'] {
  if (config.virtual_key) return { kind: 'virtual_key', slug: config.virtual_key };
  if (config.provider) return { kind: 'provider', provider: config.provider, apiKey: config.api_key ?? null };
  return null;
}

/** The tree of a request routed without a config: one leaf, already resolved. */
export function singleTargetTree(target: RouteTarget): RouteNode {
  return {
    path: null,
    name: null,
    weight: 1,
    children: [],
    mode: 'single',
    fallbackOn: null,
    conditions: [],
    defaultTarget: null,
    source: { kind: 'resolved', target },
    customHost: null,
    organization: null,
    project: null,
    overrideParams: {},
    retry: null,
    requestTimeoutMs: null,
    strictParams: false,
    autoCacheBreakpoints: false,
    cache: null,
    circuitBreaker: null,
    inputGuardrails: [],
    outputGuardrails: [],
    mcpServers: [],
  };
}

/** Every leaf of a tree, for validation that needs them all (e.g. each names a provider). */
export function leavesOf(node: RouteNode): RouteNode[] {
  return node.children.length ? node.children.flatMap(leavesOf) : [node];
}
