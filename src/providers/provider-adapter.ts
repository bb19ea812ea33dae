import type { RouteTarget } from '../modules/routing/route-plan';

/** An HTTP request to a provider, built by an adapter and sent by the upstream client. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * One operation of a provider: builds the request for a body (already in OpenAI's
 * format, model and override_params applied). This providers all speak
 * OpenAI's wire format, so their answers pass through byte for byte; vendors with
 * their own format (Anthropic, Gemini) add translation here.
 */
export interface RequestBuilder {
  buildRequest(body: Record<string, unknown>, target: RouteTarget): UpstreamRequest;
}

/** The operations a provider may offer, one optional capability each. */
export interface ProviderOperations {
  readonly chatCompletions?: RequestBuilder;
  readonly embeddings?: RequestBuilder;
  readonly imageGenerations?: RequestBuilder;
}

export type ProviderOperation = keyof ProviderOperations;

/**
 * One provider. Adding a vendor is one folder under `src/providers/` and one line in
 * `registry.ts`; an operation a provider lacks is simply absent, and the gateway
 * answers 400 naming the provider and the operation.
 */
export interface ProviderAdapter extends ProviderOperations {
  /** The id used in virtual keys, configs and `x-gateway-provider`. */
  readonly id: string;
  /** Whether requests without a credential make sense (a local Ollama). */
  readonly credentialOptional: boolean;
  /** Whether the provider has no public endpoint and needs `custom_host`. */
  readonly requiresCustomHost: boolean;
}
