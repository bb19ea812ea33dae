/**
 * Where one request goes: the provider, its credential and how to reach it, resolved
 * once by the routing guard from the config, virtual key, provider header or model prefix.
 */
export interface RouteTarget {
  provider: string;
  /** Provider credential in clear; lives only in memory, never logged. */
  apiKey: string | null;
  /** Base URL replacing the provider's default (an OpenAI-compatible server, an Azure resource). */
  customHost: string | null;
  organization: string | null;
  project: string | null;
  providerOptions: Record<string, string>;
  /** Merged into the request body before it is sent (a config's `override_params`). */
  overrideParams: Record<string, unknown>;
  requestTimeoutMs: number | null;
  virtualKeyId: string | null;
  allowedModels: string[] | null;
  /** The model to send when routing rewrote it (`@slug/model` prefix stripped). */
  model: string | null;
  /** Path of the config target that serves, e.g. `0` or `1.2` (CONTRACT section 2). */
  targetIndex: string | null;
}

export interface RoutePlan {
  target: RouteTarget;
  configId: string | null;
  /** How the route was chosen, for error messages and the log. */
  via: 'config' | 'virtual_key' | 'provider_header' | 'model_prefix';
}
