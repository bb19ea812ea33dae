import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../common/errors/gateway-error';
import { ProviderRegistry } from '../../providers/registry';
import { KeyLookupService, ResolvedVirtualKey } from '../keys/key-lookup.service';
import { GatewayConfig, isHttpUrl, validateGatewayConfig } from './gateway-config.schema';
import { RoutePlan, RouteTarget } from './route-plan';

const NO_ROUTE =
  'No provider selected. Send one of: x-gateway-config (a stored config or inline JSON), x-gateway-virtual-key, ' +
  'x-gateway-provider with Authorization: Bearer <provider key>, or a model of the form @<virtual-key-slug>/<model>';

/** Fields a target inherits from its parent config (CONTRACT section 5). */
const INHERITED: (keyof GatewayConfig)[] = [
  'provider', 'api_key', 'virtual_key', 'provider_organization', 'provider_project', 'custom_host',
  'override_params', 'retry', 'request_timeout', 'cache', 'input_guardrails', 'output_guardrails',
];

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value || undefined;
}

/**
 * Turns the routing headers and the model into one RoutePlan, in the order of
 * CONTRACT section 1: config, virtual key header, provider header, `@slug/model`.
 */
@Injectable()
export class RouteResolver {
  constructor(
    private readonly keys: KeyLookupService,
    private readonly registry: ProviderRegistry,
  ) {}

  async resolve(headers: IncomingHttpHeaders, model: unknown): Promise<RoutePlan> {
    const plan = await this.choose(headers, model);
    const organization = header(headers, 'x-gateway-provider-organization');
    const project = header(headers, 'x-gateway-provider-project');
    if (organization) plan.target.organization = organization;
    if (project) plan.target.project = project;
    return plan;
  }

  private async choose(headers: IncomingHttpHeaders, model: unknown): Promise<RoutePlan> {
    const config = header(headers, 'x-gateway-config');
    if (config) return this.fromConfigHeader(config);

    const virtualKey = header(headers, 'x-gateway-virtual-key');
    if (virtualKey) return { target: this.targetFromVirtualKey(await this.virtualKey(virtualKey)), configId: null, via: 'virtual_key' };

    const provider = header(headers, 'x-gateway-provider');
    if (provider) return { target: this.targetFromProviderHeader(provider, headers), configId: null, via: 'provider_header' };

    if (typeof model === 'string' && model.startsWith('@')) {
      const slash = model.indexOf('/');
      if (slash < 2 || slash === model.length - 1) {
        throw GatewayError.invalidRequest(`model '${model}' must have the form @<virtual-key-slug>/<model>`, 'model');
      }
      const target = this.targetFromVirtualKey(await this.virtualKey(model.slice(1, slash)));
      target.model = model.slice(slash + 1);
      return { target, configId: null, via: 'model_prefix' };
    }
    throw GatewayError.invalidRequest(NO_ROUTE);
  }

  private async fromConfigHeader(value: string): Promise<RoutePlan> {
    if (value.trimStart().startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        throw GatewayError.invalidRequest('x-gateway-config is not valid JSON', 'x-gateway-config');
      }
      return { target: await this.targetFromConfig(parsed), configId: null, via: 'config' };
    }
    const stored = await this.keys.storedConfig(value);
    if (!stored) throw GatewayError.notFound(`Unknown config '${value}'`, 'config_not_found');
    return { target: await this.targetFromConfig(stored.config), configId: stored.id, via: 'config' };
  }

  private async targetFromConfig(raw: unknown): Promise<RouteTarget> {
    const problems = validateGatewayConfig(raw, this.registry.ids());
    if (problems.length) throw GatewayError.invalidRequest(`Invalid config: ${problems.join('; ')}`, 'x-gateway-config', 'invalid_config');

    // Walk down to the serving target, inheriting what each level does not set.
    let node = raw as GatewayConfig;
    const path: number[] = [];
    while (node.targets) {
      const mode = node.strategy?.mode ?? 'single';
      if (mode !== 'single') {
        throw GatewayError.invalidRequest(`Config strategy mode '${mode}' is not supported yet; use 'single'`, 'x-gateway-config', 'unsupported_strategy');
      }
      const child: GatewayConfig = { ...node.targets[0] };
      for (const field of INHERITED) if (child[field] === undefined && node[field] !== undefined) (child as Record<string, unknown>)[field] = node[field];
      node = child;
      path.push(0);
    }

    let target: RouteTarget;
    if (node.virtual_key) target = this.targetFromVirtualKey(await this.virtualKey(node.virtual_key));
    else if (node.provider) {
      const adapter = this.registry.get(node.provider);
      target = blankTarget(adapter.id, node.api_key ?? null);
    } else {
      throw GatewayError.invalidRequest('Invalid config: the serving target names neither provider nor virtual_key', 'x-gateway-config', 'invalid_config');
    }
    target.customHost = node.custom_host ?? target.customHost;
    target.organization = node.provider_organization ?? target.organization;
    target.project = node.provider_project ?? target.project;
    target.overrideParams = node.override_params ?? {};
    target.requestTimeoutMs = node.request_timeout ?? null;
    target.targetIndex = path.length ? path.join('.') : null;
    return target;
  }

  private async virtualKey(slugOrId: string): Promise<ResolvedVirtualKey> {
    const key = await this.keys.virtualKey(slugOrId);
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
      allowedModels: key.allowedModels,
    };
  }

  private targetFromProviderHeader(provider: string, headers: IncomingHttpHeaders): RouteTarget {
    const adapter = this.registry.get(provider);
    const authorization = header(headers, 'authorization');
    const apiKey = authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() ?? null;
    if (!apiKey && !adapter.credentialOptional) {
      throw GatewayError.invalidRequest(`x-gateway-provider '${provider}' needs the provider key in Authorization: Bearer <key>`, 'authorization');
    }
    const customHost = header(headers, 'x-gateway-custom-host') ?? null;
    if (customHost !== null && !isHttpUrl(customHost)) {
      throw GatewayError.invalidRequest('x-gateway-custom-host must be an http(s) URL', 'x-gateway-custom-host');
    }
    return { ...blankTarget(adapter.id, apiKey), customHost };
  }
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
    virtualKeyId: null,
    allowedModels: null,
    model: null,
    targetIndex: null,
  };
}
