import { GatewayError } from '../../common/errors/gateway-error';
import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ChatCompletionsCapability, ProviderAdapter, UpstreamRequest } from '../provider-adapter';

export interface OpenAICompatibleOptions {
  id: string;
  /** Base URL including the version path, e.g. `https://api.groq.com/openai/v1`; null: custom_host required. */
  baseUrl: string | null;
  credentialOptional?: boolean;
  /** Send `OpenAI-Organization` / `OpenAI-Project` (only OpenAI itself knows them). */
  sendsOrganizationHeaders?: boolean;
}

/**
 * Vendors that speak OpenAI's API and differ only in base URL and auth: requests and
 * answers pass through unchanged. OpenAI itself is one of them.
 */
export class OpenAICompatibleAdapter implements ProviderAdapter {
  readonly id: string;
  readonly credentialOptional: boolean;
  readonly requiresCustomHost: boolean;
  readonly chatCompletions: ChatCompletionsCapability;

  constructor(private readonly options: OpenAICompatibleOptions) {
    this.id = options.id;
    this.credentialOptional = options.credentialOptional ?? false;
    this.requiresCustomHost = options.baseUrl === null;
    this.chatCompletions = { buildRequest: (body, target) => this.post('/chat/completions', body, target) };
  }

  protected post(path: string, body: Record<string, unknown>, target: RouteTarget): UpstreamRequest {
    return { method: 'POST', url: `${this.baseUrl(target)}${path}`, headers: this.headers(target), body: JSON.stringify(body) };
  }

  protected baseUrl(target: RouteTarget): string {
    const base = target.customHost ?? this.options.baseUrl;
    if (!base) throw GatewayError.invalidRequest(`Provider ${this.id} needs a custom host (custom_host or x-gateway-custom-host)`);
    return base.endsWith('/') ? base.slice(0, -1) : base;
  }

  protected headers(target: RouteTarget): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    if (this.options.sendsOrganizationHeaders) {
      if (target.organization) headers['openai-organization'] = target.organization;
      if (target.project) headers['openai-project'] = target.project;
    }
    return headers;
  }
}
