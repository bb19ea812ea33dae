import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../common/errors/gateway-error';
import { ProviderRegistry } from '../../providers/registry';
import { KeyLookupService, ResolvedVirtualKey } from '../keys/key-lookup.service';
import { ApiKeyPrincipal } from '../../context/caller';
import { providerKeyOf } from '../../common/guards/gateway-key';
import { hasUserinfo, isHttpUrl, redactUserinfo } from '../../common/http/http-url';
import { GatewayConfig, validateGatewayConfig } from './gateway-config.schema';
import { RouteNode, RoutePlan, RouteTarget } from '../../context/route-plan';
import { UpstreamClient } from '../upstream/upstream-client';
import { buildRouteTree, leavesOf, singleTargetTree } from './route-tree';
import { DEFAULT_WORKSPACE_ID } from '../workspaces/workspace.entity';

const NO_ROUTE =
  'No provider selected. Send one of: x-gateway-config (a stored config or inline JSON), x-gateway-virtual-key, ' +
  'x-gateway-provider with Authorization: Bearer <provider key>, or a model of the form @<virtual-key-slug>/<model>; ' +
  'or give the API key a default_virtual_key or default_config';

/** Config trees kept built; past this the oldest goes (inline configs can be many). */
const MAX_CACHED_TREES = 500;

function parseInlineConfig(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw GatewayError.invalidRequest('x-gateway-config is not valid JSON', 'x-gateway-config', 'invalid_config');
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value || undefined;
}

/**
 * Turns the routing headers and the model into one RoutePlan, in the order of
 * CONTRACT section 1: config, virtual key header, provider header, `@slug/model`;
 * then the API key's own default config or virtual key (section 12). Virtual keys and
 * configs are looked up in the calling key's workspace only: another workspace's slug or
 * id is unknown (CONTRACT section 13).
 */
@Injectable()
export class RouteResolver {
  /** Built routing trees by config version (or inline text); a tree is never changed once built. */
  private readonly trees = new Map<string, RouteNode>();

  constructor(
    private readonly keys: KeyLookupService,
    private readonly registry: ProviderRegistry,
    private readonly upstream: UpstreamClient,
  ) {}

  async resolve(headers: IncomingHttpHeaders, model: unknown, principal: ApiKeyPrincipal | null): Promise<RoutePlan> {
    // A request refused before its key was known is the default workspace's (as its log row).
    const plan = await this.choose(headers, model, principal, principal?.workspaceId ?? DEFAULT_WORKSPACE_ID);
    plan.organization = header(headers, 'x-gateway-provider-organization') ?? null;
    plan.project = header(headers, 'x-gateway-provider-project') ?? null;
    return plan;
  }

  /**
   * The target of one leaf, resolved when the executor is about to send to it (so an
   * unused fallback's virtual key costs nothing). Organization and project: the
   * request headers win over the config's, which win over the virtual key's.
   */
  async resolveLeaf(node: RouteNode, plan: RoutePlan): Promise<RouteTarget> {
    const source = node.source!;
    let target: RouteTarget;
    if (source.kind === 'resolved') target = { ...source.target };
    else if (source.kind === 'virtual_key') target = this.targetFromVirtualKey(await this.virtualKey(plan.workspaceId, source.slug));
    else target = blankTarget(this.registry.get(source.provider).id, source.apiKey);
    if (node.customHost) {
      target.customHost = node.customHost;
      target.privateNetworkAllowed = plan.configHostsAdminChosen;
    }
    target.organization = plan.organization ?? node.organization ?? target.organization;
    target.project = plan.project ?? node.project ?? target.project;
    target.overrideParams = node.overrideParams;
    target.requestTimeoutMs = node.requestTimeoutMs;
    target.strictParams = node.strictParams;
    target.autoCacheBreakpoints = node.autoCacheBreakpoints;
    return target;
  }

  private async choose(headers: IncomingHttpHeaders, model: unknown, principal: ApiKeyPrincipal | null, workspaceId: string): Promise<RoutePlan> {
    // Hosts an admin chose may be private (UpstreamHostPolicy); an owner is an admin everywhere.
    const isAdmin = principal?.role === 'admin' || principal?.role === 'owner';
    const provider = header(headers, 'x-gateway-provider');
    const config = header(headers, 'x-gateway-config');
    // x-gateway-custom-host belongs to the x-gateway-provider route, with the request's own key; when a
    // config or a virtual key wins over that route, the whole of it is set aside. Sent without it, the
    // host would redirect a stored credential: refused, unless it is the host stored with the key.
    const requestedHost = provider ? undefined : header(headers, 'x-gateway-custom-host');
    if (config) return this.fromConfigHeader(config, isAdmin, workspaceId, requestedHost);

    const virtualKey = header(headers, 'x-gateway-virtual-key');
    if (virtualKey) return plan(await this.virtualKeyTarget(workspaceId, virtualKey, requestedHost), 'virtual_key', workspaceId);

    if (provider) return plan(this.targetFromProviderHeader(provider, headers, isAdmin), 'provider_header', workspaceId);

    if (typeof model === 'string' && model.startsWith('@')) {
      const slash = model.indexOf('/');
      if (slash < 2 || slash === model.length - 1) {
        throw GatewayError.invalidRequest(`model '${model}' must have the form @<virtual-key-slug>/<model>`, 'model');
      }
      const target = await this.virtualKeyTarget(workspaceId, model.slice(1, slash), requestedHost);
      target.model = model.slice(slash + 1);
      return plan(target, 'model_prefix', workspaceId);
    }
    // Clients that send only a base URL and an API key (Codex, Cursor, Claude Code) route by the key.
    if (principal?.defaultConfig) return this.fromStoredConfig(principal.defaultConfig, workspaceId, requestedHost);
    if (principal?.defaultVirtualKey)
      return plan(await this.virtualKeyTarget(workspaceId, principal.defaultVirtualKey, requestedHost), 'virtual_key', workspaceId);
    throw GatewayError.invalidRequest(NO_ROUTE);
  }

  /** A virtual key's target; a host named per request must be the one stored with the key (CONTRACT section 15). */
  private async virtualKeyTarget(workspaceId: string, slugOrId: string, requestedHost: string | undefined): Promise<RouteTarget> {
    const key = await this.virtualKey(workspaceId, slugOrId);
    if (requestedHost !== undefined) assertSameHost(requestedHost, key.customHost, 'x-gateway-custom-host', `virtual key '${key.slug}'`);
    return this.targetFromVirtualKey(key);
  }

  private async fromConfigHeader(value: string, isAdmin: boolean, workspaceId: string, requestedHost: string | undefined): Promise<RoutePlan> {
    if (!value.trimStart().startsWith('{')) return this.fromStoredConfig(value, workspaceId, requestedHost);
    refuseHostWithConfig(requestedHost);
    const routed = this.planFromConfig(`inline:${value}`, () => parseInlineConfig(value), null, null, isAdmin, workspaceId);
    await this.checkInlineHosts(routed.root, workspaceId);
    return routed;
  }

  /**
   * A config given per request may name hosts, but may not send a stored credential to one
   * (CONTRACT section 15): a leaf with a virtual key and a `custom_host` (its own or
   * inherited) must name the host stored with that key. Checked on every request before
   * anything is sent, with the keys as they are now (an admin may change a key's host).
   * A stored config's hosts were chosen by an admin, who may pair them as they like.
   */
  private async checkInlineHosts(root: RouteNode, workspaceId: string): Promise<void> {
    for (const leaf of leavesOf(root)) {
      if (leaf.source?.kind !== 'virtual_key' || leaf.customHost === null) continue;
      const key = await this.keys.virtualKey(workspaceId, leaf.source.slug);
      if (!key) throw GatewayError.notFound(`Unknown virtual key '${leaf.source.slug}'`, 'virtual_key_not_found');
      const field = `config${leaf.path === null ? '' : ` target ${leaf.path}`} custom_host`;
      assertSameHost(leaf.customHost, key.customHost, 'x-gateway-config', `virtual key '${key.slug}'`, field);
    }
  }

  private async fromStoredConfig(slugOrId: string, workspaceId: string, requestedHost: string | undefined): Promise<RoutePlan> {
    refuseHostWithConfig(requestedHost);
    const stored = await this.keys.storedConfig(workspaceId, slugOrId);
    if (!stored) throw GatewayError.notFound(`Unknown config '${slugOrId}'`, 'config_not_found');
    return this.planFromConfig(`stored:${stored.id}:${stored.version}`, () => stored.config, stored.id, stored.version, true, workspaceId);
  }

  /** A stored config's version, or an inline config's text, builds the same tree every time (guardrails compile regexes and schemas): built once. */
  private planFromConfig(
    cacheKey: string,
    raw: () => unknown,
    configId: string | null,
    configVersion: number | null,
    hostsAdminChosen: boolean,
    workspaceId: string,
  ): RoutePlan {
    let root = this.trees.get(cacheKey);
    if (!root) {
      root = this.buildTree(raw());
      if (this.trees.size >= MAX_CACHED_TREES) this.trees.delete(this.trees.keys().next().value!);
      this.trees.set(cacheKey, root);
    }
    return { root, configId, configVersion, via: 'config', organization: null, project: null, configHostsAdminChosen: hostsAdminChosen, workspaceId };
  }

  private buildTree(raw: unknown): RouteNode {
    const problems = validateGatewayConfig(raw, this.registry.ids());
    const root = problems.length ? null : buildRouteTree(raw as GatewayConfig, { postJson: this.upstream.postJson });
    if (root) {
      for (const leaf of leavesOf(root)) {
        if (!leaf.source)
          problems.push(`config${leaf.path ? ` target ${leaf.path}` : ''} names neither provider nor virtual_key (itself or through its parents)`);
      }
    }
    if (problems.length) throw GatewayError.invalidRequest(`Invalid config: ${problems.join('; ')}`, 'x-gateway-config', 'invalid_config');
    return root!;
  }

  private async virtualKey(workspaceId: string, slugOrId: string): Promise<ResolvedVirtualKey> {
    const key = await this.keys.virtualKey(workspaceId, slugOrId);
    if (!key) throw GatewayError.notFound(`Unknown virtual key '${slugOrId}'`, 'virtual_key_not_found');
    if (key.disabled) throw GatewayError.permission(`Virtual key '${key.slug}' is disabled`, 'virtual_key_disabled');
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) {
      throw GatewayError.permission(`Virtual key '${key.slug}' expired at ${key.expiresAt.toISOString()}`, 'virtual_key_expired');
    }
    return key;
  }

  private targetFromVirtualKey(key: ResolvedVirtualKey): RouteTarget {
    return {
      ...blankTarget(key.provider, key.apiKey),
      customHost: key.customHost,
      organization: key.providerOrganization,
      project: key.providerProject,
      providerOptions: key.providerOptions,
      virtualKeyId: key.id,
      virtualKeyBudget: key.budget,
      virtualKeyRateLimits: key.rateLimits,
      allowedModels: key.allowedModels,
    };
  }

  private targetFromProviderHeader(provider: string, headers: IncomingHttpHeaders, isAdmin: boolean): RouteTarget {
    const adapter = this.registry.get(provider);
    const credentialHeaders = adapter.credentialHeaders;
    // A provider with credential headers of its own takes its key from there, never from Authorization.
    const apiKey = credentialHeaders?.key ? (header(headers, credentialHeaders.key) ?? null) : providerKeyOf(headers);
    if (!apiKey && !adapter.credentialOptional) {
      throw GatewayError.invalidRequest(`x-gateway-provider '${provider}' needs the provider key in Authorization: Bearer <key>`, 'authorization');
    }
    const providerOptions: Record<string, string> = {};
    for (const [name, option] of Object.entries(credentialHeaders?.options ?? {})) {
      const value = header(headers, name);
      if (value) providerOptions[option] = value;
    }
    const customHost = header(headers, 'x-gateway-custom-host') ?? null;
    if (customHost !== null && !isHttpUrl(customHost)) {
      throw GatewayError.invalidRequest('x-gateway-custom-host must be an http(s) URL', 'x-gateway-custom-host');
    }
    if (customHost !== null && hasUserinfo(customHost)) {
      throw GatewayError.invalidRequest(
        'x-gateway-custom-host must not carry user:password@ (the gateway does not send it; send the key in Authorization)',
        'x-gateway-custom-host',
      );
    }
    return { ...blankTarget(adapter.id, apiKey), providerOptions, customHost, privateNetworkAllowed: customHost === null || isAdmin };
  }
}

/** Base URLs compared as the adapters use them (trailing slashes cut). */
function sameHost(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * A stored credential goes only to the host stored with it, or (none stored) to its
 * provider's own endpoint: `host`, named per request, must be `storedHost`.
 */
function assertSameHost(host: string, storedHost: string | null, param: string, credential: string, field = param): void {
  if (storedHost !== null && sameHost(host, storedHost)) return;
  throw credentialHostMismatch(
    param,
    `${field} names the host ${redactUserinfo(host)}, but ${credential} is a stored credential that goes only to ${storedHost === null ? "its provider's own endpoint" : 'the host stored with it'}. ` +
      'To use another host, send its own key: x-gateway-provider with Authorization, or a config target with provider and api_key',
  );
}

/** x-gateway-custom-host is never applied to a config's targets: refused rather than silently ignored. */
function refuseHostWithConfig(requestedHost: string | undefined): void {
  if (requestedHost === undefined) return;
  throw credentialHostMismatch(
    'x-gateway-custom-host',
    "x-gateway-custom-host cannot redirect a config: its targets name their hosts (custom_host). A host named per request goes with the request's own key: x-gateway-provider with Authorization",
  );
}

function credentialHostMismatch(param: string, message: string): GatewayError {
  return GatewayError.invalidRequest(message, param, 'credential_host_mismatch');
}

function blankTarget(provider: string, apiKey: string | null): RouteTarget {
  return {
    provider,
    apiKey,
    customHost: null,
    organization: null,
    project: null,
    providerOptions: {},
    overrideParams: {},
    requestTimeoutMs: null,
    strictParams: false,
    virtualKeyId: null,
    virtualKeyBudget: null,
    virtualKeyRateLimits: [],
    allowedModels: null,
    model: null,
    privateNetworkAllowed: true,
  };
}

function plan(target: RouteTarget, via: RoutePlan['via'], workspaceId: string): RoutePlan {
  return {
    root: singleTargetTree(target),
    configId: null,
    configVersion: null,
    via,
    organization: null,
    project: null,
    configHostsAdminChosen: false,
    workspaceId,
  };
}
